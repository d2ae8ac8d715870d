/**
 * The resource groups of the service, in registration order. The webhook group comes first: it installs the
 * outbox that records the events of every other group's changes.
 */
import type { Runtime } from '../runtime.ts';
import type { ResourceGroup } from './group.ts';
import { adminRoutes } from './accounts/routes.ts';
import { healthRoutes } from './health/routes.ts';
import { createCatalogGroups } from './catalog/group.ts';
import { createInboundGroup } from './inbound/group.ts';
import { createKeywordGroup } from './keyword/group.ts';
import { createTagGroup } from './tag/group.ts';
import { createWebhookGroup } from './webhook/group.ts';
import { idempotencyKeysPart } from '../http/idempotency-purge.ts';

/** Every group of the service, built once over `runtime`. */
export function createGroups(runtime: Runtime): ResourceGroup[] {
  return [
    { name: 'health', scope: 'root', prefix: '', routes: healthRoutes(runtime) },
    { name: 'admin', scope: 'root', prefix: '/admin', routes: adminRoutes(runtime) },
    createWebhookGroup(runtime),
    createInboundGroup(runtime),
    ...createCatalogGroups(runtime),
    createKeywordGroup(runtime),
    createTagGroup(runtime),
    idempotencyKeysPart(runtime),
  ];
}

/**
 * Creates the queues of every group's jobs and, when the runtime runs workers, starts their workers and
 * background workers (stopped by `runtime.close()`).
 */
export async function startGroupWorkers(runtime: Runtime, groups: readonly ResourceGroup[]): Promise<void> {
  const jobs = groups.flatMap((group) => group.jobs ?? []);
  await runtime.jobs.ensureQueues(jobs);
  if (!runtime.workers) return;
  await runtime.jobs.startWorkers(jobs);
  for (const worker of groups.flatMap((group) => group.workers ?? [])) {
    await worker.start();
    runtime.onClose(() => worker.stop());
  }
}
