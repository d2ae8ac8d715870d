/**
 * Replicas that start together (P166): real service processes on databases of their own on the run's server.
 * All start-up set-up runs under one advisory lock, so processes started at once on a fresh database all become
 * ready, processes already running stay up while a new one brings a migration, and a start killed while holding
 * the lock leaves it free for the next. Synchronisation is on database state (who waits for which lock), never
 * on time.
 */
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { sql, type Kysely } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../src/db/database.ts';
import { SET_UP_LOCK_KEY, withSetUpLock } from '../../src/db/set-up-lock.ts';
import { acrossClients } from '../../src/db/cross-tenant.ts';
import type { DB } from '../../src/db/schema.ts';
import { DELIVERY_QUEUE } from '../../src/modules/webhook/delivery-queue.ts';
import { createOwnDatabase, waitFor, type OwnDatabase } from '../fixtures/webhook-kit.ts';
import { waitUntilBlockedBy } from '../helpers/blocking-transaction.ts';
import {
  spawnService,
  stopService,
  waitUntilReady,
  type ServiceProcess,
} from '../helpers/service-process.ts';
import { testDatabaseUrl } from '../helpers/test-app.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const withMigrationsScript = path.resolve(here, '../fixtures/service-with-migrations.ts');
const ourMigrations = (await readdir(path.resolve(here, '../../src/db/migrations'))).filter((file) =>
  file.endsWith('.sql'),
).length;

const PROCESSES = 3;
const ROUNDS = 3;
/** Starting several processes at once is slow on a small machine: a minute and a half per round at most. */
const ROUND_TIMEOUT_MS = 90_000;

/** What every test of this file cleans up after itself. */
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A database of this test, with a Kysely handle on it; dropped after the test. */
async function ownDatabase(migrated: boolean): Promise<OwnDatabase & Database> {
  const own = await createOwnDatabase('concurrent_start', migrated);
  const database = createDatabase(own.url, 2);
  cleanups.push(() => own.drop());
  cleanups.push(() => database.close());
  return { ...own, ...database };
}

/** Starts a service on `databaseUrl` (with the migrations of `folder` after ours); stopped after the test. */
async function start(databaseUrl: string, folder?: string, env: Record<string, string> = {}) {
  const args = folder ? ['--import', 'tsx', withMigrationsScript, folder] : undefined;
  const service = await spawnService({ DATABASE_URL: databaseUrl, SEED_DEMO: 'false', ...env }, args);
  cleanups.push(() => stopService(service));
  return service;
}

/** A folder holding one migration `name` with `text`; removed after the test. */
async function migrationFolder(name: string, text: string): Promise<string> {
  const folder = await mkdtemp(path.join(os.tmpdir(), 'seller-ops-migration-'));
  await writeFile(path.join(folder, `${name}.sql`), text);
  cleanups.push(() => rm(folder, { recursive: true, force: true }));
  return folder;
}

/** A session of the test's own on `databaseUrl` holding advisory lock `key` until `release`. */
async function holdAdvisoryLock(databaseUrl: string, key: bigint) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  await client.query('select pg_advisory_lock($1)', [key.toString()]);
  const { rows } = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
  let released = false;
  const release = async () => {
    if (released) return;
    released = true;
    await client.end();
  };
  cleanups.push(release);
  return { pid: rows[0]?.pid as number, release };
}

/** Sessions holding the set-up lock on the database of `db`. */
async function setUpLockHolders(db: Kysely<DB>): Promise<number> {
  const { rows } = await sql<{ holders: number }>`
    select count(*)::int as holders from pg_locks
    where locktype = 'advisory' and granted and database = (select oid from pg_database where datname = current_database())
      and ((classid::bigint << 32) | objid::bigint) = ${SET_UP_LOCK_KEY.toString()}::bigint and objsubid = 1`.execute(
    db,
  );
  return rows[0]?.holders ?? 0;
}

/** How often migration `name` was recorded as applied. */
async function appliedCount(db: Kysely<DB>, name: string): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    select count(*)::int as n from kysely_migration where name = ${name}`.execute(db);
  return rows[0]?.n ?? 0;
}

/** Whether every one of `services` answers `/ready` with 200 and has not exited. */
async function allReady(services: ServiceProcess[]): Promise<boolean> {
  const statuses = await Promise.all(
    services.map(async (service) =>
      service.child.exitCode === null ? (await fetch(`${service.url}/ready`)).status : 0,
    ),
  );
  return statuses.every((status) => status === 200);
}

describe('replicas starting together', () => {
  it(
    `${PROCESSES} processes started at once on a fresh database all become ready, in each of ${ROUNDS} rounds`,
    async () => {
      for (let round = 0; round < ROUNDS; round++) {
        const database = await ownDatabase(false);
        const dataDirs = await Promise.all(
          Array.from({ length: PROCESSES }, () => mkdtemp(path.join(os.tmpdir(), 'seller-ops-replica-'))),
        );
        for (const dataDir of dataDirs) cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
        // Every replica may seed the demo account; the set-up lock lets exactly one of them do it.
        const services = await Promise.all(
          dataDirs.map((dataDir) => start(database.url, undefined, { SEED_DEMO: 'true', DATA_DIR: dataDir })),
        );
        await Promise.all(services.map((service) => waitUntilReady(service)));

        expect(await allReady(services)).toBe(true);
        // Counts every client: across shards on purpose on Citus (P176).
        const { rows } = await acrossClients(database.db, (trx) =>
          sql<{ migrations: number; clients: number; queues: number }>`
          select (select count(*)::int from kysely_migration) as migrations,
                 (select count(*)::int from client) as clients,
                 (select count(*)::int from pgboss.queue where name = ${DELIVERY_QUEUE}) as queues`.execute(
            trx,
          ),
        );
        expect(rows[0]).toEqual({ migrations: ourMigrations, clients: 1, queues: 1 });
        expect(await setUpLockHolders(database.db)).toBe(0);
        for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
      }
    },
    ROUNDS * ROUND_TIMEOUT_MS,
  );

  it('answers /health and 503 on /ready and the API while it waits for the set-up lock', async () => {
    const database = await ownDatabase(false);
    const other = await holdAdvisoryLock(database.url, SET_UP_LOCK_KEY);
    const service = await start(database.url);
    await waitUntilBlockedBy(database.db, other.pid);

    const health = await fetch(`${service.url}/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });
    const ready = await fetch(`${service.url}/ready`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toEqual({ status: 'starting' });
    const api = await fetch(`${service.url}/api/tag`, { headers: { authorization: 'any' } });
    expect(api.status).toBe(503);
    expect(api.headers.get('retry-after')).toBe('1');
    expect(await api.json()).toMatchObject({ error: 'error_service_unavailable' });

    await other.release();
    await waitUntilReady(service);
    expect(await appliedCount(database.db, '0001_accounts')).toBe(1);
  });

  it('keeps running processes up while new ones bring a pending migration, applied once', async () => {
    const database = await ownDatabase(true);
    const running = await Promise.all([start(database.url), start(database.url)]);
    await Promise.all(running.map((service) => waitUntilReady(service)));

    const name = '9000_pending_probe';
    const folder = await migrationFolder(
      name,
      'create table pending_probe (id int primary key);\ninsert into pending_probe values (1);\n',
    );
    const upgraded = await Promise.all([start(database.url, folder), start(database.url, folder)]);
    await Promise.all(upgraded.map((service) => waitUntilReady(service)));

    expect(await allReady([...running, ...upgraded])).toBe(true);
    expect(await appliedCount(database.db, name)).toBe(1);
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from pending_probe`.execute(
      database.db,
    );
    expect(rows[0]?.n).toBe(1);
  });

  it('frees the set-up lock when a start is killed holding it, and the next start completes the set-up', async () => {
    const database = await ownDatabase(true);
    // The pending migration waits for a lock the test holds, so the start is caught inside its set-up.
    const blockerKey = 2_026_112_601n;
    const blocker = await holdAdvisoryLock(database.url, blockerKey);
    const name = '9001_blocked_probe';
    const folder = await migrationFolder(
      name,
      `select pg_advisory_xact_lock(${blockerKey});\ncreate table blocked_probe (id int primary key);\ninsert into blocked_probe values (1);\n`,
    );
    const killed = await start(database.url, folder);
    await waitUntilBlockedBy(database.db, blocker.pid);
    expect(await setUpLockHolders(database.db)).toBe(1);

    killed.child.kill('SIGKILL');
    expect(await killed.exited).toBe('SIGKILL');
    await waitFor('the set-up lock to be released', async () => (await setUpLockHolders(database.db)) === 0);

    await blocker.release();
    const next = await start(database.url, folder);
    await waitUntilReady(next);
    expect(await appliedCount(database.db, name)).toBe(1);
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from blocked_probe`.execute(
      database.db,
    );
    expect(rows[0]?.n).toBe(1);
  });
});

describe('the set-up lock', () => {
  it('runs the set-up again after a deadlock, still holding the lock', async () => {
    const retries: string[] = [];
    let attempts = 0;
    const result = await withSetUpLock(
      testDatabaseUrl(),
      async () => {
        attempts += 1;
        if (attempts === 1) await deadlock(testDatabaseUrl());
        return 'set up';
      },
      { log: (message) => retries.push(message) },
    );
    expect(result).toBe('set up');
    expect(attempts).toBe(2);
    expect(retries).toEqual([expect.stringMatching(/deadlock detected.*retrying \(attempt 2\)/)]);
  });
});

/**
 * Makes PostgreSQL detect a real deadlock between two sessions (each holds one advisory lock and waits for the
 * other's) and throws the error the losing session got.
 */
async function deadlock(databaseUrl: string): Promise<void> {
  const sessions = [
    new pg.Client({ connectionString: databaseUrl }),
    new pg.Client({ connectionString: databaseUrl }),
  ];
  const [first, second] = sessions as [pg.Client, pg.Client];
  try {
    for (const session of sessions) await session.connect();
    const keys = ['2026112611', '2026112612'];
    await first.query('begin');
    await second.query('begin');
    await first.query('select pg_advisory_xact_lock($1)', [keys[0]]);
    await second.query('select pg_advisory_xact_lock($1)', [keys[1]]);
    const outcomes = await Promise.allSettled([
      first.query('select pg_advisory_xact_lock($1)', [keys[1]]).finally(() => first.query('rollback')),
      second.query('select pg_advisory_xact_lock($1)', [keys[0]]).finally(() => second.query('rollback')),
    ]);
    const failure = outcomes.find((outcome) => outcome.status === 'rejected');
    if (failure) throw failure.reason;
  } finally {
    for (const session of sessions) await session.end();
  }
}
