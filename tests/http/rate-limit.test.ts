/**
 * Rate limits through HTTP (P125–P128) with the PostgreSQL store (the default on an external
 * DATABASE_URL, which the tests use): the IETF header fields on every counted answer, 429 `error_rate_limited`
 * with `Retry-After` beyond the quota, a fresh window after it ends, one counter per token, wrong tokens counted
 * against the IP address, exempt routes, and the purge of ended windows.
 *
 * The quota here is 5 requests per 5 s: a window ends within the test, yet outlasts the requests of a test on a
 * loaded machine (a window that ended mid-test would reset the count); the defaults are generous.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { TEST_ADMIN_TOKEN, useTestApp, type TestApp } from '../helpers/test-app.ts';
import { createAccount } from '../helpers/factories.ts';
import { expectError, send } from '../helpers/http.ts';
import { rateLimitPurgeJob } from '../../src/http/rate-limit-purge.ts';
import { hashToken } from '../../src/http/auth.ts';

const MAX = 5;
const WINDOW_SECONDS = 5;

let t: TestApp;
useTestApp(
  (app) => {
    t = app;
  },
  { RATE_LIMIT_MAX: String(MAX), RATE_LIMIT_WINDOW_SECONDS: String(WINDOW_SECONDS) },
);

const findTags = (token: string | undefined) => send(t.app, token, { method: 'GET', url: '/api/tag' });

/** A caller address of its own (TEST-NET-1), so other test files' requests from 127.0.0.1 never share its counter. */
const remoteAddress = `192.0.2.${1 + Math.floor(Math.random() * 254)}`;

/** `GET /api/tag` from `remoteAddress` with `authorization` when given. */
const findTagsFromAddress = (authorization: string | undefined) =>
  t.app.inject({
    url: '/api/tag',
    remoteAddress,
    headers: authorization === undefined ? {} : { authorization },
  });

/** Parses `"default";r=3;t=2` into its parameters. */
function rateLimitField(value: unknown): { r: number; t: number } {
  const match = /^"default";r=(\d+);t=(\d+)$/.exec(String(value));
  expect(match, `RateLimit: ${String(value)}`).not.toBeNull();
  return { r: Number(match?.[1]), t: Number(match?.[2]) };
}

/** Waits until the current second's window has room again (a window is at most WINDOW_SECONDS long). */
const nextWindow = () => sleep(WINDOW_SECONDS * 1000 + 100);

describe('rate limits per token', () => {
  it('announces the policy and what remains, then answers 429 with Retry-After beyond the quota', async () => {
    const account = await createAccount(t.runtime);
    for (let request = 1; request <= MAX; request++) {
      const response = await findTags(account.readToken);
      expect(response.statusCode, response.body).toBe(200);
      expect(response.headers['ratelimit-policy']).toBe(`"default";q=${MAX};w=${WINDOW_SECONDS}`);
      const field = rateLimitField(response.headers.ratelimit);
      expect(field.r).toBe(MAX - request);
      expect(field.t).toBeGreaterThanOrEqual(1);
      expect(field.t).toBeLessThanOrEqual(WINDOW_SECONDS);
    }
    const refused = await findTags(account.readToken);
    const body = expectError(refused, 429, 'error_rate_limited');
    const retryAfter = Number(refused.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(WINDOW_SECONDS);
    expect(body.params).toEqual({ retryAfter });
    expect(body.localMessage).toContain(String(retryAfter));
    expect(rateLimitField(refused.headers.ratelimit)).toEqual({ r: 0, t: retryAfter });
    expect(refused.headers['ratelimit-policy']).toBe(`"default";q=${MAX};w=${WINDOW_SECONDS}`);

    await nextWindow();
    const again = await findTags(account.readToken);
    expect(again.statusCode).toBe(200);
    expect(rateLimitField(again.headers.ratelimit).r).toBe(MAX - 1);
  });

  it('refuses a write beyond the quota without running it', async () => {
    const account = await createAccount(t.runtime);
    for (let request = 0; request < MAX; request++) await findTags(account.writeToken);
    const name = `refused ${Date.now()}`;
    const refused = await send(t.app, account.writeToken, {
      method: 'POST',
      url: '/api/tag',
      payload: { name },
    });
    expectError(refused, 429, 'error_rate_limited');
    const stored = await t.runtime.database.db
      .selectFrom('product_tag')
      .select('id')
      .where('client_id', '=', account.clientId)
      .execute();
    expect(stored).toEqual([]);
  });

  it('keeps one counter per token: another token, even of the same user, is not limited', async () => {
    const account = await createAccount(t.runtime);
    const other = await createAccount(t.runtime);
    for (let request = 0; request <= MAX; request++) await findTags(account.readToken);
    expect((await findTags(account.readToken)).statusCode).toBe(429);
    expect((await findTags(account.writeToken)).statusCode).toBe(200);
    expect((await findTags(other.readToken)).statusCode).toBe(200);
    // The key is the token's SHA-256, never the token.
    const keys = await t.runtime.database.db
      .selectFrom('rate_limit_counter')
      .select('key')
      .where('key', '=', `token:${hashToken(account.readToken).toString('base64url')}`)
      .execute();
    expect(keys).toHaveLength(1);
    const leaked = await t.runtime.database.db
      .selectFrom('rate_limit_counter')
      .select('key')
      .where('key', 'like', `%${account.readToken}%`)
      .execute();
    expect(leaked).toEqual([]);
  });

  it('counts requests without a live token against the IP address, and never counts exempt routes', async () => {
    for (let request = 0; request < MAX; request++) {
      const response = await findTagsFromAddress(`so_wrong_${request}`);
      expectError(response, 401, 'auth_required');
      expect(response.headers.ratelimit).toBeDefined();
    }
    expectError(await findTagsFromAddress('so_wrong_again'), 429, 'error_rate_limited');
    expectError(await findTagsFromAddress(undefined), 429, 'error_rate_limited');
    // A live token from the same address has its own counter.
    const account = await createAccount(t.runtime);
    expect((await findTagsFromAddress(account.readToken)).statusCode).toBe(200);

    for (const url of ['/health', '/ready', '/metrics', '/openapi.json', '/docs/', '/admin/clients']) {
      for (let request = 0; request <= MAX; request++) {
        const response = await t.app.inject({
          url,
          remoteAddress,
          headers: { 'x-admin-token': TEST_ADMIN_TOKEN },
        });
        expect(response.statusCode, `${url}: ${response.body}`).not.toBe(429);
        expect(response.headers.ratelimit, url).toBeUndefined();
      }
    }
  });

  it('purges windows that ended', async () => {
    await t.runtime.database.db
      .insertInto('rate_limit_counter')
      .values({ key: 'ip:purge-test', count: 1, window_ends_at: new Date(Date.now() - 60_000) })
      .onConflict((conflict) => conflict.column('key').doNothing())
      .execute();
    // The other tests' windows keep ending meanwhile: only those that had ended when the purge began must be gone.
    const { rows: started } = await sql<{ at: Date }>`SELECT now() AS at`.execute(t.runtime.database.db);
    await rateLimitPurgeJob(t.runtime.database.db).perform({}, { id: 'test', retryCount: 0 });
    const { rows } = await sql<{ count: string }>`
      SELECT count(*) FROM rate_limit_counter WHERE window_ends_at < ${started[0]?.at}`.execute(
      t.runtime.database.db,
    );
    expect(Number(rows[0]?.count)).toBe(0);
    const purged = await t.runtime.database.db
      .selectFrom('rate_limit_counter')
      .select('key')
      .where('key', '=', 'ip:purge-test')
      .execute();
    expect(purged).toEqual([]);
  });
});
