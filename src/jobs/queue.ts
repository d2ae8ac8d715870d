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

/**
 * Creates and starts pg-boss on `pool` (creating or migrating its schema under an advisory lock, so concurrent
 * processes do it once). Cron scheduling is on for jobs with a `cron` (P123): every process checks the schedules
 * every 30 s and pg-boss enqueues each due run once across processes.
 * @throws when the database cannot be reached or the schema cannot be created
 */
export async function startJobQueue(pool: pg.Pool, options: JobQueueOptions): Promise<PgBoss> {
  // Once pg-boss has stopped, its SQL is a no-op, as with pg-boss's own pool once closed: a worker whose fetch was
  // in flight during `stop` still runs its job and then completes it without awaiting, after the owner may have
  // ended `pool` (an unhandled "Cannot use a pool after calling end"). That job stays active and is retried after
  // expiry (at-least-once).
  let stopped = false;
  const executeSql = (text: string, values?: unknown[]) =>
    stopped ? Promise.resolve(undefined as unknown as pg.QueryResult) : pool.query(text, values);
  const boss = new PgBoss({
    db: { executeSql },
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
  await boss.start();
  return boss;
}

/** Creates the standard-policy queue `name` unless it exists (job options are set per job). */
export async function ensureQueue(boss: PgBoss, name: string): Promise<void> {
  if (!(await boss.getQueue(name))) await boss.createQueue(name, { name, policy: 'standard' });
}
