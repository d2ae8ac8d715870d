/**
 * Compressed answers (P136): br and gzip for JSON of 1 KiB and more when the client asks,
 * the coding appended to the ETag, idempotent replays stored uncompressed, the OpenAPI document compressed too.
 */
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import type { LightMyRequestResponse } from 'fastify';
import { describe, expect, it } from 'vitest';
import { useTestApp, type TestApp } from '../helpers/test-app.ts';
import { createAccount, type TestAccount } from '../helpers/factories.ts';
import { createOrder, productLine, send, type Order } from '../helpers/inbound.ts';

let t: TestApp;
let account: TestAccount;
useTestApp(
  async (app) => {
    t = app;
    account = await createAccount(app.runtime);
  },
  {},
  { workers: false },
);

/** The body of `response` decoded by its `content-encoding`. */
function decoded(response: LightMyRequestResponse): string {
  const coding = response.headers['content-encoding'];
  const raw = response.rawPayload;
  if (coding === 'gzip') return gunzipSync(raw).toString('utf8');
  if (coding === 'br') return brotliDecompressSync(raw).toString('utf8');
  return raw.toString('utf8');
}

/** A document of 20 positions: a body of several KiB. */
const largeOrderBody = () => ({
  organizationId: account.organizationId,
  type: 'INCOME',
  name: 'compressed',
  products: Array.from({ length: 20 }, () => productLine()),
});

const getOrder = (id: number, headers: Record<string, string>) =>
  send(t.app, account.readToken, { method: 'GET', url: `/api/inbound/${id}`, headers });

describe('GET of a large document', () => {
  it('is sent br or gzip as the client prefers, decoding to the same JSON, with the coding in the ETag', async () => {
    const order = await createOrder(t.app, account.writeToken, largeOrderBody());
    const plain = await getOrder(order.id, {});
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body.length).toBeGreaterThan(1024);
    const tag = `"order-${order.id}-v${order.versionId}"`;
    expect(plain.headers.etag).toBe(tag);

    for (const [accept, coding] of [
      ['gzip, deflate, br', 'br'],
      ['gzip', 'gzip'],
      ['br;q=0.5, gzip;q=1', 'gzip'],
    ] as const) {
      const response = await getOrder(order.id, { 'accept-encoding': accept });
      expect(response.statusCode).toBe(200);
      expect(response.headers['content-encoding'], accept).toBe(coding);
      expect(response.headers.vary).toMatch(/accept-encoding/i);
      expect(response.headers['content-type']).toMatch(/^application\/hal\+json/);
      expect(response.rawPayload.length).toBeLessThan(plain.rawPayload.length);
      expect(JSON.parse(decoded(response))).toEqual(plain.json<Order>());
      expect(response.headers.etag).toBe(`"order-${order.id}-v${order.versionId}-${coding}"`);
    }
  });

  it('answers If-None-Match with a compressed answer’s tag by 304 repeating that tag', async () => {
    const order = await createOrder(t.app, account.writeToken, largeOrderBody());
    const gzipTag = `"order-${order.id}-v${order.versionId}-gzip"`;
    const response = await getOrder(order.id, { 'accept-encoding': 'gzip', 'if-none-match': gzipTag });
    expect(response.statusCode).toBe(304);
    expect(response.rawPayload.length).toBe(0);
    expect(response.headers.etag).toBe(gzipTag);
  });

  it('sends identity when the client refuses both codings, and small answers as they are', async () => {
    const order = await createOrder(t.app, account.writeToken, largeOrderBody());
    const identity = await getOrder(order.id, { 'accept-encoding': 'identity' });
    expect(identity.headers['content-encoding']).toBeUndefined();
    const small = await createOrder(t.app, account.writeToken, {
      organizationId: account.organizationId,
      type: 'INCOME',
    });
    const response = await getOrder(small.id, { 'accept-encoding': 'gzip' });
    expect(response.body.length).toBeLessThan(1024);
    expect(response.headers['content-encoding']).toBeUndefined();
  });
});

describe('with an idempotency key', () => {
  it('stores the plain JSON: a repeat without Accept-Encoding reads it, one with br gets it compressed', async () => {
    const request = (headers: Record<string, string>) =>
      send(t.app, account.writeToken, {
        method: 'POST',
        url: '/api/inbound/',
        payload: body,
        headers: { 'idempotency-key': `compression-${account.clientId}`, ...headers },
      });
    const body = largeOrderBody();
    const first = await request({ 'accept-encoding': 'gzip' });
    expect(first.statusCode, first.body).toBe(200);
    expect(first.headers['content-encoding']).toBe('gzip');
    const created = JSON.parse(decoded(first)) as Order;

    const plainRepeat = await request({});
    expect(plainRepeat.headers['idempotent-replayed']).toBe('true');
    expect(plainRepeat.headers['content-encoding']).toBeUndefined();
    expect(plainRepeat.json<Order>()).toEqual(created);

    const brRepeat = await request({ 'accept-encoding': 'br' });
    expect(brRepeat.headers['idempotent-replayed']).toBe('true');
    expect(brRepeat.headers['content-encoding']).toBe('br');
    expect(JSON.parse(decoded(brRepeat))).toEqual(created);
  });
});

describe('other routes', () => {
  it('compresses the OpenAPI document', async () => {
    const response = await t.app.inject({
      method: 'GET',
      url: '/openapi.json',
      headers: { 'accept-encoding': 'br' },
    });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-encoding']).toBe('br');
    expect(JSON.parse(decoded(response))).toMatchObject({ openapi: '3.1.0' });
  });

  it('compresses the docs page’s script and stylesheet', async () => {
    for (const url of ['/docs/static/swagger-ui-bundle.js', '/docs/static/swagger-ui.css']) {
      const response = await t.app.inject({ method: 'GET', url, headers: { 'accept-encoding': 'br' } });
      expect(response.statusCode, url).toBe(200);
      expect(response.headers['content-encoding'], url).toBe('br');
      expect(decoded(response).length, url).toBeGreaterThan(response.rawPayload.length * 3);
    }
  });

  it('refuses a compressed request body in the error model (request bodies are not decompressed)', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/api/inbound/',
      headers: {
        authorization: account.writeToken,
        'content-type': 'application/json',
        'content-encoding': 'gzip',
      },
      payload: Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0x00]),
    });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ error: 'error_validation', params: { field: 'body' } });
  });
});
