/**
 * Provides the database every test file uses: `DATABASE_URL` when set (CI's PostgreSQL run), otherwise an
 * embedded PostgreSQL started in a temporary data directory for this run. Migrations are applied once here.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { createDatabase } from '../src/db/database.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { startEmbeddedPostgres, type EmbeddedPostgresHandle } from '../src/db/embedded-postgres.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
    databaseKind: 'embedded' | 'external';
  }
}

let embedded: EmbeddedPostgresHandle | undefined;
let dataDir: string | undefined;

export async function setup(project: TestProject): Promise<void> {
  let databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'seller-ops-test-'));
    // Every test file of the run shares this server, many of them starting service processes with their own pools.
    embedded = await startEmbeddedPostgres({ dataDir, maxConnections: 200 });
    databaseUrl = embedded.databaseUrl;
  }
  const database = createDatabase(databaseUrl, 1);
  try {
    await migrateToLatest(database.db);
  } finally {
    await database.close();
  }
  project.provide('databaseUrl', databaseUrl);
  project.provide('databaseKind', embedded ? 'embedded' : 'external');
  process.stdout.write(`tests run on the ${embedded ? 'embedded' : 'external'} PostgreSQL\n`);
}

export async function teardown(): Promise<void> {
  await embedded?.stop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
}
