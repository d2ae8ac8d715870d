/**
 * The transactional outbox of change events (spec §6, decision D9.3): a service records the events of a change
 * inside the change's own transaction, so a committed change always has its events and a rolled-back one never.
 *
 * Rendering the body (the entity as the API's GET returns it) costs a read, so it is done only for the entities
 * some live subscription of that organization and event type wants.
 */
import type { Transaction } from 'kysely';
import type { DB } from '../db/schema.ts';

/** Event kinds of spec §6. */
export const EVENT_TYPES = ['CREATE_ORDER', 'ORDER', 'ORDER_STATUS', 'CREATE_PRODUCT'] as const;
/** One event kind of spec §6. */
export type EventType = (typeof EVENT_TYPES)[number];

/** A change that may produce an event, before its body is known. */
export interface EventCandidate {
  type: EventType;
  clientId: number;
  organizationId: number;
  /** Id of the changed entity (order id, product id). */
  entityId: number;
}

/** Renders the bodies of the given entity ids as the API's GET returns them, inside the same transaction. */
export type RenderEntities = (
  trx: Transaction<DB>,
  clientId: number,
  entityIds: number[],
) => Promise<Map<number, unknown>>;

/** Records events; implemented by the webhook module and installed at startup. */
export interface EventRecorder {
  record(trx: Transaction<DB>, candidates: EventCandidate[], render: RenderEntities): Promise<void>;
}
