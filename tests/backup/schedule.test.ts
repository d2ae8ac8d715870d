/**
 * Scheduled backups (docs/operations.md "Backup and restore"): real services on the embedded default with
 * `BACKUP_SCHEDULE` every minute. One writes a restorable archive into `BACKUP_DIR`, keeps only the newest
 * `BACKUP_KEEP` (the oldest removed) and exposes the age of the newest on `/metrics`; one whose `BACKUP_DIR`
 * cannot be created logs the failure at `error`.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeBackupFile } from '../../src/backup/backup.ts';
import { checkArchive } from '../../src/backup/restore.ts';
import { backupFileName, listBackups } from '../../src/backup/schedule.ts';
import { SERVICE_VERSION } from '../../src/backup/service-version.ts';
import { createOwnDatabase } from '../fixtures/webhook-kit.ts';
import {
  spawnService,
  stopService,
  waitUntilReady,
  type ServiceProcess,
} from '../helpers/service-process.ts';
import { temporaryDirectory } from './kit.ts';

const services: ServiceProcess[] = [];
const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const service of services) await stopService(service);
  for (const cleanup of cleanups) await cleanup();
});

describe('scheduled backups', () => {
  it('run on their cron, keep BACKUP_KEEP archives, report their age and log a failure at error', async () => {
    const directory = await temporaryDirectory('scheduled');
    cleanups.push(() => directory.cleanup());
    const backups = path.join(directory.path, 'backups');
    await mkdir(backups);
    // Two earlier archives (real ones, of another database): the oldest goes once a third is made.
    const source = await createOwnDatabase('backup_earlier');
    cleanups.push(() => source.drop());
    const oldest = backupFileName(new Date('2026-01-01T03:00:00Z'));
    const older = backupFileName(new Date('2026-01-02T03:00:00Z'));
    for (const name of [oldest, older])
      await writeBackupFile(path.join(backups, name), {
        databaseUrl: source.url,
        secretKey: undefined,
        serviceVersion: SERVICE_VERSION,
      });
    const notADirectory = path.join(directory.path, 'not-a-directory');
    await writeFile(notADirectory, '');

    const schedule = { DATABASE_URL: '', SEED_DEMO: 'false', BACKUP_SCHEDULE: '* * * * *' };
    // Data directories of their own: PostgreSQL (as an unprivileged user under root) must be able to enter them.
    const [workingData, failingData] = [
      await temporaryDirectory('scheduled-working'),
      await temporaryDirectory('scheduled-failing'),
    ];
    cleanups.push(
      () => workingData.cleanup(),
      () => failingData.cleanup(),
    );
    const working = await spawnService({
      ...schedule,
      DATA_DIR: workingData.path,
      BACKUP_DIR: backups,
      BACKUP_KEEP: '2',
    });
    services.push(working);
    const failing = await spawnService({
      ...schedule,
      DATA_DIR: failingData.path,
      BACKUP_DIR: path.join(notADirectory, 'backups'),
    });
    services.push(failing);
    await Promise.all([waitUntilReady(working), waitUntilReady(failing)]);

    // The new archive is renamed into place before the oldest is pruned: wait for both steps (listBackups lists
    // archives only, oldest first, so the second name is the new one).
    await expect
      .poll(() => listBackups(backups), { timeout: 150_000, interval: 500 })
      .toEqual([older, expect.any(String)]);
    const [, newest] = await listBackups(backups);
    const { manifest } = await checkArchive(path.join(backups, newest ?? ''));
    expect(manifest.secretKey).toBe('included');
    expect(manifest.tables.map((table) => table.name)).toContain('client');

    const metrics = await (await fetch(`${working.url}/metrics`)).text();
    const age = /^seller_ops_backup_last_success_age_seconds (\S+)$/m.exec(metrics)?.[1];
    expect(Number(age)).toBeGreaterThanOrEqual(0);
    expect(Number(age)).toBeLessThan(300);

    await expect
      .poll(() => failing.output(), { timeout: 150_000, interval: 500 })
      .toMatch(/"level":50,.*"name":"backup".*"msg":"scheduled backup failed"/);
  }, 300_000);
});
