/**
 * The distinct ids of a list as rows `alias(id)`, to drive lateral lookups `where client_id = $c and id = alias.id`
 * with `offset 0` (or `for update`), which the planner does not flatten: each lookup's index condition is the whole
 * key under any statistics, where `id = any($ids)` (or `in (…)`) lets a generic plan made on statistics that see a
 * client as about one row walk the client's rows and filter the ids (P193, P197).
 */
import { sql, type AliasedRawBuilder } from 'kysely';

export const idRows = <A extends string>(
  ids: readonly number[],
  alias: A,
): AliasedRawBuilder<{ id: number }, A> =>
  sql<{ id: number }>`(select distinct id from unnest(${[...ids]}::bigint[]) as requested(id))`.as(alias);
