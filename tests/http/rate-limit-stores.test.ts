/**
 * Where rate-limit counters live (P126): two real service processes on one database share the PostgreSQL counters;
 * two apps on one Redis (`REDIS_URL`, the server on 127.0.0.1:6379) share the Redis counters; two apps with the
 * memory store (the embedded default: one process) count each on its own.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  spawnService,
  stopService,
  waitUntilReady,
  type ServiceProcess,
} from '../helpers/service-process.ts';
import { buildTestApp, type TestApp } from '../helpers/test-app.ts';
import { createAccount } from '../helpers/factories.ts';
import { expectError } from '../helpers/http.ts';
import { createOwnDatabase, type OwnDatabase } from '../fixtures/webhook-kit.ts';
import { hashToken } from '../../src/http/auth.ts';

const MAX = 6;
/** Long enough that every request of a test falls into one window. */
const WINDOW_SECONDS = 60;
const LIMITS = { RATE_LIMIT_MAX: String(MAX), RATE_LIMIT_WINDOW_SECONDS: String(WINDOW_SECONDS) };
const REDIS_URL = 'redis://127.0.0.1:6379';

/** Sends `GET /api/tag` with `token` to one of `targets` in turn; returns the statuses. */
async function alternate(targets: Array<(token: string) => Promise<number>>, token: string, count: number) {
  const statuses: number[] = [];
  for (let request = 0; request < count; request++)
    statuses.push(await (targets[request % targets.length] as (token: string) => Promise<number>)(token));
  return statuses;
}

const throughApp = (t: TestApp) => async (token: string) =>
  (await t.app.inject({ url: '/api/tag', headers: { authorization: token } })).statusCode;

describe('rate-limit counters shared by two service processes on one database', () => {
  let database: OwnDatabase;
  let t: TestApp;
  let first: ServiceProcess;
  let second: ServiceProcess;

  // A database of its own: these processes run background workers with default settings (see webhook-kit.ts).
  beforeAll(async () => {
    database = await createOwnDatabase('rate_limit_processes');
    t = await buildTestApp({}, database.url, { workers: false });
    const env = { DATABASE_URL: database.url, SEED_DEMO: 'false', ...LIMITS };
    [first, second] = await Promise.all([spawnService(env), spawnService(env)]);
    await Promise.all([waitUntilReady(first), waitUntilReady(second)]);
  });
  afterAll(async () => {
    for (const service of [first, second]) if (service) await stopService(service);
    await t?.close();
    await database?.drop();
  });

  it('counts the requests of both processes against one quota', async () => {
    const account = await createAccount(t.runtime);
    const through = (service: ServiceProcess) => async (token: string) => {
      const response = await fetch(`${service.url}/api/tag`, { headers: { authorization: token } });
      await response.arrayBuffer();
      return response.status;
    };
    const statuses = await alternate([through(first), through(second)], account.readToken, MAX + 2);
    expect(statuses).toEqual([...Array<number>(MAX).fill(200), 429, 429]);

    const refused = await fetch(`${first.url}/api/tag`, { headers: { authorization: account.readToken } });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.headers.get('ratelimit')).toMatch(/^"default";r=0;t=\d+$/);
    expect(await refused.json()).toMatchObject({ error: 'error_rate_limited' });
    // Another token is not affected in either process.
    expect(await through(second)(account.writeToken)).toBe(200);
  });
});

describe('rate-limit counters in Redis', () => {
  let one: TestApp;
  let other: TestApp;
  beforeAll(async () => {
    one = await buildTestApp({ REDIS_URL, ...LIMITS });
    other = await buildTestApp({ REDIS_URL, ...LIMITS });
  });
  afterAll(async () => {
    await one?.close();
    await other?.close();
  });

  it('counts the requests of two apps on one Redis against one quota, and writes nothing to the database', async () => {
    expect(one.config.rateLimitStore).toBe('redis');
    const account = await createAccount(one.runtime);
    const statuses = await alternate([throughApp(one), throughApp(other)], account.readToken, MAX + 1);
    expect(statuses).toEqual([...Array<number>(MAX).fill(200), 429]);
    const refused = await one.app.inject({ url: '/api/tag', headers: { authorization: account.readToken } });
    expectError(refused, 429, 'error_rate_limited');
    expect(refused.headers['ratelimit-policy']).toBe(`"default";q=${MAX};w=${WINDOW_SECONDS}`);
    const rows = await one.runtime.database.db
      .selectFrom('rate_limit_counter')
      .select('key')
      .where('key', '=', `token:${hashToken(account.readToken).toString('base64url')}`)
      .execute();
    expect(rows).toEqual([]);
  });
});

describe('rate-limit counters in memory (one process on the embedded database)', () => {
  let one: TestApp;
  let other: TestApp;
  beforeAll(async () => {
    one = await buildTestApp({ RATE_LIMIT_STORE: 'memory', ...LIMITS });
    other = await buildTestApp({ RATE_LIMIT_STORE: 'memory', ...LIMITS });
  });
  afterAll(async () => {
    await one?.close();
    await other?.close();
  });

  it('counts per app: each process has its own quota', async () => {
    const account = await createAccount(one.runtime);
    const statuses = await alternate([throughApp(one), throughApp(other)], account.readToken, 2 * MAX + 2);
    expect(statuses).toEqual([...Array<number>(2 * MAX).fill(200), 429, 429]);
  });
});
