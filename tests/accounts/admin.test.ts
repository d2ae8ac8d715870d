/** Admin API, tokens, authentication, roles and the error model (decisions D1, D2, D3). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, TEST_ADMIN_TOKEN, type TestApp } from '../helpers/test-app.ts';
import { createAccount } from '../helpers/factories.ts';
import { AccountService } from '../../src/modules/accounts/service.ts';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => {
  await t.close();
});

const admin = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };

async function adminPost(url: string, payload: object) {
  const response = await t.app.inject({ method: 'POST', url, headers: admin, payload });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<Record<string, unknown> & { id: number }>();
}

async function createAccountThroughAdmin(lang: 'ru' | 'en' | null = 'en') {
  const client = await adminPost('/admin/clients', { name: 'Admin-made client' });
  const organization = await adminPost(`/admin/clients/${client.id}/organizations`, {
    name: 'Org',
    inn: '7701',
  });
  const user = await adminPost(`/admin/clients/${client.id}/users`, { name: 'Anna', lang });
  const write = await adminPost(`/admin/users/${user.id}/tokens`, { access: 'WRITE', name: 'ci' });
  const read = await adminPost(`/admin/users/${user.id}/tokens`, { access: 'READ' });
  return { client, organization, user, write, read };
}

describe('admin API', () => {
  it('refuses calls without the admin token', async () => {
    for (const headers of [
      {},
      { authorization: 'Bearer wrong' },
      { authorization: TEST_ADMIN_TOKEN + 'x' },
    ]) {
      const response = await t.app.inject({
        method: 'POST',
        url: '/admin/clients',
        headers,
        payload: { name: 'x' },
      });
      expect(response.statusCode).toBe(401);
      expect(response.json()).toMatchObject({ error: 'auth_required', params: {} });
    }
  });

  it('creates a client, organization, user and tokens; a token is shown once and stored hashed', async () => {
    const { client, organization, user, write } = await createAccountThroughAdmin();
    expect(client).toMatchObject({ name: 'Admin-made client', subscriptionExpiresAt: null });
    expect(organization).toMatchObject({ clientId: client.id, name: 'Org', inn: '7701' });
    expect(user).toMatchObject({ clientId: client.id, lang: 'en', role: 'OWNER' });
    expect(write.token).toMatch(/^so_[A-Za-z0-9_-]{43}$/);
    const stored = await t.runtime.database.db
      .selectFrom('api_token')
      .select(['token_hash'])
      .where('client_id', '=', client.id)
      .where('id', '=', write.id)
      .executeTakeFirstOrThrow();
    expect(stored.token_hash.toString('utf8')).not.toContain(String(write.token));
    expect(stored.token_hash).toHaveLength(32);
  });

  it('validates bodies and names the field', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/admin/clients',
      headers: admin,
      payload: {},
    });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ error: 'error_validation', params: { field: 'name' } });
    const blank = await t.app.inject({
      method: 'POST',
      url: '/admin/clients',
      headers: admin,
      payload: { name: ' \u200B ' },
    });
    expect(blank.json()).toMatchObject({ error: 'error_validation', params: { field: 'name' } });
  });

  it('stores names without invisible edges and refuses blank ones from the command line too (P220)', async () => {
    const accounts = new AccountService(t.runtime.database.db, t.runtime.secrets);
    const client = await accounts.createClient({ name: '\uFEFF Shop LLC \u200B' });
    expect(client.name).toBe('Shop LLC');
    expect((await accounts.createUser(client.id, { name: ' Anna ' })).name).toBe('Anna');
    await expect(accounts.createOrganization(client.id, { name: '\u200B' })).rejects.toMatchObject({
      code: 'error_validation',
      params: { field: 'name' },
    });
    await expect(accounts.updateClient(client.id, { name: '  ' })).rejects.toMatchObject({
      code: 'error_validation',
    });
  });

  it("checks cash-register settings carry what the provider's receipts need, naming the missing field", async () => {
    const account = await createAccount(t.runtime);
    const save = (payload: Record<string, unknown>) =>
      t.app.inject({
        method: 'POST',
        url: `/admin/organizations/${account.organizationId}/cash-register`,
        headers: admin,
        payload: { service: 'CASH_REGISTER_A', login: 'shop', password: 'secret', ...payload },
      });
    const complete = {
      inn: '7700000000',
      email: 'receipts@example.com',
      paymentAddress: 'https://shop.example.com',
      taxationSystem: 'SIMPLIFIED_INCOME',
    };
    // The test organization has no INN, so the settings must name one.
    for (const field of ['inn', 'email', 'paymentAddress', 'taxationSystem'] as const) {
      const response = await save({ ...complete, [field]: null });
      expect(response.statusCode, response.body).toBe(400);
      expect(response.json()).toMatchObject({ error: 'error_validation', params: { field } });
    }
    for (const [field, value] of [
      ['inn', '12345'],
      ['email', 'not an email'],
      ['taxationSystem', 'IMPUTED_INCOME'],
    ] as const) {
      const response = await save({ ...complete, [field]: value });
      expect(response.json(), field).toMatchObject({ error: 'error_validation', params: { field } });
    }
    const saved = await save(complete);
    expect(saved.statusCode, saved.body).toBe(200);
    expect(saved.json()).toMatchObject({ ...complete, service: 'CASH_REGISTER_A', login: 'shop' });
    // Provider B needs the INN and taxation system only.
    const b = await save({ service: 'CASH_REGISTER_B', inn: '770000000012', taxationSystem: 'PATENT' });
    expect(b.json()).toMatchObject({ inn: '770000000012', email: null, paymentAddress: null });
    const noTaxation = await save({ service: 'CASH_REGISTER_B', inn: '770000000012' });
    expect(noTaxation.json()).toMatchObject({
      error: 'error_validation',
      params: { field: 'taxationSystem' },
    });
  });

  it('returns error_not_found for unknown ids', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/admin/users/999999999/tokens',
      headers: admin,
      payload: { access: 'READ' },
    });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toMatchObject({
      error: 'error_not_found',
      params: { entity: 'user', id: '999999999' },
    });
  });
});

describe('authentication', () => {
  it('answers 401 auth_required for a missing, empty, unknown or revoked token', async () => {
    const { write } = await createAccountThroughAdmin();
    const url = '/api/inbound/find';
    for (const authorization of [undefined, '', 'Bearer ', 'so_unknown']) {
      const response = await t.app.inject({
        method: 'GET',
        url,
        headers: authorization === undefined ? {} : { authorization },
      });
      expect(response.statusCode).toBe(401);
      expect(response.json()).toMatchObject({ error: 'auth_required', params: {} });
    }
    const ok = await t.app.inject({ method: 'GET', url, headers: { authorization: String(write.token) } });
    expect(ok.statusCode).not.toBe(401);
    const revoke = await t.app.inject({ method: 'DELETE', url: `/admin/tokens/${write.id}`, headers: admin });
    expect(revoke.statusCode).toBe(200);
    const after = await t.app.inject({ method: 'GET', url, headers: { authorization: String(write.token) } });
    expect(after.statusCode).toBe(401);
  });

  it('accepts the token with and without the Bearer scheme', async () => {
    const { read } = await createAccountThroughAdmin();
    for (const authorization of [String(read.token), `Bearer ${String(read.token)}`]) {
      const response = await t.app.inject({
        method: 'GET',
        url: '/api/inbound/find',
        headers: { authorization },
      });
      expect(response.statusCode).not.toBe(401);
    }
  });

  it("renders localMessage in the user's language, Russian when none is set (spec §5.4)", async () => {
    const english = await createAccountThroughAdmin('en');
    const unset = await createAccountThroughAdmin(null);
    const url = '/api/inbound/999999999';
    const en = await t.app.inject({
      method: 'GET',
      url,
      headers: { authorization: String(english.read.token), 'accept-language': 'ru' },
    });
    const ru = await t.app.inject({
      method: 'GET',
      url,
      headers: { authorization: String(unset.read.token), 'accept-language': 'en' },
    });
    expect(en.json<{ localMessage: string }>().localMessage).toMatch(/^Not found/);
    expect(ru.json<{ localMessage: string }>().localMessage).toMatch(/^Не найдено/);
    expect(en.json<{ error: string }>().error).toBe(ru.json<{ error: string }>().error);
  });
});

describe('service endpoints', () => {
  it('serves health, readiness, the OpenAPI document and the docs page', async () => {
    expect((await t.app.inject('/health')).json()).toEqual({ status: 'ok' });
    expect((await t.app.inject('/ready')).json()).toMatchObject({ status: 'ready' });
    const openapi = await t.app.inject('/openapi.json');
    expect(openapi.json<{ openapi: string }>().openapi).toBe('3.1.0');
    const docs = await t.app.inject('/docs/');
    expect(docs.statusCode).toBe(200);
    expect(docs.headers['content-type']).toContain('text/html');
  });

  it('answers unknown routes in the error model and echoes a request id', async () => {
    const response = await t.app.inject({
      method: 'GET',
      url: '/api/nowhere',
      headers: { 'x-request-id': 'abc-123' },
    });
    expect(response.statusCode).toBe(404);
    expect(response.headers['x-request-id']).toBe('abc-123');
    expect(response.json()).toMatchObject({ error: 'error_route_not_found' });
  });
});
