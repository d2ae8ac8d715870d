/**
 * Scheduled backups (docs/operations.md "Backup and restore"): with `BACKUP_SCHEDULE` set, a pg-boss cron job
 * (UTC; across processes sharing the database each due time runs once) writes an archive into `BACKUP_DIR` and
 * then keeps only the newest `BACKUP_KEEP` archives there. A failed backup is logged at `error` and not retried:
 * the next due time tries again, and `seller_ops_backup_last_success_age_seconds` (read from the newest archive's
 * name on each scrape, so it survives restarts) grows until one succeeds. With `BACKUP_SCHEDULE` unset the
 * schedule is removed, so turning it off takes effect on the next start.
 */
import { mkdir, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { pino, type Logger } from 'pino';
import { Gauge } from 'prom-client';
import { defineJob } from '../jobs/job.ts';
import type { ResourceGroup } from '../modules/group.ts';
import type { Runtime } from '../runtime.ts';
import { currentOperatorKey } from './secret-key.ts';
import { SERVICE_VERSION } from './service-version.ts';

/** The job's queue name. */
export const BACKUP_JOB = 'backup-scheduled';
const FILE_NAME = /^seller-ops-backup-(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z\.tar\.gz$/;

/** The name of an archive made at `at`: `seller-ops-backup-YYYYMMDDTHHMMSSZ.tar.gz` (UTC), sorting by time. */
export const backupFileName = (at: Date): string =>
  `seller-ops-backup-${at
    .toISOString()
    .replace(/\.\d{3}Z$/, 'Z')
    .replace(/[-:]/g, '')}.tar.gz`;

/** The time in an archive's name, or undefined when the name is not an archive's. */
function timeOfBackup(name: string): Date | undefined {
  const parts = FILE_NAME.exec(name);
  if (!parts) return undefined;
  const [, year, month, day, hour, minute, second] = parts;
  return new Date(`${year}-${month}-${day}T${hour}:${minute}:${second}Z`);
}

/** Names of the archives in `dir`, oldest first (other files are not ours and are left alone). */
export async function listBackups(dir: string): Promise<string[]> {
  const names = await readdir(dir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return [];
    throw error;
  });
  return names.filter((name) => timeOfBackup(name) !== undefined).sort();
}

/**
 * Removes all but the newest `keep` archives of `dir`.
 * @returns the names removed
 */
export async function pruneBackups(dir: string, keep: number): Promise<string[]> {
  const names = await listBackups(dir);
  const removed = names.slice(0, Math.max(0, names.length - keep));
  for (const name of removed) await rm(path.join(dir, name), { force: true });
  return removed;
}

/**
 * What scheduled backups add to a service process: the job (with its cron when `BACKUP_SCHEDULE` is set), the
 * age gauge, and, when unset, a worker that removes a schedule left from an earlier start.
 * @param logger where the outcome of each backup is logged (default: a pino logger at `LOG_LEVEL` on stdout,
 *   as the service's own log, made at the first backup)
 */
export function backupPart(runtime: Runtime, logger?: Logger): ResourceGroup {
  const { config } = runtime;
  const { schedule, dir, keep } = config.backup;
  const job = defineJob<object>({
    name: BACKUP_JOB,
    attempts: 1,
    backoffSeconds: 60,
    expireSeconds: 6 * 3600,
    cron: schedule,
    perform: async () => {
      const log = (logger ??= pino({ level: config.logLevel, name: 'backup' }));
      try {
        await mkdir(dir, { recursive: true });
        const file = path.join(dir, backupFileName(new Date()));
        // The archive writer (tar, COPY streams) is loaded by the first backup, not by every process at start.
        const { writeBackupFile } = await import('./backup.ts');
        const summary = await writeBackupFile(file, {
          databaseUrl: runtime.databaseUrl,
          secretKey: await currentOperatorKey(config),
          serviceVersion: SERVICE_VERSION,
        });
        const removed = await pruneBackups(dir, keep);
        log.info({ file, ...summary, removed }, 'scheduled backup written');
      } catch (error) {
        log.error({ err: error, dir }, 'scheduled backup failed');
        throw error;
      }
    },
  });
  if (schedule)
    new Gauge({
      name: 'seller_ops_backup_last_success_age_seconds',
      help: 'Seconds since the newest backup archive in BACKUP_DIR was made (no value before the first one)',
      registers: [runtime.metrics.registry],
      async collect() {
        const newest = (await listBackups(dir).catch(() => [])).at(-1);
        const madeAt = newest === undefined ? undefined : timeOfBackup(newest);
        this.reset();
        if (madeAt) this.set(Math.max(0, (Date.now() - madeAt.getTime()) / 1000));
      },
    });
  return {
    name: 'backup',
    scope: 'root',
    prefix: '',
    jobs: [job],
    workers: schedule
      ? []
      : [
          {
            // pg-boss's schedule table is shared set-up: changed under the set-up lock, like queue creation.
            start: () => runtime.setUpOnce(() => runtime.jobs.boss.unschedule(BACKUP_JOB)),
            stop: () => Promise.resolve(),
          },
        ],
  };
}
