/**
 * Plans of the statements that PL/pgSQL functions run, for the plan tests: `EXPLAIN` of a function call shows the
 * call only.
 */
import type { ClientBase } from 'pg';
import type { CompiledQuery } from 'kysely';

/**
 * Runs `statement` on `client` with PostgreSQL's `auto_explain` (shipped with the server) logging the plan of every
 * statement, nested ones included, as notices, and returns those notices (`duration: … plan:` and the plan, as
 * text or a JSON document per `format`; the call's own plan among them). Runs inside the caller's transaction,
 * whose settings it extends with `set local`: the statement's changes are the caller's to roll back.
 */
export async function nestedPlanNotices(
  client: ClientBase,
  statement: CompiledQuery,
  options: { format: 'text' | 'json'; analyzed?: boolean },
): Promise<string[]> {
  const notices: string[] = [];
  const collect = (notice: { message?: string }) => void notices.push(notice.message ?? '');
  client.on('notice', collect);
  try {
    await client.query(`load 'auto_explain'`);
    for (const setting of [
      'auto_explain.log_min_duration = 0',
      'auto_explain.log_nested_statements = on',
      'auto_explain.log_level = notice',
      `auto_explain.log_format = ${options.format}`,
      `auto_explain.log_analyze = ${options.analyzed ? 'on' : 'off'}`,
      'auto_explain.log_timing = off',
    ])
      await client.query(`set local ${setting}`);
    await client.query(statement.sql, statement.parameters as unknown[]);
    await client.query('set local auto_explain.log_min_duration = -1');
  } finally {
    client.off('notice', collect);
  }
  return notices;
}
