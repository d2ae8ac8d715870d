/**
 * SQL of the campaign operations (spec §4.6, D10; P100–P109): campaigns as the marketplace describes them, and
 * their daily statistics one row per campaign, day and product. Every query is scoped by client and organization
 * (D1.1). Money is written as exact decimal text (numeric(16,2) roubles); days as `YYYY-MM-DD`.
 */
import { sql, type Insertable, type Kysely, type Selectable } from 'kysely';
import type { DB } from '../../db/schema.ts';
import type { Market1Campaign, Market1StatisticsRow } from '../../connectors/market1/connector.ts';
import type { CampaignStatisticDayTable, CampaignTable } from './tables.ts';
import { refreshCampaignTotals } from './statistic-totals.ts';

/** A stored campaign. */
export type CampaignRow = Selectable<CampaignTable>;

/** Whose campaigns: one organization's campaigns of one service. */
export interface CampaignOwner {
  clientId: number;
  organizationId: number;
  service: string;
}

/** What a stored campaign knows of its marketplace state (the import compares `change_date`). */
export interface StoredCampaignRef {
  id: number;
  external_id: number;
  change_date: Date | null;
}

/** Statistics rows are written in batches of this many (13 parameters each, far below PostgreSQL's 65,535). */
const STATISTICS_BATCH = 1000;

/** Roubles with 2 decimals as exact text (the marketplace sends them as JSON numbers). */
const moneyText = (value: number) => value.toFixed(2);

/**
 * The campaign columns of a marketplace campaign. `write_off_type` is not among them: the marketplace reports no
 * budget source, and a campaign stored with one earlier keeps it (P177).
 */
function campaignValues(owner: CampaignOwner, campaign: Market1Campaign): Insertable<CampaignTable> {
  return {
    client_id: owner.clientId,
    organization_id: owner.organizationId,
    service: owner.service,
    external_id: campaign.externalId,
    name: campaign.name,
    type: campaign.type,
    type_code: campaign.typeCode,
    status: campaign.status,
    status_code: campaign.statusCode,
    payment_type: campaign.paymentType,
    daily_budget: campaign.dailyBudget,
    on_pause: campaign.status === 'PAUSED',
    external_product_ids: campaign.externalProductIds,
    category_id: campaign.subject?.id ?? null,
    category_name: campaign.subject?.name ?? null,
    create_date: new Date(campaign.createDate),
    start_date: campaign.startDate === null ? null : new Date(campaign.startDate),
    end_date: campaign.endDate === null ? null : new Date(campaign.endDate),
    change_date: new Date(campaign.changeDate),
  };
}

/** Campaigns of an organization. */
export const campaignRepository = {
  /** The campaign `id` of `clientId`; undefined when missing or another client's (D2.5). */
  findOfClient: (db: Kysely<DB>, clientId: number, id: number): Promise<CampaignRow | undefined> =>
    db
      .selectFrom('campaign')
      .selectAll()
      .where('id', '=', id)
      .where('client_id', '=', clientId)
      .executeTakeFirst(),

  /** Id, marketplace id and last marketplace change of every stored campaign of `owner`. */
  refsOf: (db: Kysely<DB>, owner: CampaignOwner): Promise<StoredCampaignRef[]> =>
    db
      .selectFrom('campaign')
      .select(['id', 'external_id', 'change_date'])
      .where('client_id', '=', owner.clientId)
      .where('organization_id', '=', owner.organizationId)
      .where('service', '=', owner.service)
      .execute(),

  /**
   * Inserts or replaces the marketplace's campaigns of `owner` (by marketplace id) and returns their rows; a
   * stored `write_off_type` is kept (P177).
   */
  async upsert(db: Kysely<DB>, owner: CampaignOwner, campaigns: Market1Campaign[]): Promise<CampaignRow[]> {
    if (campaigns.length === 0) return [];
    // The time as a value: Citus refuses a function that is not immutable (now()) in DO UPDATE SET.
    const { rows } = await sql<{ now: Date }>`select now() as now`.execute(db);
    const updatedAt = rows[0]?.now ?? new Date();
    return db
      .insertInto('campaign')
      .values(campaigns.map((campaign) => campaignValues(owner, campaign)))
      .onConflict((conflict) =>
        conflict
          .columns(['client_id', 'organization_id', 'service', 'external_id'])
          .doUpdateSet((excluded) => ({
            name: excluded.ref('excluded.name'),
            type: excluded.ref('excluded.type'),
            type_code: excluded.ref('excluded.type_code'),
            status: excluded.ref('excluded.status'),
            status_code: excluded.ref('excluded.status_code'),
            payment_type: excluded.ref('excluded.payment_type'),
            daily_budget: excluded.ref('excluded.daily_budget'),
            on_pause: excluded.ref('excluded.on_pause'),
            external_product_ids: excluded.ref('excluded.external_product_ids'),
            category_id: excluded.ref('excluded.category_id'),
            category_name: excluded.ref('excluded.category_name'),
            create_date: excluded.ref('excluded.create_date'),
            start_date: excluded.ref('excluded.start_date'),
            end_date: excluded.ref('excluded.end_date'),
            change_date: excluded.ref('excluded.change_date'),
            updated_at: updatedAt,
          })),
      )
      .returningAll()
      .execute();
  },

  /** Stores a status the marketplace confirmed (`on_pause` follows it). */
  setStatus: (db: Kysely<DB>, row: CampaignRow, status: CampaignRow['status']): Promise<CampaignRow> =>
    db
      .updateTable('campaign')
      .set({ status, on_pause: status === 'PAUSED', updated_at: sql`now()` })
      .where('id', '=', row.id)
      .where('client_id', '=', row.client_id)
      .returningAll()
      .executeTakeFirstOrThrow(),

  /** Stamps `date_stat_import` on campaigns whose statistics were just imported. */
  async markStatisticsImported(db: Kysely<DB>, clientId: number, ids: number[], at: Date): Promise<void> {
    if (ids.length === 0) return;
    await db
      .updateTable('campaign')
      .set({ date_stat_import: at })
      .where('client_id', '=', clientId)
      .where('id', 'in', ids)
      .execute();
  },

  /** The latest `date_stat_import` of `owner`'s campaigns; null before the first import. */
  async lastStatisticsImport(db: Kysely<DB>, owner: CampaignOwner): Promise<Date | null> {
    const row = await db
      .selectFrom('campaign')
      .select((eb) => eb.fn.max('date_stat_import').as('last'))
      .where('client_id', '=', owner.clientId)
      .where('organization_id', '=', owner.organizationId)
      .where('service', '=', owner.service)
      .executeTakeFirst();
    return row?.last ?? null;
  },
};

/** Where statistics rows go: our campaign id of each marketplace campaign id. */
export interface StatisticsTarget {
  clientId: number;
  organizationId: number;
  campaignIdOf: ReadonlyMap<number, number>;
}

/** Daily statistics of campaigns. */
export const statisticRepository = {
  /**
   * Replaces the statistics of the campaigns `campaignIds` over `dateFrom..dateTo` (inclusive) with `rows`:
   * rows of those days the marketplace no longer reports are deleted, so a rerun leaves the same rows. The
   * campaigns' running totals are rebuilt from `dateFrom` (`refreshCampaignTotals`, P112): call it in a transaction.
   * @returns the number of rows written
   */
  async replaceRange(
    db: Kysely<DB>,
    target: StatisticsTarget,
    campaignIds: number[],
    dateFrom: string,
    dateTo: string,
    rows: Market1StatisticsRow[],
  ): Promise<number> {
    if (campaignIds.length > 0)
      await db
        .deleteFrom('campaign_statistic_day')
        .where('client_id', '=', target.clientId)
        .where('campaign_id', 'in', campaignIds)
        .where('date', '>=', dateFrom)
        .where('date', '<=', dateTo)
        .execute();
    const values = statisticValues(target, rows);
    for (let start = 0; start < values.length; start += STATISTICS_BATCH)
      await db
        .insertInto('campaign_statistic_day')
        .values(values.slice(start, start + STATISTICS_BATCH))
        .execute();
    await refreshCampaignTotals(db, target.clientId, campaignIds, dateFrom);
    return values.length;
  },

  /**
   * Writes only the expenses of `rows` (`reloadCampaignStats?isExpensesOnly=true`): existing rows keep their
   * other counters, missing rows are inserted with expenses (and the product name) only; running totals are
   * rebuilt from the first day written (P112).
   * @returns the number of rows written
   */
  async upsertExpenses(
    db: Kysely<DB>,
    target: StatisticsTarget,
    rows: Market1StatisticsRow[],
  ): Promise<number> {
    const values = statisticValues(target, rows).map((row) => ({
      campaign_id: row.campaign_id,
      date: row.date,
      external_product_id: row.external_product_id,
      client_id: row.client_id,
      organization_id: row.organization_id,
      product_name: row.product_name,
      expenses: row.expenses,
    }));
    // The time as a value: Citus refuses a function that is not immutable (now()) in DO UPDATE SET.
    const { rows: clock } = await sql<{ now: Date }>`select now() as now`.execute(db);
    const importedAt = clock[0]?.now ?? new Date();
    for (let start = 0; start < values.length; start += STATISTICS_BATCH)
      await db
        .insertInto('campaign_statistic_day')
        .values(values.slice(start, start + STATISTICS_BATCH))
        .onConflict((conflict) =>
          conflict
            .columns(['client_id', 'campaign_id', 'date', 'external_product_id'])
            .doUpdateSet((excluded) => ({
              expenses: excluded.ref('excluded.expenses'),
              import_date: importedAt,
            })),
        )
        .execute();
    if (values.length > 0)
      await refreshCampaignTotals(
        db,
        target.clientId,
        values.map((row) => row.campaign_id),
        values.reduce((first, row) => (row.date < first ? row.date : first), values[0]!.date),
      );
    return values.length;
  },
};

/** The table rows of marketplace statistics rows whose campaign is known. */
function statisticValues(
  target: StatisticsTarget,
  rows: Market1StatisticsRow[],
): Insertable<CampaignStatisticDayTable>[] {
  const values: Insertable<CampaignStatisticDayTable>[] = [];
  for (const row of rows) {
    const campaignId = target.campaignIdOf.get(row.campaignExternalId);
    if (campaignId === undefined) continue;
    values.push({
      campaign_id: campaignId,
      date: row.date,
      external_product_id: row.externalProductId,
      client_id: target.clientId,
      organization_id: target.organizationId,
      product_name: row.productName,
      views: row.views,
      clicks: row.clicks,
      expenses: moneyText(row.expenses),
      quantity_add_cart: row.addToCart,
      quantity_orders: row.orders,
      quantity_product_orders: row.orderedItems,
      orders_amount: moneyText(row.ordersAmount),
    });
  }
  return values;
}
