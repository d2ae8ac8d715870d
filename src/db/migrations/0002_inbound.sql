-- Inbound receiving documents (spec §4.1, decision D5). Money is numeric(16,2): exact, never float.
CREATE TABLE inbound_order (
  id bigserial PRIMARY KEY,
  client_id bigint NOT NULL REFERENCES client (id),
  organization_id bigint NOT NULL REFERENCES organization (id),
  version_id bigint NOT NULL DEFAULT 1,
  type text NOT NULL,
  status text NOT NULL DEFAULT 'CREATED',
  marking_status text NOT NULL DEFAULT 'UNKNOWN',
  marking_type text,
  box_type text,
  service text NOT NULL DEFAULT 'NONE',
  name text,
  comment text,
  warehouse_id bigint,
  stock_warehouse_id bigint,
  service_warehouse_id text,
  external_order_id text,
  invoice_number bigint,
  tracking_number text,
  supply_id bigint,
  supplier_id bigint,
  income_id bigint,
  user_id integer,
  close_user_id integer,
  created_user text,
  express boolean NOT NULL DEFAULT false,
  update_in_service boolean NOT NULL DEFAULT false,
  created_date timestamptz,
  delivery_date timestamptz,
  close_date timestamptz,
  created timestamptz NOT NULL DEFAULT now(),
  modified_date timestamptz NOT NULL DEFAULT now(),
  deleted boolean NOT NULL DEFAULT false,
  total_quantity integer NOT NULL DEFAULT 0,
  total_price numeric(16, 2) NOT NULL DEFAULT 0,
  -- Receiving stock state (D5.8): NONE -> RECORDED (at FINISHED) -> REMOVED (removeIncomeStock).
  income_stock_state text NOT NULL DEFAULT 'NONE' CHECK (income_stock_state IN ('NONE', 'RECORDED', 'REMOVED'))
);
-- Keyset/offset listing per client, newest first; deleted documents are hidden by default (D5.5).
CREATE INDEX inbound_order_client_id_idx ON inbound_order (client_id, id DESC) WHERE NOT deleted;
CREATE INDEX inbound_order_client_status_idx ON inbound_order (client_id, status, id DESC) WHERE NOT deleted;
-- find?deleted=true lists only deleted documents (D5.5): a small partial index of its own.
CREATE INDEX inbound_order_client_deleted_idx ON inbound_order (client_id, id DESC) WHERE deleted;
CREATE INDEX inbound_order_client_modified_idx ON inbound_order (client_id, modified_date);
CREATE INDEX inbound_order_client_external_idx ON inbound_order (client_id, external_order_id);

CREATE TABLE inbound_order_product (
  id bigserial PRIMARY KEY,
  client_id bigint NOT NULL REFERENCES client (id),
  order_id bigint NOT NULL REFERENCES inbound_order (id),
  product_id bigint NOT NULL,
  -- Descriptive snapshot of the product until the catalog group lands (see docs/decisions.md).
  article text,
  barcode text,
  product_name text,
  quantity integer NOT NULL CHECK (quantity >= 0),
  introduced_quantity integer NOT NULL DEFAULT 0,
  price numeric(16, 2) NOT NULL DEFAULT 0 CHECK (price >= 0),
  position integer,
  created_user text,
  created_date timestamptz NOT NULL DEFAULT now(),
  last_update_date timestamptz NOT NULL DEFAULT now(),
  UNIQUE (order_id, product_id)
);
CREATE INDEX inbound_order_product_client_product_idx ON inbound_order_product (client_id, product_id);
CREATE INDEX inbound_order_product_client_barcode_idx ON inbound_order_product (client_id, barcode);
CREATE INDEX inbound_order_product_client_article_idx ON inbound_order_product (client_id, article);

-- Cargo places (OrderPackage) and their items (OrderPackageItem), D5.6.
CREATE TABLE inbound_order_package (
  id bigserial PRIMARY KEY,
  client_id bigint NOT NULL REFERENCES client (id),
  organization_id bigint NOT NULL REFERENCES organization (id),
  order_id bigint NOT NULL REFERENCES inbound_order (id),
  number text,
  width integer,
  height integer,
  length integer,
  weight integer
);
CREATE INDEX inbound_order_package_order_idx ON inbound_order_package (order_id);

CREATE TABLE inbound_order_package_item (
  id bigserial PRIMARY KEY,
  client_id bigint NOT NULL REFERENCES client (id),
  order_id bigint NOT NULL REFERENCES inbound_order (id),
  package_id bigint NOT NULL REFERENCES inbound_order_package (id) ON DELETE CASCADE,
  order_product_id bigint NOT NULL REFERENCES inbound_order_product (id),
  product_id bigint NOT NULL,
  quantity integer NOT NULL CHECK (quantity >= 0)
);
CREATE INDEX inbound_order_package_item_package_idx ON inbound_order_package_item (package_id);
CREATE INDEX inbound_order_package_item_order_idx ON inbound_order_package_item (order_id);

-- History snapshots (OrderHistory, D5.9): one row per change, with what changed.
CREATE TABLE inbound_order_history (
  id bigserial PRIMARY KEY,
  client_id bigint NOT NULL REFERENCES client (id),
  order_id bigint NOT NULL REFERENCES inbound_order (id),
  organization_id bigint NOT NULL,
  date timestamptz NOT NULL DEFAULT now(),
  user_id bigint,
  action text NOT NULL,
  changes jsonb NOT NULL DEFAULT '{}',
  order_status text NOT NULL,
  order_type text NOT NULL,
  order_created_date timestamptz,
  delivery_date timestamptz,
  tracking_number text,
  total_quantity integer NOT NULL,
  total_price numeric(16, 2) NOT NULL,
  version_id bigint NOT NULL
);
CREATE INDEX inbound_order_history_order_idx ON inbound_order_history (order_id, id DESC);

-- Append-only receiving stock ledger (D5.8): + at FINISHED of an INCOME document, - at removeIncomeStock.
CREATE TABLE stock_ledger (
  id bigserial PRIMARY KEY,
  client_id bigint NOT NULL REFERENCES client (id),
  organization_id bigint NOT NULL,
  warehouse_id bigint,
  product_id bigint NOT NULL,
  order_id bigint NOT NULL REFERENCES inbound_order (id),
  order_product_id bigint NOT NULL REFERENCES inbound_order_product (id),
  quantity integer NOT NULL,
  reason text NOT NULL CHECK (reason IN ('INCOME_RECEIVED', 'INCOME_REMOVED')),
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (order_product_id, reason)
);
CREATE INDEX stock_ledger_client_product_idx ON stock_ledger (client_id, product_id, warehouse_id);
-- removeIncomeStock reads one document's receiving rows.
CREATE INDEX stock_ledger_order_idx ON stock_ledger (order_id);
