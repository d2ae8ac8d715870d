-- The days on which each campaign has statistics (spec §4.6 getStatCampaigns `count` and `isStatCampaign`; our
-- decision P151 in docs/decisions.md), as multiranges of days: `days` every day with a daily row,
-- `unallocated_days` the days with a row not attributed to a product (product 0). Whether a campaign has
-- statistics in a range is then one overlap test (`&&`, a binary search) on a row per campaign, instead of an
-- index probe of the daily rows per campaign. Written only by `refreshCampaignTotals`
-- (src/modules/campaign/statistic-totals.ts), in the transaction that wrote the daily rows. Needs PostgreSQL 14
-- (multiranges).
CREATE TABLE campaign_statistic_days (
  campaign_id bigint PRIMARY KEY REFERENCES campaign (id) ON DELETE CASCADE,
  client_id bigint NOT NULL REFERENCES client (id),
  days datemultirange NOT NULL,
  unallocated_days datemultirange NOT NULL
);

INSERT INTO campaign_statistic_days (campaign_id, client_id, days, unallocated_days)
SELECT campaign_id, min(client_id), range_agg(daterange(date, date, '[]')),
       coalesce(range_agg(daterange(date, date, '[]')) FILTER (WHERE external_product_id = 0), '{}')
FROM campaign_statistic_day
GROUP BY campaign_id;

-- The count probed this index once per campaign; the overlap test above replaces it.
DROP INDEX campaign_statistic_day_unallocated_idx;
