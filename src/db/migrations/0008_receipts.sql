-- Fiscal receipts of receiving documents (spec §4.3, decision D8; docs/decisions.md P70–P79).

-- The provider-specific setting of CASH_REGISTER_A: the group (cash register group) of the account that receipts
-- are registered in (P72). NULL = the login.
ALTER TABLE cash_register_setting ADD COLUMN group_code text;

CREATE TABLE receipt (
  id bigserial PRIMARY KEY,
  client_id bigint NOT NULL REFERENCES client (id),
  organization_id bigint NOT NULL REFERENCES organization (id),
  order_id bigint NOT NULL REFERENCES inbound_order (id),
  receipt_type text NOT NULL CHECK (receipt_type IN ('INCOME', 'EXPENSE', 'REFUND', 'EXPENSE_REFUND')),
  -- CREATED (committed, not acknowledged by the provider) -> PENDING (accepted) -> COMPLETED | FAILED | CANCELLED.
  status text NOT NULL DEFAULT 'CREATED'
    CHECK (status IN ('CREATED', 'PENDING', 'COMPLETED', 'FAILED', 'CANCELLED')),
  cash_register_service text NOT NULL CHECK (cash_register_service IN ('CASH_REGISTER_A', 'CASH_REGISTER_B')),
  total_amount numeric(16, 2) NOT NULL CHECK (total_amount > 0),
  -- The receipt lines as sent to the provider (name, price, quantity, sum; money in kopecks): a resend is identical.
  lines jsonb NOT NULL,
  -- The provider's id of the receipt (ATOL-style uuid, CloudKassir-style Id) once it acknowledged it.
  external_receipt_id text,
  provider_status text,
  fiscal_number text,
  fiscal_document_attribute text,
  fiscal_storage_number text,
  fns_url text,
  error_message text,
  -- Number of background refreshes made so far; a refresh job whose number is stale does nothing (P76).
  refresh_attempts integer NOT NULL DEFAULT 0,
  created_date timestamptz NOT NULL DEFAULT now(),
  completed_date timestamptz
);
CREATE INDEX receipt_client_order_idx ON receipt (client_id, order_id, id);
-- At most one live receipt of each type per document (D8.2, P73); FAILED and CANCELLED ones may be created again.
CREATE UNIQUE INDEX receipt_live_type_idx ON receipt (order_id, receipt_type)
  WHERE status IN ('CREATED', 'PENDING', 'COMPLETED');
