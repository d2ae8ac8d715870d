/**
 * What is waiting in the job queue, per queue (P130): read from pg-boss's tables with one
 * query over its index of unfinished jobs, for `/metrics` and `/ready`. Ages are in seconds on the database's clock.
 */
import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';

/** The jobs of one pg-boss queue that are not finished. */
export interface QueueStats {
  /** Queue name (a job kind, e.g. `receipt-refresh`, or `webhook-delivery`). */
  queue: string;
  /** Jobs due now and not taken by a worker (created or waiting for a retry). */
  due: number;
  /** Jobs that become due later (delayed jobs and retries with backoff). */
  delayed: number;
  /** Jobs a worker runs now. */
  active: number;
  /** Seconds since the oldest due job became due; 0 when none is due. */
  oldestDueSeconds: number;
}

/**
 * Unfinished jobs of every queue pg-boss knows, queues without jobs included.
 * @throws when the database cannot be reached or pg-boss's schema is missing
 */
export async function jobQueueStats(db: Kysely<DB>): Promise<QueueStats[]> {
  const { rows } = await sql<QueueStats>`
    SELECT queue.name AS queue,
      count(job.id) FILTER (WHERE job.state < 'active' AND job.start_after <= now())::int AS due,
      count(job.id) FILTER (WHERE job.state < 'active' AND job.start_after > now())::int AS delayed,
      count(job.id) FILTER (WHERE job.state = 'active')::int AS active,
      coalesce(extract(epoch FROM now() - min(job.start_after)
        FILTER (WHERE job.state < 'active' AND job.start_after <= now())), 0)::float8 AS "oldestDueSeconds"
    FROM pgboss.queue AS queue
    LEFT JOIN pgboss.job AS job ON job.name = queue.name AND job.state <= 'active'
    GROUP BY queue.name
    ORDER BY queue.name`.execute(db);
  return rows;
}
