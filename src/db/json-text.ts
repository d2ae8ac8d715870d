/**
 * SQL pieces for statements whose rows PostgreSQL renders as JSON text in the API's shape (P155, P201), so the
 * service sends them without parsing and serializing them again, and the start-up check that the numbers in that
 * text are exact (P203).
 */
import { sql, type RawBuilder } from 'kysely';
import type { Database } from './database.ts';

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

/**
 * Fails unless the database's sessions write a `float8` as its shortest exact text, as JavaScript's number text is
 * (`extra_float_digits` ≥ 1, PostgreSQL's default since 12). With 0 or less, PostgreSQL rounds to 15 significant
 * digits: prices the API shows from SQL-written JSON (P201) and every `float8` the driver parses would lose digits
 * (P203). Checked on one connection of the pool: the others get the same server, database and role settings. On
 * Citus also on every worker that answers, in a session like those the coordinator opens to run its shards'
 * statements (they take the worker's own settings, and the worker writes those statements' JSON text); an
 * unreachable worker is not checked, so a start does not wait for every worker to be up.
 * @throws Error naming the setting, its value and, for a worker, its host and port, when it is below 1
 */
export async function requireExactFloatText(database: Database): Promise<void> {
  const { db } = database;
  const { rows } = await sql<{
    digits: number;
  }>`select current_setting('extra_float_digits')::int as digits`.execute(db);
  requireDigits(rows[0]?.digits ?? 1, "the service's sessions");
  if (!(await database.distributed())) return;
  const workers = await sql<{ node: string; success: boolean; result: string }>`
    select nodename || ':' || nodeport as node, success, result
    from run_command_on_workers($$select current_setting('extra_float_digits')$$)`.execute(db);
  for (const worker of workers.rows)
    if (worker.success) requireDigits(Number(worker.result), `the Citus worker ${worker.node}`);
}

function requireDigits(digits: number, where: string): void {
  if (digits < 1)
    throw new Error(
      `PostgreSQL's extra_float_digits is ${digits} for ${where}; it must be 1 or more (the default) ` +
        'so that numbers keep every digit (docs/operations.md). Remove the setting from postgresql.conf, the ' +
        'database (ALTER DATABASE … RESET extra_float_digits), the role or PGOPTIONS.',
    );
}
