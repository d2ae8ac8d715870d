/**
 * On Citus (docs/scale-out.md, decision P175): which tables are distributed by client and which are reference
 * tables, that a client's statement is routed to one shard, and that the webhook outbox row commits or rolls
 * back with the change it reports. Skipped where the `citus` extension is absent (the embedded default and a
 * plain PostgreSQL server); CI runs it against the cluster of `../shared/citus/cluster.sh`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { testDatabaseUrl } from '../helpers/test-app.ts';
import { REFERENCE_TABLES, TENANT_TABLES } from '../../src/db/tenant-tables.ts';
import { createDatabase } from '../../src/db/database.ts';

const DISTRIBUTED = [...TENANT_TABLES].sort();
const REFERENCE = [...REFERENCE_TABLES].sort();

let client: pg.Client;
let citus = false;

beforeAll(async () => {
  client = new pg.Client({ connectionString: testDatabaseUrl() });
  await client.connect();
  citus = (await client.query(`select 1 from pg_extension where extname = 'citus'`)).rowCount === 1;
  if (citus) await client.query(`set citus.multi_task_query_log_level = 'error'`);
});

afterAll(async () => {
  await client?.end();
});

it('Database.distributed tells a Citus coordinator from plain PostgreSQL', async () => {
  const database = createDatabase(testDatabaseUrl(), 1);
  try {
    expect(await database.distributed()).toBe(citus);
    expect(await database.distributed()).toBe(citus);
  } finally {
    await database.close();
  }
});

describe('on Citus', () => {
  it('distributes every tenant table by client and makes the dictionaries reference tables', async (context) => {
    if (!citus) return context.skip();
    const { rows } = await client.query<{
      table_name: string;
      citus_table_type: string;
      column: string | null;
    }>(
      `select table_name::text, citus_table_type, distribution_column as column from citus_tables
       where table_name::text not like 'pg_%'`,
    );
    const ofType = (type: string) =>
      rows
        .filter((row) => row.citus_table_type === type)
        .map((row) => row.table_name)
        .sort();
    expect(ofType('distributed')).toEqual(DISTRIBUTED);
    expect(ofType('distributed').length).toBeGreaterThanOrEqual(30);
    expect(ofType('reference')).toEqual(REFERENCE);
    for (const row of rows.filter((entry) => entry.citus_table_type === 'distributed'))
      expect(row.column, row.table_name).toBe(row.table_name === 'client' ? 'id' : 'client_id');
    const colocation = await client.query<{ groups: string }>(
      `select count(distinct colocationid)::text as groups from pg_dist_partition where partmethod = 'h'`,
    );
    expect(colocation.rows[0]?.groups).toBe('1');
  });

  it('routes a client statement keyed by id to one shard (EXPLAIN shows one task)', async (context) => {
    if (!citus) return context.skip();
    const { rows } = await client.query<{ 'QUERY PLAN': string }>(
      `explain select * from inbound_order o join inbound_order_product p
         on p.client_id = o.client_id and p.order_id = o.id
       where o.client_id = 42 and o.id = 7`,
    );
    const plan = rows.map((row) => row['QUERY PLAN']).join('\n');
    expect(plan).toMatch(/Task Count: 1\b/);
    // The guard of CI's Citus run refuses a statement that needs every shard.
    await expect(client.query(`select count(*) from inbound_order`)).rejects.toThrow(/multi-task|shards/i);
  });

  it('commits or rolls back the webhook outbox row with the change it reports', async (context) => {
    if (!citus) return context.skip();
    const created = await client.query<{ id: string }>(
      `insert into client (name) values ('outbox') returning id`,
    );
    const clientId = created.rows[0]?.id as string;
    const organization = await client.query<{ id: string }>(
      `insert into organization (client_id, name) values ($1, 'o') returning id`,
      [clientId],
    );
    const organizationId = organization.rows[0]?.id as string;
    const change = async (name: string, commit: boolean) => {
      await client.query('begin');
      const order = await client.query<{ id: string }>(
        `insert into inbound_order (client_id, organization_id, type, name) values ($1, $2, 'INCOME', $3)
         returning id`,
        [clientId, organizationId, name],
      );
      await client.query(
        `insert into webhook_event (client_id, organization_id, type, entity_id, payload)
         values ($1, $2, 'CREATE_ORDER', $3, '{}')`,
        [clientId, organizationId, order.rows[0]?.id],
      );
      await client.query(commit ? 'commit' : 'rollback');
    };
    await change('kept', true);
    await change('dropped', false);
    const orders = await client.query(`select name from inbound_order where client_id = $1`, [clientId]);
    const events = await client.query(`select entity_id from webhook_event where client_id = $1`, [clientId]);
    expect(orders.rows.map((row: { name: string }) => row.name)).toEqual(['kept']);
    expect(events.rowCount).toBe(1);
  });
});
