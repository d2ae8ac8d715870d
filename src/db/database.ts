/**
 * The one store of the service: PostgreSQL through `pg` and the Kysely query builder (decision D12.1).
 *
 * int64 (`bigint`) values are returned as JS numbers while they fit in 2^53 and as `bigint` beyond, so an id
 * is never silently rounded (in `bigint[]` too); `numeric` stays an exact decimal string and `date` its
 * `YYYY-MM-DD` text. Connections prepare the parameterized statements they repeat (`prepared-statements.ts`).
 */
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { PreparingClient } from './prepared-statements.ts';
import type { DB } from './schema.ts';

const INT8_OID = 20;
/** Not in pg-types' enumeration of built-in types. */
const INT8_ARRAY_OID = 1016 as Parameters<typeof pg.types.setTypeParser>[0];
const DATE_OID = 1082;

const int8 = (value: string): number | bigint => {
  const parsed = Number(value);
  return Number.isSafeInteger(parsed) ? parsed : BigInt(value);
};
pg.types.setTypeParser(INT8_OID, int8);
// bigint[] (e.g. a campaign's product ids) as numbers too; elements of int8 arrays are never quoted.
pg.types.setTypeParser(INT8_ARRAY_OID, (value: string) =>
  value === '{}'
    ? []
    : value
        .slice(1, -1)
        .split(',')
        .map((element) => (element === 'NULL' ? null : int8(element))),
);
// A calendar day stays its `YYYY-MM-DD` text: a JS Date would shift it by the process's time zone.
pg.types.setTypeParser(DATE_OID, (value: string) => value);

/** A connection pool and the typed query builder over it. */
export interface Database {
  db: Kysely<DB>;
  pool: pg.Pool;
  /**
   * Closes every connection of the pool; resolves once each connection's socket has closed (so the server has
   * ended its sessions: a database can be dropped or a server stopped right after).
   */
  close(): Promise<void>;
  /**
   * Whether the server is a Citus coordinator (the `citus` extension is installed, docs/scale-out.md): asked on the
   * first call, then remembered (a failed question is asked again).
   */
  distributed: () => Promise<boolean>;
}

/**
 * Opens a pool to `connectionString` (nothing connects until the first query).
 * @param poolSize maximum number of connections
 */
export function createDatabase(connectionString: string, poolSize = 10): Database {
  const pool = new pg.Pool({
    connectionString,
    max: poolSize,
    idleTimeoutMillis: 30_000,
    Client: PreparingClient,
  });
  // An idle client that loses its server (restart, network) emits here; the pool replaces it.
  pool.on('error', () => undefined);
  // `pool.end()` resolves once it has asked every connection to end, not when they have: each connection's
  // 'end' (its socket closed) is awaited on close.
  const connectionsEnded = new Set<Promise<void>>();
  pool.on('connect', (client) => {
    // A checked-out client between queries (a transaction waiting for its request's answer, P121) that loses its
    // server would emit an unhandled 'error' and end the process; its next query fails instead, and the pool
    // drops it.
    client.on('error', () => undefined);
    const ended = new Promise<void>((resolve) => client.once('end', resolve));
    connectionsEnded.add(ended);
    void ended.then(() => connectionsEnded.delete(ended));
  });
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
  let distributed: Promise<boolean> | undefined;
  return {
    db,
    pool,
    distributed: () =>
      (distributed ??= sql<{ citus: boolean }>`
        select exists (select 1 from pg_extension where extname = 'citus') as citus`
        .execute(db)
        .then((result) => result.rows[0]?.citus === true)
        .catch((error: unknown) => {
          distributed = undefined;
          throw error;
        })),
    close: async () => {
      await db.destroy();
      await Promise.all(connectionsEnded);
    },
  };
}
