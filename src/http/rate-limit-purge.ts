/**
 * The purge of ended rate-limit windows (P126): a pg-boss cron job every 10 minutes (UTC), run by one process of
 * those sharing the database. An ended window already counts as absent when a request increments it, so the
 * purge only reclaims space; it deletes in batches and skips rows a request holds locked.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';
import { defineJob, type JobDefinition } from '../jobs/job.ts';
import type { ResourceGroup } from '../modules/group.ts';
import type { Runtime } from '../runtime.ts';
import { rateLimitRepository } from './rate-limit.repository.ts';

/** Rows deleted per statement. */
const BATCH = 10_000;
/** Statements per run; what is left waits for the next run. */
const MAX_BATCHES = 100;

/** The purge job over `db`; `perform` deletes at most `BATCH × MAX_BATCHES` ended counters. */
export function rateLimitPurgeJob(db: Kysely<DB>): JobDefinition<object> {
  return defineJob<object>({
    name: 'rate-limit-purge',
    attempts: 3,
    backoffSeconds: 60,
    expireSeconds: 600,
    cron: '*/10 * * * *',
    perform: async () => {
      for (let batch = 0; batch < MAX_BATCHES; batch++)
        if ((await rateLimitRepository.purgeEnded(db, BATCH)) < BATCH) return;
    },
  });
}

/** What rate limits add to a service process: the purge job (the hook is installed by `buildApp`). */
export function rateLimitPart(runtime: Runtime): ResourceGroup {
  return { name: 'rate limits', scope: 'api', prefix: '', jobs: [rateLimitPurgeJob(runtime.database.db)] };
}
