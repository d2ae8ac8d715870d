/**
 * Hostile and malformed input always gets an answer in the error model (P32–P35): never a
 * 500, never a framework body, never silently dropped data.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp, TEST_ADMIN_TOKEN, type TestApp } from '../helpers/test-app.ts';
import { createAccount, type TestAccount } from '../helpers/factories.ts';
import { expectError, expectValidation } from '../helpers/http.ts';
import { createOrder, productLine, send } from '../helpers/inbound.ts';

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

const create = (payload: unknown) =>
  send(t.app, account.writeToken, { method: 'POST', url: '/api/inbound/', payload });
const base = () => ({ organizationId: account.organizationId, type: 'INCOME' });

describe('strings that PostgreSQL cannot store', () => {
  it('refuses a NUL character in a body field, naming it', async () => {
    expectValidation(await create({ ...base(), name: 'bad\u0000name' }), 'name');
    expectValidation(
      await create({ ...base(), products: [{ ...productLine(), product: { name: 'x\u0000' } }] }),
      'products.0.product.name',
    );
  });

  it('refuses an unpaired surrogate in a body field (as JSON escapes) and in a query', async () => {
    expectValidation(
      await create(`{"organizationId":${account.organizationId},"type":"INCOME","name":"a\\ud800b"}`),
      'name',
    );
    expectValidation(
      await send(t.app, account.readToken, {
        method: 'GET',
        url: '/api/inbound/find',
        query: { query: 'a\u0000' },
      }),
      'query',
    );
  });
});

describe('numbers out of range', () => {
  it('refuses 1e309 (Infinity) and "Infinity" for integer fields', async () => {
    expectValidation(
      await create(`{"organizationId":${account.organizationId},"type":"INCOME","userId":1e309}`),
      'userId',
    );
    expectValidation(
      await send(t.app, account.readToken, {
        method: 'GET',
        url: '/api/inbound/find',
        query: { limit: 'Infinity' },
      }),
      'limit',
    );
  });

  it('refuses int4 values beyond 2^31-1 (userId, position, cargo place sizes and weight)', async () => {
    expectValidation(await create({ ...base(), userId: 2 ** 31 }), 'userId');
    expectValidation(
      await create({ ...base(), products: [{ ...productLine(), position: 2 ** 31 }] }),
      'products.0.position',
    );
    const order = await createOrder(t.app, account.writeToken, { ...base(), products: [productLine()] });
    const positionId = order.products?.[0]?.id;
    for (const field of ['width', 'height', 'length', 'weight']) {
      const response = await send(t.app, account.writeToken, {
        method: 'POST',
        url: '/api/inbound/updateOrderPackage',
        query: { orderId: order.id },
        payload: [{ number: 'CP-1', [field]: 2 ** 31, items: [{ orderProductId: positionId, quantity: 1 }] }],
      });
      expectValidation(response, `0.${field}`);
    }
  });

  it('refuses query int64s of 2^63 and more, and a page beyond the last one OFFSET can reach', async () => {
    expectValidation(
      await send(t.app, account.readToken, {
        method: 'GET',
        url: '/api/inbound/find',
        query: { orderId: '9223372036854775808' },
      }),
      'orderId',
    );
    expectValidation(
      await send(t.app, account.readToken, {
        method: 'GET',
        url: '/api/inbound/find',
        query: { page: 2 ** 52 },
      }),
      'page',
    );
  });

  it('answers totals beyond numeric(16,2) with error_validation, storing nothing', async () => {
    const response = await create({
      ...base(),
      name: 'overflowing totals',
      products: [productLine({ quantity: 2_000_000_000, price: 99_999_999_999 })],
    });
    expectError(response, 400, 'error_validation');
    const found = await send(t.app, account.readToken, {
      method: 'GET',
      url: '/api/inbound/find',
      query: { query: 'overflowing totals', count: true },
    });
    expect(found.json<{ total: number }>().total).toBe(0);
  });

  it('refuses 3,000 nested arrays holding a 16-digit number', async () => {
    const payload = `${'['.repeat(3_000)}1234567890123456${']'.repeat(3_000)}`;
    expectValidation(await create(payload), 'body');
  });
});

describe('unknown fields and parameters', () => {
  it('refuses an unknown body field, naming it, and a misspelled query parameter', async () => {
    expectValidation(await create({ ...base(), nmae: 'typo' }), 'nmae');
    expectValidation(
      await create({ ...base(), products: [{ ...productLine(), quantitty: 3 }] }),
      'products.0.quantitty',
    );
    expectValidation(
      await send(t.app, account.readToken, {
        method: 'GET',
        url: '/api/inbound/find',
        query: { stauses: 'CREATED' },
      }),
      'stauses',
    );
  });

  it('still accepts the read-only fields of a document read with GET, ignoring them (D5.1)', async () => {
    const order = await createOrder(t.app, account.writeToken, { ...base(), products: [productLine()] });
    const response = await send(t.app, account.writeToken, {
      method: 'PATCH',
      url: '/api/inbound/',
      payload: { ...order, name: 'renamed', status: 'FINISHED', totalPrice: 1 },
    });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toMatchObject({
      name: 'renamed',
      status: 'CREATED',
      totalPrice: order.totalPrice,
    });
  });
});

describe('a body is read with its own types, never converted (P219)', () => {
  it('refuses null, a boolean, a string or an array where a number belongs, naming the field', async () => {
    for (const quantity of [null, true, '5', [7]])
      expectValidation(
        await create({ ...base(), products: [{ ...productLine(), quantity }] }),
        'products.0.quantity',
      );
    expectValidation(await create({ ...base(), organizationId: true }), 'organizationId');
  });

  it('refuses a missing body or a scalar where a list of ids belongs, changing nothing', async () => {
    const order = await createOrder(t.app, account.writeToken, base());
    const changeStatus = (payload?: unknown) =>
      send(t.app, account.writeToken, {
        method: 'POST',
        url: '/api/inbound/status',
        query: { status: 'COLLECTED' },
        ...(payload === undefined ? {} : { payload }),
      });
    expectValidation(await changeStatus(), 'body');
    expectValidation(await changeStatus(`${order.id}`), 'body');
    expectValidation(await changeStatus(`"${order.id}"`), 'body');
    const after = await send(t.app, account.readToken, { method: 'GET', url: `/api/inbound/${order.id}` });
    expect(after.json()).toMatchObject({ status: 'CREATED', versionId: order.versionId });
  });

  it('still converts query parameters: one value of a repeated parameter is a list of one', async () => {
    const response = await send(t.app, account.readToken, {
      method: 'GET',
      url: '/api/inbound/find',
      query: { statuses: 'CREATED', limit: '1' },
    });
    expect(response.statusCode, response.body).toBe(200);
  });
});

describe('media types, tokens and request ids', () => {
  it('reads a JSON body sent as text/plain', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/api/inbound/',
      headers: { authorization: account.writeToken, 'content-type': 'text/plain;charset=UTF-8' },
      payload: JSON.stringify({ ...base(), name: 'sent as text/plain' }),
    });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toMatchObject({ name: 'sent as text/plain' });
  });

  it('answers an unknown route in the language of the token’s user, Russian without a token', async () => {
    const unknown = (token?: string) =>
      t.app.inject({
        method: 'PUT',
        url: '/api/webhook/1?x=1',
        headers: token === undefined ? {} : { authorization: token },
      });
    const english = expectError(await unknown(account.readToken), 404, 'error_route_not_found');
    expect(english.localMessage).toBe('There is no operation PUT /api/webhook/1');
    const russian = expectError(await unknown(), 404, 'error_route_not_found');
    expect(russian.localMessage).toBe('Метод PUT /api/webhook/1 не существует');
  });

  it('accepts the Bearer scheme in any case', async () => {
    for (const scheme of ['Bearer', 'bearer', 'BEARER']) {
      const response = await t.app.inject({
        method: 'GET',
        url: '/api/webhook/',
        headers: { authorization: `${scheme} ${account.readToken}` },
      });
      expect(response.statusCode, scheme).toBe(200);
    }
  });

  it('admin routes require the Bearer scheme (D1.4)', async () => {
    const bare = await t.app.inject({
      method: 'POST',
      url: '/admin/clients',
      headers: { authorization: TEST_ADMIN_TOKEN },
      payload: { name: 'bare token' },
    });
    expectError(bare, 401, 'auth_required');
    const lower = await t.app.inject({
      method: 'POST',
      url: '/admin/clients',
      headers: { authorization: `bearer ${TEST_ADMIN_TOKEN}` },
      payload: { name: 'lower-case scheme' },
    });
    expect(lower.statusCode, lower.body).toBe(200);
  });

  it('an empty admin PATCH changes nothing and answers the client', async () => {
    const headers = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };
    const response = await t.app.inject({
      method: 'PATCH',
      url: `/admin/clients/${account.clientId}`,
      headers,
      payload: {},
    });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toMatchObject({ id: account.clientId });
  });

  it('echoes a short printable x-request-id and replaces a long or unprintable one', async () => {
    const echoed = await t.app.inject({
      method: 'GET',
      url: '/health',
      headers: { 'x-request-id': 'abc-123' },
    });
    expect(echoed.headers['x-request-id']).toBe('abc-123');
    const long = await t.app.inject({
      method: 'GET',
      url: '/health',
      headers: { 'x-request-id': 'x'.repeat(10_000) },
    });
    expect(long.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('framework errors in the error model', () => {
  let url: string;
  beforeAll(async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    url = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  });

  /** A raw GET over a real socket (inject bypasses Node's HTTP parser). */
  const rawGet = (path: string, headers: Record<string, string> = {}) =>
    new Promise<{ status: number; body: string; type: string | undefined }>((resolve, reject) => {
      const request = http.get(`${url}${path}`, { headers }, (response) => {
        let body = '';
        response.on('data', (chunk: Buffer) => (body += chunk.toString()));
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, body, type: response.headers['content-type'] }),
        );
      });
      request.on('error', reject);
    });

  it('answers a malformed percent-encoding in the path with error_validation', async () => {
    const answer = await rawGet('/api/inbound/%ff', { authorization: account.readToken });
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toMatchObject({ error: 'error_validation', params: { field: 'url' } });
  });

  it('answers a very long path id with error_validation, not 414', async () => {
    const answer = await rawGet(`/api/inbound/${'1'.repeat(500)}`, { authorization: account.readToken });
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toMatchObject({ error: 'error_validation' });
  });

  it('answers headers beyond the server limit with 431 in the error model', async () => {
    const answer = await rawGet(`/api/inbound/find?query=${'x'.repeat(20_000)}`, {
      authorization: account.readToken,
    });
    expect(answer.status).toBe(431);
    expect(answer.type).toMatch(/^application\/json/);
    expect(JSON.parse(answer.body)).toMatchObject({ error: 'error_headers_too_large', params: {} });
  });
});

describe('deeply nested bodies (found by the fuzzer, P146)', () => {
  const nested = (depth: number, leaf = '') => `${'['.repeat(depth)}${leaf}${']'.repeat(depth)}`;
  const post = (url: string, payload: string) =>
    send(t.app, account.writeToken, { method: 'POST', url, payload });

  it('refuses a body nested 5,000 levels deep on any route, also one that reads no body, never a 500', async () => {
    const order = await createOrder(t.app, account.writeToken, { ...base(), products: [productLine()] });
    for (const url of [
      '/api/brand',
      '/api/inbound/',
      `/api/inbound/setOrderMarkingStatus?status=CARDS_SIGNED&orderId=${order.id}`,
    ]) {
      const body = expectValidation(await post(url, nested(5_000)), /^0(\.0)+$/);
      expect(body.params.reason).toBe('nested more than 64 levels deep');
    }
  });

  it('refuses nesting beyond 64 levels inside a field that takes any value, and accepts 64', async () => {
    const deep = (depth: number) =>
      `{"organizationId":${account.organizationId},"type":"INCOME","_links":${nested(depth - 1)}}`;
    expectValidation(await create(deep(65)), /^_links(\.0)+$/);
    expect((await create(deep(64))).statusCode).toBe(200);
  });
});
