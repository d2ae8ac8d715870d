/**
 * `Database.close()` (src/db/database.ts): it resolves only once every connection of the pool has ended, so
 * the server holds none of its sessions afterwards (a database can be dropped, a server stopped, right after).
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../../src/db/database.ts';
import { testDatabaseUrl } from '../helpers/test-app.ts';
import { namedDatabaseUrl } from '../helpers/blocking-transaction.ts';

const observer = createDatabase(testDatabaseUrl(), 1);
afterAll(() => observer.close());

/** Sessions the server holds for `applicationName`. */
const sessionsOf = async (applicationName: string) =>
  Number(
    (
      await sql<{ sessions: string }>`
        select count(*) as sessions from pg_stat_activity where application_name = ${applicationName}`.execute(
        observer.db,
      )
    ).rows[0]?.sessions,
  );

describe('closing a database', () => {
  it("resolves after every connection's socket has closed and the server has ended its sessions", async () => {
    const applicationName = `close-${randomUUID()}`;
    const connections = 4;
    const database = createDatabase(namedDatabaseUrl(testDatabaseUrl(), applicationName), connections);
    let ended = 0;
    database.pool.on('connect', (client) => client.once('end', () => (ended += 1)));
    // Concurrent statements that each hold their connection a moment, so the pool opens all of them.
    await Promise.all(
      Array.from({ length: connections }, () => sql`select pg_sleep(0.05)`.execute(database.db)),
    );
    expect(await sessionsOf(applicationName)).toBe(connections);
    await database.close();
    expect(ended).toBe(connections);
    expect(await sessionsOf(applicationName)).toBe(0);
  });
});
