/**
 * The one store of the service: PostgreSQL through `pg` and the Kysely query builder (decision D12.1).
 *
 * int64 (`bigint`) values are returned as JS numbers while they fit in 2^53 and as `bigint` beyond, so an id
 * is never silently rounded; `numeric` stays an exact decimal string.
 */
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { DB } from './schema.ts';

const INT8_OID = 20;
pg.types.setTypeParser(INT8_OID, (value: string) => {
  const parsed = Number(value);
  return Number.isSafeInteger(parsed) ? parsed : BigInt(value);
});

/** A connection pool and the typed query builder over it. */
export interface Database {
  db: Kysely<DB>;
  pool: pg.Pool;
  /** Closes every connection of the pool. */
  close(): Promise<void>;
}

/**
 * Opens a pool to `connectionString` (nothing connects until the first query).
 * @param poolSize maximum number of connections
 */
export function createDatabase(connectionString: string, poolSize = 10): Database {
  const pool = new pg.Pool({ connectionString, max: poolSize, idleTimeoutMillis: 30_000 });
  // An idle client that loses its server (restart, network) emits here; the pool replaces it.
  pool.on('error', () => undefined);
  // A checked-out client between queries (a transaction waiting for its request's answer, P121) that loses its
  // server would emit an unhandled 'error' and end the process; its next query fails instead, and the pool drops it.
  pool.on('connect', (client) => client.on('error', () => undefined));
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
  return {
    db,
    pool,
    close: () => db.destroy(),
  };
}
