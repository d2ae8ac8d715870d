/**
 * The shape of a resource group: one folder under `src/modules/`, one factory (`group.ts`) that builds the
 * group's services once over a runtime and returns its routes, jobs and background workers. `src/modules/index.ts`
 * lists the groups; `src/app.ts` registers their routes, the service process starts their workers.
 */
import type { FastifyPluginAsyncTypebox, FastifyPluginCallbackTypebox } from '@fastify/type-provider-typebox';
import type { CachedRoute } from '../http/cached-answers.ts';
import type { JobDefinition } from '../jobs/job.ts';
import type { TaskDefinition } from './task/definition.ts';

/** Routes of a group: a Fastify plugin over the group's services, registered under its prefix. */
export type GroupRoutes = FastifyPluginCallbackTypebox | FastifyPluginAsyncTypebox;

/** A long-running background worker that is not a plain job (e.g. the webhook dispatcher). */
export interface BackgroundWorker {
  start(): Promise<void>;
  /** Called on close after the job queue stopped and before the database closes. */
  stop(): Promise<void>;
}

/** What a group contributes to a service process. */
export interface ResourceGroup {
  /** Group name (OpenAPI tag, logs). */
  name: string;
  /**
   * Where the routes live: `api` = under `/api` + `prefix`, behind token authentication and roles (D2);
   * `root` = under `prefix` with no token authentication (health, admin with its own check, dictionaries).
   */
  scope: 'api' | 'root';
  prefix: string;
  /** Absent for a part that contributes only jobs or workers (e.g. the purge of idempotency keys). */
  routes?: GroupRoutes;
  /** Job kinds this group enqueues and performs. */
  jobs?: JobDefinition<never>[];
  /**
   * Further pg-boss queues the group sends to and works itself (not plain jobs, e.g. webhook deliveries); created
   * with the jobs' queues under the set-up lock (P166), in every process, also one that runs no workers.
   */
  queues?: string[];
  /** Background task kinds this group creates (TmsTask, D10.3); the task group runs them (P80). */
  tasks?: TaskDefinition<never>[];
  /** Workers beyond plain jobs. */
  workers?: BackgroundWorker[];
  /** Paths of `routes` answered from this process's caches in front of the framework (P223). */
  cachedRoutes?: CachedRoute[];
}
