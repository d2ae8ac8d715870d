/**
 * Settings of scheduled backups (docs/operations.md "Backup and restore"), part of the service's `Config`.
 */
import path from 'node:path';

/** When and where the service backs itself up. */
export interface BackupSettings {
  /**
   * `BACKUP_SCHEDULE`: a cron expression (UTC, minute precision, e.g. `0 3 * * *`) on which the job queue runs a
   * backup; unset = no scheduled backups (the default).
   */
  schedule: string | undefined;
  /** `BACKUP_DIR`: where scheduled backups are written (default `<DATA_DIR>/backups`). */
  dir: string;
  /** `BACKUP_KEEP`: how many scheduled backups are kept; older ones are removed after each backup (default 7). */
  keep: number;
}

/**
 * Reads the backup settings from `env`.
 * @throws Error when `BACKUP_KEEP` is not an integer ≥ 1
 */
export function loadBackupSettings(env: NodeJS.ProcessEnv, dataDir: string): BackupSettings {
  const keep = env.BACKUP_KEEP ? Number(env.BACKUP_KEEP) : 7;
  if (!Number.isInteger(keep) || keep < 1)
    throw new Error(`BACKUP_KEEP must be an integer of at least 1, got "${env.BACKUP_KEEP}"`);
  return {
    schedule: env.BACKUP_SCHEDULE?.trim() || undefined,
    dir: path.resolve(env.BACKUP_DIR || path.join(dataDir, 'backups')),
    keep,
  };
}
