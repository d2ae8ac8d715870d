/**
 * The purge of expired idempotency keys (D3.2, P123): a pg-boss cron job, every 10 minutes (UTC), run by one
 * process of those sharing the database. Expired keys already count as unused when a request claims them, so the
 * purge only reclaims space; it deletes in batches and skips rows a running request holds locked.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';
import { defineJob, type JobDefinition } from '../jobs/job.ts';
import type { ResourceGroup } from '../modules/group.ts';
import type { Runtime } from '../runtime.ts';
import { idempotencyRepository } from './idempotency.repository.ts';

/** Rows deleted per statement. */
const BATCH = 10_000;
/** Statements per run; what is left waits for the next run. */
const MAX_BATCHES = 100;

/**
 * The purge job over `db`.
 * @returns its definition; `perform` resolves with nothing and deletes at most `BATCH × MAX_BATCHES` keys
 */
export function idempotencyPurgeJob(db: Kysely<DB>): JobDefinition<object> {
  return defineJob<object>({
    name: 'idempotency-purge',
    attempts: 3,
    backoffSeconds: 60,
    expireSeconds: 600,
    cron: '*/10 * * * *',
    perform: async () => {
      for (let batch = 0; batch < MAX_BATCHES; batch++)
        if ((await idempotencyRepository.purgeExpired(db, BATCH)) < BATCH) return;
    },
  });
}

/** What the idempotency keys add to a service process: the purge job (the hooks are installed by `buildApp`). */
export function idempotencyKeysPart(runtime: Runtime): ResourceGroup {
  return {
    name: 'idempotency keys',
    scope: 'api',
    prefix: '',
    jobs: [idempotencyPurgeJob(runtime.database.db)],
  };
}
