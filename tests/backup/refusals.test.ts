/**
 * What `seller-ops backup` and `restore` do around the round trip (docs/operations.md "Backup and restore"): a
 * backup of the embedded default while its service runs (through the data directory) and while it is stopped; a
 * restore refused into a running service's data directory and into a database that holds data (unless
 * `--force`); a forced restore into a database of this run's kind that holds data (its rows replaced, its schema
 * kept, ids going on from the archive's); a damaged archive, one whose checksums do not match and one of a newer
 * schema refused before anything is written; an archive of an older schema migrated forward after loading, and
 * refused into a target whose schema is newer than it.
 */
import { readFile, readdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Migrator, sql } from 'kysely';
import { createDatabase } from '../../src/db/database.ts';
import { SqlFileMigrationProvider } from '../../src/db/migrate.ts';
import { writeBackupFile } from '../../src/backup/backup.ts';
import { checkArchive } from '../../src/backup/restore.ts';
import { SERVICE_VERSION } from '../../src/backup/service-version.ts';
import { createOwnDatabase, type OwnDatabase } from '../fixtures/webhook-kit.ts';
import { spawnService, stopService, waitUntilReady } from '../helpers/service-process.ts';
import { TEST_SECRET_KEY } from '../helpers/test-app.ts';
import { emptyRestoreTarget, rewriteArchive, runCli, temporaryDirectory } from './kit.ts';

let directory: Awaited<ReturnType<typeof temporaryDirectory>>;
let source: OwnDatabase;
/** A valid archive of a small database. */
let archive: string;

beforeAll(async () => {
  directory = await temporaryDirectory('backup-refusals');
  source = await createOwnDatabase('backup_refusals');
  const database = createDatabase(source.url, 1);
  await sql`insert into client (name) values ('Archived client')`.execute(database.db);
  await database.close();
  archive = path.join(directory.path, 'valid.tar.gz');
  await writeBackupFile(archive, {
    databaseUrl: source.url,
    secretKey: Buffer.from(TEST_SECRET_KEY, 'hex'),
    serviceVersion: SERVICE_VERSION,
  });
});

afterAll(async () => {
  await source?.drop();
  await directory?.cleanup();
});

/** Runs `restore` on `file` into a fresh data directory and expects it refused before anything was written. */
async function expectRefusedUntouched(file: string, message: RegExp): Promise<void> {
  const target = await temporaryDirectory('untouched');
  try {
    const restore = await runCli(['restore', file], { DATA_DIR: target.path, DATABASE_URL: '' });
    expect(restore.code).toBe(1);
    expect(restore.stderr).toMatch(message);
    expect(await readdir(target.path)).toEqual([]);
  } finally {
    await target.cleanup();
  }
}

describe('seller-ops backup and restore on the embedded default', () => {
  it('backs up while the service runs and while it is stopped; restore refuses a running or non-empty target unless --force', async () => {
    const dataDir = await temporaryDirectory('backup-embedded');
    const env = { DATA_DIR: dataDir.path, DATABASE_URL: '', SECRET_KEY: '' };
    const service = await spawnService({ ...env, SEED_DEMO: 'true' });
    try {
      await waitUntilReady(service);
      const whileRunning = path.join(directory.path, 'while-running.tar.gz');
      const running = await runCli(['backup', '--out', whileRunning], env);
      expect(running.code, running.stderr).toBe(0);
      // The command used the service's own server: it started none (no "ready" line of its own).
      expect(running.stderr).not.toMatch(/embedded PostgreSQL ready/);
      expect((await checkArchive(whileRunning)).secretKey).toEqual(
        Buffer.from(await readFile(path.join(dataDir.path, 'secret-key'), 'utf8'), 'base64'),
      );

      const intoRunning = await runCli(['restore', whileRunning], env);
      expect(intoRunning.code).toBe(1);
      expect(intoRunning.stderr).toMatch(/in use by a running seller-ops \(pid \d+\): stop the service/);
    } finally {
      await stopService(service);
    }
    try {
      const whileStopped = path.join(directory.path, 'while-stopped.tar.gz');
      const stopped = await runCli(['backup', '--out', whileStopped, '--without-secret-key'], env);
      expect(stopped.code, stopped.stderr).toBe(0);
      expect(stopped.stderr).toMatch(/embedded PostgreSQL ready/);
      expect(stopped.stderr).toMatch(/warning: the archive leaves out the operator key/);
      expect((await checkArchive(whileStopped)).secretKey).toBeUndefined();

      const intoDemo = await runCli(['restore', archive], env);
      expect(intoDemo.code).toBe(1);
      expect(intoDemo.stderr).toMatch(
        /the target database is not empty \(rows in .*client.*\): restore refuses to overwrite it; pass --force/,
      );
      const forced = await runCli(['restore', archive, '--force'], env);
      expect(forced.code, forced.stderr).toBe(0);
      const clients = await runCli(['client', 'list'], env);
      expect(JSON.parse(clients.stdout)).toEqual([expect.objectContaining({ name: 'Archived client' })]);
    } finally {
      await dataDir.cleanup();
    }
  }, 240_000);
});

describe('seller-ops restore refuses', () => {
  it('a damaged archive', async () => {
    const bytes = await readFile(archive);
    const damaged = path.join(directory.path, 'damaged.tar.gz');
    const middle = Math.floor(bytes.length / 2);
    bytes.writeUInt8(bytes.readUInt8(middle) ^ 0xff, middle);
    await writeFile(damaged, bytes);
    await expectRefusedUntouched(damaged, /damaged\.tar\.gz cannot be restored: .*damaged/);

    const truncated = path.join(directory.path, 'truncated.tar.gz');
    await writeFile(truncated, (await readFile(archive)).subarray(0, (await stat(archive)).size - 200));
    await expectRefusedUntouched(truncated, /truncated\.tar\.gz cannot be restored/);
  });

  it('an archive whose checksums do not match', async () => {
    const changed = path.join(directory.path, 'changed.tar.gz');
    await rewriteArchive(
      archive,
      changed,
      (manifest) => void (manifest.createdAt = '2000-01-01T00:00:00.000Z'),
      {
        keepChecksums: true,
      },
    );
    await expectRefusedUntouched(
      changed,
      /the checksum of manifest\.json does not match: the archive is damaged/,
    );
  });

  it('an archive of a newer schema, naming the versions', async () => {
    const newer = path.join(directory.path, 'newer.tar.gz');
    await rewriteArchive(archive, newer, (manifest) => {
      manifest.migrations.push('9999_from_the_future');
      manifest.serviceVersion = '99.0.0';
    });
    await expectRefusedUntouched(
      newer,
      /has schema version 9999_from_the_future, newer than this seller-ops knows \(latest \d{4}_\w+; unknown: 9999_from_the_future\): restore it with seller-ops 99\.0\.0 or later/,
    );
  });
});

describe('seller-ops restore into a database that holds data', () => {
  it('refuses it without --force; with it, replaces its rows, keeps its schema and goes on with the archive ids', async () => {
    const target = await emptyRestoreTarget();
    // The operator key comes from the archive (written to the target's DATA_DIR).
    const env = { ...target.env, SECRET_KEY: '' };
    try {
      const first = await runCli(['restore', archive], env);
      expect(first.code, first.stderr).toBe(0);
      const [archived] = JSON.parse((await runCli(['client', 'list'], env)).stdout) as Array<{
        id: number;
        name: string;
      }>;
      expect(archived).toEqual(expect.objectContaining({ name: 'Archived client' }));
      const later = await runCli(['client', 'create', '--name', 'Later client'], env);
      expect(later.code, later.stderr).toBe(0);

      const refused = await runCli(['restore', archive], env);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(
        /the target database is not empty \(rows in .*client.*\): .*pass --force/,
      );
      const forced = await runCli(['restore', archive, '--force'], env);
      expect(forced.code, forced.stderr).toBe(0);
      expect(forced.stderr).toMatch(/restore: emptied \d+ tables/);
      const clients = await runCli(['client', 'list'], env);
      expect(JSON.parse(clients.stdout)).toEqual([archived]);
      // The ids go on from the archive's sequences, not from the rows the target held.
      const after = await runCli(['client', 'create', '--name', 'After the restore'], env);
      expect(after.code, after.stderr).toBe(0);
      expect((JSON.parse(after.stdout) as { id: number }).id).toBe((archived?.id ?? 0) + 1);
    } finally {
      await target.cleanup();
    }
  }, 240_000);
});

describe('seller-ops restore of an older archive', () => {
  it('loads it at its schema version, then migrates it forward; a target now newer than it refuses it', async () => {
    const provider = new SqlFileMigrationProvider();
    const known = Object.keys(await provider.getMigrations()).sort();
    const older = await createOwnDatabase('backup_older', false);
    const database = createDatabase(older.url, 1);
    const target = await emptyRestoreTarget();
    try {
      const { error } = await new Migrator({ db: database.db, provider }).migrateTo(known.at(-2) ?? '');
      expect(error).toBeUndefined();
      await sql`insert into client (name) values ('Older client')`.execute(database.db);
      const file = path.join(directory.path, 'older.tar.gz');
      await writeBackupFile(file, { databaseUrl: older.url, secretKey: undefined, serviceVersion: '0.0.1' });
      expect((await checkArchive(file)).laterMigrations).toEqual([known.at(-1)]);

      const restore = await runCli(['restore', file], target.env);
      expect(restore.code, restore.stderr).toBe(0);
      expect(restore.stderr).toContain(`restore: migrated forward: ${known.at(-1)}`);
      expect(restore.stderr).toMatch(/warning: the archive holds no operator key/);
      const env = { ...target.env, SECRET_KEY: TEST_SECRET_KEY };
      const clients = await runCli(['client', 'list'], env);
      expect(JSON.parse(clients.stdout)).toEqual([expect.objectContaining({ name: 'Older client' })]);

      // Migrations run only forward: the target, now at the latest schema, cannot go back to the archive's.
      const again = await runCli(['restore', file, '--force'], target.env);
      expect(again.code).toBe(1);
      expect(again.stderr).toContain(
        `the target database's schema is at ${known.at(-1)}, the archive's at ${known.at(-2)}: the target is newer`,
      );
      expect((await runCli(['client', 'list'], env)).stdout).toBe(clients.stdout);
    } finally {
      await database.close();
      await older.drop();
      await target.cleanup();
    }
  }, 240_000);
});
