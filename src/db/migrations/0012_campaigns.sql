-- Advertising campaigns on Market1 and their daily statistics (spec §2 Campaign and StatCampaign, §4.6, D10;
-- our decisions P100–P119 in docs/decisions.md). Every row carries client_id (D1.1). A campaign is the
-- marketplace's campaign `external_id` as imported for one organization and service; its statistics are one row
-- per campaign, marketplace day and product, summed over the marketplace's platforms. Money is numeric(16,2)
-- roubles (exact sums); days are the marketplace's calendar days.
CREATE TABLE campaign (
  id bigserial PRIMARY KEY,
  client_id bigint NOT NULL REFERENCES client (id),
  organization_id bigint NOT NULL REFERENCES organization (id),
  service text NOT NULL,
  external_id bigint NOT NULL,
  name text NOT NULL,
  type text NOT NULL CHECK (
    type IN ('IN_CATALOG', 'IN_CARD', 'IN_SEARCH', 'IN_MAIN', 'AUTO', 'IN_SEARCH_AND_CATALOG', 'BRAND_SHELF', 'UNKNOWN')
  ),
  -- The marketplace's own codes, kept for the values we map to UNKNOWN.
  type_code integer,
  status text NOT NULL CHECK (
    status IN ('DELETED', 'READY', 'FINISHED', 'CANCELLED', 'ACTIVE', 'PAUSED', 'UNKNOWN', 'ARCHIVED')
  ),
  status_code integer,
  -- `CPM`, `CPO` or another marketplace value as it is (Campaign.paymentType).
  payment_type text,
  -- Null when the marketplace does not say (campaigns not created through us).
  write_off_type text CHECK (write_off_type IN ('BALANCE', 'NET', 'BONUS')),
  -- Daily budget, whole roubles; 0 = none (Campaign.sum).
  daily_budget bigint NOT NULL DEFAULT 0,
  on_pause boolean NOT NULL DEFAULT false,
  -- The campaign's products (the marketplace's nm ids), ascending; the first is Campaign.externalProductId.
  external_product_ids bigint[] NOT NULL DEFAULT '{}',
  -- The promoted subject (Campaign.categoryId / categoryName); null when the campaign names none.
  category_id bigint,
  category_name text,
  create_date timestamptz(3),
  start_date timestamptz(3),
  end_date timestamptz(3),
  -- The last change on the marketplace: the import re-reads details only when it moved.
  change_date timestamptz(3),
  -- The last import of this campaign's statistics (Campaign.dateStatImport).
  date_stat_import timestamptz(3),
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  UNIQUE (organization_id, service, external_id)
);
CREATE INDEX campaign_client_organization_idx ON campaign (client_id, organization_id, service, status);

CREATE TABLE campaign_statistic_day (
  campaign_id bigint NOT NULL REFERENCES campaign (id) ON DELETE CASCADE,
  -- The marketplace's calendar day.
  date date NOT NULL,
  -- The product (nm id); 0 = not attributed to a product.
  external_product_id bigint NOT NULL,
  client_id bigint NOT NULL REFERENCES client (id),
  organization_id bigint NOT NULL REFERENCES organization (id),
  product_name text,
  views bigint NOT NULL DEFAULT 0 CHECK (views >= 0),
  clicks bigint NOT NULL DEFAULT 0 CHECK (clicks >= 0),
  expenses numeric(16, 2) NOT NULL DEFAULT 0,
  quantity_add_cart bigint NOT NULL DEFAULT 0 CHECK (quantity_add_cart >= 0),
  quantity_orders bigint NOT NULL DEFAULT 0 CHECK (quantity_orders >= 0),
  quantity_product_orders bigint NOT NULL DEFAULT 0 CHECK (quantity_product_orders >= 0),
  orders_amount numeric(16, 2) NOT NULL DEFAULT 0,
  import_date timestamptz(3) NOT NULL DEFAULT now(),
  PRIMARY KEY (campaign_id, date, external_product_id)
);
-- Aggregations over an organization's days (statistics pages, totals, exports).
CREATE INDEX campaign_statistic_day_organization_idx ON campaign_statistic_day (client_id, organization_id, date);
