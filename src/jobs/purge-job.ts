/**
 * A periodic purge of rows that already count as absent (expired idempotency keys P123, ended rate-limit windows
 * P126): a pg-boss cron job every 10 minutes (UTC), run by one process of those sharing the database. It only
 * reclaims space, so it deletes in batches and stops after `MAX_BATCHES`; what is left waits for the next run.
 */
import { defineJob, type JobDefinition } from './job.ts';

/** Rows deleted per statement. */
const BATCH = 10_000;
/** Statements per run. */
const MAX_BATCHES = 100;

/**
 * The purge job `name` over `deleteBatch`, which deletes at most `limit` rows (skipping rows a request holds
 * locked) and resolves with how many it deleted; `perform` deletes at most `BATCH × MAX_BATCHES` rows.
 */
export function definePurgeJob(
  name: string,
  deleteBatch: (limit: number) => Promise<number>,
): JobDefinition<object> {
  return defineJob<object>({
    name,
    attempts: 3,
    backoffSeconds: 60,
    expireSeconds: 600,
    cron: '*/10 * * * *',
    perform: async () => {
      for (let batch = 0; batch < MAX_BATCHES; batch++) if ((await deleteBatch(BATCH)) < BATCH) return;
    },
  });
}
