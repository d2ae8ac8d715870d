/**
 * How an operator command reaches the configured database: `DATABASE_URL`, else the embedded server of
 * `DATA_DIR` — started by the command itself while no service runs there, or, with `shareRunning`, the server of
 * the service that runs there (found through the data directory: its lock, `postmaster.pid` and credentials).
 */
import type { Config } from '../config.ts';
import { DataDirInUseError, runningEmbeddedUrl, startEmbeddedPostgres } from '../db/embedded-postgres.ts';

/** A database URL and how to let it go. */
export interface ReachedDatabase {
  url: string;
  /** Whether this command started the embedded server (stopped by `release`). */
  startedEmbedded: boolean;
  release(): Promise<void>;
}

/**
 * @param shareRunning use the embedded server of a service running on `DATA_DIR` (else its DataDirInUseError
 *   is thrown)
 * @throws DataDirInUseError when a service holds `DATA_DIR` and `shareRunning` is false (or its server is not
 *   ready yet)
 */
export async function reachDatabase(
  config: Config,
  log: (message: string) => void,
  shareRunning: boolean,
): Promise<ReachedDatabase> {
  if (config.databaseUrl) return { url: config.databaseUrl, startedEmbedded: false, release: async () => {} };
  try {
    const embedded = await startEmbeddedPostgres({ dataDir: config.dataDir, log });
    return { url: embedded.databaseUrl, startedEmbedded: true, release: () => embedded.stop() };
  } catch (error) {
    if (!(error instanceof DataDirInUseError) || !shareRunning) throw error;
    const url = await runningEmbeddedUrl(config.dataDir);
    if (!url) throw error;
    return { url, startedEmbedded: false, release: async () => {} };
  }
}
