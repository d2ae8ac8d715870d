/**
 * A database for one run of a script (`npm run fuzz`, `scripts/docs-screenshot.ts`): the server of
 * `DATABASE_URL` when set, otherwise the embedded PostgreSQL in a fresh temporary directory, stopped and removed
 * by `close`.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startEmbeddedPostgres } from '../src/db/embedded-postgres.ts';

/** The database of one run. */
export interface ThrowawayDatabase {
  databaseUrl: string;
  /** A temporary directory of the run (the embedded PostgreSQL's data when embedded). */
  dataDir: string;
  /** Stops the embedded PostgreSQL and removes the temporary directory. Idempotent. */
  close(): Promise<void>;
}

/**
 * Opens the run's database; `log` hears when the embedded PostgreSQL starts.
 * @throws when the embedded PostgreSQL cannot start
 */
export async function openThrowawayDatabase(log: (line: string) => void): Promise<ThrowawayDatabase> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'seller-ops-run-'));
  let closing: Promise<void> | undefined;
  const remove = () => rm(dataDir, { recursive: true, force: true });
  const external = process.env.DATABASE_URL;
  if (external) return { databaseUrl: external, dataDir, close: () => (closing ??= remove()) };
  try {
    log('starting the embedded PostgreSQL…');
    const embedded = await startEmbeddedPostgres({ dataDir });
    return {
      databaseUrl: embedded.databaseUrl,
      dataDir,
      close: () => (closing ??= embedded.stop().then(remove)),
    };
  } catch (error) {
    await remove();
    throw error;
  }
}
