/**
 * The migration runner (src/db/migrate.ts, decision P180): a file reaches PostgreSQL one command per query, split
 * by PostgreSQL's parser, and the whole file is one transaction. On a Citus cluster the migration below alters a
 * distributed table with several commands, one of them adding a constraint (what Citus refuses in one query
 * string); elsewhere the same table is a plain one.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../src/db/database.ts';
import { migrateToLatest, splitCommands } from '../../src/db/migrate.ts';
import { createOwnDatabase, type OwnDatabase } from '../fixtures/webhook-kit.ts';

describe('splitCommands', () => {
  it('splits on the semicolons that end commands, not those in strings, comments or dollar-quoted bodies', async () => {
    const script = [
      "-- leading comment; with a semicolon\nCREATE TABLE t (name text DEFAULT 'a;b');",
      "/* ещё; комментарий */ INSERT INTO t VALUES ('ё;ж');",
      'CREATE FUNCTION f() RETURNS int LANGUAGE plpgsql AS $$ BEGIN RETURN 1; END $$;',
      'SELECT 1',
    ].join('\n');
    expect(await splitCommands(script)).toEqual([
      "CREATE TABLE t (name text DEFAULT 'a;b')",
      "INSERT INTO t VALUES ('ё;ж')",
      'CREATE FUNCTION f() RETURNS int LANGUAGE plpgsql AS $$ BEGIN RETURN 1; END $$',
      'SELECT 1',
    ]);
  });

  it('refuses a script PostgreSQL would refuse, naming the error', async () => {
    await expect(splitCommands('SELECT 1; SELEC 2;')).rejects.toThrow(/syntax error/);
  });
});

describe('a migration of several commands altering a tenant table', () => {
  let own: OwnDatabase;
  let database: Database;
  let folder: string;

  beforeAll(async () => {
    own = await createOwnDatabase('migrations');
    database = createDatabase(own.url, 1);
    folder = await mkdtemp(path.join(os.tmpdir(), 'seller-ops-migration-'));
  });

  afterAll(async () => {
    await database?.close();
    await own?.drop();
    if (folder) await rm(folder, { recursive: true, force: true });
  });

  /** The columns of `inbound_order` whose name starts with `probe_`. */
  async function probeColumns(): Promise<string[]> {
    const { rows } = await sql<{ name: string }>`
      select column_name as name from information_schema.columns
      where table_name = 'inbound_order' and column_name like 'probe%' order by column_name`.execute(
      database.db,
    );
    return rows.map((row) => row.name);
  }

  it('works on a distributed table where the citus extension is present', async (context) => {
    const citus = await sql`select 1 from pg_extension where extname = 'citus'`.execute(database.db);
    if (citus.rows.length === 0) return context.skip();
    const { rows } = await sql<{ type: string }>`
      select citus_table_type as type from citus_tables where table_name = 'inbound_order'::regclass`.execute(
      database.db,
    );
    expect(rows).toEqual([{ type: 'distributed' }]);
  });

  it('rolls the whole file back when a later command fails', async () => {
    await writeFile(
      path.join(folder, '9001_probe_failing.sql'),
      `ALTER TABLE inbound_order ADD COLUMN probe_failed integer;
       ALTER TABLE inbound_order ADD CONSTRAINT probe_failed_positive CHECK (probe_failed > 0);
       SELECT 1 / 0;`,
    );
    await expect(migrateToLatest(database.db, [folder])).rejects.toThrow(/division by zero/);
    expect(await probeColumns()).toEqual([]);
    await rm(path.join(folder, '9001_probe_failing.sql'));
  });

  it('applies every command of the file', async () => {
    await writeFile(
      path.join(folder, '9002_probe.sql'),
      `-- Two columns, a constraint on each and an index: several commands on one (distributed) table.
       ALTER TABLE inbound_order ADD COLUMN probe_weight integer;
       ALTER TABLE inbound_order ADD CONSTRAINT probe_weight_positive CHECK (probe_weight > 0);
       ALTER TABLE inbound_order ADD COLUMN probe_note text NOT NULL DEFAULT 'none; really';
       CREATE INDEX inbound_order_probe_idx ON inbound_order (client_id, probe_weight);`,
    );
    expect(await migrateToLatest(database.db, [folder])).toEqual(['9002_probe']);
    expect(await probeColumns()).toEqual(['probe_note', 'probe_weight']);
    const { rows } = await sql<{ name: string }>`
      select conname as name from pg_constraint where conname = 'probe_weight_positive'`.execute(database.db);
    expect(rows).toHaveLength(1);
  });
});
