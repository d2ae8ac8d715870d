/**
 * The PostgreSQL-backed job queue of the service (pg-boss 10, STYLE §10): jobs live in the `pgboss` schema of the
 * service's own database, workers take them with `FOR UPDATE SKIP LOCKED` (several processes never run the same
 * job at once), and a job whose process died is retried once it expires.
 *
 * pg-boss runs its SQL on the service's pool; `transactionalDb` lets a service insert jobs inside its own Kysely
 * transaction, so a job exists exactly when the change that caused it commits (D9.3).
 */
import PgBoss from 'pg-boss';
import { CompiledQuery, type Transaction } from 'kysely';
import type pg from 'pg';
import type { DB } from '../db/schema.ts';

/** Settings of the queue's maintenance. */
export interface JobQueueOptions {
  /** Seconds between checks for expired jobs and due retries (pg-boss maintenance; ≥ 1). */
  maintenanceIntervalSeconds: number;
}

/** The pg-boss adapter that runs pg-boss's SQL inside a Kysely transaction. */
export function transactionalDb(trx: Transaction<DB>): PgBoss.Db {
  return {
    executeSql: async (text, values) => {
      const result = await trx.executeQuery(CompiledQuery.raw(text, values));
      return { rows: result.rows };
    },
  };
}

/** pg-boss's own queue of due cron runs, created by its scheduler at start. */
const CRON_QUEUE = '__pgboss__send-it';

/**
 * Creates pg-boss on `pool` without starting it: `start()` checks that its schema is installed
 * (`installJobQueueSchema`) and starts maintenance and cron scheduling (P123: every process checks the schedules
 * every 30 s and pg-boss enqueues each due run once across processes).
 */
export function createJobQueue(pool: pg.Pool, options: JobQueueOptions): PgBoss {
  // Once pg-boss has stopped, its SQL is a no-op, as with pg-boss's own pool once closed: a worker whose fetch was
  // in flight during `stop` still runs its job and then completes it without awaiting, after the owner may have
  // ended `pool` (an unhandled "Cannot use a pool after calling end"). That job stays active and is retried after
  // expiry (at-least-once).
  let stopped = false;
  const executeSql = (text: string, values?: unknown[]) =>
    stopped ? Promise.resolve(undefined as unknown as pg.QueryResult) : pool.query(text, values);
  const boss = new PgBoss({
    db: { executeSql },
    migrate: false,
    schedule: true,
    supervise: true,
    maintenanceIntervalSeconds: options.maintenanceIntervalSeconds,
    // Completed jobs carry nothing the service reads again (the delivery log is in webhook_delivery).
    archiveCompletedAfterSeconds: 60,
    deleteAfterDays: 1,
  });
  // Errors of background maintenance are retried at its next run; they must not crash the process.
  boss.on('error', () => undefined);
  boss.on('stopped', () => {
    stopped = true;
  });
  return boss;
}

/**
 * Creates or migrates pg-boss's schema and its cron queue on `pool`, through an instance that runs nothing else
 * and is stopped afterwards. Run under the set-up lock: pg-boss's queue creation (DDL and DML together) deadlocks
 * when processes run it at once. Idempotent.
 * @throws when the database cannot be reached or the schema cannot be created
 */
export async function installJobQueueSchema(pool: pg.Pool): Promise<void> {
  const installer = new PgBoss({
    db: { executeSql: (text: string, values?: unknown[]) => pool.query(text, values) },
    migrate: true,
    schedule: false,
    supervise: false,
  });
  installer.on('error', () => undefined);
  try {
    await installer.start();
    if (!(await installer.getQueue(CRON_QUEUE))) await installer.createQueue(CRON_QUEUE);
  } finally {
    await installer.stop({ graceful: false, close: false }).catch(() => undefined);
  }
}

/**
 * Installs pg-boss's schema and starts pg-boss on `pool` (for a caller that shares the database with no other
 * starting process; the service runs `installJobQueueSchema` under the set-up lock instead).
 * @throws when the database cannot be reached or the schema cannot be created
 */
export async function startJobQueue(pool: pg.Pool, options: JobQueueOptions): Promise<PgBoss> {
  await installJobQueueSchema(pool);
  const boss = createJobQueue(pool, options);
  await boss.start();
  return boss;
}

/**
 * Creates the standard-policy queue `name` unless it exists (job options are set per job); under the set-up lock
 * when processes may start together (see `installJobQueueSchema`).
 */
export async function ensureQueue(boss: PgBoss, name: string): Promise<void> {
  if (!(await boss.getQueue(name))) await boss.createQueue(name, { name, policy: 'standard' });
}
