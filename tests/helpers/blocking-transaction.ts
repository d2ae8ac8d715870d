/**
 * Makes a request slow in a real way: a transaction of the test's own, on its own connection, holds the row or
 * unique-key locks the request needs (as a concurrent writer would), until the test releases it.
 */
import pg from 'pg';
import { sql, type Kysely } from 'kysely';
import type { DB } from '../../src/db/schema.ts';
import { waitFor } from '../fixtures/webhook-kit.ts';

/** An open transaction of the test and the backend that runs it. */
export interface BlockingTransaction {
  /** PostgreSQL backend pid of the transaction's connection. */
  pid: number;
  /** Rolls the transaction back (its locks are released) and closes its connection. */
  release(): Promise<void>;
}

/** Opens a transaction on `databaseUrl` and runs `statement` with `values` in it (e.g. `select … for update`). */
export async function openBlockingTransaction(
  databaseUrl: string,
  statement: string,
  values: unknown[],
): Promise<BlockingTransaction> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  await client.query('begin');
  await client.query(statement, values);
  const { rows } = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
  return {
    pid: rows[0]?.pid as number,
    release: async () => {
      await client.query('rollback');
      await client.end();
    },
  };
}

/**
 * Resolves once some backend of the database of `db` waits for a lock that backend `pid` holds. On a Citus
 * cluster a row lock is held and waited for on a worker's shard, where the coordinator sees no lock wait:
 * `citus_lock_waits` names the distributed waits by global pid (the coordinator's node id × 10^10 + pid).
 */
export async function waitUntilBlockedBy(db: Kysely<DB>, pid: number): Promise<void> {
  const citus = await sql`select 1 from pg_extension where extname = 'citus'`.execute(db);
  return waitFor(`a backend waiting for a lock of backend ${pid}`, async () => {
    const local = await sql<{ waiting: number }>`
      select count(*)::int as waiting from pg_stat_activity where ${pid}::int = any(pg_blocking_pids(pid))`.execute(
      db,
    );
    if ((local.rows[0]?.waiting ?? 0) > 0) return true;
    if (citus.rows.length === 0) return false;
    const distributed = await sql<{ waiting: number }>`
      select count(*)::int as waiting from citus_lock_waits
      where blocking_gpid = (select nodeid from pg_dist_node where groupid = 0) * 10000000000::bigint + ${pid}::int`.execute(
      db,
    );
    return (distributed.rows[0]?.waiting ?? 0) > 0;
  });
}

/**
 * The test database's URL with `application_name` set, so an app built on it can be told apart in
 * `pg_stat_activity` from the connections of other test files (`lockWaits`).
 */
export function namedDatabaseUrl(databaseUrl: string, applicationName: string): string {
  const url = new URL(databaseUrl);
  url.searchParams.set('application_name', applicationName);
  return url.toString();
}

/** How many statements of connections named `applicationName` wait for a lock now. */
export async function lockWaits(db: Kysely<DB>, applicationName: string): Promise<number> {
  const result = await sql<{ count: number }>`
    select count(*)::int as count from pg_stat_activity
    where application_name = ${applicationName} and wait_event_type = 'Lock'`.execute(db);
  return result.rows[0]?.count ?? 0;
}
