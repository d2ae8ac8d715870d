/**
 * Turns the filter set of `find` and `history` (spec §4.1, D5.10) into resolved criteria: date-only values are
 * read in the caller's `timeZone` (hours from UTC, default 0), single-day filters become half-open day ranges,
 * and every value we do not store (print, export, SystemA flags, brands, passages, boxes…) is dropped.
 */
import { parseIsoInstant, type IsoInstant } from '../../domain/iso-date.ts';
import { validationError } from '../../http/errors.ts';
import type { CursorPosition } from '../../http/cursor.ts';
import type { OrderFilterQuery, OrderFindQuery } from './schemas.ts';
import { visibleText } from '../../domain/text.ts';

/** A time range; `from` inclusive, `to` inclusive unless `toExclusive`. */
export interface DateRange {
  from?: Date;
  to?: Date;
  toExclusive?: boolean;
}

/** Resolved `find` criteria over stored data. */
export interface FindCriteria {
  limit: number;
  offset: number;
  page: number;
  /** The row a page by cursor continues after (then `offset` is not used). */
  after?: CursorPosition;
  count: boolean;
  withProducts: boolean;
  deleted: boolean;
  sortBy: string | undefined;
  ascending: boolean;
  query: OrderFindQuery;
  created: DateRange;
  createdDate: DateRange;
  modified: DateRange;
  closed: DateRange;
  delivered: DateRange;
}

const DAY_MS = 86_400_000;
/**
 * Parses a filter's ISO 8601 date or date-time of a real calendar day. A date-only value is midnight in `timeZone`
 * (hours from UTC, spec §4.1), and so is a date-time without an offset read in it, never in the server's own zone
 * (P22).
 * @throws 400 `error_validation` naming `field` for anything else
 */
export function parseDate(field: string, value: string, timeZone: number): IsoInstant {
  const parsed = parseIsoInstant(value, timeZone * 60);
  if (parsed) return parsed;
  throw validationError(field, 'must be an ISO 8601 date (YYYY-MM-DD) or date-time of a real day');
}

/** Lower bound of a range: the instant itself (a date-only value is the start of that day). */
function lower(field: string, value: string | undefined, timeZone: number): Date | undefined {
  return value === undefined ? undefined : parseDate(field, value, timeZone).instant;
}

/** Upper bound of a range: inclusive for a date-time, the whole day for a date-only value. */
function upper(
  field: string,
  value: string | undefined,
  timeZone: number,
): { to?: Date; toExclusive?: boolean } {
  if (value === undefined) return {};
  const parsed = parseDate(field, value, timeZone);
  return parsed.dateOnly
    ? { to: new Date(parsed.instant.getTime() + DAY_MS), toExclusive: true }
    : { to: parsed.instant };
}

/** The day (in `timeZone`) of a date or date-time as a half-open range. */
function day(field: string, value: string, timeZone: number): DateRange {
  const parsed = parseDate(field, value, timeZone);
  const offset = timeZone * 3_600_000;
  const start = Math.floor((parsed.instant.getTime() + offset) / DAY_MS) * DAY_MS - offset;
  return { from: new Date(start), to: new Date(start + DAY_MS), toExclusive: true };
}

/** Intersects two ranges (both may be open). */
function intersect(a: DateRange, b: DateRange): DateRange {
  const from = a.from && b.from ? (a.from > b.from ? a.from : b.from) : (a.from ?? b.from);
  if (!a.to || !b.to) return { from, to: a.to ?? b.to, toExclusive: a.to ? a.toExclusive : b.toExclusive };
  const pickA = a.to.getTime() < b.to.getTime() || (a.to.getTime() === b.to.getTime() && a.toExclusive);
  return pickA
    ? { from, to: a.to, toExclusive: a.toExclusive }
    : { from, to: b.to, toExclusive: b.toExclusive };
}

/**
 * A `[from, to]` range from two bound parameters of `query`: a date-only lower bound is the start of its day, a
 * date-only upper bound covers its whole day (in `timeZone`, hours from UTC).
 * @throws 400 `error_validation` naming the parameter for a malformed date
 */
export function range(
  query: Record<string, unknown>,
  fromName: string,
  toName: string,
  timeZone: number,
): DateRange {
  return {
    from: lower(fromName, query[fromName] as string | undefined, timeZone),
    ...upper(toName, query[toName] as string | undefined, timeZone),
  };
}

/** Whether `find`'s query matches a text (`query`, `product`, `containsArticle`), so takes its turn (P211). */
export const isTextSearch = (query: OrderFindQuery): boolean =>
  [query.query, query.product, query.containsArticle].some((text) => visibleText(text) !== undefined);

/**
 * Resolves `find`'s query (D4, D5.10). Date filters: `createdDateFrom/To` and `dateFrom/dateTo` on `created`,
 * `orderDate` = the day of `createdDate`, `modifiedDate`/`modifiedDateTo` on `modifiedDate`, `closeDate` (a day)
 * and `closeDateFrom/To`, `deliveryDate` (a day) and `deliveryDateFrom/To`.
 * @throws 400 `error_validation` for a malformed date, naming the parameter
 */
export function resolveFindCriteria(query: OrderFindQuery): FindCriteria {
  const timeZone = query.timeZone ?? 0;
  const limit = query.limit ?? 100;
  const page = query.page ?? 1;
  const q = query as Record<string, unknown>;
  let closed = range(q, 'closeDateFrom', 'closeDateTo', timeZone);
  if (query.closeDate !== undefined) closed = intersect(closed, day('closeDate', query.closeDate, timeZone));
  let delivered = range(q, 'deliveryDateFrom', 'deliveryDateTo', timeZone);
  if (query.deliveryDate !== undefined)
    delivered = intersect(delivered, day('deliveryDate', query.deliveryDate, timeZone));
  return {
    limit,
    offset: (page - 1) * limit,
    page,
    count: query.count === true,
    withProducts: query.withProducts === true,
    deleted: query.deleted === true,
    sortBy: query.sortBy,
    ascending: query.ascending === true,
    query,
    created: intersect(
      range(q, 'createdDateFrom', 'createdDateTo', timeZone),
      range(q, 'dateFrom', 'dateTo', timeZone),
    ),
    createdDate: query.orderDate === undefined ? {} : day('orderDate', query.orderDate, timeZone),
    modified: range(q, 'modifiedDate', 'modifiedDateTo', timeZone),
    closed,
    delivered,
  };
}

/**
 * Resolves `history`'s query: paging, `count`, and `dateFrom`/`dateTo` on the history row's `date` (D5.9).
 * @throws 400 `error_validation` for a malformed date
 */
export function resolveHistoryCriteria(query: OrderFilterQuery, page: number) {
  const timeZone = query.timeZone ?? 0;
  const limit = query.limit ?? 100;
  const dates = range(query, 'dateFrom', 'dateTo', timeZone);
  return { limit, page, offset: (page - 1) * limit, count: query.count === true, dates };
}
