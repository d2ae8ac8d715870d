/**
 * The row count and offset of a list page (P202). PostgreSQL plans a named statement for its values five times,
 * then keeps a generic plan if it does not look costlier; a page whose row count and offset are parameters has no
 * generic plan worth keeping, so it would be planned on every call. Without a filter the row count is written as a
 * literal (one text per page size) and an offset of 0 is left out, so a first or cursor page keeps one generic plan;
 * with a filter the row count stays a parameter and each call is planned for its values.
 */
import { sql, type SelectQueryBuilder } from 'kysely';

/**
 * `query` limited to `rows` rows after `offset` rows.
 * @param filtered whether the list's statement filters beyond the client (and its fixed conditions)
 */
export function pageBounds<DB, TB extends keyof DB, O>(
  query: SelectQueryBuilder<DB, TB, O>,
  rows: number,
  offset: number,
  filtered: boolean,
): SelectQueryBuilder<DB, TB, O> {
  const counted = query.limit(filtered ? rows : sql.lit(rows));
  return offset > 0 ? counted.offset(offset) : counted;
}
