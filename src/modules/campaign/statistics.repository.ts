/**
 * SQL of the statistics pages (spec §4.6, D10.4, P112–P113). A campaign's statistics over a day range come from
 * its running totals (`campaign_statistic_total`): the last row on or before the range's last day minus the last
 * row before its first day, two index lookups per campaign whatever the range. With `productExternalId` they
 * are summed from the daily rows of that product instead (totals are not kept per product).
 *
 * Derived values follow D10.4, rounded to 2 decimals half away from zero (P111) in SQL, so the order of a page
 * and the values it shows agree; a zero denominator gives 0.
 */
import {
  sql,
  type Compilable,
  type ExpressionBuilder,
  type Kysely,
  type RawBuilder,
  type Selectable,
  type SqlBool,
} from 'kysely';
import type { DB } from '../../db/schema.ts';
import { idRows } from '../../db/id-rows.ts';
import { ignoringCase, keysetAfter, keysetValue, type KeysetOrder } from '../../db/keyset.ts';
import type { CampaignStatus, CampaignType } from '../../connectors/market1/connector.ts';
import { campaignConditions, type CampaignSortField, type ResolvedCampaignFilter } from './filter.ts';
import { STATISTIC_METRICS } from './statistic-totals.ts';
import type { CampaignTable } from './tables.ts';

/** Which part of a campaign's statistics a row carries (spec §2 StatCampaign.rowType, P111). */
export type StatRowType = 'CAMPAIGN' | 'UNALLOCATED';

/** Summed metrics and the values of D10.4 derived from them; money as exact decimal strings, roubles. */
export interface StatisticSums {
  views: number;
  clicks: number;
  expenses: string;
  quantity_add_cart: number;
  quantity_orders: number;
  quantity_product_orders: number;
  orders_amount: string;
  ratio_clicks_views: string;
  average_cost: string;
  ratio_orders_of_visits: string;
  drr: string;
  cps: string;
}

/** The campaign columns a statistics row shows; times ISO 8601 UTC text with milliseconds. */
export interface StatCampaignOwner {
  campaign_id: number;
  external_id: number;
  name: string;
  service: string;
  type: CampaignType;
  status: CampaignStatus;
  category_name: string | null;
  create_date: string | null;
  start_date: string | null;
  end_date: string | null;
  client_id: number;
  organization_id: number;
  organization_name: string;
}

/** A page of `getStatCampaigns`: its rows as a JSON array of `StatCampaign`, and with `count` its `total`. */
export interface StatPage {
  rows: string;
  total: number | null;
}

/** One campaign's whole statistics (both row types) over the range, for `getTotalStatCampaigns`. */
export type CampaignTotalRow = StatisticSums &
  Pick<StatCampaignOwner, 'campaign_id' | 'name' | 'organization_id' | 'organization_name'>;

type Side = 'allocated' | 'unallocated';
const SIDES: readonly Side[] = ['allocated', 'unallocated'];
const COUNTED = ['rows', ...STATISTIC_METRICS] as const;

/** Days of the filter's range on the daily rows aliased `day`. */
function dayRange(filter: ResolvedCampaignFilter): RawBuilder<unknown> {
  const { from, to } = filter.days;
  return sql.join(
    [
      from === undefined ? sql`true` : sql`day.date >= ${from}::date`,
      to === undefined ? sql`true` : sql`day.date <= ${to}::date`,
    ],
    sql` and `,
  );
}

/** The filter's day range as a `daterange` (bounds inclusive; an absent bound is open). */
function dayRangeValue(filter: ResolvedCampaignFilter): RawBuilder<unknown> {
  const { from, to } = filter.days;
  return sql`daterange(${from ?? null}::date, ${to ?? null}::date, '[]')`;
}

/**
 * Whether the `campaign` row has daily statistics rows in the range (of the filtered product, if any): one overlap
 * test of its days with statistics (P151), or with `productExternalId` one probe of the daily rows' primary key.
 */
function hasStatistics(filter: ResolvedCampaignFilter): RawBuilder<SqlBool> {
  if (filter.productExternalId !== undefined)
    return sql<SqlBool>`exists (
      select 1 from campaign_statistic_day as day
      where day.client_id = campaign.client_id and day.campaign_id = campaign.id
        and day.external_product_id = ${filter.productExternalId}::bigint and ${dayRange(filter)})`;
  return sql<SqlBool>`exists (
    select 1 from campaign_statistic_days as statistic
    where statistic.client_id = campaign.client_id and statistic.campaign_id = campaign.id
      and statistic.days && ${dayRangeValue(filter)})`;
}

/** Whether a `sortBy` orders by statistics (then every campaign's statistics are needed before paging). */
const sortsByStatistics = (sortBy: CampaignSortField | undefined) =>
  sortBy !== undefined && !(sortBy in CAMPAIGN_SORT_KEYS);

/** The filter's criteria on `campaign` and, with `isStatCampaign`, statistics rows in the range. */
function selectionConditions(eb: ExpressionBuilder<DB, 'campaign'>, filter: ResolvedCampaignFilter) {
  return filter.isStatCampaign
    ? eb.and([campaignConditions(eb, filter), hasStatistics(filter)])
    : campaignConditions(eb, filter);
}

/** The campaigns matching the filter (`id`): its criteria on `campaign` and, with `isStatCampaign`, statistics. */
function matchingCampaigns(db: Kysely<DB>, filter: ResolvedCampaignFilter) {
  return db
    .selectFrom('campaign')
    .select('campaign.id')
    .where((eb) => selectionConditions(eb, filter));
}

/**
 * The campaigns with a row on the page, for a page in a campaign order (P112, P153): `(id, position,
 * row_count)`. A campaign gives one row, and a second (`UNALLOCATED`) when it has unattributed statistics in the
 * range (its days with statistics, P151; never with `productExternalId`); `position` is the index of its first
 * row in page order. Every campaign gives at least one row, so the page lies within the first `offset + limit`
 * campaigns: only those are read, and the statistics of only those on the page are then looked up.
 */
function pageCampaigns(db: Kysely<DB>, filter: ResolvedCampaignFilter): RawBuilder<unknown> {
  const keys = campaignOrder(filter);
  const rowCount =
    filter.productExternalId === undefined
      ? sql<number>`(1 + coalesce(page_days.unallocated_days && ${dayRangeValue(filter)}, false)::int)`
      : sql<number>`1`;
  const ordered = db
    .selectFrom('campaign')
    .leftJoin('campaign_statistic_days as page_days', (join) =>
      join
        .onRef('page_days.client_id', '=', 'campaign.client_id')
        .onRef('page_days.campaign_id', '=', 'campaign.id'),
    )
    .select([
      'campaign.id',
      rowCount.as('row_count'),
      sql<number>`sum(${rowCount}) over (order by ${keys} rows unbounded preceding) - ${rowCount}`.as(
        'position',
      ),
    ])
    .where((eb) => selectionConditions(eb, filter))
    .orderBy(keys)
    .limit(filter.offset + filter.limit);
  return sql`
    select ordered.id, ordered.position, ordered.row_count from (${ordered}) as ordered
    where ordered.position < ${filter.offset + filter.limit}
      and ordered.position + ordered.row_count > ${filter.offset}`;
}

/**
 * The constant column lists of the statements below, built once as SQL text: they only name columns (the
 * metrics of `STATISTIC_METRICS`, plain snake_case identifiers), and compiling them node by node on every
 * request was a tenth of a statistics page's time in Node (docs/performance.md).
 */
const columnList = (columns: readonly string[]) => sql.raw(columns.join(', '));
const sideColumns = SIDES.flatMap((side) => COUNTED.map((metric) => `${side}_${metric}`));

/** The running totals' columns of the lookup aliased `total`. */
const TOTAL_COLUMNS = columnList(sideColumns.map((column) => `total.${column}`));

/** Per side and metric, the upper running total minus the lower one (or the upper alone for an open start). */
const DIFFERENCES = {
  openStart: columnList(sideColumns.map((column) => `coalesce(upper_total.${column}, 0) as ${column}`)),
  closed: columnList(
    sideColumns.map(
      (column) => `coalesce(upper_total.${column}, 0) - coalesce(lower_total.${column}, 0) as ${column}`,
    ),
  ),
};

/** The sums of one product's daily rows aliased `day` (all allocated), and zeros for the unallocated side. */
const PRODUCT_SUMS = columnList(
  COUNTED.map((metric) =>
    metric === 'rows'
      ? 'count(*) as allocated_rows'
      : `coalesce(sum(day.${metric}), 0) as allocated_${metric}`,
  ),
);
const NO_UNALLOCATED = columnList(COUNTED.map((metric) => `0 as unallocated_${metric}`));

/**
 * `sums(campaign_id, allocated_*, unallocated_*)`: per campaign of `selected` (a relation with `id`), its
 * statistics over the day range. From running totals, or from the product's daily rows when `productExternalId`
 * is set (all allocated).
 */
function sumsRelation(
  filter: ResolvedCampaignFilter,
  selected: Compilable | RawBuilder<unknown>,
): RawBuilder<unknown> {
  const { from, to } = filter.days;
  if (filter.productExternalId !== undefined) {
    return sql`
      select selected.id as campaign_id, product.*, ${NO_UNALLOCATED}
      from (${selected}) as selected
      cross join lateral (
        select ${PRODUCT_SUMS} from campaign_statistic_day as day
        where day.client_id = ${filter.clientId} and day.campaign_id = selected.id
          and day.external_product_id = ${filter.productExternalId}::bigint
          and ${dayRange(filter)}
      ) as product`;
  }
  const lookup = (alias: string, condition: RawBuilder<unknown>) => sql`
      left join lateral (
        select ${TOTAL_COLUMNS} from campaign_statistic_total as total
        where total.client_id = ${filter.clientId} and total.campaign_id = selected.id and ${condition}
        order by total.date desc
        limit 1
      ) as ${sql.id(alias)} on true`;
  return sql`
    select selected.id as campaign_id, ${from === undefined ? DIFFERENCES.openStart : DIFFERENCES.closed}
    from (${selected}) as selected
    ${lookup('upper_total', to === undefined ? sql`true` : sql`total.date <= ${to}::date`)}
    ${from === undefined ? sql`` : lookup('lower_total', sql`total.date < ${from}::date`)}`;
}

/** The D10.4 values over a relation with the summed columns; rounded to 2 decimals (P111). */
const derivedValues = sql`
  case when views = 0 then 0 else round(clicks * 100.0 / views, 2) end as ratio_clicks_views,
  case when clicks = 0 then 0 else round(expenses / clicks, 2) end as average_cost,
  case when clicks = 0 then 0 else round(quantity_orders * 100.0 / clicks, 2) end as ratio_orders_of_visits,
  case when orders_amount = 0 then 0 else round(expenses * 100 / orders_amount, 2) end as drr,
  case when quantity_orders = 0 then 0 else round(expenses / quantity_orders, 2) end as cps`;

/** The summed metrics of `sides` of the relation `sums` under their plain names (`rows` as `statistic_rows`). */
function metricsOf(sides: readonly Side[]): RawBuilder<unknown> {
  return columnList(
    COUNTED.map((metric) => {
      const sum = sides.map((side) => `sums.${side}_${metric}`).join(' + ');
      return `${sum} as ${metric === 'rows' ? 'statistic_rows' : metric}`;
    }),
  );
}
const METRICS = {
  allocated: metricsOf(['allocated']),
  unallocated: metricsOf(['unallocated']),
  whole: metricsOf(SIDES),
};

/**
 * A `timestamptz` column of `campaign` as ISO 8601 UTC text with milliseconds (`toISOString`'s form): formatted by
 * PostgreSQL, it costs a third of parsing a `Date` in Node and formatting it again (docs/performance.md).
 */
const isoTime = (column: 'create_date' | 'start_date' | 'end_date') =>
  `to_char(campaign.${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as ${column}`;

/** The campaign's own columns of a statistics row (`StatCampaignOwner`). */
const ownerColumns = sql.raw(`
  campaign.id as campaign_id, campaign.external_id, campaign.name, campaign.service, campaign.type,
  campaign.status, campaign.category_name, ${isoTime('create_date')}, ${isoTime('start_date')},
  ${isoTime('end_date')}, campaign.client_id, campaign.organization_id, organization.name as organization_name`);

/**
 * `stat_campaign`: a page row aliased `row` under the names of a `StatCampaign` (spec §2), whose JSON
 * (`row_to_json`, as `json_agg` writes it) is the row of the page's answer (P155). Decimal values lose trailing
 * zeros (`trim_scale`), so each is the number a JavaScript client reads and writes back (`12.5`, not `12.50`).
 */
const STAT_CAMPAIGN = sql.raw(`cross join lateral (
  select row.row_type as "rowType", row.row_type || ':' || row.campaign_id as "uniqueId",
    row.campaign_id as "campaignId", row.external_id as "externalId", row.name as "campaignName",
    row.service as "service", row.type as "campaignType", row.category_name as "categoryName",
    row.create_date as "createDate", row.start_date as "startDate", row.end_date as "endDate",
    row.client_id as "clientId", row.organization_id as "organizationId",
    row.organization_name as "organizationName", 'RUB' as "currency", row.views as "views",
    row.clicks as "clicks", trim_scale(row.ratio_clicks_views) as "ratioClicksViews",
    trim_scale(row.average_cost) as "averageCost", trim_scale(row.expenses) as "expenses",
    row.quantity_add_cart as "quantityAddCart", row.quantity_orders as "quantityOrders",
    trim_scale(row.ratio_orders_of_visits) as "ratioOrdersOfVisits",
    row.quantity_product_orders as "quantityProductOrders", trim_scale(row.orders_amount) as "ordersAmount",
    trim_scale(row.drr) as "drr", trim_scale(row.cps) as "cps"
) as stat_campaign`);

const campaignColumn = (name: keyof CampaignTable) => sql.ref(`campaign.${name}`);

/** Sort key on `campaign` of each `sortBy` on the campaign itself: its column, a name ignoring case (P222). */
const CAMPAIGN_SORT_KEYS: Partial<Record<CampaignSortField, RawBuilder<unknown>>> = {
  EXTERNALID: campaignColumn('external_id'),
  SERVICE: campaignColumn('service'),
  CAMPAIGNNAME: ignoringCase(campaignColumn('name')),
  CAMPAIGNTYPE: campaignColumn('type'),
  CATEGORYNAME: ignoringCase(campaignColumn('category_name')),
  CREATEDATE: campaignColumn('create_date'),
  STATUS: campaignColumn('status'),
};

/** The sort key of `sortBy` in `keys`; none for a `sortBy` of the other kind or without one. */
const sortKey = (
  keys: Partial<Record<CampaignSortField, RawBuilder<unknown>>>,
  sortBy?: CampaignSortField,
) => (sortBy === undefined ? undefined : keys[sortBy]);

/**
 * The keys of a campaign order on `campaign` (D4.4): the `sortBy` key when it is one of the campaign's, then
 * the campaign id, both in the filter's direction.
 */
function campaignOrder(filter: ResolvedCampaignFilter): RawBuilder<unknown> {
  const direction = filter.ascending ? sql`asc` : sql`desc`;
  const key = sortKey(CAMPAIGN_SORT_KEYS, filter.sortBy);
  return sql.join([...(key === undefined ? [] : [sql`${key} ${direction}`]), sql`campaign.id ${direction}`]);
}

const rowColumn = (name: string) => sql.ref(`row.${name}`);

/** Sort key on a page's rows (aliased `row`) of each statistics `sortBy`: its column. */
const STATISTIC_SORT_KEYS: Partial<Record<CampaignSortField, RawBuilder<unknown>>> = {
  VIEWS: rowColumn('views'),
  CLICKS: rowColumn('clicks'),
  RATIOCLICKSVIEWS: rowColumn('ratio_clicks_views'),
  AVERAGECOST: rowColumn('average_cost'),
  EXPENSES: rowColumn('expenses'),
  QUANTITYADDCART: rowColumn('quantity_add_cart'),
  QUANTITYORDERS: rowColumn('quantity_orders'),
  RATIOORDERSOFVISITS: rowColumn('ratio_orders_of_visits'),
  QUANTITYPRODUCTORDERS: rowColumn('quantity_product_orders'),
  ORDERSAMOUNT: rowColumn('orders_amount'),
};

/**
 * The keyset order (P172) of a page in a campaign order (`campaignOrder`, on `campaign`) or a statistics order
 * (`orderBy` without the row type, on the rows aliased `row`); PostgreSQL's default null placement.
 */
function keysetOrder(filter: ResolvedCampaignFilter, on: 'campaign' | 'row'): KeysetOrder {
  return {
    column: sortKey(on === 'campaign' ? CAMPAIGN_SORT_KEYS : STATISTIC_SORT_KEYS, filter.sortBy),
    id: sql.ref(on === 'campaign' ? 'campaign.id' : 'row.campaign_id'),
    ascending: filter.ascending,
    nullsFirst: !filter.ascending,
  };
}

/** `order by` of a page: the sort field, then the campaign id in the same direction (D4.4), then the row type. */
function orderBy(filter: ResolvedCampaignFilter, withRowType: boolean): RawBuilder<unknown> {
  const direction = filter.ascending ? sql`asc` : sql`desc`;
  const keys = [];
  const key = sortKey(STATISTIC_SORT_KEYS, filter.sortBy);
  if (key !== undefined) keys.push(sql`${key} ${direction}`);
  keys.push(sql`row.campaign_id ${direction}`);
  if (withRowType) keys.push(sql`row.row_type asc`);
  return sql.join(keys);
}

/**
 * `select total`: the number of campaigns matching the filter (`getCampaigns`' rows) or, with `unallocatedRows`,
 * of `getStatCampaigns` rows: those campaigns plus the ones with statistics not attributed to a product in the
 * range (an overlap test of their days with statistics, P151; none with `productExternalId`).
 */
function matchingRowCount(db: Kysely<DB>, filter: ResolvedCampaignFilter, unallocatedRows: boolean) {
  const unallocated =
    unallocatedRows && filter.productExternalId === undefined
      ? sql`+ count(*) filter (where counted.unallocated_days && ${dayRangeValue(filter)})`
      : sql``;
  // PostgreSQL drops the join when the count does not use it (one row per campaign at most)
  return db
    .selectFrom('campaign')
    .leftJoin('campaign_statistic_days as counted', (join) =>
      join
        .onRef('counted.client_id', '=', 'campaign.client_id')
        .onRef('counted.campaign_id', '=', 'campaign.id'),
    )
    .select(sql<number>`(count(*) ${unallocated})::int`.as('total'))
    .where((eb) => selectionConditions(eb, filter));
}

/**
 * The `total` column of a page (P154): with `count`, `matchingRowCount` as a scalar subquery (evaluated once), so
 * the page's one statement (and one connection) counts too; else null. An empty `getCampaigns` page has no row to
 * carry it; `getStatCampaigns` answers one aggregated row whatever the page (P155).
 */
function pageTotal(
  db: Kysely<DB>,
  filter: ResolvedCampaignFilter,
  unallocatedRows: boolean,
): RawBuilder<number | null> {
  return filter.count ? sql<number>`(${matchingRowCount(db, filter, unallocatedRows)})` : sql<null>`null`;
}

/** A row of a `getCampaigns` page: the campaign, `total` with `count`, its sort value as text for the cursor. */
export type CampaignPageRow = Selectable<CampaignTable> & {
  total: number | null;
  keyset_value: string | null;
};

/** Statistics reads of one client (the filter carries the client scope). */
export const statisticsRepository = {
  /** The first of `organizationIds` that is not an organization of the client, if any (D2.5). */
  async foreignOrganization(
    db: Kysely<DB>,
    clientId: number,
    organizationIds: readonly number[],
  ): Promise<number | undefined> {
    const unique = [...new Set(organizationIds)];
    if (unique.length === 0) return undefined;
    // each organization looked up by its key (P197)
    const owned = await db
      .selectFrom(idRows(unique, 't'))
      .innerJoinLateral(
        (eb) =>
          eb
            .selectFrom('organization')
            .select('id')
            .where('client_id', '=', clientId)
            .whereRef('id', '=', 't.id')
            .offset(0)
            .as('o'),
        (join) => join.onTrue(),
      )
      .select('o.id')
      .execute();
    const ids = new Set(owned.map((row) => row.id));
    return unique.find((id) => !ids.has(id));
  },

  /**
   * One page of `getStatCampaigns` rows: per campaign a `CAMPAIGN` row (statistics attributed to products) and,
   * when the campaign has statistics not attributed to a product in the range, an `UNALLOCATED` row (P111).
   * With `isStatCampaign` only campaigns with statistics rows in the range. In a campaign order only the
   * statistics of the page's campaigns are read (P153); a statistics order reads every matching campaign's.
   * The rows come as one JSON array of `StatCampaign` built by PostgreSQL (P155); with `count`, `total` is
   * `matchingRowCount` (an empty page counts too), else null.
   */
  async statPage(db: Kysely<DB>, filter: ResolvedCampaignFilter): Promise<StatPage> {
    const total = pageTotal(db, filter, true);
    const part = (side: Side, rowType: StatRowType, position: RawBuilder<unknown>) => sql`
      select sums.campaign_id, ${rowType}::text as row_type, ${position} as position, ${METRICS[side]}
      from sums`;
    const rows = (parts: RawBuilder<unknown>) => sql`
      row as (
        select parts.row_type, parts.position, parts.views, parts.clicks, parts.expenses,
          parts.quantity_add_cart, parts.quantity_orders, parts.quantity_product_orders, parts.orders_amount,
          ${derivedValues}, ${ownerColumns}
        from (${parts}) as parts
        join campaign on campaign.client_id = ${filter.clientId} and campaign.id = parts.campaign_id
        join organization on organization.client_id = campaign.client_id and organization.id = campaign.organization_id
      )`;
    if (sortsByStatistics(filter.sortBy)) {
      const keys = orderBy(filter, true);
      const result = await sql<StatPage>`
        with sums as materialized (${sumsRelation(filter, matchingCampaigns(db, filter))}),
        ${rows(sql`
          ${part('allocated', 'CAMPAIGN', sql`0`)}
          union all
          ${part('unallocated', 'UNALLOCATED', sql`0`)} where sums.unallocated_rows > 0`)}
        select coalesce(json_agg(stat_campaign order by row.ordinal), '[]')::text as rows, ${total} as total
        from (
          select row.*, row_number() over (order by ${keys}) as ordinal from row
          order by ${keys}
          limit ${filter.limit} offset ${filter.offset}
        ) as row
        ${STAT_CAMPAIGN}`.execute(db);
      return result.rows[0] as StatPage;
    }
    const result = await sql<StatPage>`
      with page as materialized (${pageCampaigns(db, filter)}),
      sums as materialized (${sumsRelation(filter, sql`select page.id from page`)}),
      ${rows(sql`
        ${part('allocated', 'CAMPAIGN', sql`page.position`)} join page on page.id = sums.campaign_id
        union all
        ${part('unallocated', 'UNALLOCATED', sql`page.position + 1`)} join page on page.id = sums.campaign_id
        where page.row_count = 2`)}
      select coalesce(json_agg(stat_campaign order by row.position), '[]')::text as rows, ${total} as total
      from row
      ${STAT_CAMPAIGN}
      where row.position >= ${filter.offset} and row.position < ${filter.offset + filter.limit}`.execute(db);
    return result.rows[0] as StatPage;
  },

  /** Every matching campaign with statistics rows in the range, with its whole statistics (both row types). */
  async campaignTotals(db: Kysely<DB>, filter: ResolvedCampaignFilter): Promise<CampaignTotalRow[]> {
    const result = await sql<CampaignTotalRow>`
      with sums as (${sumsRelation(filter, matchingCampaigns(db, filter))}),
      whole as (select sums.campaign_id, ${METRICS.whole} from sums)
      select whole.views, whole.clicks, whole.expenses, whole.quantity_add_cart, whole.quantity_orders,
        whole.quantity_product_orders, whole.orders_amount, ${derivedValues}, campaign.id as campaign_id,
        campaign.name, campaign.organization_id, organization.name as organization_name
      from whole
      join campaign on campaign.client_id = ${filter.clientId} and campaign.id = whole.campaign_id
      join organization on organization.client_id = campaign.client_id and organization.id = campaign.organization_id
      where whole.statistic_rows > 0`.execute(db);
    return result.rows;
  },

  /**
   * One page of campaigns (`getCampaigns`): sorted by a campaign column, or by the campaign's whole statistics
   * over the range for a statistics `sortBy`; `isStatCampaign` keeps campaigns with statistics rows in the range.
   * With `count` each row carries the number of campaigns listed (`campaignCount`). A page has `limit + 1`
   * rows when there is a next one; it starts after `offset` rows or after a cursor's row (P172), each row
   * carrying its sort value as text (`keyset_value`).
   */
  async campaignPage(db: Kysely<DB>, filter: ResolvedCampaignFilter): Promise<Array<CampaignPageRow>> {
    const total = pageTotal(db, filter, false);
    if (!sortsByStatistics(filter.sortBy)) {
      const order = keysetOrder(filter, 'campaign');
      return db
        .selectFrom('campaign')
        .selectAll('campaign')
        .select([total.as('total'), keysetValue(order).as('keyset_value')])
        .where((eb) => selectionConditions(eb, filter))
        .$if(filter.after !== undefined, (qb) =>
          qb.where(keysetAfter(order, filter.after as NonNullable<ResolvedCampaignFilter['after']>)),
        )
        .orderBy(campaignOrder(filter))
        .limit(filter.limit + 1)
        .offset(filter.offset)
        .execute();
    }
    const order = keysetOrder(filter, 'row');
    const after = filter.after === undefined ? sql`true` : keysetAfter(order, filter.after);
    const result = await sql<CampaignPageRow>`
      with sums as (${sumsRelation(filter, matchingCampaigns(db, filter))}),
      whole as (select sums.campaign_id, ${METRICS.whole} from sums),
      row as (select whole.*, ${derivedValues} from whole)
      select campaign.*, ${total} as total, ${keysetValue(order)} as keyset_value from row
      join campaign on campaign.client_id = ${filter.clientId} and campaign.id = row.campaign_id
      where ${after}
      order by ${orderBy(filter, false)}
      limit ${filter.limit + 1} offset ${filter.offset}`.execute(db);
    return result.rows;
  },

  /** Number of campaigns `getCampaigns` would list (`matchingRowCount`). */
  async campaignCount(db: Kysely<DB>, filter: ResolvedCampaignFilter): Promise<number> {
    const row = await matchingRowCount(db, filter, false).executeTakeFirstOrThrow();
    return row.total;
  },
};
