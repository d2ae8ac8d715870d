/**
 * Prepared statements of the service's connections (src/db/prepared-statements.ts, P149): a parameterized text
 * is named on its second execution on a connection and answered the same; texts without values stay on the
 * simple protocol (several statements in one text still run), and so do texts that match a pattern (P202); a
 * connection keeps a bounded number. A statement compiled once (src/db/compiled-once.ts, P216) puts each call's
 * values in their places.
 */
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { compiledOnce } from '../../src/db/compiled-once.ts';
import { createDatabase } from '../../src/db/database.ts';
import { MAX_PREPARED_PER_CONNECTION } from '../../src/db/prepared-statements.ts';
import { testDatabaseUrl } from '../helpers/test-app.ts';

// one connection, so every statement below runs where `pg_prepared_statements` is read
const database = createDatabase(testDatabaseUrl(), 1);
const { db } = database;
afterAll(() => database.close());

const preparedTexts = async () =>
  (await sql<{ statement: string }>`select statement from pg_prepared_statements`.execute(db)).rows.map(
    (row) => row.statement,
  );

describe('prepared statements', () => {
  it('prepares a parameterized text on its second execution and answers it the same each time', async () => {
    const text = (value: number) => sql<{ doubled: number }>`select ${value}::int * 2 as doubled /* twice */`;
    const answers = [];
    for (const value of [1, 2, 3]) {
      answers.push((await text(value).execute(db)).rows[0]?.doubled);
      const prepared = (await preparedTexts()).filter((statement) => statement.includes('/* twice */'));
      expect(prepared).toHaveLength(value === 1 ? 0 : 1);
    }
    expect(answers).toEqual([2, 4, 6]);
  });

  it('runs a statement compiled once with the values of each call in their places, literals kept, one text', async () => {
    const statement = compiledOnce(
      (values: { first: number; second: string }) =>
        sql<{ answer: string }>`select ${values.second}::text || ${'-'}::text || ${values.first}::int
        || ${values.second}::text as answer /* compiled once */`,
    );
    const answers = [];
    for (const [first, second] of [
      [1, 'a'],
      [2, 'b'],
      [3, 'c'],
    ] as const)
      answers.push((await statement(db, { first, second }))[0]?.answer);
    expect(answers).toEqual(['a-1a', 'b-2b', 'c-3c']);
    expect((await preparedTexts()).filter((text) => text.includes('/* compiled once */'))).toHaveLength(1);
    await db.transaction().execute(async (trx) => {
      expect(await statement(trx, { first: 4, second: 'd' })).toEqual([{ answer: 'd-4d' }]);
    });
  });

  it('leaves texts without values unnamed: several statements in one text still run', async () => {
    for (let round = 0; round < 3; round += 1)
      await sql`select 1 /* plain */; select 2 /* plain */`.execute(db);
    expect((await preparedTexts()).filter((statement) => statement.includes('/* plain */'))).toEqual([]);
  });

  it('leaves texts that match a pattern unnamed: each call is planned for its pattern (P202)', async () => {
    for (const pattern of ['%a%', '%b%', '%c%'])
      await sql`select ${'abc'}::text ilike ${pattern} as found /* pattern */`.execute(db);
    expect((await preparedTexts()).filter((statement) => statement.includes('/* pattern */'))).toEqual([]);
  });

  it('keeps at most MAX_PREPARED_PER_CONNECTION statements on a connection, and answers the rest unnamed', async () => {
    const extra = 5;
    for (let shape = 0; shape < MAX_PREPARED_PER_CONNECTION + extra; shape += 1)
      for (let round = 0; round < 2; round += 1) {
        const answer = await sql<{
          shape: number;
        }>`select ${shape}::int as shape ${sql.raw(`/* shape ${shape} */`)}`.execute(db);
        expect(answer.rows[0]?.shape).toBe(shape);
      }
    expect((await preparedTexts()).length).toBe(MAX_PREPARED_PER_CONNECTION);
  });

  it('keeps answering when a prepared statement fails', async () => {
    const divide = (by: number) => sql<{ quotient: number }>`select 10 / ${by}::int as quotient /* divide */`;
    expect((await divide(2).execute(db)).rows[0]?.quotient).toBe(5);
    await expect(divide(0).execute(db)).rejects.toThrow(/division by zero/);
    expect((await divide(5).execute(db)).rows[0]?.quotient).toBe(2);
  });
});
