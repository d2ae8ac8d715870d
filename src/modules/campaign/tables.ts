/**
 * Kysely table types of advertising campaigns and their daily statistics (migration 0012, spec §2 Campaign and
 * StatCampaign, D10), added to `DB` by augmentation. Money: numeric(16,2) roubles as exact decimal strings; days:
 * `date` columns, the marketplace's calendar days; times UTC.
 */
import type { ColumnType, Generated } from 'kysely';
import type { CreatedAt, Money, Timestamp } from '../../db/schema.ts';
import type { CampaignStatus, CampaignType, WriteOffType } from '../../connectors/market1/connector.ts';

/** A `date` column: read as `YYYY-MM-DD` text (see `database.ts`), written as that text. */
export type Day = ColumnType<string, string, string>;

/** A campaign imported from (or created on) the marketplace for one organization and service. */
export interface CampaignTable {
  id: Generated<number>;
  client_id: number;
  organization_id: number;
  service: string;
  /** The marketplace's campaign id. */
  external_id: number;
  name: string;
  type: CampaignType;
  type_code: number | null;
  status: CampaignStatus;
  status_code: number | null;
  payment_type: string | null;
  write_off_type: WriteOffType | null;
  /** Daily budget, whole roubles (Campaign.sum). */
  daily_budget: ColumnType<number, number | undefined, number>;
  on_pause: ColumnType<boolean, boolean | undefined, boolean>;
  /** nm ids, ascending. */
  external_product_ids: ColumnType<number[], number[] | undefined, number[]>;
  category_id: number | null;
  category_name: string | null;
  create_date: Timestamp;
  start_date: Timestamp;
  end_date: Timestamp;
  change_date: Timestamp;
  date_stat_import: Timestamp;
  created_at: CreatedAt;
  updated_at: CreatedAt;
}

/** One campaign, day and product of statistics (product 0 = not attributed to a product). */
export interface CampaignStatisticDayTable {
  campaign_id: number;
  date: Day;
  external_product_id: number;
  client_id: number;
  organization_id: number;
  product_name: string | null;
  views: ColumnType<number, number | undefined, number>;
  clicks: ColumnType<number, number | undefined, number>;
  expenses: Money;
  quantity_add_cart: ColumnType<number, number | undefined, number>;
  quantity_orders: ColumnType<number, number | undefined, number>;
  quantity_product_orders: ColumnType<number, number | undefined, number>;
  orders_amount: Money;
  import_date: CreatedAt;
}

declare module '../../db/schema.ts' {
  interface DB {
    campaign: CampaignTable;
    campaign_statistic_day: CampaignStatisticDayTable;
  }
}
