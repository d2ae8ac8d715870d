/**
 * The campaign filter of spec §2 "CampaignFilter" shared by the statistics pages, `getCampaigns` and the XLSX
 * export: its query-parameter set (`CampaignFilterQuery`), its body object (`CampaignFilter`, `$id`
 * `CampaignFilter`, registered once by the group's plugin), the resolution of a parsed filter into criteria
 * (`resolveCampaignFilter`) and those criteria as SQL conditions on `campaign` (`campaignConditions`).
 *
 * Days (P110): statistics are stored per marketplace calendar day, and Market1's day is Moscow's
 * (`STATISTICS_TIME_ZONE`, Europe/Moscow, UTC+3 all year). `dateFrom`/`dateTo` accept a date (`YYYY-MM-DD`, that
 * day) or a date-time (the Moscow day containing the instant); both bounds are inclusive.
 */
import type { CursorPosition } from '../../http/cursor.ts';
import { sql, type Expression, type ExpressionBuilder, type SqlBool } from 'kysely';
import { Type, type Static } from 'typebox';
import type { DB } from '../../db/schema.ts';
import { likeContains } from '../../db/like.ts';
import { StringEnum, ServiceSchema } from '../../domain/enums.ts';
import { isCalendarDay, parseIsoInstant, type IsoInstant } from '../../domain/iso-date.ts';
import { visibleText } from '../../domain/text.ts';
import { validationError } from '../../http/errors.ts';
import { Int32, Int64, MAX_PAGE, PagingQuery, RepeatedQuery } from '../../http/schemas.ts';
import { CAMPAIGN_STATUSES, type CampaignStatus } from '../../connectors/market1/connector.ts';
import { CampaignStatusSchema } from './schemas.ts';

/** The marketplace's calendar: statistics days are Moscow days (P110). */
export const STATISTICS_TIME_ZONE = 'Europe/Moscow';

/** `sortBy` values of spec §2 CampaignFilter. */
export const CAMPAIGN_SORT_FIELDS = [
  'EXTERNALID',
  'SERVICE',
  'CAMPAIGNNAME',
  'CAMPAIGNTYPE',
  'CATEGORYNAME',
  'VIEWS',
  'CLICKS',
  'RATIOCLICKSVIEWS',
  'AVERAGECOST',
  'EXPENSES',
  'QUANTITYADDCART',
  'QUANTITYORDERS',
  'RATIOORDERSOFVISITS',
  'QUANTITYPRODUCTORDERS',
  'ORDERSAMOUNT',
  'CREATEDATE',
  'STATUS',
] as const;
export type CampaignSortField = (typeof CAMPAIGN_SORT_FIELDS)[number];

const DateOrDateTime = (description: string) =>
  Type.String({ description: `${description}: a date (YYYY-MM-DD) or an ISO 8601 date-time`, maxLength: 40 });

/** The CampaignFilter fields other than `organizationIds`, with the types of spec §2 (query and body alike). */
const filterFields = {
  ...PagingQuery,
  sortBy: Type.Optional(
    StringEnum(CAMPAIGN_SORT_FIELDS, {
      description:
        'Sort field; default: id, descending (D4.4); CAMPAIGNNAME and CATEGORYNAME ignore case (P222)',
    }),
  ),
  ascending: Type.Optional(Type.Boolean({ description: 'Ascending order; default descending' })),
  status: Type.Optional(
    Type.String({
      maxLength: 200,
      description: 'Campaign status values, comma-separated (same values as campaignStatus)',
    }),
  ),
  campaignStatus: Type.Optional(CampaignStatusSchema),
  type: Type.Optional(Int32({ description: "The marketplace's campaign type code (Campaign.campaignType)" })),
  offset: Type.Optional(
    Int32({ description: 'Rows to skip; when given it replaces (page − 1) × limit (P111)' }),
  ),
  service: Type.Optional(ServiceSchema),
  dateFrom: Type.Optional(DateOrDateTime('First statistics day, inclusive, Moscow day')),
  dateTo: Type.Optional(DateOrDateTime('Last statistics day, inclusive, Moscow day')),
  dateStart: Type.Optional(DateOrDateTime('Campaigns started at or after this instant')),
  isStatCampaign: Type.Optional(
    Type.Boolean({ description: 'Only campaigns with statistics in the day range' }),
  ),
  query: Type.Optional(
    Type.String({ maxLength: 200, description: "Part of the campaign's name, or its external id" }),
  ),
  productExternalId: Type.Optional(
    Int64({ description: 'Only campaigns promoting this product (nm id); statistics of that product only' }),
  ),
};

/** The CampaignFilter query-parameter set of spec §4.6, plus `organizationId` (checked by `Market1Access`). */
export const CampaignFilterQuery = Type.Object(
  {
    ...filterFields,
    organizationId: Type.Optional(Int64({ description: 'The organization (required by every operation)' })),
    organizationIds: RepeatedQuery(Int64(), {
      maxItems: 100,
      description: 'More organizations of the client to include (repeated parameter)',
    }),
  },
  { title: 'CampaignFilterQuery' },
);
export type CampaignFilterQuery = Static<typeof CampaignFilterQuery>;

/** The CampaignFilter body object of spec §2 (all optional), e.g. `CampaignStatExportRequest.filter`. */
export const CampaignFilter = Type.Object(
  {
    ...filterFields,
    organizationIds: Type.Optional(Type.Array(Int64(), { maxItems: 100 })),
  },
  { $id: 'CampaignFilter', title: 'CampaignFilter' },
);
export type CampaignFilter = Static<typeof CampaignFilter>;

/** An inclusive range of statistics days, `YYYY-MM-DD` Moscow days; an absent bound is open. */
export interface DayRange {
  from?: string;
  to?: string;
}

/** A filter resolved against the caller: scope, criteria on campaigns, the day range and the page. */
export interface ResolvedCampaignFilter {
  /** The caller's client (D1.1): every condition is scoped by it. */
  clientId: number;
  /** Organizations of the client to include; never empty. */
  organizationIds: number[];
  service?: string;
  /** Statuses a campaign must have (intersection of `status` and `campaignStatus`); absent = any. */
  statuses?: CampaignStatus[];
  typeCode?: number;
  query?: string;
  productExternalId?: number;
  /** Campaigns whose start date is at or after this instant (`dateStart`). */
  startedFrom?: Date;
  days: DayRange;
  isStatCampaign: boolean;
  sortBy?: CampaignSortField;
  ascending: boolean;
  limit: number;
  page: number;
  offset: number;
  /** The row a page by cursor continues after (`getCampaigns`, P172); then `offset` is 0. */
  after?: CursorPosition;
  count: boolean;
}

const moscowDay = new Intl.DateTimeFormat('en-CA', {
  timeZone: STATISTICS_TIME_ZONE,
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
});
/** Moscow's offset from UTC in minutes (UTC+3 all year since 2014). */
const MOSCOW_OFFSET_MINUTES = 180;

/** The Moscow day of `instant` as `YYYY-MM-DD` (the year written with four digits, as Intl does not). */
function moscowDayOf(instant: Date): string {
  const parts = Object.fromEntries(moscowDay.formatToParts(instant).map((part) => [part.type, part.value]));
  return `${String(parts.year).padStart(4, '0')}-${parts.month}-${parts.day}`;
}

/**
 * A filter value as a date (Moscow's midnight of that day) or a date-time with an offset (P110).
 * @throws 400 `error_validation` naming `field` for anything else
 */
function parseFilterDate(field: string, value: string): IsoInstant {
  const parsed = parseIsoInstant(value, MOSCOW_OFFSET_MINUTES, true);
  if (parsed) return parsed;
  throw validationError(field, 'must be an ISO 8601 date (YYYY-MM-DD) or date-time with an offset');
}

/**
 * The Moscow day (`YYYY-MM-DD`) a filter value names: a date as it is, a date-time the day containing it (P110).
 * @throws 400 `error_validation` naming `field` for anything else
 */
function statisticsDay(field: string, value: string): string {
  const parsed = parseFilterDate(field, value);
  const day = parsed.dateOnly ? value : moscowDayOf(parsed.instant);
  if (isCalendarDay(day)) return day;
  throw validationError(field, 'must name a Moscow day from 0001-01-01 on');
}

/** The statuses named by `status` (comma-separated) and `campaignStatus`, intersected; undefined = any. */
function resolveStatuses(filter: CampaignFilter, path: string): CampaignStatus[] | undefined {
  let statuses: CampaignStatus[] | undefined;
  const text = filter.status?.trim();
  if (text) {
    const allowed: readonly string[] = CAMPAIGN_STATUSES;
    statuses = [];
    for (const part of text.split(',')) {
      const value = part.trim().toUpperCase();
      if (!allowed.includes(value))
        throw validationError(
          `${path}status`,
          `must be campaign status values: ${CAMPAIGN_STATUSES.join(', ')}`,
        );
      statuses.push(value as CampaignStatus);
    }
  }
  if (filter.campaignStatus !== undefined)
    statuses = statuses
      ? statuses.filter((status) => status === filter.campaignStatus)
      : [filter.campaignStatus];
  return statuses;
}

/**
 * Resolves a parsed filter (query set or body object) for the caller (spec §2, D4, P110–P111).
 * @param scope the caller's client and the organizations already checked to be the client's (at least one)
 * @param path where the filter sits in the request, prefixed to the fields errors name (`filter.` in a body)
 * @throws 400 `error_validation` for a malformed date, an unknown `status` value, `dateFrom` after `dateTo`, or an
 *   offset beyond the paging bound
 */
export function resolveCampaignFilter(
  filter: CampaignFilter,
  scope: { clientId: number; organizationIds: number[] },
  path = '',
): ResolvedCampaignFilter {
  const limit = filter.limit ?? 100;
  const offset = filter.offset ?? ((filter.page ?? 1) - 1) * limit;
  if (offset > MAX_PAGE * 500) throw validationError(`${path}offset`, `must be at most ${MAX_PAGE * 500}`);
  const days: DayRange = {
    from: filter.dateFrom === undefined ? undefined : statisticsDay(`${path}dateFrom`, filter.dateFrom),
    to: filter.dateTo === undefined ? undefined : statisticsDay(`${path}dateTo`, filter.dateTo),
  };
  if (days.from !== undefined && days.to !== undefined && days.from > days.to)
    throw validationError(`${path}dateFrom`, 'must not be after dateTo');
  const query = visibleText(filter.query);
  return {
    clientId: scope.clientId,
    organizationIds: [...new Set(scope.organizationIds)],
    service: filter.service,
    statuses: resolveStatuses(filter, path),
    typeCode: filter.type,
    query,
    productExternalId: filter.productExternalId,
    startedFrom:
      filter.dateStart === undefined
        ? undefined
        : parseFilterDate(`${path}dateStart`, filter.dateStart).instant,
    days,
    isStatCampaign: filter.isStatCampaign === true,
    sortBy: filter.sortBy,
    ascending: filter.ascending === true,
    limit,
    page: filter.offset === undefined ? (filter.page ?? 1) : Math.floor(offset / limit) + 1,
    offset,
    count: filter.count === true,
  };
}

/**
 * Every criterion on the `campaign` row itself, as one condition (client scope first, D1.1): organizations,
 * service, statuses, type code, `query` (case-insensitive part of the name, or the external id when it is a
 * number), `productExternalId` (among the campaign's products) and `dateStart`. The day range and
 * `isStatCampaign` concern statistics rows and are applied by the statistics queries.
 */
export function campaignConditions(
  eb: ExpressionBuilder<DB, 'campaign'>,
  filter: ResolvedCampaignFilter,
): Expression<SqlBool> {
  const all: Array<Expression<SqlBool>> = [
    eb('campaign.client_id', '=', filter.clientId),
    eb('campaign.organization_id', 'in', filter.organizationIds),
  ];
  if (filter.service !== undefined) all.push(eb('campaign.service', '=', filter.service));
  if (filter.statuses !== undefined)
    all.push(
      filter.statuses.length === 0 ? sql<SqlBool>`false` : eb('campaign.status', 'in', filter.statuses),
    );
  if (filter.typeCode !== undefined) all.push(eb('campaign.type_code', '=', filter.typeCode));
  if (filter.query !== undefined) {
    const byName = sql<SqlBool>`campaign.name ilike ${likeContains(filter.query)}`;
    all.push(
      /^\d{1,15}$/.test(filter.query)
        ? eb.or([byName, eb('campaign.external_id', '=', Number(filter.query))])
        : byName,
    );
  }
  if (filter.productExternalId !== undefined)
    all.push(sql<SqlBool>`${filter.productExternalId}::bigint = any(campaign.external_product_ids)`);
  if (filter.startedFrom !== undefined) all.push(eb('campaign.start_date', '>=', filter.startedFrom));
  return eb.and(all);
}
