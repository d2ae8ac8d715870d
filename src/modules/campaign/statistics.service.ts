/**
 * The statistics part of the campaign group (spec §4.6 getStatCampaigns, getTotalStatCampaigns, getCampaigns;
 * D4, D10.4; P110–P114): every operation first passes `Market1Access.check` (service and organization, spec §7;
 * not paid, so an ended subscription does not stop it, D1.3), then reads the caller's client's data only, with at
 * most `concurrency` statements at once (P156).
 */
import type { Kysely } from 'kysely';
import pLimit, { type LimitFunction } from 'p-limit';
import type { DB } from '../../db/schema.ts';
import type { Principal } from '../../http/auth.ts';
import { AppError, validationError } from '../../http/errors.ts';
import { pageText } from '../../http/schemas.ts';
import { cutPage, resolvePaging, type CursorCodec } from '../../http/cursor.ts';
import { resolveCampaignFilter, type CampaignFilterQuery, type ResolvedCampaignFilter } from './filter.ts';
import { MARKET1_SERVICE, type Market1Access } from './market1-access.ts';
import { presentCampaign } from './presenter.ts';
import type { Campaign } from './schemas.ts';
import { statisticsRepository, type CampaignTotalRow, type StatisticSums } from './statistics.repository.ts';
import type {
  CampaignListQuery,
  CampaignStat,
  CampaignTotalStats,
  TotalStatCampaignsQuery,
} from './statistics.schemas.ts';

/** A page of campaigns (D4.2). */
export interface CampaignPage {
  rows: Campaign[];
  page: number;
  total?: number;
  nextCursor?: string;
}

/** The sums and D10.4 values of a row as API numbers (money roubles, ratios percents; exact to 2 decimals). */
function presentSums(row: StatisticSums) {
  return {
    views: row.views,
    clicks: row.clicks,
    ratioClicksViews: Number(row.ratio_clicks_views),
    averageCost: Number(row.average_cost),
    expenses: Number(row.expenses),
    quantityAddCart: row.quantity_add_cart,
    quantityOrders: row.quantity_orders,
    ratioOrdersOfVisits: Number(row.ratio_orders_of_visits),
    quantityProductOrders: row.quantity_product_orders,
    ordersAmount: Number(row.orders_amount),
    drr: Number(row.drr),
    cps: Number(row.cps),
  };
}

/** The top `topN` campaigns by `value`, highest first, ties by campaign id descending (D4.4). */
function top(
  rows: CampaignTotalRow[],
  topN: number,
  value: (row: CampaignTotalRow) => number,
): CampaignStat[] {
  return rows
    .map((row) => ({ row, value: value(row) }))
    .sort((a, b) => b.value - a.value || b.row.campaign_id - a.row.campaign_id)
    .slice(0, topN)
    .map(({ row, value }) => ({
      campaign: row.name,
      value,
      organizationId: row.organization_id,
      organizationName: row.organization_name,
    }));
}

/** Statistics reads over one database. */
export class CampaignStatisticsService {
  /** Runs the reads' statements, `concurrency` at a time, the others in arrival order (P156). */
  private readonly limit: LimitFunction;

  /** @param concurrency statements run at once (`STATISTICS_CONCURRENCY`), at least 1 */
  constructor(
    private readonly db: Kysely<DB>,
    private readonly access: Market1Access,
    concurrency: number,
    private readonly cursors: CursorCodec,
  ) {
    this.limit = pLimit(concurrency);
  }

  /**
   * Checks access (spec §7) and resolves the filter: the organizations are `organizationId` and every id of
   * `organizationIds`, each of which must be the client's.
   * @param defaultService the service assumed when the query names none (`getCampaigns`: Market1)
   * @throws AppError of `Market1Access.check`; `error_organization_not_found` for another client's
   *   `organizationIds`; `error_validation` from `resolveCampaignFilter`
   */
  private async resolve(
    principal: Principal,
    query: CampaignFilterQuery,
    defaultService?: string,
  ): Promise<ResolvedCampaignFilter> {
    const checked = await this.access.check(principal, {
      organizationId: query.organizationId,
      service: query.service ?? defaultService,
    });
    const more = query.organizationIds ?? [];
    if (more.length > 0) {
      const missing = await statisticsRepository.foreignOrganization(this.db, principal.clientId, more);
      if (missing !== undefined)
        throw new AppError('error_organization_not_found', { organizationId: missing });
    }
    const organizationIds = [checked.organizationId, ...more];
    return resolveCampaignFilter(query, { clientId: principal.clientId, organizationIds });
  }

  /**
   * `getStatCampaigns`: a page of statistics rows (P111): `CAMPAIGN` rows and, for campaigns with statistics not
   * attributed to a product, `UNALLOCATED` rows; `total` with `count=true`, counted by the page's statement.
   * @returns the page (spec §2 FindResponseStatCampaign) as JSON text, its rows built by PostgreSQL (P155)
   * @throws AppError of the access checks (spec §7), `error_validation` for a malformed filter
   */
  async statCampaigns(principal: Principal, query: CampaignFilterQuery): Promise<string> {
    const filter = await this.resolve(principal, query);
    const page = await this.limit(() => statisticsRepository.statPage(this.db, filter));
    return pageText(page.rows, filter.page, page.total ?? undefined);
  }

  /**
   * `getTotalStatCampaigns`: for clicks, views, expenses and averageCost the `topN` campaigns with the highest
   * value over the range, among the matching campaigns with statistics in it (whole statistics, both row types;
   * P113). Paging and sorting parameters of the filter do not apply.
   * @throws AppError of the access checks (spec §7), `error_validation` for a malformed filter
   */
  async totalStatCampaigns(
    principal: Principal,
    query: TotalStatCampaignsQuery,
  ): Promise<CampaignTotalStats> {
    const filter = await this.resolve(principal, query);
    const rows = await this.limit(() => statisticsRepository.campaignTotals(this.db, filter));
    const sums = new Map(rows.map((row) => [row, presentSums(row)]));
    const of = (key: 'clicks' | 'views' | 'expenses' | 'averageCost') => (row: CampaignTotalRow) =>
      (sums.get(row) as ReturnType<typeof presentSums>)[key];
    return {
      clicks: top(rows, query.topN, of('clicks')),
      views: top(rows, query.topN, of('views')),
      expenses: top(rows, query.topN, of('expenses')),
      averageCost: top(rows, query.topN, of('averageCost')),
    };
  }

  /**
   * `getCampaigns`: a page of the client's campaigns matching the filter (P114), `{rows, page, total?}` (D4.2);
   * a statistics `sortBy` sorts by the campaign's whole statistics over the day range. `service` defaults to
   * Market1, the only marketplace with campaigns (D10.1). By `page` (or `offset`) or after a `cursor` (P172).
   * @throws AppError of the access checks (spec §7), `error_validation` for a malformed filter or cursor
   */
  async campaigns(principal: Principal, query: CampaignListQuery): Promise<CampaignPage> {
    const resolved = await this.resolve(principal, query, MARKET1_SERVICE);
    const scope = {
      list: 'campaign.getCampaigns',
      clientId: principal.clientId,
      sortBy: resolved.sortBy ?? 'ID',
      ascending: resolved.ascending,
    };
    if (query.cursor !== undefined && query.offset !== undefined)
      throw validationError('offset', 'cannot be sent together with cursor');
    const { page, after } = resolvePaging(this.cursors, query, scope);
    const filter = after === undefined ? resolved : { ...resolved, page, offset: 0, after };
    const { read, total } = await this.limit(async () => {
      const read = await statisticsRepository.campaignPage(this.db, filter);
      // `total` is carried by the page's rows (P154); a page past the end has none to carry it, and counts alone
      const total = filter.count
        ? (read[0]?.total ?? (await statisticsRepository.campaignCount(this.db, filter)))
        : undefined;
      return { read, total };
    });
    const { rows, nextCursor } = cutPage(this.cursors, scope, read, filter.limit, page, (row) => ({
      value: row.keyset_value,
      id: row.id,
    }));
    return {
      rows: rows.map((row) => presentCampaign(row)),
      page: filter.page,
      ...(total !== undefined && { total }),
      ...(nextCursor !== undefined && { nextCursor }),
    };
  }
}
