/**
 * The webhook outbox (D9.3), installed as `runtime.events`: inside the change's transaction it finds the live
 * subscriptions that want each candidate event (same client, organization and kind), renders the wanted entities
 * once, and inserts the events, their deliveries and the delivery jobs, plus a `pg_notify` that wakes the
 * dispatchers when the transaction commits. A rolled-back change leaves nothing behind.
 */
import { randomUUID } from 'node:crypto';
import type { Transaction } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { notifyChange } from '../../db/notifications.ts';
import type { EventCandidate, EventRecorder, RenderEntities } from '../../events/outbox.ts';
import { deliveryRepository, webhookRepository, type EventInsert } from './repository.ts';
import type { DeliveryQueue } from './delivery-queue.ts';
import { WAKE_KEY } from './dispatcher.ts';

// Rows per multi-row insert: keeps every statement under PostgreSQL's 65,535 bind parameters.
const EVENT_CHUNK = 5_000;

/** Records webhook events in the outbox tables and the delivery queue. */
export class WebhookOutbox implements EventRecorder {
  constructor(private readonly queue: DeliveryQueue) {}

  /**
   * Records the events of a change. Costs one indexed query when no live subscription of the candidates'
   * clients exists (the common case).
   */
  async record(trx: Transaction<DB>, candidates: EventCandidate[], render: RenderEntities): Promise<void> {
    for (const clientId of new Set(candidates.map((candidate) => candidate.clientId)))
      await this.recordOfClient(
        trx,
        clientId,
        candidates.filter((candidate) => candidate.clientId === clientId),
        render,
      );
  }

  /** Records the events of one client (every statement on that client's shard). */
  private async recordOfClient(
    trx: Transaction<DB>,
    clientId: number,
    candidates: EventCandidate[],
    render: RenderEntities,
  ): Promise<void> {
    const subscriptions = await webhookRepository.liveOfClient(trx, clientId);
    if (subscriptions.length === 0) return;

    const wanted = candidates
      .map((candidate) => ({
        candidate,
        webhookIds: subscriptions
          .filter(
            (subscription) =>
              subscription.client_id === candidate.clientId &&
              subscription.organization_id === candidate.organizationId &&
              subscription.types.includes(candidate.type),
          )
          .map((subscription) => subscription.id),
      }))
      .filter((entry) => entry.webhookIds.length > 0);
    if (wanted.length === 0) return;

    const bodies = await render(trx, clientId, [...new Set(wanted.map((entry) => entry.candidate.entityId))]);
    const events: EventInsert[] = [];
    const deliveries: Array<{ client_id: number; webhook_id: number; event_id: string }> = [];
    for (const { candidate, webhookIds } of wanted) {
      const body = bodies.get(candidate.entityId);
      if (body === undefined) continue;
      const id = randomUUID();
      events.push({
        id,
        client_id: candidate.clientId,
        organization_id: candidate.organizationId,
        type: candidate.type,
        entity_id: candidate.entityId,
        payload: JSON.stringify(body),
      });
      for (const webhookId of webhookIds)
        deliveries.push({ client_id: candidate.clientId, webhook_id: webhookId, event_id: id });
    }
    if (events.length === 0) return;

    for (let start = 0; start < events.length; start += EVENT_CHUNK)
      await deliveryRepository.insertEvents(trx, events.slice(start, start + EVENT_CHUNK));
    const deliveryIds: number[] = [];
    for (let start = 0; start < deliveries.length; start += EVENT_CHUNK)
      deliveryIds.push(
        ...(await deliveryRepository.insertDeliveries(trx, deliveries.slice(start, start + EVENT_CHUNK))),
      );
    await this.queue.enqueue(
      trx,
      deliveryIds.map((deliveryId) => ({ clientId, deliveryId, attempts: 0 })),
    );
    await notifyChange(trx, 'webhook', WAKE_KEY);
  }
}
