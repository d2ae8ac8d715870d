/** Maps webhook rows to their API shapes; the secret leaves only through `presentCreatedWebhook`. */
import type { Selectable } from 'kysely';
import type { WebhookDeliveryTable, WebhookTable } from '../../db/schema.ts';
import type { EventType } from '../../events/outbox.ts';
import type { CreatedWebhook, RotatedWebhook, Webhook, WebhookDelivery } from './schemas.ts';
import { shownUrl } from './url-password.ts';

/** A subscription without its secret, its URL without a password (P221). */
export const presentWebhook = (row: Selectable<WebhookTable>): Webhook => ({
  id: row.id,
  name: row.name,
  url: shownUrl(row.url, row.url_password !== null),
  clientId: row.client_id,
  organizationId: row.organization_id,
  types: row.types as EventType[],
  enabled: row.disabled_at === null,
  disabledReason: row.disabled_reason,
});

/** The create response: the subscription and its plain secret (D9.1; the row holds it sealed, P160). */
export const presentCreatedWebhook = (row: Selectable<WebhookTable>, secret: string): CreatedWebhook => ({
  ...presentWebhook(row),
  secret,
});

/** The rotation response: the subscription, its new plain secret and the end of the grace period (P167). */
export const presentRotatedWebhook = (row: Selectable<WebhookTable>, secret: string): RotatedWebhook => ({
  ...presentCreatedWebhook(row, secret),
  previousSecretExpiresAt: row.previous_secret_expires_at?.toISOString() ?? null,
});

/** A delivery with the kind and entity of its event. */
export const presentDelivery = (
  row: Selectable<WebhookDeliveryTable> & { type: string; entity_id: number },
): WebhookDelivery => ({
  id: row.id,
  webhookId: row.webhook_id,
  eventId: row.event_id,
  eventType: row.type as EventType,
  entityId: row.entity_id,
  status: row.status,
  attempts: row.attempts,
  lastStatusCode: row.last_status_code,
  lastError: row.last_error,
  lastAttemptAt: row.last_attempt_at?.toISOString() ?? null,
  nextAttemptAt: row.next_attempt_at?.toISOString() ?? null,
  deliveredAt: row.delivered_at?.toISOString() ?? null,
  createdAt: row.created_at.toISOString(),
});
