/**
 * Everything a service process shares between requests: settings, the database, change notifications, the
 * authenticator, the change runner and the job queue. It knows no resource group: `src/modules/index.ts`
 * builds the groups over a runtime (each group's factory builds its services once for routes, jobs and the CLI),
 * and `src/app.ts` builds the HTTP app over both. Tests open one on their own database.
 */
import type { Config } from './config.ts';
import { createDatabase, type Database } from './db/database.ts';
import { requireExactFloatText } from './db/json-text.ts';
import { migrateToLatest } from './db/migrate.ts';
import { ChangeNotifier } from './db/notifications.ts';
import { SearchTurns } from './db/search-turns.ts';
import { TokenAuthenticator } from './http/auth.ts';
import { ChangeRunner } from './changes/change-runner.ts';
import { JobQueue } from './jobs/job.ts';
import { createJobQueue, installJobQueueSchema } from './jobs/queue.ts';
import { withSetUpLock } from './db/set-up-lock.ts';
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
  /** The turns of this process's text searches (`SEARCH_CONCURRENCY` at once, P211). */
  searches: SearchTurns;
  /** The pg-boss job queue on the same database. */
  jobs: JobQueue;
  /** The Prometheus metrics of this process (its own registry, P129). */
  metrics: ServiceMetrics;
  /** Whether this process runs background workers (`RuntimeOptions.workers`). */
  workers: boolean;
  /**
   * Whether the start-up set-up is done and the process serves requests: until then `/ready` answers 503 and
   * every route but `/health` and `/ready` answers 503 `error_service_unavailable` (P166).
   */
  ready: boolean;
  /**
   * Runs `work` — something done once per database at start, e.g. creating queues — under the set-up lock,
   * again after a deadlock or serialization failure (`src/db/set-up-lock.ts`, P166).
   */
  setUpOnce<T>(work: () => Promise<T>): Promise<T>;
  /**
   * Checks that the database writes exact numbers (`requireExactFloatText`, P203), brings it to what this version
   * needs under the set-up lock (migrations, pg-boss's schema, sealing of plain secrets), then starts listening
   * for change notifications and the job queue. Leaves `ready` false.
   * @throws when the database cannot be reached, rounds numbers, or a migration fails
   */
  setUp(): Promise<void>;
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
  /** Folders of further migrations run after ours (a test's pending migration). */
  extraMigrationFolders?: string[];
  /** Told about retries of the start-up set-up. */
  onSetUpRetry?: (message: string) => void;
}

/**
 * Brings the database to what this version needs: our migrations (and `extraMigrationFolders`), the sealing of
 * plain stored secrets (P160), pg-boss's schema. Idempotent; run it under the set-up lock (P166).
 * @throws when a migration fails (it is rolled back)
 */
export async function setUpDatabase(
  database: Database,
  secrets: SecretBox,
  extraMigrationFolders: readonly string[] = [],
): Promise<void> {
  await migrateToLatest(database.db, extraMigrationFolders);
  await sealLegacySecrets(database.db, secrets);
  await installJobQueueSchema(database.pool);
}

/**
 * Creates the runtime over `databaseUrl` without touching the database: pool, change notifier and job queue are
 * built but not started, and `ready` is false. Call `setUp()` next (`openRuntime` does both).
 * @throws when the operator key cannot be loaded
 */
export async function createRuntime(
  config: Config,
  databaseUrl: string,
  options: RuntimeOptions = {},
): Promise<Runtime> {
  const secrets = new SecretBox(await loadOperatorKey(config.secretKey, config.dataDir));
  const database = createDatabase(databaseUrl, config.databasePoolSize);
  const notifier = new ChangeNotifier(databaseUrl, config.listenReconnectMs);
  const queue = createJobQueue(database.pool, { maintenanceIntervalSeconds: config.webhookPollSeconds });
  let queueStarted = false;
  const stops: Array<() => Promise<void>> = [];
  const setUpOnce = <T>(work: () => Promise<T>) =>
    withSetUpLock(databaseUrl, work, { log: options.onSetUpRetry });
  return {
    config,
    databaseUrl,
    database,
    notifier,
    authenticator: new TokenAuthenticator(database.db, notifier),
    changes: new ChangeRunner(database.db),
    secrets,
    cursors: new CursorCodec(secrets.deriveKey('seller-ops keyset cursor')),
    searches: new SearchTurns(config.searchConcurrency),
    jobs: new JobQueue(queue, config.webhookPollSeconds),
    metrics: new ServiceMetrics(database.db, database.pool),
    workers: options.workers !== false,
    ready: false,
    setUpOnce,
    async setUp() {
      await requireExactFloatText(database);
      await setUpOnce(() => setUpDatabase(database, secrets, options.extraMigrationFolders));
      await notifier.start();
      queueStarted = true;
      await queue.start();
    },
    onClose: (stop) => void stops.push(stop),
    async close() {
      // Waits for jobs in flight; what is cut off is retried after expiry (at-least-once).
      if (queueStarted) await queue.stop({ graceful: true, timeout: config.webhookTimeoutMs + 5_000 });
      for (const stop of stops.reverse()) await stop();
      await notifier.close();
      await database.close();
    },
  };
}

/**
 * Creates the runtime and sets the database up (`createRuntime`, `Runtime.setUp`); the caller marks it `ready`
 * once its own set-up (groups' queues) is done.
 * @throws when the database cannot be reached or a migration fails
 */
export async function openRuntime(
  config: Config,
  databaseUrl: string,
  options: RuntimeOptions = {},
): Promise<Runtime> {
  const runtime = await createRuntime(config, databaseUrl, options);
  try {
    await runtime.setUp();
  } catch (error) {
    // Release what was opened before the failure.
    await runtime.close();
    throw error;
  }
  return runtime;
}
