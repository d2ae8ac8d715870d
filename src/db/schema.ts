/**
 * Kysely table types of the database (columns in snake_case, as in the SQL migrations).
 *
 * Units: int64 columns arrive as `number` (or `bigint` beyond 2^53, see `database.ts`); `numeric` money
 * columns arrive as exact decimal strings ("123.40"); timestamps as `Date` (UTC).
 */
import type { ColumnType, Generated } from 'kysely';
import type { TaxationSystem } from '../connectors/cash-register/connector.ts';

/** A numeric(16,2) amount as an exact decimal string. Written as a string or number. */
export type Money = ColumnType<string, string | number | undefined, string | number>;
/** A timestamptz column that has a default. */
export type CreatedAt = ColumnType<Date, Date | string | undefined, Date | string>;
/** A nullable timestamptz column. */
export type Timestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
/** A jsonb column. */
export type Json<T> = ColumnType<T, string | undefined, string>;

export interface ClientTable {
  id: Generated<number>;
  name: string;
  subscription_expires_at: Timestamp;
  deleted: Generated<boolean>;
  created_at: CreatedAt;
}

export interface OrganizationTable {
  id: Generated<number>;
  client_id: number;
  name: string;
  inn: string | null;
  created_at: CreatedAt;
}

export interface AppUserTable {
  id: Generated<number>;
  client_id: number;
  name: string;
  lang: 'ru' | 'en' | null;
  role: Generated<'OWNER' | 'ADMIN' | 'MANAGER' | 'SUPPORT'>;
  created_at: CreatedAt;
}

export interface ApiTokenTable {
  id: Generated<number>;
  client_id: number;
  user_id: number;
  token_hash: Buffer;
  access: 'READ' | 'WRITE';
  name: string | null;
  created_at: CreatedAt;
  revoked_at: Timestamp;
}

/** Which client a token hash belongs to: how authentication finds the token's client (a reference table on Citus). */
export interface ApiTokenLookupTable {
  token_hash: Buffer;
  client_id: number;
}

export interface PreparedIntegrationTable {
  id: Generated<number>;
  client_id: number;
  organization_id: number;
  service: string;
  api_key: string;
  base_url: string | null;
  created_at: CreatedAt;
}

export interface CashRegisterSettingTable {
  organization_id: number;
  client_id: number;
  service: 'CASH_REGISTER_A' | 'CASH_REGISTER_B';
  login: string;
  password: string;
  base_url: string | null;
  /** CASH_REGISTER_A's group of cash registers (migration 0008, P72); null = the login. */
  group_code: string | null;
  /** The organization's taxpayer number on its receipts (migration 0020); null = not set yet. */
  inn: string | null;
  /** The sender's email on its receipts, also the buyer's contact we send (migration 0020). */
  company_email: string | null;
  /** The place of settlement on its receipts (migration 0020). */
  payment_address: string | null;
  /** The taxation system of its receipts (migration 0020). */
  taxation_system: TaxationSystem | null;
  created_at: CreatedAt;
}

export interface InboundOrderTable {
  id: Generated<number>;
  client_id: number;
  organization_id: number;
  version_id: Generated<number>;
  type: string;
  status: Generated<string>;
  marking_status: Generated<string>;
  marking_type: string | null;
  box_type: string | null;
  service: Generated<string>;
  name: string | null;
  comment: string | null;
  warehouse_id: number | null;
  stock_warehouse_id: number | null;
  service_warehouse_id: string | null;
  external_order_id: string | null;
  invoice_number: number | null;
  tracking_number: string | null;
  supply_id: number | null;
  supplier_id: number | null;
  income_id: number | null;
  user_id: number | null;
  close_user_id: number | null;
  created_user: string | null;
  express: Generated<boolean>;
  update_in_service: Generated<boolean>;
  created_date: Timestamp;
  delivery_date: Timestamp;
  close_date: Timestamp;
  created: CreatedAt;
  modified_date: CreatedAt;
  deleted: Generated<boolean>;
  total_quantity: Generated<number>;
  total_price: Money;
  income_stock_state: Generated<'NONE' | 'RECORDED' | 'REMOVED'>;
}

export interface InboundOrderProductTable {
  id: Generated<number>;
  client_id: number;
  order_id: number;
  product_id: number;
  article: string | null;
  barcode: string | null;
  product_name: string | null;
  quantity: number;
  introduced_quantity: Generated<number>;
  price: Money;
  position: number | null;
  created_user: string | null;
  created_date: CreatedAt;
  last_update_date: CreatedAt;
}

export interface InboundOrderPackageTable {
  id: Generated<number>;
  client_id: number;
  organization_id: number;
  order_id: number;
  number: string | null;
  width: number | null;
  height: number | null;
  length: number | null;
  weight: number | null;
}

export interface InboundOrderPackageItemTable {
  id: Generated<number>;
  client_id: number;
  order_id: number;
  package_id: number;
  order_product_id: number;
  product_id: number;
  quantity: number;
}

export interface InboundOrderHistoryTable {
  id: Generated<number>;
  client_id: number;
  order_id: number;
  organization_id: number;
  date: CreatedAt;
  user_id: number | null;
  action: string;
  changes: Json<Record<string, unknown>>;
  order_status: string;
  order_type: string;
  order_created_date: Timestamp;
  delivery_date: Timestamp;
  tracking_number: string | null;
  total_quantity: number;
  total_price: Money;
  version_id: number;
}

export interface StockLedgerTable {
  id: Generated<number>;
  client_id: number;
  organization_id: number;
  warehouse_id: number | null;
  product_id: number;
  order_id: number;
  order_product_id: number;
  quantity: number;
  reason: 'INCOME_RECEIVED' | 'INCOME_REMOVED';
  created_at: CreatedAt;
}

/** A webhook subscription (D9.1); `types` ⊆ the event kinds of spec §6. */
export interface WebhookTable {
  id: Generated<number>;
  client_id: number;
  organization_id: number;
  name: string;
  /** Without a password: that is `url_password` (P221). */
  url: string;
  /** The URL's password, percent-encoded and sealed (P160, P221); null when the URL has none. */
  url_password: string | null;
  types: string[];
  secret: string;
  /** The secret before the last rotation (sealed), signing too until `previous_secret_expires_at` (P167). */
  previous_secret: string | null;
  previous_secret_expires_at: Timestamp;
  /** No delivery before this time: the endpoint answered 429/502/503/504 (P168). */
  throttled_until: Timestamp;
  /** Such answers in a row; 0 after a delivered attempt. */
  throttle_level: Generated<number>;
  disabled_at: Timestamp;
  disabled_reason: string | null;
  deleted_at: Timestamp;
  created_at: CreatedAt;
}

/** An outbox event (D9.3); `id` is the `webhook-id` header, `payload` the exact JSON body. */
export interface WebhookEventTable {
  id: Generated<string>;
  client_id: number;
  organization_id: number;
  type: string;
  entity_id: number;
  payload: string;
  created_at: CreatedAt;
}

/** Delivery state and attempt log of one event to one subscription (D9.3). */
export interface WebhookDeliveryTable {
  id: Generated<number>;
  client_id: number;
  webhook_id: number;
  event_id: string;
  status: Generated<'PENDING' | 'DELIVERED' | 'FAILED' | 'CANCELLED'>;
  attempts: Generated<number>;
  last_status_code: number | null;
  last_error: string | null;
  last_attempt_at: Timestamp;
  next_attempt_at: Timestamp;
  delivered_at: Timestamp;
  created_at: CreatedAt;
}

/**
 * All tables, keyed by table name. Newer groups add theirs by augmenting this interface in their own
 * `src/modules/<group>/tables.ts` (e.g. the catalog), so no group edits this list.
 */
export interface DB {
  client: ClientTable;
  organization: OrganizationTable;
  app_user: AppUserTable;
  api_token: ApiTokenTable;
  api_token_lookup: ApiTokenLookupTable;
  prepared_integration: PreparedIntegrationTable;
  cash_register_setting: CashRegisterSettingTable;
  inbound_order: InboundOrderTable;
  inbound_order_product: InboundOrderProductTable;
  inbound_order_package: InboundOrderPackageTable;
  inbound_order_package_item: InboundOrderPackageItemTable;
  inbound_order_history: InboundOrderHistoryTable;
  stock_ledger: StockLedgerTable;
  webhook: WebhookTable;
  webhook_event: WebhookEventTable;
  webhook_delivery: WebhookDeliveryTable;
}
