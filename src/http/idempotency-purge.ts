/**
 * The purge of expired idempotency keys (D3.2, P123, `definePurgeJob`): expired keys already count as unused when
 * a request claims them, so the purge only reclaims space.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';
import type { JobDefinition } from '../jobs/job.ts';
import { definePurgeJob } from '../jobs/purge-job.ts';
import type { ResourceGroup } from '../modules/group.ts';
import type { Runtime } from '../runtime.ts';
import { idempotencyRepository } from './idempotency.repository.ts';

/** The purge job over `db`. */
export const idempotencyPurgeJob = (db: Kysely<DB>): JobDefinition<object> =>
  definePurgeJob('idempotency-purge', (limit) => idempotencyRepository.purgeExpired(db, limit));

/** What the idempotency keys add to a service process: the purge job (the hooks are installed by `buildApp`). */
export function idempotencyKeysPart(runtime: Runtime): ResourceGroup {
  return {
    name: 'idempotency keys',
    scope: 'api',
    prefix: '',
    jobs: [idempotencyPurgeJob(runtime.database.db)],
  };
}
