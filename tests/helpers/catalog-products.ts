/**
 * Fixture for the inbound tests: positions must reference products of the caller's catalog, so the
 * product ids a test names are made to exist in the token's client catalog first (explicit ids, inserted with
 * SQL into the catalog tables: a fixture, like the factories, not a stand-in for the API under test).
 */
import { sql, type Kysely } from 'kysely';
import type { DB } from '../../src/db/schema.ts';
import { createDatabase, type Database } from '../../src/db/database.ts';
import { hashToken } from '../../src/http/auth.ts';
import { testDatabaseUrl } from './test-app.ts';

let database: Database | undefined;

/** The product ids a request body of the inbound group names (`productId`, `products[].productId`). */
export function productIdsOf(payload: unknown): number[] {
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return [];
  const body = payload as { productId?: unknown; products?: unknown };
  const ids = [
    body.productId,
    ...(Array.isArray(body.products) ? body.products : []).map(
      (line) => (line as { productId?: unknown })?.productId,
    ),
  ];
  return ids.filter((id): id is number => typeof id === 'number' && Number.isSafeInteger(id) && id > 0);
}

/**
 * Makes `ids` live products of the client of `token` (no-op for ids that already exist), in the run's database
 * or, for a test on a database of its own, in `databaseUrl` (opened and closed for the call).
 */
export async function provideProducts(
  token: string | undefined,
  ids: number[],
  databaseUrl?: string,
): Promise<void> {
  if (token === undefined || ids.length === 0) return;
  if (databaseUrl !== undefined) {
    const own = createDatabase(databaseUrl, 1);
    try {
      await insertProducts(own.db, token, ids);
    } finally {
      await own.close();
    }
    return;
  }
  database ??= createDatabase(testDatabaseUrl(), 2);
  await insertProducts(database.db, token, ids);
}

async function insertProducts(db: Kysely<DB>, token: string, ids: number[]): Promise<void> {
  // The token's client from the hash lookup first, then its organization on that client's shard (Citus).
  const lookup = await sql<{ client_id: number }>`
    SELECT client_id FROM api_token_lookup WHERE token_hash = ${hashToken(token.replace(/^bearer\s+/i, ''))}`.execute(
    db,
  );
  const clientId = lookup.rows[0]?.client_id;
  if (clientId === undefined) return;
  const owner = await sql<{ client_id: number; organization_id: number }>`
    SELECT client_id, id AS organization_id FROM organization WHERE client_id = ${clientId} ORDER BY id LIMIT 1`.execute(
    db,
  );
  const account = owner.rows[0];
  if (!account) return;
  // Product ids are global (any client's): which exist is asked across clients, allowed on Citus for this read.
  const existing = await db.transaction().execute(async (trx) => {
    await sql`set local citus.multi_task_query_log_level = 'off'`.execute(trx);
    return (await sql<{ id: number }>`SELECT id FROM product WHERE id = any(${ids}::bigint[])`.execute(trx))
      .rows;
  });
  const taken = new Set(existing.map((row) => Number(row.id)));
  const wantedIds = ids.filter((id) => !taken.has(id));
  if (wantedIds.length === 0) return;
  await sql`
    WITH brand AS (
      INSERT INTO brand (client_id, name) VALUES (${account.client_id}, 'Fixture brand')
      ON CONFLICT (client_id, lower(name)) DO UPDATE SET name = EXCLUDED.name RETURNING id
    ), category AS (
      INSERT INTO category (client_id, name) VALUES (${account.client_id}, 'Fixture category')
      ON CONFLICT (client_id, lower(name)) DO UPDATE SET name = EXCLUDED.name RETURNING id
    ), wanted AS (
      SELECT w.id FROM unnest(${wantedIds}::bigint[]) AS w(id)
    ), model AS (
      INSERT INTO product_model (client_id, organization_id, article, title, brand_id, category_id)
      SELECT ${account.client_id}, ${account.organization_id}, 'FIXTURE-' || w.id, 'Fixture ' || w.id, b.id, c.id
      FROM wanted w, brand b, category c
      ON CONFLICT DO NOTHING
      RETURNING id, article
    ), view AS (
      INSERT INTO product_view (client_id, model_id) SELECT ${account.client_id}, id FROM model RETURNING id, model_id
    )
    INSERT INTO product (id, client_id, model_id, view_id, name, size)
    SELECT substr(m.article, 9)::bigint, ${account.client_id}, m.id, v.id, 'Fixture product ' || substr(m.article, 9), 'OS'
    FROM model m JOIN view v ON v.model_id = m.id
    ON CONFLICT DO NOTHING`.execute(db);
}
