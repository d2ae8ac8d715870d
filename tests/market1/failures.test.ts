/**
 * How the Market1 connector fails (D10.1; P92, P93), against its sandbox's faults and real rate limits: 401/403,
 * another 4xx with the marketplace's message, 429 waited and retried (and given up when bounded), 5xx retried
 * then failing, slow answers cut by the time limit, refused connections, a missing URL, the error-model mapping,
 * and that the API key never shows in an error.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startMarket1Sandbox,
  keyFingerprint,
  type SandboxRequestLog,
} from '../../src/connectors/market1/sandbox.ts';
import {
  Market1Client,
  market1AccountOf,
  type Market1RetryPolicy,
} from '../../src/connectors/market1/client.ts';
import {
  Market1AuthError,
  Market1RateLimitError,
  Market1UnavailableError,
  toAppError,
  type Market1Error,
} from '../../src/connectors/market1/errors.ts';
import { SANDBOXES, startSandbox, type SandboxServer } from '../../src/connectors/sandboxes.ts';
import { renderMessage } from '../../src/http/error-catalog.ts';
import { marketplaceDay } from '../../src/connectors/market1/protocol.ts';
import { useConformanceCheck } from './openapi-conformance.ts';

let sandbox: SandboxServer;
const clients: Market1Client[] = [];
// Refusals, throttling and 4xx answers follow the published documents too (injected faults aside).
const conformance = useConformanceCheck();
beforeAll(async () => {
  sandbox = await startMarket1Sandbox({
    host: '127.0.0.1',
    port: 0,
    rateLimits: 'off',
    onExchange: conformance.onExchange,
  });
});
afterAll(async () => {
  for (const client of clients) client.close();
  await sandbox.close();
});

/** A connector for a fresh key on `url`, with a fast retry policy unless told otherwise. */
function connector(
  retry: Partial<Market1RetryPolicy> = {},
  options: { timeoutMs?: number; url?: string; apiKey?: string } = {},
) {
  const client = new Market1Client({
    timeoutMs: options.timeoutMs ?? 5000,
    retry: { backoffMs: 20, ...retry },
  });
  clients.push(client);
  const apiKey = options.apiKey ?? `secret-key-${randomUUID()}`;
  return { apiKey, market1: client.forAccount({ apiKey, baseUrl: options.url ?? sandbox.url }) };
}

async function control(path: string, body: unknown, url = sandbox.url): Promise<void> {
  const response = await fetch(`${url}/__sandbox/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(response.status).toBe(204);
}

async function requestsOf(apiKey: string, url = sandbox.url): Promise<SandboxRequestLog[]> {
  const answer = (await (await fetch(`${url}/__sandbox/requests`)).json()) as {
    requests: SandboxRequestLog[];
  };
  return answer.requests.filter((request) => request.key === keyFingerprint(apiKey));
}

/** The error `promise` rejects with, checked to hold no trace of the key. */
async function failure(promise: Promise<unknown>, apiKey: string): Promise<Market1Error> {
  const error = await promise.then(
    () => expect.fail('expected a failure'),
    (reason: unknown) => reason as Market1Error,
  );
  expect(`${error.message} ${JSON.stringify(error)}`).not.toContain(apiKey);
  return error;
}

describe('refused keys', () => {
  it('maps 401 and 403 to Market1AuthError and error_token_expired_or_revoked', async () => {
    const { apiKey, market1 } = connector();
    await control('faults', { mode: '401', apiKey });
    const unauthorized = await failure(market1.getBalance(), apiKey);
    expect(unauthorized).toBeInstanceOf(Market1AuthError);
    expect(unauthorized).toMatchObject({ status: 401, marketplaceMessage: 'token is expired or revoked' });
    const appError = toAppError(unauthorized);
    expect(appError).toMatchObject({ code: 'error_token_expired_or_revoked', statusCode: 400 });
    expect(await market1.getBalance()).toMatchObject({ balance: expect.any(Number) as number });

    await control('faults', { mode: '403', apiKey });
    expect(await failure(market1.listCampaignRefs(), apiKey)).toMatchObject({ kind: 'auth', status: 403 });
    expect((await requestsOf(apiKey)).map((request) => request.status)).toEqual([401, 200, 403]);
  });

  it('accepts any key for trying the service; refusals come from the control API (revocation, 403 fault)', async () => {
    const anyKey = connector({}, { apiKey: `readonly-${randomUUID()}` });
    const campaign = (await anyKey.market1.listCampaigns()).find((c) => c.status === 'ACTIVE');
    await anyKey.market1.stopCampaign(campaign!.externalId);

    const { apiKey, market1 } = connector();
    await control('revoke', { apiKey });
    expect(await failure(market1.listCampaigns(), apiKey)).toMatchObject({ kind: 'auth', status: 401 });
    expect(await failure(market1.getBalance(), apiKey)).toMatchObject({ kind: 'auth', status: 401 });

    const readOnly = connector();
    const active = (await readOnly.market1.listCampaigns()).find((c) => c.status === 'ACTIVE');
    await control('faults', { mode: '403', apiKey: readOnly.apiKey, path: '/adv/v0/stop' });
    expect(await failure(readOnly.market1.stopCampaign(active!.externalId), readOnly.apiKey)).toMatchObject({
      kind: 'auth',
      status: 403,
      marketplaceMessage: 'access to this method is denied for the token',
    });
  });
});

describe('other 4xx', () => {
  it("passes the marketplace's message to error_market1_api", async () => {
    const { apiKey, market1 } = connector();
    const ready = (await market1.listCampaigns()).find((campaign) => campaign.status === 'READY')!;
    const error = await failure(market1.pauseCampaign(ready.externalId), apiKey);
    expect(error).toMatchObject({ kind: 'api', status: 422 });
    const appError = toAppError(error);
    expect(appError).toMatchObject({ code: 'error_market1_api', statusCode: 400 });
    // The document's 422 is text/plain: the message is the text itself.
    expect(renderMessage(appError.code, 'en', appError.params)).toBe(
      `Marketplace error: Статус кампании не изменен: the campaign is not in a status this method changes (campaign ${ready.externalId}, status 4)`,
    );
    expect((await requestsOf(apiKey)).filter((request) => request.status === 422)).toHaveLength(1);
  });
});

describe('rate limits', () => {
  it('waits Retry-After and retries a throttled request', async () => {
    const { apiKey, market1 } = connector();
    await control('faults', { mode: '429', apiKey, retryAfterSeconds: 1, count: 1 });
    expect(await market1.getBalance()).toMatchObject({ net: expect.any(Number) as number });
    expect((await requestsOf(apiKey)).map((request) => request.status)).toEqual([429, 200]);
  });

  it('gives up after the bounded number of retries, or at once when asked to wait too long', async () => {
    const { apiKey, market1 } = connector({ rateLimitRetries: 1 });
    await control('faults', { mode: '429', apiKey, retryAfterSeconds: 1, count: 3 });
    const throttled = await failure(market1.getBalance(), apiKey);
    expect(throttled).toBeInstanceOf(Market1RateLimitError);
    expect(throttled).toMatchObject({ retryAfterSeconds: 1 });
    expect((await requestsOf(apiKey)).map((request) => request.status)).toEqual([429, 429]);
    const appError = toAppError(throttled);
    expect(appError).toMatchObject({
      code: 'error_market1_unavailable',
      statusCode: 503,
      params: { reason: 'rate_limited', retryAfter: 1 },
      headers: { 'retry-after': '1' },
    });

    const patient = connector({ maxRetryAfterSeconds: 30 });
    await control('faults', { mode: '429', apiKey: patient.apiKey, retryAfterSeconds: 120 });
    expect(await failure(patient.market1.getBalance(), patient.apiKey)).toMatchObject({
      retryAfterSeconds: 120,
    });
    expect(await requestsOf(patient.apiKey)).toHaveLength(1);

    const hurried = connector({ maxTotalMs: 500 });
    await control('faults', { mode: '429', apiKey: hurried.apiKey, retryAfterSeconds: 1 });
    expect(await failure(hurried.market1.getBalance(), hurried.apiKey)).toBeInstanceOf(Market1RateLimitError);
  });

  it('enforces the published token buckets per key and operation; the connector waits them out', async () => {
    const limited = await startMarket1Sandbox({
      host: '127.0.0.1',
      port: 0,
      onExchange: conformance.onExchange,
    });
    try {
      const { apiKey, market1 } = connector({}, { url: limited.url });
      // The balance: a burst of 5, then one request a second: the sixth call is throttled once, then succeeds.
      const first = await market1.getBalance();
      for (let call = 0; call < 5; call += 1) expect(await market1.getBalance()).toEqual(first);
      expect((await requestsOf(apiKey, limited.url)).map((request) => request.status)).toEqual([
        200, 200, 200, 200, 200, 429, 200,
      ]);
      const throttled = await fetch(`${limited.url}/adv/v1/balance`, { headers: { authorization: apiKey } });
      expect(throttled.status).toBe(429);
      expect(Number(throttled.headers.get('retry-after'))).toBe(1);
      const retry = Number(throttled.headers.get('x-ratelimit-retry'));
      expect(retry).toBeGreaterThan(0);
      expect(retry).toBeLessThanOrEqual(1);
      expect(throttled.headers.get('x-ratelimit-remaining')).toBe('0');
      // Another method group and another key have their own budgets.
      expect(
        (await fetch(`${limited.url}/adv/v1/promotion/count`, { headers: { authorization: apiKey } })).status,
      ).toBe(200);
      expect(
        (await fetch(`${limited.url}/adv/v1/balance`, { headers: { authorization: 'other' } })).status,
      ).toBe(200);

      // Scaled intervals keep a test fast: statistics regain their one token every 20 s × 0.01.
      await control('rate-limits', { mode: 'scaled', scale: 0.01 }, limited.url);
      const ids = (await market1.listCampaignRefs()).map((ref) => ref.externalId);
      const before = (await requestsOf(apiKey, limited.url)).length;
      const today = marketplaceDay(Date.now());
      await market1.getDailyStatistics({ externalIds: ids.slice(0, 150), dateFrom: today, dateTo: today });
      const statistics = (await requestsOf(apiKey, limited.url))
        .slice(before)
        .filter((r) => r.path === '/adv/v3/fullstats');
      expect(statistics.map((request) => request.status)).toEqual([200, 429, 200, 429, 200]);
    } finally {
      await limited.close();
    }
  });
});

describe('outages', () => {
  it('retries a read after a 5xx and fails with Market1UnavailableError after the bounded attempts', async () => {
    const { apiKey, market1 } = connector({ attempts: 3 });
    await control('faults', { mode: '5xx', apiKey, count: 2, status: 502 });
    expect(await market1.listCampaignRefs()).not.toHaveLength(0);
    expect((await requestsOf(apiKey)).map((request) => request.status)).toEqual([502, 502, 200]);

    await control('faults', { mode: '5xx', apiKey, count: 3 });
    const error = await failure(market1.getBalance(), apiKey);
    expect(error).toBeInstanceOf(Market1UnavailableError);
    expect(error).toMatchObject({ reason: 'http_5xx', maybeApplied: false });
    expect(toAppError(error)).toMatchObject({
      code: 'error_market1_unavailable',
      statusCode: 503,
      params: { reason: 'http_5xx' },
    });
    expect((await requestsOf(apiKey)).slice(3).map((request) => request.status)).toEqual([503, 503, 503]);
  });

  it('never retries a change after a 5xx: it may have been applied', async () => {
    const { apiKey, market1 } = connector();
    const paused = (await market1.listCampaigns()).find((campaign) => campaign.status === 'PAUSED')!;
    await control('faults', { mode: '5xx', apiKey, path: '/adv/v0/start' });
    expect(await failure(market1.startCampaign(paused.externalId), apiKey)).toMatchObject({
      kind: 'unavailable',
      reason: 'http_5xx',
      maybeApplied: true,
    });
    expect((await requestsOf(apiKey)).filter((request) => request.path === '/adv/v0/start')).toHaveLength(1);
  });

  it('cuts slow answers at the time limit and retries them; a slow answer within it is fine', async () => {
    const { apiKey, market1 } = connector({ attempts: 2 }, { timeoutMs: 300 });
    await control('faults', { mode: 'slow', apiKey, delayMs: 1000, count: 2 });
    expect(await failure(market1.getBalance(), apiKey)).toMatchObject({
      kind: 'unavailable',
      reason: 'timeout',
    });

    await control('faults', { mode: 'slow', apiKey, delayMs: 100, count: 1 });
    expect(await market1.getBalance()).toMatchObject({ bonus: expect.any(Number) as number });
  });

  it('reports a refused connection and a missing URL as Market1UnavailableError', async () => {
    const closed = await startMarket1Sandbox({ host: '127.0.0.1', port: 0 });
    await closed.close();
    const { apiKey, market1 } = connector({ attempts: 2 }, { url: closed.url });
    expect(await failure(market1.getBalance(), apiKey)).toMatchObject({
      kind: 'unavailable',
      reason: 'network',
    });

    const missing = (() => {
      try {
        return market1AccountOf({ apiKey, baseUrl: null }, { market1ApiUrl: undefined });
      } catch (error) {
        return error as Market1Error;
      }
    })();
    expect(missing).toMatchObject({ kind: 'unavailable', reason: 'not_configured' });
    expect(toAppError(missing as Market1Error)).toMatchObject({ code: 'error_market1_unavailable' });
  });
});

describe('sandbox registry', () => {
  it('registers the Market1 sandbox for npm run sandbox and the embedded default', async () => {
    expect(SANDBOXES.find((definition) => definition.name === 'market1')).toMatchObject({
      urlSetting: 'market1ApiUrl',
      defaultPort: 8093,
    });
    const started = await startSandbox('market1');
    try {
      expect(started.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const { market1 } = connector({}, { url: started.url });
      expect(await market1.listParentCategories()).not.toHaveLength(0);
    } finally {
      await started.close();
    }
  });
});
