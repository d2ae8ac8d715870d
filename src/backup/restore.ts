/**
 * `seller-ops restore FILE` (docs/operations.md "Backup and restore"): checks the archive whole before touching
 * anything (checksums, format, schema version), then loads it into a target whose schema it keeps:
 * 1. refuses a target whose schema is newer than the archive's, or of other migrations: migrations run only
 *    forward, and the schema is never dropped, since on Citus its tables' distribution lives in metadata that a
 *    dropped and re-created schema does not get back (P194);
 * 2. refuses a target whose tables hold rows unless forced;
 * 3. applies the migrations up to the archive's schema version (none when the target is already there), so every
 *    table has the archive's columns;
 * 4. creates the queues of the pending jobs (pg-boss);
 * 5. in one transaction: empties the job queue's jobs and, when forced, every table of ours (`TRUNCATE`; a load
 *    that fails leaves a forced target's rows as they were), loads every table through `COPY … FROM STDIN` in the archive's
 *    foreign-key order (user triggers disabled meanwhile: the rows are stored as they were, nothing derives from
 *    them again), the pending jobs, and sets the sequences to their state at the snapshot;
 * 6. applies the migrations this seller-ops has beyond the archive's (an older archive is migrated forward).
 * An archive of a newer schema than this seller-ops knows is refused before anything is written.
 */
import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import { Migrator } from 'kysely';
import pg from 'pg';
import PgBoss from 'pg-boss';
import { from as copyFrom } from 'pg-copy-streams';
import { createDatabase } from '../db/database.ts';
import { migrateToLatest, SqlFileMigrationProvider } from '../db/migrate.ts';
import { ensureQueue } from '../jobs/queue.ts';
import { forEachEntry, partEntry, verifyArchive, type DumpedTable, type VerifiedArchive } from './archive.ts';
import {
  appliedMigrations,
  jobColumns,
  one,
  ourTables,
  quote,
  tablesToEmpty,
  JOB_SCHEMA,
  JOB_TABLES,
  type Queryable,
} from './catalog.ts';

/** The restore was refused; nothing was written to the target. */
export class RestoreRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RestoreRefusedError';
  }
}

/** A verified archive this seller-ops can restore. */
export interface CheckedArchive extends VerifiedArchive {
  file: string;
  /** Migrations this seller-ops applies after loading (empty when the archive has the latest schema). */
  laterMigrations: string[];
}

/**
 * Verifies `file` (`verifyArchive`) and compares its schema version with the migrations this seller-ops knows.
 * @throws BackupArchiveError when the archive is damaged; RestoreRefusedError when its schema is newer or unknown
 */
export async function checkArchive(file: string): Promise<CheckedArchive> {
  const archive = await verifyArchive(file);
  const known = Object.keys(await new SqlFileMigrationProvider().getMigrations()).sort();
  const { migrations, serviceVersion } = archive.manifest;
  const unknown = migrations.filter((name) => !known.includes(name));
  if (unknown.length > 0)
    throw new RestoreRefusedError(
      `${file} has schema version ${migrations.at(-1)}, newer than this seller-ops knows ` +
        `(latest ${known.at(-1)}; unknown: ${unknown.join(', ')}): restore it with seller-ops ` +
        `${serviceVersion} or later`,
    );
  if (migrations.some((name, index) => known[index] !== name))
    throw new RestoreRefusedError(
      `${file} was made by a seller-ops whose migrations differ from this one's: restore it with seller-ops ${serviceVersion}`,
    );
  return { ...archive, file, laterMigrations: known.slice(migrations.length) };
}

/** What a restore loaded. */
export interface RestoreSummary {
  tables: number;
  rows: number;
  jobs: number;
  /** Migrations applied after loading. */
  migrated: string[];
}

/**
 * Loads `archive` into the database at `databaseUrl` (steps above).
 * @param force replace what the target holds instead of refusing it
 * @throws RestoreRefusedError when the target's schema is newer than the archive's or of other migrations, when
 *   it holds rows and `force` is false, or when its tables do not match the archive's; the database's error
 *   otherwise (emptying and loading are one transaction: nothing of it stays)
 */
export async function restoreArchive(
  archive: CheckedArchive,
  databaseUrl: string,
  options: { force: boolean; progress?: (message: string) => void },
): Promise<RestoreSummary> {
  const progress = options.progress ?? (() => undefined);
  const { manifest } = archive;
  const schemaVersion = manifest.migrations.at(-1);
  if (!schemaVersion) throw new RestoreRefusedError(`${archive.file} records no schema version`);
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const database = createDatabase(databaseUrl, 2);
  try {
    checkTargetSchema(await appliedMigrations(client), manifest.migrations);
    const occupied = await acrossShards(client, () => occupiedTables(client));
    if (occupied.length > 0 && !options.force)
      throw new RestoreRefusedError(
        `the target database is not empty (rows in ${occupied.slice(0, 5).join(', ')}${occupied.length > 5 ? ', …' : ''}): ` +
          'restore refuses to overwrite it; pass --force to replace everything in it',
      );
    const migrator = new Migrator({ db: database.db, provider: new SqlFileMigrationProvider() });
    const { error } = await migrator.migrateTo(schemaVersion);
    if (error) throw error instanceof Error ? error : new Error(`migration failed: ${JSON.stringify(error)}`);
    progress(`restore: schema at ${schemaVersion}`);
    if (manifest.jobs && manifest.jobQueues.length > 0) await createQueues(database.pool, manifest.jobQueues);

    await checkTargetTables(client, manifest.tables, manifest.jobs);
    await acrossShards(client, async () => {
      // The dictionaries (reference tables on Citus) are emptied and loaded in the transaction that also writes
      // distributed tables; Citus then needs one connection per node.
      await client.query(`set local citus.multi_shard_modify_mode = 'sequential'`);
      await emptyTarget(client, occupied.length > 0, progress);
      const triggered = await tablesWithUserTriggers(client);
      for (const table of triggered) await client.query(`alter table ${quote(table)} disable trigger user`);
      await loadRows(client, archive, progress);
      for (const sequence of manifest.sequences)
        await client.query(
          `select setval(to_regclass(quote_ident($1)), $2::bigint, $3) where to_regclass(quote_ident($1)) is not null`,
          [sequence.name, sequence.lastValue, sequence.isCalled],
        );
      for (const table of triggered) await client.query(`alter table ${quote(table)} enable trigger user`);
    });
    const migrated = await migrateToLatest(database.db);
    if (migrated.length > 0) progress(`restore: migrated forward: ${migrated.join(', ')}`);
    return {
      tables: manifest.tables.length,
      rows: manifest.tables.reduce((sum, table) => sum + table.rows, 0),
      jobs: manifest.jobs?.rows ?? 0,
      migrated,
    };
  } finally {
    await client.end();
    await database.close();
  }
}

/**
 * Checks that the target's applied migrations are the archive's first ones (none, some, or all of them): the
 * target can then be migrated to the archive's schema version. A newer target cannot be taken back.
 * @throws RestoreRefusedError naming the target's and the archive's versions
 */
function checkTargetSchema(applied: string[], archived: string[]): void {
  const differing = applied.findIndex((name, index) => archived[index] !== name);
  if (differing < 0) return;
  const versions = `the target database's schema is at ${applied.at(-1)}, the archive's at ${archived.at(-1)}`;
  if (differing >= archived.length)
    throw new RestoreRefusedError(
      `${versions}: the target is newer, and migrations run only forward, so restore cannot take it back ` +
        '(not even with --force); restore into an empty database or data directory',
    );
  throw new RestoreRefusedError(
    `${versions}, and its migrations differ from the archive's from ${applied[differing]} on: ` +
      'restore into an empty database or data directory',
  );
}

/**
 * Runs `work` in a transaction of `client` where statements may span shards: a restore reads and writes every
 * client's rows (on Citus the multi-shard guard is lowered for the transaction, P176; a placeholder elsewhere).
 * @throws whatever `work` throws, after rolling back
 */
async function acrossShards<T>(client: pg.Client, work: () => Promise<T>): Promise<T> {
  await client.query('begin');
  try {
    await client.query(`set local citus.multi_task_query_log_level = 'off'`);
    const result = await work();
    await client.query('commit');
    return result;
  } catch (error) {
    await client.query('rollback').catch(() => undefined);
    throw error;
  }
}

/**
 * Empties the job queue's jobs and, when `held` (some table of ours held rows), every table of ours (UNLOGGED ones
 * too), restarting the tables' own sequences (set to the archive's state after loading). Tables that hold no row
 * are left alone: on Citus a `TRUNCATE` reaches every shard of every table, seconds of work for nothing. Without
 * `CASCADE`: a table of another schema that references ours fails the restore instead of being emptied with it.
 */
async function emptyTarget(
  client: Queryable,
  held: boolean,
  progress: (message: string) => void,
): Promise<void> {
  const { rows: jobTables } = await client.query<{ name: string }>(
    `select name from unnest($1::text[]) as name where to_regclass(name) is not null`,
    [JOB_TABLES],
  );
  if (jobTables.length > 0) await client.query(`truncate ${jobTables.map((row) => row.name).join(', ')}`);
  if (!held) return;
  const tables = await tablesToEmpty(client);
  await client.query(`truncate ${tables.map(quote).join(', ')} restart identity`);
  progress(`restore: emptied ${tables.length} tables`);
}

/** Our tables that hold at least one row. */
async function occupiedTables(client: Queryable): Promise<string[]> {
  const occupied = [];
  for (const table of await ourTables(client)) {
    const { any } = await one<{ any: boolean }>(
      client,
      // `select 1`: Citus cannot plan a subquery of no columns over a distributed table across its shards.
      `select exists (select 1 from ${quote(table.name)}) as any`,
    );
    if (any) occupied.push(table.name);
  }
  return occupied;
}

/** Tables of the service's schema with triggers of their own (foreign-key checks are PostgreSQL's, not theirs). */
async function tablesWithUserTriggers(client: Queryable): Promise<string[]> {
  const { rows } = await client.query<{ name: string }>(
    `select distinct c.relname as name from pg_trigger t join pg_class c on c.oid = t.tgrelid
      where not t.tgisinternal
        and c.relnamespace = (select oid from pg_namespace where nspname = current_schema())`,
  );
  return rows.map((row) => row.name);
}

/** Creates pg-boss's schema and the standard-policy queues `names`, as the service does (`ensureQueue`). */
async function createQueues(pool: pg.Pool, names: string[]): Promise<void> {
  const boss = new PgBoss({
    db: { executeSql: (text, values) => pool.query(text, values) },
    supervise: false,
    schedule: false,
  });
  boss.on('error', () => undefined);
  await boss.start();
  try {
    for (const name of names) await ensureQueue(boss, name);
  } finally {
    await boss.stop({ graceful: false, wait: true });
  }
}

/**
 * Checks that every archived table exists on the target with every archived column.
 * @throws RestoreRefusedError naming the first mismatch
 */
async function checkTargetTables(
  client: Queryable,
  tables: DumpedTable[],
  jobs: DumpedTable | null,
): Promise<void> {
  const target = new Map((await ourTables(client)).map((table) => [table.name, new Set(table.columns)]));
  if (jobs) target.set(jobs.name, new Set((await jobColumns(client)) ?? []));
  for (const table of [...tables, ...(jobs && jobs.rows > 0 ? [jobs] : [])]) {
    const columns = target.get(table.name);
    const missing = table.columns.filter((column) => !columns?.has(column));
    if (!columns || missing.length > 0)
      throw new RestoreRefusedError(
        `the target's table ${table.name} ${columns ? `has no column ${missing.join(', ')}` : 'does not exist'} after migrating to the archive's schema version`,
      );
  }
}

/** Streams every data part of the archive into `COPY … FROM STDIN` of its table, table after table. */
async function loadRows(
  client: pg.Client,
  archive: CheckedArchive,
  progress: (message: string) => void,
): Promise<void> {
  const { tables, jobs } = archive.manifest;
  const byPart = new Map<string, DumpedTable>();
  for (const table of [...tables, ...(jobs ? [jobs] : [])])
    for (let part = 0; part < table.parts; part++) byPart.set(partEntry(table.name, part), table);
  let current: { table: DumpedTable; stream: ReturnType<typeof copyFrom>; done: Promise<void> } | undefined;
  const endCurrent = async () => {
    if (!current) return;
    current.stream.end();
    await current.done;
    progress(`restore: ${current.table.name}: ${current.table.rows} rows`);
    current = undefined;
  };
  await forEachEntry(archive.file, async (name, content) => {
    const table = byPart.get(name);
    if (!table) {
      for await (const chunk of content) void chunk; // manifest, key and checksums were read when verifying
      return;
    }
    if (current?.table !== table) {
      await endCurrent();
      const target = table === jobs ? `${JOB_SCHEMA}.job` : quote(table.name);
      const stream = client.query(
        copyFrom(`copy ${target} (${table.columns.map(quote).join(', ')}) from stdin`),
      );
      const done = finished(stream);
      // Handled here, awaited below: a failing COPY (e.g. a broken foreign key) surfaces at the next await.
      done.catch(() => undefined);
      current = { table, stream, done };
    }
    const { stream, done } = current;
    for await (const chunk of content)
      if (!stream.write(chunk)) await Promise.race([once(stream, 'drain'), done]);
  });
  await endCurrent();
}
