/**
 * Everything a service process shares between requests: settings, the database, change notifications and the
 * authenticator. `src/app.ts` builds the HTTP app over a runtime; tests open one on their own database.
 */
import type { Config } from './config.ts';
import { createDatabase, type Database } from './db/database.ts';
import { migrateToLatest } from './db/migrate.ts';
import { ChangeNotifier } from './db/notifications.ts';
import { TokenAuthenticator } from './http/auth.ts';
import type { EventRecorder } from './events/outbox.ts';
import type PgBoss from 'pg-boss';
import { startJobQueue } from './jobs/queue.ts';
import { DeliveryQueue } from './modules/webhook/delivery-queue.ts';
import { WebhookDispatcher } from './modules/webhook/dispatcher.ts';
import { WebhookOutbox } from './modules/webhook/outbox.ts';

/** Shared state of one service process. */
export interface Runtime {
  config: Config;
  /** URL of the database in use (embedded or external). */
  databaseUrl: string;
  database: Database;
  notifier: ChangeNotifier;
  authenticator: TokenAuthenticator;
  /** Records change events in the outbox, inside the change's transaction (D9.3). */
  events: EventRecorder;
  /** The pg-boss job queue on the same database (webhook deliveries). */
  jobs: PgBoss;
  /** Delivers webhooks from this process; undefined when workers are off (`workers: false` or WEBHOOK_WORKERS=0). */
  webhookDispatcher: WebhookDispatcher | undefined;
  /** Closes what `openRuntime` opened, in reverse order. */
  close(): Promise<void>;
}

/** Options of `openRuntime`. */
export interface RuntimeOptions {
  /** Start the background workers (webhook delivery); default true. Jobs are still enqueued when false. */
  workers?: boolean;
}

/**
 * Connects to `databaseUrl`, applies pending migrations, starts listening for change notifications and starts
 * the job queue (and, unless `options.workers` is false, the webhook delivery workers).
 * @throws when the database cannot be reached or a migration fails
 */
export async function openRuntime(
  config: Config,
  databaseUrl: string,
  options: RuntimeOptions = {},
): Promise<Runtime> {
  const database = createDatabase(databaseUrl, config.databasePoolSize);
  const notifier = new ChangeNotifier(databaseUrl);
  let jobs: PgBoss | undefined;
  try {
    await migrateToLatest(database.db);
    await notifier.start();
    const authenticator = new TokenAuthenticator(database.db, notifier);
    jobs = await startJobQueue(database.pool, {
      maintenanceIntervalSeconds: config.webhookPollSeconds,
    });
    const queue = jobs;
    const deliveryQueue = new DeliveryQueue(queue, config.webhookJobExpireSeconds);
    const events: EventRecorder = new WebhookOutbox(deliveryQueue);
    let webhookDispatcher: WebhookDispatcher | undefined;
    if (options.workers !== false && config.webhookWorkers > 0) {
      webhookDispatcher = new WebhookDispatcher(queue, database.db, deliveryQueue, config);
      await webhookDispatcher.start(notifier);
    }
    return {
      config,
      databaseUrl,
      database,
      notifier,
      authenticator,
      events,
      jobs: queue,
      webhookDispatcher,
      async close() {
        // Waits for deliveries in flight; what is cut off is retried after expiry (at-least-once).
        await queue.stop({ graceful: true, timeout: config.webhookTimeoutMs + 5_000 });
        await webhookDispatcher?.stop();
        await notifier.close();
        await database.close();
      },
    };
  } catch (error) {
    // Release what was opened before the failure.
    await jobs?.stop({ graceful: false }).catch(() => undefined);
    await notifier.close();
    await database.close();
    throw error;
  }
}
