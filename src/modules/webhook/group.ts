/**
 * Factory of the webhook group (spec §4.4, §6, D9): builds the delivery queue, installs the outbox as the
 * recorder of every change's events (`runtime.changes`), and returns the routes under `/api/webhook` and the
 * delivery dispatcher as a background worker (started only where the runtime runs workers and
 * `WEBHOOK_WORKERS` > 0).
 */
import type { Runtime } from '../../runtime.ts';
import type { ResourceGroup } from '../group.ts';
import { DELIVERY_QUEUE, DeliveryQueue } from './delivery-queue.ts';
import { WebhookDispatcher } from './dispatcher.ts';
import { WebhookOutbox } from './outbox.ts';
import { webhookRoutes } from './routes.ts';
import { WebhookService } from './service.ts';

/** The webhook group; `dispatcher` is exposed for tests that observe background sends. */
export interface WebhookGroup extends ResourceGroup {
  dispatcher: WebhookDispatcher;
}

/** Builds the webhook group over `runtime`. */
export function createWebhookGroup(runtime: Runtime): WebhookGroup {
  const { config } = runtime;
  const boss = runtime.jobs.boss;
  const queue = new DeliveryQueue(boss, config.webhookJobExpireSeconds);
  runtime.changes.installRecorder(new WebhookOutbox(queue));
  const service = new WebhookService(
    runtime.database.db,
    runtime.changes,
    queue,
    { allowPrivate: config.webhookAllowPrivate },
    runtime.secrets,
    runtime.cursors,
  );
  const dispatcher = new WebhookDispatcher(
    boss,
    runtime.database.db,
    queue,
    config,
    runtime.secrets,
    runtime.metrics.webhookDeliveryAttempts,
  );
  return {
    name: 'webhook',
    scope: 'api',
    prefix: '/webhook',
    routes: webhookRoutes(service),
    queues: [DELIVERY_QUEUE],
    dispatcher,
    workers:
      config.webhookWorkers > 0
        ? [{ start: () => dispatcher.start(runtime.notifier), stop: () => dispatcher.stop() }]
        : [],
  };
}
