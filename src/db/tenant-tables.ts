/**
 * Where each table lives on Citus (decision P175, docs/scale-out.md "What runs where"), as migration 0023 sets it:
 * the tenant tables, distributed by client and colocated with `client` (every other tenant table by
 * `client_id`, `client` by `id`), and the shared tables that are reference tables (a copy on every node). Every
 * table not listed stays local to the coordinator. A migration that adds a tenant or shared table adds it here
 * too; `tests/service/citus.test.ts` checks the cluster against these lists.
 */
import type { DB } from './schema.ts';

/** Every tenant table: its rows belong to one client (`client_id`, or `id` for `client` itself). */
export const TENANT_TABLES = [
  'client',
  'organization',
  'app_user',
  'api_token',
  'prepared_integration',
  'cash_register_setting',
  'inbound_order',
  'inbound_order_product',
  'inbound_order_package',
  'inbound_order_package_item',
  'inbound_order_history',
  'stock_ledger',
  'webhook',
  'webhook_event',
  'webhook_delivery',
  'brand',
  'category',
  'product_model',
  'product_view',
  'product',
  'keyword_group',
  'keyword',
  'keyword_attachment',
  'product_tag',
  'product_tag_product',
  'product_tag_model',
  'parameter_value',
  'receipt',
  'task',
  'task_file_chunk',
  'idempotency_key',
  'campaign',
  'campaign_statistic_day',
  'campaign_statistic_total',
  'campaign_statistic_days',
] as const satisfies ReadonlyArray<keyof DB>;

/** Shared data every client reads: the marketplace dictionaries and the token-to-client lookup. */
export const REFERENCE_TABLES = [
  'market_category',
  'market_parameter',
  'market_parameter_option',
  'api_token_lookup',
] as const satisfies ReadonlyArray<keyof DB>;
