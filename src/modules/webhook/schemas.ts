/**
 * Schemas of the webhook group (spec §4.4, §6, decision D9). `types` ⊆ the event kinds of spec §6; the secret
 * appears only in the create response (D9.1). Delivery log rows are an extension of the spec.
 */
import { CursorQuery, KeysetPage } from '../../http/cursor.ts';
import { Type, type Static } from 'typebox';
import { VISIBLE_TEXT } from '../../domain/text.ts';
import { EVENT_TYPES } from '../../events/outbox.ts';
import { StringEnum } from '../../domain/enums.ts';
import {
  DateTime as DateTimeSchema,
  Int64,
  Int64String,
  Nullable,
  PagingQuery,
  ReadOnlyFields,
} from '../../http/schemas.ts';

const DateTime = DateTimeSchema();

/** An event kind of spec §6. */
export const EventTypeSchema = StringEnum(EVENT_TYPES, { description: 'Event kind' });

/**
 * Body of `POST /api/webhook/` (D9.1). `types` is checked by the service so the error names the field `types`.
 * The read-only fields of a `Webhook` are accepted and ignored, so a subscription read with GET can be sent
 * back (P32).
 */
export const WebhookCreateBody = Type.Object({
  ...ReadOnlyFields({
    id: Int64(),
    clientId: Int64(),
    enabled: Type.Boolean(),
    disabledReason: Nullable(Type.String()),
  }),
  name: Type.String({
    minLength: 1,
    maxLength: 200,
    pattern: VISIBLE_TEXT,
    description: 'Webhook name (stored trimmed; not blank)',
  }),
  url: Type.String({
    minLength: 1,
    maxLength: 2048,
    description:
      'http(s) address that receives the notifications; private and loopback targets are refused (D9.4)',
  }),
  organizationId: Int64({ description: "Organization of the caller's client whose changes are sent" }),
  types: Type.Array(Type.String(), {
    description: `Event kinds to receive, at least one of ${EVENT_TYPES.join(', ')}`,
  }),
});
export type WebhookCreateBody = Static<typeof WebhookCreateBody>;

/** A subscription as `GET /api/webhook/` lists it (no secret). */
export const Webhook = Type.Object(
  {
    id: Type.Integer({ format: 'int64' }),
    name: Type.String(),
    url: Type.String(),
    clientId: Type.Integer({ format: 'int64' }),
    organizationId: Type.Integer({ format: 'int64' }),
    types: Type.Array(EventTypeSchema),
    enabled: Type.Boolean({ description: 'false once the receiver answered 410 Gone (no more deliveries)' }),
    disabledReason: Nullable(Type.String()),
  },
  { $id: 'Webhook', title: 'Webhook' },
);
export type Webhook = Static<typeof Webhook>;

/** The create response: the subscription plus its signing secret, shown only here. */
export const CreatedWebhook = Type.Intersect(
  [
    Type.Ref('Webhook'),
    Type.Object({
      secret: Type.String({
        description: 'Standard Webhooks signing secret (whsec_ + base64); shown only in this response',
      }),
    }),
  ],
  { title: 'CreatedWebhook' },
);
export type CreatedWebhook = Webhook & { secret: string };

/** The longest grace period of a rotation: 7 days. */
export const MAX_GRACE_PERIOD_SECONDS = 604_800;

/** Body of `POST /api/webhook/{webhookId}/secret/rotate` (P167). */
export const SecretRotationBody = Type.Object({
  gracePeriodSeconds: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: MAX_GRACE_PERIOD_SECONDS,
      description:
        'Seconds during which deliveries are signed with the previous secret too (default 24 h, at most 7 days; 0 = none)',
    }),
  ),
});
export type SecretRotationBody = Static<typeof SecretRotationBody>;

/** The rotation response: the subscription, its new secret (shown only here) and the end of the grace period. */
export const RotatedWebhook = Type.Intersect(
  [
    Type.Ref('Webhook'),
    Type.Object({
      secret: Type.String({
        description:
          'The new Standard Webhooks signing secret (whsec_ + base64); shown only in this response',
      }),
      previousSecretExpiresAt: Nullable(
        DateTimeSchema({
          description:
            'Until when deliveries also carry the signature of the previous secret; null without a grace period',
        }),
      ),
    }),
  ],
  { title: 'RotatedWebhook' },
);
export type RotatedWebhook = CreatedWebhook & { previousSecretExpiresAt: string | null };

/** States of a delivery. */
export const DeliveryStatusSchema = StringEnum(['PENDING', 'DELIVERED', 'FAILED', 'CANCELLED'] as const, {
  description: 'PENDING (will be attempted at nextAttemptAt), DELIVERED, FAILED (gave up), CANCELLED',
});

/** One delivery of one event to one subscription, with its attempt log. */
export const WebhookDelivery = Type.Object(
  {
    id: Type.Integer({ format: 'int64' }),
    webhookId: Type.Integer({ format: 'int64' }),
    eventId: Type.String({ description: 'The webhook-id header of every attempt' }),
    eventType: EventTypeSchema,
    entityId: Type.Integer({ format: 'int64', description: 'Id of the changed entity (order, product)' }),
    status: DeliveryStatusSchema,
    attempts: Type.Integer({ description: 'Attempts made so far' }),
    lastStatusCode: Nullable(Type.Integer({ description: 'HTTP status of the last answer' })),
    lastError: Nullable(Type.String({ description: 'Why the last attempt failed' })),
    lastAttemptAt: Nullable(DateTime),
    nextAttemptAt: Nullable(DateTime),
    deliveredAt: Nullable(DateTime),
    createdAt: DateTime,
  },
  { $id: 'WebhookDelivery', title: 'WebhookDelivery' },
);
export type WebhookDelivery = Static<typeof WebhookDelivery>;

/** A page of deliveries (D4.2). */
export const WebhookDeliveryPage = KeysetPage(Type.Ref('WebhookDelivery'), { title: 'WebhookDeliveryPage' });
export type WebhookDeliveryPage = {
  rows: WebhookDelivery[];
  page: number;
  total?: number;
  nextCursor?: string;
};

/** Query of the delivery log (D4.1, and a `cursor` of keyset pagination, P172). */
export const DeliveriesQuery = Type.Object({ ...PagingQuery, ...CursorQuery });
export type DeliveriesQuery = Static<typeof DeliveriesQuery>;

export const WebhookParams = Type.Object({ webhookId: Int64String });
export const DeliveryParams = Type.Object({ webhookId: Int64String, deliveryId: Int64String });
