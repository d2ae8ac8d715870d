/**
 * Server-side prepared statements for the queries a connection repeats (P149).
 *
 * `pg` sends a parameterized query as an unnamed statement, so PostgreSQL parses, analyzes and plans its text on
 * every call; for the statistics page (7 KB of SQL) that was most of the database's time (docs/performance.md).
 * A `PreparingClient` names a parameterized text the second time its connection runs it: `pg` then parses it
 * once per connection and later calls send only the values (PostgreSQL may also keep a generic plan). Names are
 * a digest of the text, so one name never stands for two texts.
 *
 * Bounded per connection: at most `MAX_PREPARED_PER_CONNECTION` statements, and texts are counted until
 * `MAX_COUNTED_PER_CONNECTION` distinct ones were seen (texts that vary with their input, such as `in` lists
 * of every length, stop being counted there). Texts without values go as before (the simple protocol, which
 * allows several statements in one text). Texts that match a pattern (`ilike`) stay unnamed, so each call is
 * planned for its pattern: a generic plan cannot know how selective a pattern is, and one chosen for an average
 * pattern ANDs a trigram scan with the client's whole key range (P202). Behind PgBouncer in transaction mode,
 * use PgBouncer 1.21 or later with `max_prepared_statements` set.
 */
import { createHash } from 'node:crypto';
import pg from 'pg';

/** Executions of a text on one connection before it is prepared. */
export const PREPARE_AFTER_EXECUTIONS = 2;
/** Most named statements a connection keeps. */
export const MAX_PREPARED_PER_CONNECTION = 200;
/** Most distinct texts a connection counts executions of. */
export const MAX_COUNTED_PER_CONNECTION = 1_000;

/** Statements planned on every call: those that match a pattern (P202). */
const MATCHES_PATTERN = /\silike\s/i;

/** A `pg` client that prepares the parameterized statements it repeats; pass it as the pool's `Client`. */
export class PreparingClient extends pg.Client {
  /** Per counted text: its executions, the statement name once prepared, and whether it is never prepared. */
  readonly #statements = new Map<string, { executions: number; name?: string; plannedPerCall: boolean }>();
  #prepared = 0;

  /** The statement name for `text`'s next execution, or undefined to send it unnamed. */
  #nameFor(text: string): string | undefined {
    let statement = this.#statements.get(text);
    if (statement === undefined) {
      if (this.#statements.size >= MAX_COUNTED_PER_CONNECTION) return undefined;
      statement = { executions: 0, plannedPerCall: MATCHES_PATTERN.test(text) };
      this.#statements.set(text, statement);
    }
    if (statement.plannedPerCall) return undefined;
    statement.executions += 1;
    if (
      statement.name === undefined &&
      statement.executions >= PREPARE_AFTER_EXECUTIONS &&
      this.#prepared < MAX_PREPARED_PER_CONNECTION
    ) {
      statement.name = `p_${createHash('sha256').update(text).digest('base64url').slice(0, 40)}`;
      this.#prepared += 1;
    }
    return statement.name;
  }

  // `pg`'s query has many overloads; this forwards every form unchanged and names only `query(text, values)`
  // with values, the form Kysely uses for every statement.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  override query(config: any, values?: any, callback?: any): any {
    if (typeof config === 'string' && Array.isArray(values) && values.length > 0 && callback === undefined) {
      const name = this.#nameFor(config);
      if (name !== undefined) return super.query({ name, text: config, values });
    }
    // eslint-disable-next-line @typescript-eslint/no-unsafe-argument
    return super.query(config, values, callback);
  }
}
