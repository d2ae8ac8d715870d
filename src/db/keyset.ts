/**
 * SQL of keyset pagination (P172): the condition "after this row" for an order on one sort column (or none) and
 * the id, and the sort column's exact text for the cursor. Ties of the sort break by id in the same direction
 * (D4.4), so `(sort value, id)` is unique within a client and a page continues exactly after the last row read,
 * whatever rows were added or removed meanwhile.
 */
import { sql, type RawBuilder, type SqlBool } from 'kysely';
import type { CursorPosition } from '../http/cursor.ts';

/** A list order: `column` (a qualified column reference or SQL expression; none = id alone), then `id`. */
export interface KeysetOrder {
  /** The sort column, e.g. `sql.ref('task.created_date')`; undefined when the list sorts by id alone. */
  column?: RawBuilder<unknown>;
  /** The row id, e.g. `sql.ref('task.id')`. */
  id: RawBuilder<unknown>;
  ascending: boolean;
  /** Whether null sort values come first in this order (PostgreSQL's default: only when descending). */
  nullsFirst: boolean;
}

/**
 * The rows after `position` in `order`. With a non-null sort value the condition is a row comparison
 * `(column, id) > (value, id)`, which a btree index on the two columns serves as a range; the value is sent as
 * text and PostgreSQL reads it as the column's type.
 */
export function keysetAfter(order: KeysetOrder, position: CursorPosition): RawBuilder<SqlBool> {
  const compare = order.ascending ? sql.raw('>') : sql.raw('<');
  const idAfter = sql<SqlBool>`${order.id} ${compare} ${position.id}`;
  if (order.column === undefined) return idAfter;
  const column = order.column;
  if (position.value === null)
    return order.nullsFirst
      ? sql<SqlBool>`(${column} is not null or (${column} is null and ${idAfter}))`
      : sql<SqlBool>`(${column} is null and ${idAfter})`;
  const rowAfter = sql<SqlBool>`(${column}, ${order.id}) ${compare} (${position.value}, ${position.id})`;
  return order.nullsFirst ? rowAfter : sql<SqlBool>`(${rowAfter} or ${column} is null)`;
}

/** The sort column's exact text for a cursor (`null` for a sort by id alone), selected as `keyset_value`. */
export function keysetValue(order: Pick<KeysetOrder, 'column'>): RawBuilder<string | null> {
  return order.column === undefined ? sql<null>`null::text` : sql<string | null>`(${order.column})::text`;
}

/**
 * The sort key of a name: its lower case, so names sort alphabetically whatever their case (`alpha`, `Beta`,
 * `gamma`), ties by id (P222). PostgreSQL's `lower` is Unicode-aware under a `C.UTF-8` character type (the embedded
 * database's builtin locale; README for an external server); under `C` it lowers ASCII letters only.
 */
export const ignoringCase = (column: RawBuilder<unknown>): RawBuilder<unknown> => sql`lower(${column})`;
