/**
 * Everything a service process shares between requests: settings, the database, change notifications, the
 * authenticator, the change runner and the job queue. It knows no resource group: `src/modules/index.ts`
 * builds the groups over a runtime (each group's factory builds its services once for routes, jobs and the CLI),
 * and `src/app.ts` builds the HTTP app over both. Tests open one on their own database.
 */
import type { Config } from './config.ts';
import { createDatabase, type Database } from './db/database.ts';
import { migrateToLatest } from './db/migrate.ts';
import { ChangeNotifier } from './db/notifications.ts';
import { TokenAuthenticator } from './http/auth.ts';
import { ChangeRunner } from './changes/change-runner.ts';
import { JobQueue } from './jobs/job.ts';
import { startJobQueue } from './jobs/queue.ts';
import { loadOperatorKey, SecretBox } from './security/secret-box.ts';
import { sealLegacySecrets } from './security/seal-legacy-secrets.ts';
import { ServiceMetrics } from './metrics/service-metrics.ts';
import { CursorCodec } from './http/cursor.ts';

/** Shared state of one service process. */
export interface Runtime {
  config: Config;
  /** URL of the database in use (embedded or external). */
  databaseUrl: string;
  database: Database;
  notifier: ChangeNotifier;
  authenticator: TokenAuthenticator;
  /** Runs every mutation as one transaction with its events, notifications and jobs. */
  changes: ChangeRunner;
  /** Seals and opens stored secrets with the operator key (P160). */
  secrets: SecretBox;
  /** Signs and checks the cursors of keyset pagination (P172), with a key derived from the operator key. */
  cursors: CursorCodec;
  /** The pg-boss job queue on the same database. */
  jobs: JobQueue;
  /** The Prometheus metrics of this process (its own registry, P129). */
  metrics: ServiceMetrics;
  /** Whether this process runs background workers (`RuntimeOptions.workers`). */
  workers: boolean;
  /**
   * Registers `stop` to run on close, after the job queue stopped (no job runs any more) and before the
   * database closes; later registrations stop first.
   */
  onClose(stop: () => Promise<void>): void;
  /** Closes what `openRuntime` opened and what registered with `onClose`, in reverse order. */
  close(): Promise<void>;
}

/** Options of `openRuntime`. */
export interface RuntimeOptions {
  /** Start the background workers of the groups; default true. Jobs are still enqueued when false. */
  workers?: boolean;
}

/**
 * Connects to `databaseUrl`, applies pending migrations, loads the operator key and seals plain stored secrets, starts listening for change notifications and starts
 * the job queue.
 * @throws when the database cannot be reached or a migration fails
 */
export async function openRuntime(
  config: Config,
  databaseUrl: string,
  options: RuntimeOptions = {},
): Promise<Runtime> {
  const database = createDatabase(databaseUrl, config.databasePoolSize);
  const notifier = new ChangeNotifier(databaseUrl, config.listenReconnectMs);
  let boss: Awaited<ReturnType<typeof startJobQueue>> | undefined;
  try {
    await migrateToLatest(database.db);
    const secrets = new SecretBox(await loadOperatorKey(config.secretKey, config.dataDir));
    await sealLegacySecrets(database.db, secrets);
    await notifier.start();
    boss = await startJobQueue(database.pool, { maintenanceIntervalSeconds: config.webhookPollSeconds });
    const queue = boss;
    const stops: Array<() => Promise<void>> = [];
    return {
      config,
      databaseUrl,
      database,
      notifier,
      authenticator: new TokenAuthenticator(database.db, notifier),
      changes: new ChangeRunner(database.db),
      secrets,
      cursors: new CursorCodec(secrets.deriveKey('seller-ops keyset cursor')),
      jobs: new JobQueue(queue, config.webhookPollSeconds),
      metrics: new ServiceMetrics(database.db, database.pool),
      workers: options.workers !== false,
      onClose: (stop) => void stops.push(stop),
      async close() {
        // Waits for jobs in flight; what is cut off is retried after expiry (at-least-once).
        await queue.stop({ graceful: true, timeout: config.webhookTimeoutMs + 5_000 });
        for (const stop of stops.reverse()) await stop();
        await notifier.close();
        await database.close();
      },
    };
  } catch (error) {
    // Release what was opened before the failure.
    await boss?.stop({ graceful: false }).catch(() => undefined);
    await notifier.close();
    await database.close();
    throw error;
  }
}
