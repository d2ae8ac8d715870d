-- Distribution on Citus (decision P175, docs/scale-out.md). One migration set serves plain PostgreSQL, the
-- embedded default and Citus: the two functions below do nothing unless the `citus` extension is installed in this
-- database; there they make a tenant table a distributed table (by client_id, colocated with `client`, which is
-- distributed by id) or a shared table a reference table (a copy on every node). A later migration that creates a
-- tenant table calls `distribute_tenant_table` right after creating it and its parents (docs/architecture.md);
-- tables that stay local on the coordinator are listed in docs/scale-out.md.

-- Makes the listed tenant tables (client_id in every primary, unique and foreign key) distributed tables
-- colocated with `client`, where Citus is installed; elsewhere, and for tables already distributed, nothing.
-- Citus refuses to distribute a table that a local table references, or one that references a local table, so
-- the foreign keys touching the listed tables are set aside, the tables distributed, and the keys made again.
CREATE FUNCTION distribute_tenant_tables(tenant_tables regclass[]) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  pending text[];
  tenant_table text;
  drops text[];
  adds text[];
  statement text;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') THEN
    RETURN;
  END IF;
  -- By name: Citus may re-create a table (a new oid) while it sets its foreign keys aside.
  SELECT coalesce(array_agg(t::text), '{}') INTO pending FROM unnest(tenant_tables) t
    WHERE NOT EXISTS (SELECT 1 FROM citus_tables WHERE table_name = t AND citus_table_type = 'distributed');
  IF cardinality(pending) = 0 THEN
    RETURN;
  END IF;
  -- DDL on distributed tables inside this migration's transaction: one connection per node.
  SET LOCAL citus.multi_shard_modify_mode TO 'sequential';
  SELECT coalesce(array_agg(format('ALTER TABLE %s DROP CONSTRAINT %I', conrelid::regclass, conname)), '{}'),
         coalesce(array_agg(format('ALTER TABLE %s ADD CONSTRAINT %I %s', conrelid::regclass, conname,
                                   pg_get_constraintdef(oid))), '{}')
    INTO drops, adds
    FROM pg_constraint
    WHERE contype = 'f' AND (conrelid::regclass::text = ANY (pending) OR confrelid::regclass::text = ANY (pending));
  FOREACH statement IN ARRAY drops LOOP
    EXECUTE statement;
  END LOOP;
  FOREACH tenant_table IN ARRAY pending LOOP
    IF tenant_table = 'client' THEN
      PERFORM create_distributed_table(tenant_table::regclass, 'id');
    ELSE
      PERFORM create_distributed_table(tenant_table::regclass, 'client_id', colocate_with => 'client');
    END IF;
  END LOOP;
  FOREACH statement IN ARRAY adds LOOP
    EXECUTE statement;
  END LOOP;
END
$$;

-- One tenant table (see distribute_tenant_tables): what a later migration calls right after creating a tenant
-- table, before adding its foreign keys to other tenant tables (docs/architecture.md).
CREATE FUNCTION distribute_tenant_table(tenant_table regclass) RETURNS void
LANGUAGE sql AS $$ SELECT distribute_tenant_tables(ARRAY[tenant_table]) $$;

-- Makes `shared_table` (data every client reads, no client_id) a reference table where Citus is installed;
-- elsewhere, and for a table already distributed, nothing.
CREATE FUNCTION make_reference_table(shared_table regclass) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') THEN
    RETURN;
  END IF;
  IF EXISTS (SELECT 1 FROM citus_tables WHERE table_name = shared_table AND citus_table_type = 'reference') THEN
    RETURN;
  END IF;
  PERFORM create_reference_table(shared_table);
END
$$;

-- The shared dictionaries first (a distributed table may reference a reference table), then every tenant table.
SELECT make_reference_table('market_category');
SELECT make_reference_table('market_parameter');
SELECT make_reference_table('market_parameter_option');
SELECT make_reference_table('api_token_lookup');
SELECT distribute_tenant_tables(ARRAY[
  'client', 'organization', 'app_user', 'api_token', 'prepared_integration', 'cash_register_setting',
  'inbound_order', 'inbound_order_product', 'inbound_order_package', 'inbound_order_package_item',
  'inbound_order_history', 'stock_ledger', 'webhook', 'webhook_event', 'webhook_delivery', 'brand', 'category',
  'product_model', 'product_view', 'product', 'keyword_group', 'keyword', 'keyword_attachment', 'product_tag',
  'product_tag_product', 'product_tag_model', 'parameter_value', 'receipt', 'task', 'task_file_chunk',
  'idempotency_key', 'campaign', 'campaign_statistic_day', 'campaign_statistic_total', 'campaign_statistic_days'
]::regclass[]);
