/**
 * The service starts only on a database whose sessions write a `float8` as its shortest exact text
 * (`extra_float_digits` ≥ 1, P203): SQL-written JSON (P201) and the driver's parsing rely on it. On Citus the
 * workers' sessions are checked too (the case runs only there; CI's third stage).
 */
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../../src/db/database.ts';
import { requireExactFloatText } from '../../src/db/json-text.ts';
import { buildTestApp, testDatabaseUrl } from '../helpers/test-app.ts';
import { createServerDatabase } from '../helpers/server-database.ts';

/** The test database with `extra_float_digits` set for every session, as PGOPTIONS or a role setting would. */
function urlWithFloatDigits(digits: number): string {
  const url = new URL(testDatabaseUrl());
  url.searchParams.set('options', `-c extra_float_digits=${digits}`);
  return url.toString();
}

const rounding = createDatabase(urlWithFloatDigits(0), 1);
const exact = createDatabase(testDatabaseUrl(), 1);
afterAll(() => Promise.all([rounding.close(), exact.close()]));

const sumText = async (db: typeof exact.db) =>
  (await sql<{ sum: string }>`select (0.1::float8 + 0.2::float8)::text as sum`.execute(db)).rows[0]?.sum;

describe('exact float text (P203)', () => {
  it('passes on the default settings, where PostgreSQL writes the number JavaScript writes', async () => {
    await expect(requireExactFloatText(exact)).resolves.toBeUndefined();
    expect(await sumText(exact.db)).toBe(String(0.1 + 0.2));
  });

  it('refuses sessions that round numbers to 15 digits, naming the setting and its value', async () => {
    expect(await sumText(rounding.db)).toBe('0.3');
    await expect(requireExactFloatText(rounding)).rejects.toThrow(
      /extra_float_digits is 0 .* must be 1 or more/,
    );
  });

  it('keeps the service from starting on such a database', async () => {
    await expect(buildTestApp({}, urlWithFloatDigits(-1))).rejects.toThrow(/extra_float_digits is -1/);
  });

  it('on Citus, refuses a worker whose sessions round numbers, naming the worker', async (context) => {
    const citus = await sql`select 1 from pg_extension where extname = 'citus'`.execute(exact.db);
    if (citus.rows.length === 0) return context.skip();
    const database = await createServerDatabase('float_digits_on_worker');
    try {
      // Set on the first worker's copy of the database, from that worker's `postgres` database: Citus refuses
      // ALTER DATABASE on a worker inside a database carrying the extension.
      const { rows } = await sql<{ host: string; port: number }>`
        select nodename as host, nodeport as port from pg_dist_node where groupid <> 0 order by nodeid limit 1`.execute(
        exact.db,
      );
      const worker = new URL(testDatabaseUrl());
      worker.hostname = rows[0]?.host ?? '';
      worker.port = String(rows[0]?.port);
      worker.pathname = '/postgres';
      const onWorker = createDatabase(worker.toString(), 1);
      await sql`alter database float_digits_on_worker set extra_float_digits = 0`.execute(onWorker.db);
      await onWorker.close();
      const checked = createDatabase(database.url, 1);
      try {
        await expect(requireExactFloatText(checked)).rejects.toThrow(
          /extra_float_digits is 0 for the Citus worker [\w.-]+:\d+; it must be 1 or more/,
        );
      } finally {
        await checked.close();
      }
    } finally {
      await database.drop();
    }
  });
});
