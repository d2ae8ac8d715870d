/**
 * The purge of ended rate-limit windows (P126, `definePurgeJob`): an ended window already counts as absent when a
 * request increments it, so the purge only reclaims space.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';
import type { JobDefinition } from '../jobs/job.ts';
import { definePurgeJob } from '../jobs/purge-job.ts';
import type { ResourceGroup } from '../modules/group.ts';
import type { Runtime } from '../runtime.ts';
import { rateLimitRepository } from './rate-limit.repository.ts';

/** The purge job over `db`. */
export const rateLimitPurgeJob = (db: Kysely<DB>): JobDefinition<object> =>
  definePurgeJob('rate-limit-purge', (limit) => rateLimitRepository.purgeEnded(db, limit));

/** What rate limits add to a service process: the purge job (the hook is installed by `buildApp`). */
export function rateLimitPart(runtime: Runtime): ResourceGroup {
  return { name: 'rate limits', scope: 'api', prefix: '', jobs: [rateLimitPurgeJob(runtime.database.db)] };
}
