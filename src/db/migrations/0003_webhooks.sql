-- Webhook subscriptions, the event outbox and the delivery log (spec §4.4, §6, decision D9).

-- A subscription (D9.1). `secret` signs deliveries (Standard Webhooks, `whsec_…`); it leaves the service only in
-- the create response. A 410 from the receiver disables it (`disabled_at`); DELETE soft-deletes it so its
-- delivery log stays readable in the database.
CREATE TABLE webhook (
  id bigserial PRIMARY KEY,
  client_id bigint NOT NULL REFERENCES client (id),
  organization_id bigint NOT NULL REFERENCES organization (id),
  name text NOT NULL,
  url text NOT NULL,
  types text[] NOT NULL CHECK (cardinality(types) > 0),
  secret text NOT NULL,
  disabled_at timestamptz,
  disabled_reason text,
  deleted_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now()
);
-- The outbox hot path asks "does this client have a live subscription?" on every change.
CREATE INDEX webhook_live_client_idx ON webhook (client_id, organization_id)
  WHERE deleted_at IS NULL AND disabled_at IS NULL;

-- One event per changed entity and kind (D9.3), written in the change's transaction. Its id is the
-- `webhook-id` header, the same on every attempt; `payload` is the exact JSON body sent.
CREATE TABLE webhook_event (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  client_id bigint NOT NULL REFERENCES client (id),
  organization_id bigint NOT NULL,
  type text NOT NULL,
  entity_id bigint NOT NULL,
  payload text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- One delivery per event and subscription: the source of truth of delivery state and the attempt log.
-- A pg-boss job carries (delivery id, attempts at scheduling); a job whose attempt number no longer matches
-- is stale and does nothing, which makes redelivered jobs harmless.
CREATE TABLE webhook_delivery (
  id bigserial PRIMARY KEY,
  client_id bigint NOT NULL REFERENCES client (id),
  webhook_id bigint NOT NULL REFERENCES webhook (id),
  event_id uuid NOT NULL REFERENCES webhook_event (id),
  status text NOT NULL DEFAULT 'PENDING' CHECK (status IN ('PENDING', 'DELIVERED', 'FAILED', 'CANCELLED')),
  attempts integer NOT NULL DEFAULT 0,
  last_status_code integer,
  last_error text,
  last_attempt_at timestamptz,
  next_attempt_at timestamptz DEFAULT now(),
  delivered_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_delivery_webhook_idx ON webhook_delivery (webhook_id, id DESC);
CREATE INDEX webhook_delivery_event_idx ON webhook_delivery (event_id);
CREATE INDEX webhook_delivery_pending_idx ON webhook_delivery (webhook_id) WHERE status = 'PENDING';
