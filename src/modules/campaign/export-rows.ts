/**
 * The rows of a statistics export (P115): one per campaign and day, summed over the day's products, read from the
 * database page by page so an export of any size keeps a page in memory at most. Campaigns are paged in the
 * order organization, external id, our id (keyset, as many at a time as make `PAGE_ROWS` rows by the previous
 * page's rows per campaign, at least one); each page's statistics are one grouped query over the primary key of
 * `campaign_statistic_day`. Every query is scoped by the filter's client and organizations (D1.1). The filter's
 * day range and `productExternalId` restrict the statistics rows; its other criteria the campaigns
 * (`campaignConditions`, P110–P111).
 */
import { sql, type Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { campaignConditions, type ResolvedCampaignFilter } from './filter.ts';
import type { StatsWorkbookRow } from './stats-workbook.ts';

/**
 * Rows a page aims at (P157): a page's rows stay in memory until its last one is written, long enough to be
 * promoted to V8's old generation, with the workbook's buffers around them; with pages of ≈ 250 rows the service
 * grew by 59–67 MiB exporting 100,000 rows in four runs of five, with pages of 4,000 rows by 81–114 MiB
 * (docs/performance.md).
 */
const PAGE_ROWS = 250;
/** Campaigns a page reads at most (campaigns with few or no days in the range). */
const MAX_CAMPAIGNS_PER_PAGE = 100;

/** How many rows an export has and the days they cover (`YYYY-MM-DD`; null without rows). */
export interface ExportExtent {
  rows: number;
  firstDay: string | null;
  lastDay: string | null;
}

/** The statistics rows the filter selects: day range, product and the campaigns' criteria (client-scoped). */
function statisticsOf(db: Kysely<DB>, filter: ResolvedCampaignFilter) {
  return db
    .selectFrom('campaign_statistic_day as s')
    .where('s.client_id', '=', filter.clientId)
    .where('s.organization_id', 'in', filter.organizationIds)
    .$if(filter.days.from !== undefined, (qb) => qb.where('s.date', '>=', filter.days.from!))
    .$if(filter.days.to !== undefined, (qb) => qb.where('s.date', '<=', filter.days.to!))
    .$if(filter.productExternalId !== undefined, (qb) =>
      qb.where('s.external_product_id', '=', filter.productExternalId!),
    )
    .where('s.campaign_id', 'in', () =>
      db
        .selectFrom('campaign')
        .select('campaign.id')
        .where((eb) => campaignConditions(eb, filter)),
    );
}

/** Counts the export's rows (campaign and day pairs) and finds their first and last day: one query. */
export async function exportExtent(db: Kysely<DB>, filter: ResolvedCampaignFilter): Promise<ExportExtent> {
  const groups = statisticsOf(db, filter)
    .select(['s.campaign_id', 's.date'])
    .groupBy(['s.campaign_id', 's.date']);
  const extent = await db
    .selectFrom(groups.as('g'))
    .select([
      sql<number>`count(*)::int`.as('rows'),
      sql<string | null>`min(g.date)`.as('firstDay'),
      sql<string | null>`max(g.date)`.as('lastDay'),
    ])
    .executeTakeFirstOrThrow();
  return extent;
}

/**
 * The export's rows, a page at a time (campaigns in order, each campaign's days ascending). Campaigns without
 * statistics in the range give no rows.
 * @param organizationNames names of the filter's organizations, by id
 */
export async function* pagesOfExportRows(
  db: Kysely<DB>,
  filter: ResolvedCampaignFilter,
  organizationNames: ReadonlyMap<number, string>,
): AsyncGenerator<StatsWorkbookRow[]> {
  let after: { organizationId: number; externalId: number; id: number } | undefined;
  let campaignsPerPage = 1;
  for (;;) {
    const campaigns = await db
      .selectFrom('campaign')
      .select(['id', 'organization_id', 'external_id', 'name', 'type', 'status'])
      .where((eb) => campaignConditions(eb, filter))
      .$if(after !== undefined, (qb) =>
        qb.where(
          (eb) => eb.refTuple('organization_id', 'external_id', 'id'),
          '>',
          (eb) => eb.tuple(after!.organizationId, after!.externalId, after!.id),
        ),
      )
      .orderBy('organization_id')
      .orderBy('external_id')
      .orderBy('id')
      .limit(campaignsPerPage)
      .execute();
    if (campaigns.length === 0) return;
    const last = campaigns.at(-1)!;
    after = { organizationId: last.organization_id, externalId: last.external_id, id: last.id };

    const statistics = await statisticsOf(db, filter)
      .where(
        's.campaign_id',
        'in',
        campaigns.map((campaign) => campaign.id),
      )
      .select((eb) => [
        's.campaign_id',
        's.date',
        sql<number>`sum(s.views)::bigint`.as('views'),
        sql<number>`sum(s.clicks)::bigint`.as('clicks'),
        eb.fn.sum<string>('s.expenses').as('expenses'),
        sql<number>`sum(s.quantity_add_cart)::bigint`.as('quantityAddCart'),
        sql<number>`sum(s.quantity_orders)::bigint`.as('quantityOrders'),
        sql<number>`sum(s.quantity_product_orders)::bigint`.as('quantityProductOrders'),
        eb.fn.sum<string>('s.orders_amount').as('ordersAmount'),
      ])
      .groupBy(['s.campaign_id', 's.date'])
      .orderBy('s.campaign_id')
      .orderBy('s.date')
      .execute();
    const byCampaign = new Map<number, typeof statistics>();
    for (const row of statistics) {
      const days = byCampaign.get(row.campaign_id);
      if (days) days.push(row);
      else byCampaign.set(row.campaign_id, [row]);
    }
    const rows: StatsWorkbookRow[] = [];
    for (const campaign of campaigns)
      for (const day of byCampaign.get(campaign.id) ?? [])
        rows.push({
          organizationName:
            organizationNames.get(campaign.organization_id) ?? String(campaign.organization_id),
          externalId: campaign.external_id,
          campaignName: campaign.name,
          type: campaign.type,
          status: campaign.status,
          day: day.date,
          views: day.views,
          clicks: day.clicks,
          expenses: day.expenses,
          quantityAddCart: day.quantityAddCart,
          quantityOrders: day.quantityOrders,
          quantityProductOrders: day.quantityProductOrders,
          ordersAmount: day.ordersAmount,
        });
    campaignsPerPage = Math.min(
      MAX_CAMPAIGNS_PER_PAGE,
      Math.max(1, Math.floor((PAGE_ROWS * campaigns.length) / Math.max(rows.length, 1))),
    );
    if (rows.length > 0) yield rows;
  }
}
