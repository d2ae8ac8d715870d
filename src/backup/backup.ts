/**
 * `seller-ops backup` (docs/operations.md "Backup and restore"): a logical export of every table of ours through
 * `COPY … TO STDOUT` (`pg-copy-streams`), all of it read in one `REPEATABLE READ READ ONLY` transaction, so the
 * archive is one consistent snapshot while the service keeps writing, on any PostgreSQL version (the embedded
 * server ships no `pg_dump`, and a `pg_dump` of another major version refuses it). What is copied is found in the
 * catalog at run time (`catalog.ts`); the archive's layout is in `archive.ts`.
 */
import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import type { Writable } from 'node:stream';
import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import {
  ArchiveWriter,
  manifestOf,
  MANIFEST_ENTRY,
  partEntry,
  PART_BYTES,
  SECRET_KEY_ENTRY,
} from './archive.ts';
import type { DumpedTable } from './archive.ts';
import {
  appliedMigrations,
  jobColumns,
  ourTables,
  pendingJobQueues,
  pendingJobsQuery,
  quote,
  sequenceStates,
  one,
  JOB_SCHEMA,
} from './catalog.ts';

/** What to back up and where. */
export interface BackupOptions {
  databaseUrl: string;
  /** The operator key to include (P160); undefined leaves it out (sealed secrets then need the original key). */
  secretKey: Buffer | undefined;
  /** Version of this seller-ops, recorded in the archive. */
  serviceVersion: string;
  /** Receives progress lines (the CLI prints them on stderr). */
  progress?: (message: string) => void;
}

/** What a finished backup holds. */
export interface BackupSummary {
  /** ISO 8601, UTC: the snapshot's time. */
  createdAt: string;
  /** The last applied migration. */
  schemaVersion: string;
  tables: number;
  rows: number;
  /** Pending jobs of the job queue. */
  jobs: number;
}

/** The archive could not be made from this database. */
export class BackupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BackupError';
  }
}

/**
 * Writes the backup archive of the database at `options.databaseUrl` into `out` (which it ends).
 * @throws BackupError when the database holds no seller-ops schema; the database's or the output's error otherwise
 */
export async function writeBackup(out: Writable, options: BackupOptions): Promise<BackupSummary> {
  const progress = options.progress ?? (() => undefined);
  const client = new pg.Client({ connectionString: options.databaseUrl });
  await client.connect();
  const writer = new ArchiveWriter(out);
  try {
    await client.query('begin isolation level repeatable read read only');
    // Every client's rows: on Citus a read across shards on purpose (P176; a placeholder elsewhere).
    await client.query(`set local citus.multi_task_query_log_level = 'off'`);
    const snapshot = await one<{ createdAt: string; postgresVersion: string }>(
      client,
      `select to_char(now() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as "createdAt",
              current_setting('server_version') as "postgresVersion"`,
    );
    const migrations = await appliedMigrations(client);
    if (migrations.length === 0)
      throw new BackupError(
        'the database holds no seller-ops schema (no applied migrations): nothing to back up',
      );
    const tables: DumpedTable[] = [];
    for (const table of await ourTables(client)) {
      const columns = table.columns.map(quote).join(', ');
      const query = `select ${columns} from ${quote(table.name)}`;
      const dumped = await dumpRows(client, writer, table.name, query, progress);
      tables.push({ ...table, ...dumped });
      progress(`backup: ${table.name}: ${dumped.rows} rows`);
    }
    const queueColumns = await jobColumns(client);
    const jobs = queueColumns && {
      name: `${JOB_SCHEMA}.job`,
      columns: queueColumns,
      ...(await dumpRows(
        client,
        writer,
        `${JOB_SCHEMA}.job`,
        pendingJobsQuery(queueColumns.map(quote).join(', ')),
        progress,
      )),
    };
    if (jobs) progress(`backup: pending jobs: ${jobs.rows}`);
    const manifest = manifestOf({
      ...snapshot,
      serviceVersion: options.serviceVersion,
      migrations,
      tables,
      jobs: jobs ?? null,
      jobQueues: jobs ? await pendingJobQueues(client) : [],
      sequences: await sequenceStates(client),
      secretKey: options.secretKey ? 'included' : 'left-out',
    });
    await client.query('commit');
    await writer.add(MANIFEST_ENTRY, Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`));
    if (options.secretKey)
      await writer.add(SECRET_KEY_ENTRY, Buffer.from(`${options.secretKey.toString('base64')}\n`));
    await writer.finish();
    return {
      createdAt: manifest.createdAt,
      schemaVersion: migrations.at(-1) ?? '',
      tables: tables.length,
      rows: tables.reduce((sum, table) => sum + table.rows, 0),
      jobs: jobs?.rows ?? 0,
    };
  } catch (error) {
    out.destroy();
    throw error;
  } finally {
    await client.end();
  }
}

/**
 * Writes the backup archive to `file`: first into `<file>.partial`, renamed into place once complete, so a file
 * of that name is always a whole archive.
 * @throws as `writeBackup`; the partial file is removed
 */
export async function writeBackupFile(file: string, options: BackupOptions): Promise<BackupSummary> {
  const partial = `${file}.partial`;
  try {
    const summary = await writeBackup(createWriteStream(partial, { mode: 0o600 }), options);
    await rename(partial, file);
    return summary;
  } catch (error) {
    await rm(partial, { force: true });
    throw error;
  }
}

/** Copies the rows `query` selects into archive parts named after `name`; a progress line per full part. */
async function dumpRows(
  client: pg.Client,
  writer: ArchiveWriter,
  name: string,
  query: string,
  progress: (message: string) => void,
): Promise<{ rows: number; parts: number }> {
  const rows = client.query(copyTo(`copy (${query}) to stdout`));
  let buffered: Buffer[] = [];
  let size = 0;
  let parts = 0;
  const flush = async () => {
    await writer.add(partEntry(name, parts++), Buffer.concat(buffered));
    buffered = [];
    size = 0;
  };
  for await (const chunk of rows) {
    buffered.push(chunk as Buffer);
    size += (chunk as Buffer).length;
    if (size >= PART_BYTES) {
      await flush();
      progress(`backup: ${name}: ${(parts * PART_BYTES) / 2 ** 20} MiB so far`);
    }
  }
  if (size > 0) await flush();
  return { rows: rows.rowCount, parts };
}
