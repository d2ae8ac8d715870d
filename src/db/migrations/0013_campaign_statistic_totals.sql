-- Running totals of campaign statistics per campaign and day (spec §4.6 getStatCampaigns, D10.4; our decision
-- P112 in docs/decisions.md). One row per campaign and day that has statistics rows: the sums of
-- `campaign_statistic_day` from the campaign's first day up to and including `date`, apart for the statistics
-- attributed to products (allocated_*, product ≠ 0) and the rest (unallocated_*, product 0). The statistics of
-- any day range are then two index lookups per campaign: the last row on or before its last day minus the last
-- row before its first day. Written only by `refreshCampaignTotals` (src/modules/campaign/statistic-totals.ts),
-- which the code that writes daily rows calls in the same transaction.
CREATE TABLE campaign_statistic_total (
  campaign_id bigint NOT NULL REFERENCES campaign (id) ON DELETE CASCADE,
  date date NOT NULL,
  client_id bigint NOT NULL REFERENCES client (id),
  allocated_rows bigint NOT NULL,
  allocated_views bigint NOT NULL,
  allocated_clicks bigint NOT NULL,
  allocated_expenses numeric(20, 2) NOT NULL,
  allocated_quantity_add_cart bigint NOT NULL,
  allocated_quantity_orders bigint NOT NULL,
  allocated_quantity_product_orders bigint NOT NULL,
  allocated_orders_amount numeric(20, 2) NOT NULL,
  unallocated_rows bigint NOT NULL,
  unallocated_views bigint NOT NULL,
  unallocated_clicks bigint NOT NULL,
  unallocated_expenses numeric(20, 2) NOT NULL,
  unallocated_quantity_add_cart bigint NOT NULL,
  unallocated_quantity_orders bigint NOT NULL,
  unallocated_quantity_product_orders bigint NOT NULL,
  unallocated_orders_amount numeric(20, 2) NOT NULL,
  PRIMARY KEY (campaign_id, date)
);

-- Whether a campaign has statistics not attributed to a product in a range (UNALLOCATED rows, their count):
-- one probe per campaign.
CREATE INDEX campaign_statistic_day_unallocated_idx ON campaign_statistic_day (campaign_id, date)
  WHERE external_product_id = 0;
