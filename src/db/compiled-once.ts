/**
 * Statements of the hottest reads compiled once per process (P216). Kysely builds and compiles a `sql` template
 * on every call, and each call's text is a new string, which the connection's prepared-statement look-up
 * (`PreparingClient`, P149) hashes whole again; for a single GET both were ≈ 8 % of the service's CPU. A statement
 * compiled once keeps one text, and each call only puts its values in their places.
 */
import { CompiledQuery, type Kysely, type RawBuilder } from 'kysely';
import type { DB } from './schema.ts';

/** Where `build` put a named value; replaced by the call's value of that name. */
class Placeholder {
  constructor(readonly name: string) {}
}

/**
 * A statement written by `build` and compiled on its first call.
 * @param build writes the statement; it may only place its values in the `sql` template (it receives a
 *   placeholder for each, not the value), so the statement's shape must not depend on them
 * @returns a function that runs the statement with `values` on `db` (a pool or a transaction) and resolves to its
 *   rows
 */
export function compiledOnce<Values extends Record<string, unknown>, Row>(
  build: (values: Values) => RawBuilder<Row>,
): (db: Kysely<DB>, values: Values) => Promise<Row[]> {
  let compiled: { text: string; parameters: readonly unknown[] } | undefined;
  return async (db, values) => {
    compiled ??= compile(db, build);
    const parameters = compiled.parameters.map((parameter) =>
      parameter instanceof Placeholder ? values[parameter.name] : parameter,
    );
    return (await db.executeQuery<Row>(CompiledQuery.raw(compiled.text, parameters))).rows;
  };
}

function compile<Values extends Record<string, unknown>, Row>(
  db: Kysely<DB>,
  build: (values: Values) => RawBuilder<Row>,
): { text: string; parameters: readonly unknown[] } {
  const placeholders = new Proxy({} as Values, {
    get: (_target, name) => new Placeholder(String(name)),
  });
  const query = build(placeholders).compile(db);
  return { text: query.sql, parameters: query.parameters };
}
