/**
 * The backup archive (docs/operations.md "Backup and restore"): a gzip-compressed tar (`tar-stream`, `node:zlib`)
 * that ordinary tools can open (`tar -tzf`, `tar -xzOf FILE manifest.json`). Entries, in this order:
 * - `data/<table>/<NNNNNN>.copy`: a table's rows in PostgreSQL's COPY text format, cut into parts of about
 *   `PART_BYTES` (a part's size must be known before it is written into the tar); parts concatenate back into
 *   one COPY stream.
 * - `manifest.json`: the `BackupManifest` (schema version, service version, tables and columns, sequences).
 * - `secret-key`: the operator key (P160) as base64, unless left out on purpose.
 * - `SHA256SUMS`: the SHA-256 of every other entry, in `sha256sum` format; checked entry by entry on restore.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import type { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createGzip } from 'node:zlib';
import tar from 'tar-stream';

/** Bytes of COPY text per data part. */
export const PART_BYTES = 4 * 1024 * 1024;
export const MANIFEST_ENTRY = 'manifest.json';
export const SECRET_KEY_ENTRY = 'secret-key';
export const CHECKSUMS_ENTRY = 'SHA256SUMS';
const FORMAT = 'seller-ops-backup';
const FORMAT_VERSION = 1;

/** One table (or the pending jobs) in the archive. */
export interface DumpedTable {
  /** Table name in the service's schema, or `pgboss.job` for the job queue's pending jobs. */
  name: string;
  /** Columns in the order of the COPY text. */
  columns: string[];
  rows: number;
  parts: number;
}

/** What the archive holds, besides the rows. */
export interface BackupManifest {
  format: typeof FORMAT;
  formatVersion: typeof FORMAT_VERSION;
  /** ISO 8601, UTC: when the snapshot was taken. */
  createdAt: string;
  /** `version` of the seller-ops package that made the archive. */
  serviceVersion: string;
  /** `server_version` of the PostgreSQL the snapshot was taken on. */
  postgresVersion: string;
  /** Names of the applied migrations, in order; the last one is the schema version. */
  migrations: string[];
  /** Our tables in an order that satisfies their foreign keys (a table after every table it references). */
  tables: DumpedTable[];
  /** The job queue's pending jobs (created, retry, active), loaded after the tables; null without pg-boss. */
  jobs: DumpedTable | null;
  /** The queues of those jobs (created on the target before the jobs are loaded). */
  jobQueues: string[];
  /** Sequences of the schema and their state at the snapshot (`last_value` as decimal text). */
  sequences: Array<{ name: string; lastValue: string; isCalled: boolean }>;
  /** Whether the `secret-key` entry is present. */
  secretKey: 'included' | 'left-out';
}

/** The archive is damaged, truncated, or not a seller-ops backup. */
export class BackupArchiveError extends Error {
  constructor(file: string, reason: string) {
    super(`${file} cannot be restored: ${reason}`);
    this.name = 'BackupArchiveError';
  }
}

/** Name of the entry holding part `part` (0-based) of `table`. */
export const partEntry = (table: string, part: number): string =>
  `data/${table}/${String(part + 1).padStart(6, '0')}.copy`;

/** Writes an archive entry by entry into `out`, recording each entry's SHA-256. */
export class ArchiveWriter {
  private readonly pack = tar.pack();
  private readonly sums: string[] = [];
  private readonly written: Promise<void>;

  constructor(out: Writable) {
    this.written = pipeline(this.pack, createGzip(), out);
    // Surfaces in `finish`; without a handler a failing output would be an unhandled rejection meanwhile.
    this.written.catch(() => undefined);
  }

  /** Adds one entry; resolves once the tar has taken it (waits while the output is slower). */
  add(name: string, content: Buffer): Promise<void> {
    this.sums.push(`${createHash('sha256').update(content).digest('hex')}  ${name}`);
    return new Promise((resolve, reject) => {
      const sink = this.pack.entry({ name, size: content.length, mode: 0o600, mtime: new Date() }, (error) =>
        error ? reject(error) : resolve(),
      );
      sink.end(content);
    });
  }

  /** Adds `SHA256SUMS`, ends the archive and waits until `out` has it all. */
  finish(): Promise<void> {
    return this.finishWith(Buffer.from(`${this.sums.join('\n')}\n`));
  }

  /** Ends the archive with `checksums` as its `SHA256SUMS` (tests of damaged archives give other sums). */
  async finishWith(checksums: Buffer): Promise<void> {
    await this.add(CHECKSUMS_ENTRY, checksums);
    this.pack.finalize();
    await this.written;
  }
}

/** Builds the manifest of a snapshot. */
export function manifestOf(fields: Omit<BackupManifest, 'format' | 'formatVersion'>): BackupManifest {
  return { format: FORMAT, formatVersion: FORMAT_VERSION, ...fields };
}

/** The small entries of a verified archive. */
export interface VerifiedArchive {
  manifest: BackupManifest;
  /** The operator key (32 bytes), or undefined when the archive was made without it. */
  secretKey: Buffer | undefined;
}

/**
 * Reads the whole archive once and checks it: gzip and tar framing, every entry against `SHA256SUMS`, nothing
 * missing, nothing extra, a manifest of this format. Nothing is loaded anywhere.
 * @throws BackupArchiveError naming what is wrong
 */
export async function verifyArchive(file: string): Promise<VerifiedArchive> {
  const actual = new Map<string, string>();
  const small = new Map<string, Buffer>();
  try {
    await forEachEntry(file, async (name, entry) => {
      const hash = createHash('sha256');
      const keep: Buffer[] = [];
      for await (const chunk of entry) {
        hash.update(chunk as Buffer);
        if (!name.startsWith('data/')) keep.push(chunk as Buffer);
      }
      if (actual.has(name)) throw new Error(`the entry ${name} appears twice`);
      actual.set(name, hash.digest('hex'));
      if (!name.startsWith('data/')) small.set(name, Buffer.concat(keep));
    });
  } catch (error) {
    throw new BackupArchiveError(file, `it is damaged or not a backup archive (${describe(error)})`);
  }
  const sums = small.get(CHECKSUMS_ENTRY);
  if (!sums)
    throw new BackupArchiveError(file, `it has no ${CHECKSUMS_ENTRY}: truncated or not a backup archive`);
  const expected = new Map(
    sums
      .toString('utf8')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => [line.slice(66), line.slice(0, 64)] as const),
  );
  for (const [name, sum] of expected) {
    if (!actual.has(name)) throw new BackupArchiveError(file, `the entry ${name} is missing (truncated?)`);
    if (actual.get(name) !== sum)
      throw new BackupArchiveError(file, `the checksum of ${name} does not match: the archive is damaged`);
  }
  for (const name of actual.keys())
    if (name !== CHECKSUMS_ENTRY && !expected.has(name))
      throw new BackupArchiveError(file, `the entry ${name} is not covered by ${CHECKSUMS_ENTRY}`);
  const manifest = parseManifest(file, small.get(MANIFEST_ENTRY));
  for (const table of [...manifest.tables, ...(manifest.jobs ? [manifest.jobs] : [])])
    for (let part = 0; part < table.parts; part++)
      if (!actual.has(partEntry(table.name, part)))
        throw new BackupArchiveError(file, `the rows of ${table.name} are missing`);
  const key = small.get(SECRET_KEY_ENTRY);
  if ((manifest.secretKey === 'included') !== (key !== undefined))
    throw new BackupArchiveError(file, 'its manifest and its secret-key entry disagree');
  return { manifest, secretKey: key && Buffer.from(key.toString('utf8').trim(), 'base64') };
}

function parseManifest(file: string, content: Buffer | undefined): BackupManifest {
  if (!content) throw new BackupArchiveError(file, `it has no ${MANIFEST_ENTRY}`);
  const manifest = JSON.parse(content.toString('utf8')) as Partial<BackupManifest>;
  if (manifest.format !== FORMAT) throw new BackupArchiveError(file, 'it is not a seller-ops backup');
  if (manifest.formatVersion !== FORMAT_VERSION)
    throw new BackupArchiveError(
      file,
      `its format version ${String(manifest.formatVersion)} is not ${FORMAT_VERSION}: restore it with the seller-ops ${manifest.serviceVersion ?? ''} that made it`,
    );
  return manifest as BackupManifest;
}

/**
 * Streams the entries of `file` in archive order; `visit` must consume each entry's content before it returns.
 * @throws the gzip, tar or `visit` error
 */
export async function forEachEntry(
  file: string,
  visit: (name: string, content: AsyncIterable<unknown>) => Promise<void>,
): Promise<void> {
  const extract = tar.extract();
  const reading = pipeline(createReadStream(file), createGunzip(), extract);
  reading.catch(() => undefined);
  for await (const entry of extract) await visit(entry.header.name, entry);
  await reading;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
