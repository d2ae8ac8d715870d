/**
 * Answers from cache in front of the framework (P223, `src/http/cached-answers.ts`), over real HTTP (the server's
 * request listener; `inject` starts behind it) with the rate limit counting in memory as on the embedded default:
 * a cached document's plain GET gets the pipeline's answer (body, header fields, one quota), is observed by the
 * request histogram, never crosses clients, and every request that asks for more (a query, a conditional, a
 * coding, HEAD, no or an unknown token, an uncached document) goes to the pipeline. Which path answered is seen
 * through the memory counts' `countWithinQuota`, which only the answers from cache call.
 */
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { buildTestApp, testDatabaseUrl, useTestApp, type TestApp } from '../helpers/test-app.ts';
import { createAccount, type TestAccount } from '../helpers/factories.ts';
import { createOrder, productLine, send, type Order } from '../helpers/inbound.ts';
import { MemoryCounts } from '../../src/http/rate-limit.ts';

const MAX = 10;

let t: TestApp;
let port: number;
useTestApp(
  async (app) => {
    t = app;
    await app.app.listen({ port: 0, host: '127.0.0.1' });
    port = (app.app.server.address() as AddressInfo).port;
  },
  { RATE_LIMIT_STORE: 'memory', RATE_LIMIT_MAX: String(MAX), RATE_LIMIT_WINDOW_SECONDS: '600' },
  { workers: false },
);

const countWithinQuota = vi.spyOn(MemoryCounts.prototype, 'countWithinQuota');
afterEach(() => countWithinQuota.mockClear());

/** Whether the last request was answered from cache before the pipeline. */
const answeredFromCache = () => countWithinQuota.mock.results.some((result) => result.value !== undefined);

/** A new account of `on` (this file's app by default) and a document of it. */
async function newDocument(on: TestApp = t): Promise<{ account: TestAccount; order: Order }> {
  const account = await createAccount(on.runtime);
  const order = await createOrder(on.app, account.writeToken, {
    organizationId: account.organizationId,
    type: 'INCOME',
    name: 'cached answers',
    products: [productLine()],
  });
  return { account, order };
}

/** A new account and a document of it, read once so that the process caches the document and the read token. */
async function cachedDocument(): Promise<{ account: TestAccount; order: Order }> {
  const { account, order } = await newDocument();
  const first = await getOrder(account.readToken, order.id);
  expect(first.statusCode, first.body).toBe(200);
  countWithinQuota.mockClear();
  return { account, order };
}

/** An answer read over HTTP. */
interface Answer {
  statusCode: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * `method path` over HTTP with exactly `headers`: an object (Node adds `Host` and `Connection`), or raw header
 * lines (name, value, …: no field added) to repeat a field or keep a name's case.
 */
function call(
  method: string,
  path: string,
  headers: Record<string, string> | string[],
  to = port,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest({ host: '127.0.0.1', port: to, method, path, headers }, (incoming) => {
      const chunks: Buffer[] = [];
      incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
      incoming.on('end', () =>
        resolve({
          statusCode: incoming.statusCode ?? 0,
          headers: incoming.headers,
          body: Buffer.concat(chunks).toString(),
        }),
      );
    });
    outgoing.on('error', reject);
    outgoing.end();
  });
}

const getOrder = (token: string | undefined, id: number | string, headers: Record<string, string> = {}) =>
  call('GET', `/api/inbound/${id}`, { ...headers, ...(token === undefined ? {} : { authorization: token }) });

/** The error code of an answer in the error model. */
const errorOf = (answer: Answer) => (JSON.parse(answer.body) as { error: string }).error;

/** `"default";r=3;t=2` → 3. */
const remaining = (field: unknown) => Number(/;r=(\d+);/.exec(String(field))?.[1]);

describe('a cached document, plain GET', () => {
  it('gets the answer of the whole pipeline: body, header fields, request id, one quota', async () => {
    const { account, order } = await cachedDocument();
    // An unknown header field sends the request through the pipeline, which serves the same cached document.
    const pipeline = await getOrder(account.readToken, order.id, { 'x-through-pipeline': '1' });
    expect(answeredFromCache()).toBe(false);
    const cached = await getOrder(account.readToken, order.id);
    expect(answeredFromCache()).toBe(true);

    expect(cached.statusCode).toBe(200);
    expect(cached.body).toBe(pipeline.body);
    expect((JSON.parse(cached.body) as Order).id).toBe(order.id);
    expect(Object.keys(cached.headers).sort()).toEqual(Object.keys(pipeline.headers).sort());
    for (const field of ['content-type', 'etag', 'ratelimit-policy', 'content-length'])
      expect(cached.headers[field], field).toBe(pipeline.headers[field]);
    expect(cached.headers.etag).toBe(`"order-${order.id}-v${order.versionId}"`);
    expect(remaining(cached.headers.ratelimit)).toBe(remaining(pipeline.headers.ratelimit) - 1);
    expect(cached.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(cached.headers['x-request-id']).not.toBe(pipeline.headers['x-request-id']);

    const named = await getOrder(account.readToken, order.id, { 'x-request-id': 'integrator-42' });
    expect(answeredFromCache()).toBe(true);
    expect(named.headers['x-request-id']).toBe('integrator-42');
    // Field names are case-insensitive: read from the raw header lines as they came.
    const path = `/api/inbound/${order.id}`;
    countWithinQuota.mockClear();
    const capitalized = await call('GET', path, [
      'Host',
      `127.0.0.1:${port}`,
      'Authorization',
      account.readToken,
      'X-Request-Id',
      'int-43',
    ]);
    expect(answeredFromCache()).toBe(true);
    expect(capitalized.statusCode).toBe(200);
    expect(capitalized.headers['x-request-id']).toBe('int-43');
  });

  it('counts against the token quota the pipeline counts, which refuses the request beyond it', async () => {
    const { account, order } = await cachedDocument();
    for (let request = 2; request <= MAX; request++) {
      const response = await getOrder(account.readToken, order.id);
      expect(response.statusCode).toBe(200);
      expect(remaining(response.headers.ratelimit)).toBe(MAX - request);
    }
    expect(countWithinQuota).toHaveBeenCalledTimes(MAX - 1);
    countWithinQuota.mockClear();
    const refused = await getOrder(account.readToken, order.id);
    expect(refused.statusCode).toBe(429);
    expect(errorOf(refused)).toBe('error_rate_limited');
    // Asked and declined (the quota is used up): the pipeline counted the request and refused it.
    expect(countWithinQuota).toHaveBeenCalledTimes(1);
    expect(answeredFromCache()).toBe(false);
  });

  it('is observed by the request histogram under its route', async () => {
    const { account, order } = await cachedDocument();
    const observed = async () => {
      const { values } = await t.runtime.metrics.httpRequestDuration.get();
      return (
        values.find(
          (sample) =>
            sample.metricName?.endsWith('_count') &&
            sample.labels.route === '/api/inbound/:orderId' &&
            sample.labels.method === 'GET' &&
            sample.labels.status === '200',
        )?.value ?? 0
      );
    };
    const before = await observed();
    await getOrder(account.readToken, order.id);
    expect(answeredFromCache()).toBe(true);
    expect(await observed()).toBe(before + 1);
  });

  it("never answers another client's document, even when this process caches it", async () => {
    const { order } = await cachedDocument();
    const other = await createAccount(t.runtime);
    const foreign = await getOrder(other.readToken, order.id);
    expect(foreign.statusCode).toBe(404);
    expect(errorOf(foreign)).toBe('error_not_found');
    expect(answeredFromCache()).toBe(false);
  });
});

describe('requests that ask for more go through the pipeline', () => {
  it('a query, a conditional, a coding, HEAD, no, an unknown or a repeated token, an id the path refuses', async () => {
    const { account, order } = await cachedDocument();
    const tag = `"order-${order.id}-v${order.versionId}"`;

    const paged = await getOrder(account.readToken, `${order.id}?limit=1`);
    expect(paged.statusCode).toBe(200);
    expect(paged.headers.etag).toBe(`"order-${order.id}-v${order.versionId}-limit1-page1"`);
    const notModified = await getOrder(account.readToken, order.id, { 'if-none-match': tag });
    expect(notModified.statusCode).toBe(304);
    const compressed = await getOrder(account.readToken, order.id, { 'accept-encoding': 'gzip' });
    expect(compressed.headers['content-encoding']).toBe('gzip');
    const revalidated = await getOrder(account.readToken, order.id, { 'cache-control': 'no-cache' });
    expect(revalidated.statusCode).toBe(200);
    const head = await call('HEAD', `/api/inbound/${order.id}`, { authorization: account.readToken });
    expect(head.statusCode).toBe(200);
    expect(head.body).toBe('');
    for (const token of [undefined, 'so_unknown']) {
      const refused = await getOrder(token, order.id);
      expect(refused.statusCode).toBe(401);
      expect(errorOf(refused)).toBe('auth_required');
    }
    // A repeated field: Node keeps the first `Authorization` (here unknown) and joins repeated others.
    const repeated = await call('GET', `/api/inbound/${order.id}`, [
      'host',
      `127.0.0.1:${port}`,
      'authorization',
      'so_unknown',
      'authorization',
      account.readToken,
    ]);
    expect(repeated.statusCode).toBe(401);
    expect((await getOrder(account.readToken, `${order.id}0000`)).statusCode).toBe(404);
    expect((await getOrder(account.readToken, `${order.id}/`)).statusCode).toBe(404);
    expect(countWithinQuota).not.toHaveBeenCalled();
  });

  it('a changed document is read again, then answered from cache', async () => {
    const { account, order } = await cachedDocument();
    const renamed = await send(t.app, account.writeToken, {
      method: 'PATCH',
      url: '/api/inbound/',
      payload: { id: order.id, versionId: order.versionId, name: 'renamed' },
    });
    expect(renamed.statusCode, renamed.body).toBe(200);
    const fresh = await getOrder(account.readToken, order.id);
    expect(answeredFromCache()).toBe(false);
    expect((JSON.parse(fresh.body) as Order).name).toBe('renamed');
    const cached = await getOrder(account.readToken, order.id);
    expect(answeredFromCache()).toBe(true);
    expect(cached.body).toBe(fresh.body);
    expect(cached.headers.etag).toBe(`"order-${order.id}-v${order.versionId + 1}"`);
  });
});

describe('with request logs on', () => {
  it('every request goes through the pipeline, which logs it', async () => {
    const lines: string[] = [];
    const logged = await buildTestApp(
      { RATE_LIMIT_STORE: 'memory', RATE_LIMIT_MAX: String(MAX) },
      testDatabaseUrl(),
      { workers: false, log: { write: (line) => void lines.push(line) } },
    );
    try {
      const { account, order } = await newDocument(logged);
      await logged.app.listen({ port: 0, host: '127.0.0.1' });
      const loggedPort = (logged.app.server.address() as AddressInfo).port;
      const path = `/api/inbound/${order.id}`;
      for (let read = 0; read < 2; read++)
        expect((await call('GET', path, { authorization: account.readToken }, loggedPort)).statusCode).toBe(
          200,
        );
      expect(countWithinQuota).not.toHaveBeenCalled();
      const completed = lines.filter(
        (line) => line.includes('request completed') && line.includes('"statusCode":200'),
      );
      expect(completed.length).toBeGreaterThanOrEqual(2);
    } finally {
      await logged.close();
    }
  });
});
