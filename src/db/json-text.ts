/**
 * SQL pieces for statements whose rows PostgreSQL renders as JSON text in the API's shape (P155, P201), so the
 * service sends them without parsing and serializing them again.
 */
import { sql, type RawBuilder } from 'kysely';

/**
 * A `timestamptz` as the text `Date.prototype.toISOString` writes: UTC, milliseconds, `Z`. `to_char`'s `MS`
 * truncates the microseconds, as a `Date` made from the stored value does.
 */
export const isoText = (column: RawBuilder<unknown>) =>
  sql<string>`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * The JSON array text of `element` (a `json` value per row, e.g. `row_to_json(x)`) over the rows of the enclosing
 * `from`, in `orderBy` order; `[]` without rows. Compact like `JSON.stringify`: `json_agg` would put a line break
 * between elements.
 */
export const jsonArrayText = (element: RawBuilder<unknown>, orderBy: RawBuilder<unknown>) =>
  sql<string>`coalesce('[' || string_agg(${element}::text, ',' order by ${orderBy}) || ']', '[]')`;
