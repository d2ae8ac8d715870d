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
  /** Closes what `openRuntime` opened, in reverse order. */
  close(): Promise<void>;
}

/**
 * Connects to `databaseUrl`, applies pending migrations and starts listening for change notifications.
 * @throws when the database cannot be reached or a migration fails
 */
export async function openRuntime(config: Config, databaseUrl: string): Promise<Runtime> {
  const database = createDatabase(databaseUrl, config.databasePoolSize);
  try {
    await migrateToLatest(database.db);
    const notifier = new ChangeNotifier(databaseUrl);
    await notifier.start();
    const authenticator = new TokenAuthenticator(database.db, notifier);
    // TEMPORARY until the webhook module lands its outbox: records nothing.
    const events: EventRecorder = { record: async () => undefined };
    return {
      config,
      databaseUrl,
      database,
      notifier,
      authenticator,
      events,
      async close() {
        await notifier.close();
        await database.close();
      },
    };
  } catch (error) {
    await database.close();
    throw error;
  }
}
