/**
 * The operator commands `seller-ops backup` and `seller-ops restore` (wired in `src/cli/main.ts`): they resolve
 * the database as the service does (`DATABASE_URL`, else the embedded server of `DATA_DIR`) and print progress
 * on stderr.
 */
import { loadConfig } from '../config.ts';
import { DataDirInUseError } from '../db/embedded-postgres.ts';
import { reachDatabase } from '../cli/reach-database.ts';
import { writeBackup, writeBackupFile } from './backup.ts';
import { checkArchive, restoreArchive } from './restore.ts';
import { backupFileName } from './schedule.ts';
import { checkRestorableKey, currentOperatorKey, installRestoredKey } from './secret-key.ts';
import { SERVICE_VERSION } from './service-version.ts';

const log = (message: string) => process.stderr.write(`${message}\n`);

/**
 * `backup [--out FILE] [--without-secret-key]`: writes the archive to FILE (`-` = standard output; default
 * `seller-ops-backup-<UTC time>.tar.gz` here). Works while the service runs on `DATA_DIR` (through its
 * embedded server) and while it is stopped (starting the embedded server for the time of the backup).
 * @throws Error when there is no operator key to include and `--without-secret-key` is not given
 */
export async function backupCommand(options: { out?: string; withoutSecretKey?: boolean }): Promise<void> {
  const config = loadConfig();
  const secretKey = options.withoutSecretKey ? undefined : await currentOperatorKey(config);
  if (!secretKey)
    log(
      'warning: the archive leaves out the operator key; the credentials and webhook secrets it holds open only ' +
        'with the key kept elsewhere (SECRET_KEY or DATA_DIR/secret-key of this service)',
    );
  const reached = await reachDatabase(config, log, true);
  const out = options.out ?? backupFileName(new Date());
  try {
    const backup = { databaseUrl: reached.url, secretKey, serviceVersion: SERVICE_VERSION, progress: log };
    const summary =
      out === '-' ? await writeBackup(process.stdout, backup) : await writeBackupFile(out, backup);
    log(
      `backup: ${out === '-' ? 'written to standard output' : `written to ${out}`}: snapshot of ${summary.createdAt}, ` +
        `schema ${summary.schemaVersion}, ${summary.tables} tables, ${summary.rows} rows, ${summary.jobs} pending jobs`,
    );
  } finally {
    await reached.release();
  }
}

/**
 * `restore FILE [--force]`: checks the archive, then restores it into the empty database of `DATABASE_URL` or of
 * `DATA_DIR` (whose service must be stopped) and puts its operator key in use.
 * @throws BackupArchiveError, RestoreRefusedError, or an Error saying the data directory is in use
 */
export async function restoreCommand(file: string, options: { force?: boolean }): Promise<void> {
  const config = loadConfig();
  const archive = await checkArchive(file);
  const { manifest } = archive;
  checkRestorableKey(config, archive.secretKey);
  log(
    `restore: ${file} verified: snapshot of ${manifest.createdAt} by seller-ops ${manifest.serviceVersion}, ` +
      `schema ${manifest.migrations.at(-1)}`,
  );
  const reached = await reachDatabase(config, log, false).catch((error: unknown) => {
    if (error instanceof DataDirInUseError)
      throw new Error(
        `${config.dataDir} is in use by a running seller-ops (pid ${error.pid}): stop the service before restoring into its data directory`,
        { cause: error },
      );
    throw error;
  });
  try {
    const summary = await restoreArchive(archive, reached.url, {
      force: options.force ?? false,
      progress: log,
    });
    log(`restore: loaded ${summary.tables} tables, ${summary.rows} rows, ${summary.jobs} pending jobs`);
  } finally {
    await reached.release();
  }
  if (archive.secretKey) {
    const written = await installRestoredKey(config, archive.secretKey);
    log(
      written
        ? `restore: operator key written to ${written}`
        : 'restore: SECRET_KEY holds the archive’s operator key',
    );
  } else
    log(
      'warning: the archive holds no operator key: stored credentials and webhook secrets open only once SECRET_KEY ' +
        '(or DATA_DIR/secret-key) is the key of the service the backup was made from',
    );
  log('restore: done; start the service with the same DATA_DIR or DATABASE_URL');
}
