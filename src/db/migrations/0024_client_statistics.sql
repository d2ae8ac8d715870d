-- What the planner assumes of a client it knows nothing about (decision P197): a share of 1 in 10,000 of a
-- tenant table's rows. ANALYZE of an almost empty table (a deployment's first minutes, a manual ANALYZE) records
-- `client_id` as unique, and a prepared statement's generic plan for a client missing from the statistics then
-- costs every `client_id`-led index at about one row: a walk over the client's rows ties with the primary key
-- `(client_id, id)`, and the walk grows with every row the client writes until autovacuum analyzes again. With
-- `n_distinct` fixed at -0.0001 a client is costed at about 10,000 rows of a large table, or the whole of a
-- small one, so a statement keyed by ids reaches its rows by the key under any statistics. The clients ANALYZE
-- finds most common keep their measured share (the most-common-values list still applies to a known client).
-- Takes effect at each table's next ANALYZE. A later migration that creates a tenant table calls
-- `set_client_share` for it (docs/architecture.md).

-- Fixes `client_id`'s n_distinct of `tenant_table`; nothing for a table Citus distributes: Citus refuses this ALTER
-- on a distributed table, and its shards are created in the transaction of a fresh database's migrations, where
-- `run_command_on_shards` (other connections) cannot see them yet. There the workers keep PostgreSQL's estimate.
CREATE FUNCTION set_client_share(tenant_table regclass) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') THEN
    IF EXISTS (SELECT 1 FROM citus_tables WHERE table_name = tenant_table AND citus_table_type = 'distributed') THEN
      RETURN;
    END IF;
  END IF;
  EXECUTE format('ALTER TABLE %s ALTER COLUMN client_id SET (n_distinct = -0.0001)', tenant_table);
END
$$;

SELECT set_client_share(tenant_table::regclass)
FROM unnest(ARRAY[
  'organization', 'app_user', 'api_token', 'prepared_integration', 'cash_register_setting', 'inbound_order',
  'inbound_order_product', 'inbound_order_package', 'inbound_order_package_item', 'inbound_order_history',
  'stock_ledger', 'webhook', 'webhook_event', 'webhook_delivery', 'brand', 'category', 'product_model',
  'product_view', 'product', 'keyword_group', 'keyword', 'keyword_attachment', 'product_tag',
  'product_tag_product', 'product_tag_model', 'parameter_value', 'receipt', 'task', 'task_file_chunk',
  'idempotency_key', 'campaign', 'campaign_statistic_day', 'campaign_statistic_total',
  'campaign_statistic_days'
]) AS tenant_table;
