-- Idempotency keys of the /api mutations (D3.2, decisions P120–P124, docs/operations.md).
--
-- One row per client and key. A request claims its key with a short transaction of its own (claim_token identifies
-- the request that holds it, locked_until is the claim's lease); every transaction of that request then locks the
-- row first, and its answer (status, content type, body) is written into it in the transaction that commits the
-- change. A row without an answer whose lease has passed and which no transaction locks belongs to a request that
-- died: a repeat takes it over. `checkpoint` is what such a request committed before its answer (a change that had
-- to be durable before an external call). Rows are kept until expires_at (24 h by default), then purged.
CREATE TABLE idempotency_key (
  id bigserial PRIMARY KEY,
  client_id bigint NOT NULL REFERENCES client (id),
  key text NOT NULL CHECK (length(key) BETWEEN 1 AND 255),
  -- SHA-256 of the request: method, path, query string and body.
  fingerprint bytea NOT NULL,
  claim_token uuid NOT NULL,
  locked_until timestamptz,
  checkpoint jsonb,
  response_status integer,
  response_content_type text,
  -- The exact body, sealed with the operator key (AES-256-GCM, P160): an answer may carry a secret shown once.
  response_body bytea,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  CONSTRAINT idempotency_key_client_key UNIQUE (client_id, key)
);
-- The purge job deletes by expiry.
CREATE INDEX idempotency_key_expires_idx ON idempotency_key (expires_at);
