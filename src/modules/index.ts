/**
 * The resource groups of the service, in registration order. The webhook group comes first: it installs the
 * outbox that records the events of every other group's changes. The task group is built before the groups that
 * create tasks (they get `tasks.service`) and registers every group's task kinds once all are built.
 */
import type { Runtime } from '../runtime.ts';
import type { ResourceGroup } from './group.ts';
import { adminRoutes } from './accounts/routes.ts';
import { healthRoutes } from './health/routes.ts';
import { createCampaignGroup } from './campaign/group.ts';
import { createCatalogGroups } from './catalog/group.ts';
import { createInboundGroup } from './inbound/group.ts';
import { createKeywordGroup } from './keyword/group.ts';
import { createKnowledgeGroup } from './knowledge/group.ts';
import { createReceiptGroup } from './receipt/group.ts';
import { createTagGroup } from './tag/group.ts';
import { createWebhookGroup } from './webhook/group.ts';
import { createTaskGroup } from './task/group.ts';
import type { TaskService } from './task/service.ts';
import { idempotencyKeysPart } from '../http/idempotency-purge.ts';
import { rateLimitPart } from '../http/rate-limit-purge.ts';
import { backupPart } from '../backup/schedule.ts';

/** Builds a group that may create tasks (tests add their own groups this way). */
export type GroupFactory = (runtime: Runtime, tasks: TaskService) => ResourceGroup;

/**
 * Every group of the service, built once over `runtime`, followed by the groups `extra` builds.
 * @throws Error when two groups list task kinds of the same type
 */
export function createGroups(runtime: Runtime, extra: readonly GroupFactory[] = []): ResourceGroup[] {
  const tasks = createTaskGroup(runtime);
  const groups = [
    { name: 'health', scope: 'root', prefix: '', routes: healthRoutes(runtime) },
    { name: 'admin', scope: 'root', prefix: '/admin', routes: adminRoutes(runtime) },
    createWebhookGroup(runtime),
    createInboundGroup(runtime),
    ...createCatalogGroups(runtime),
    createKeywordGroup(runtime),
    createTagGroup(runtime),
    createReceiptGroup(runtime),
    createCampaignGroup(runtime, tasks.service),
    createKnowledgeGroup(runtime, tasks.service),
    idempotencyKeysPart(runtime),
    rateLimitPart(runtime),
    backupPart(runtime),
    tasks,
    ...extra.map((build) => build(runtime, tasks.service)),
  ] satisfies ResourceGroup[];
  tasks.registerKinds(groups.flatMap((group: ResourceGroup) => group.tasks ?? []));
  return groups;
}

/**
 * Creates the queues of every group's jobs and its further `queues` under the set-up lock and, when the runtime
 * runs workers, starts their workers and background workers (stopped by `runtime.close()`); the last step of a
 * start: the runtime is then `ready` (P166).
 */
export async function startGroupWorkers(runtime: Runtime, groups: readonly ResourceGroup[]): Promise<void> {
  const jobs = groups.flatMap((group) => group.jobs ?? []);
  const queues = groups.flatMap((group) => group.queues ?? []);
  await runtime.setUpOnce(() => runtime.jobs.ensureQueues(jobs, queues));
  if (runtime.workers) {
    await runtime.jobs.startWorkers(jobs);
    for (const worker of groups.flatMap((group) => group.workers ?? [])) {
      await worker.start();
      runtime.onClose(() => worker.stop());
    }
  }
  runtime.ready = true;
}
