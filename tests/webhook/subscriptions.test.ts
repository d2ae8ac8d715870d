/** Webhook subscriptions API (spec §4.4, decisions D9.1, D9.4, D2): create, list, delete, URL guard. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/test-app.ts';
import { createAccount, type TestAccount } from '../helpers/factories.ts';
import { addressClass } from '../../src/connectors/url-guard.ts';

let t: TestApp;
let account: TestAccount;
beforeAll(async () => {
  // Private targets refused (the default): the URL guard is under test here.
  t = await buildTestApp({ WEBHOOK_ALLOW_PRIVATE: 'false' });
  account = await createAccount(t.runtime);
});
afterAll(async () => {
  await t.close();
});

const PUBLIC_URL = 'http://93.184.215.14/hooks/orders';

function create(token: string, payload: object) {
  return t.app.inject({ method: 'POST', url: '/api/webhook/', headers: { authorization: token }, payload });
}

function body(overrides: object = {}) {
  return {
    name: 'orders',
    url: PUBLIC_URL,
    organizationId: account.organizationId,
    types: ['CREATE_ORDER', 'ORDER_STATUS'],
    ...overrides,
  };
}

describe('POST /api/webhook/', () => {
  it('creates a subscription and shows its Standard Webhooks secret only in the create response', async () => {
    const response = await create(account.writeToken, body());
    expect(response.statusCode, response.body).toBe(200);
    const created = response.json<Record<string, unknown>>();
    expect(created).toMatchObject({
      name: 'orders',
      url: PUBLIC_URL,
      clientId: account.clientId,
      organizationId: account.organizationId,
      types: ['CREATE_ORDER', 'ORDER_STATUS'],
      enabled: true,
    });
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(String(created.secret).slice(6), 'base64').length).toBeGreaterThanOrEqual(24);

    const list = await t.app.inject({
      method: 'GET',
      url: '/api/webhook/',
      headers: { authorization: account.readToken },
    });
    expect(list.statusCode).toBe(200);
    const rows = list.json<Array<Record<string, unknown>>>();
    expect(rows.find((row) => row.id === created.id)).toMatchObject({
      name: 'orders',
      types: ['CREATE_ORDER', 'ORDER_STATUS'],
    });
    expect(list.body).not.toContain(String(created.secret));
    expect(rows.every((row) => !('secret' in row))).toBe(true);
  });

  it('shows a password in the URL as *** and keeps it sealed for the deliveries (P221)', async () => {
    const url = 'http://receiver:pa55w0rd@93.184.215.14/hooks/orders?account=7';
    const shown = 'http://receiver:***@93.184.215.14/hooks/orders?account=7';
    const created = (await create(account.writeToken, body({ url }))).json<{ id: number; url: string }>();
    expect(created.url).toBe(shown);
    const list = await t.app.inject({
      method: 'GET',
      url: '/api/webhook/',
      headers: { authorization: account.readToken },
    });
    const rows = list.json<Array<{ id: number; url: string }>>();
    expect(rows.find((row) => row.id === created.id)?.url).toBe(shown);
    const ids = rows.map((row) => row.id);
    expect(ids.length).toBeGreaterThan(1);
    expect(ids, 'creation order (P30)').toEqual([...ids].sort((a, b) => a - b));
    expect(list.body).not.toContain('pa55w0rd');
    const stored = await t.runtime.database.db
      .selectFrom('webhook')
      .select(['url', 'url_password'])
      .where('client_id', '=', account.clientId)
      .where('id', '=', created.id)
      .executeTakeFirstOrThrow();
    expect(stored.url, 'stored without the password').toBe(
      'http://receiver@93.184.215.14/hooks/orders?account=7',
    );
    expect(stored.url_password, 'sealed (P160)').toMatch(/^sealed:v1:/);
    expect(t.runtime.secrets.open(stored.url_password as string)).toBe('pa55w0rd');
  });

  it('accepts a subscription as GET lists it, ignoring its read-only fields (P32)', async () => {
    const first = (await create(account.writeToken, body({ name: '  listed ' }))).json<
      Record<string, unknown>
    >();
    expect(first.name).toBe('listed');
    const listed = { ...first };
    delete listed.secret;
    const response = await create(account.writeToken, {
      ...listed,
      clientId: account.clientId + 1_000,
      enabled: false,
      disabledReason: 'sent back',
    });
    expect(response.statusCode, response.body).toBe(200);
    const copy = response.json<Record<string, unknown>>();
    expect(copy.id).not.toBe(first.id);
    expect(copy).toMatchObject({
      name: 'listed',
      clientId: account.clientId,
      enabled: true,
      disabledReason: null,
    });
  });

  it('validates name, types and organization', async () => {
    const cases: Array<[object, string]> = [
      [{ types: [] }, 'types'],
      [{ types: ['CREATE_ORDER', 'SOMETHING'] }, 'types.1'],
      [{ types: undefined }, 'types'],
      [{ name: '' }, 'name'],
      [{ name: '   ' }, 'name'],
      [{ url: undefined }, 'url'],
    ];
    for (const [overrides, field] of cases) {
      const response = await create(account.writeToken, body(overrides));
      expect(response.statusCode, JSON.stringify(overrides)).toBe(400);
      expect(response.json()).toMatchObject({ error: 'error_validation', params: { field } });
    }
    const other = await createAccount(t.runtime);
    const foreign = await create(account.writeToken, body({ organizationId: other.organizationId }));
    expect(foreign.statusCode).toBe(400);
    expect(foreign.json()).toMatchObject({ error: 'error_organization_not_found' });
  });

  it('refuses a READ token', async () => {
    const response = await create(account.readToken, body());
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ error: 'error_access_denied' });
  });

  it('refuses non-http schemes and every private, loopback, link-local, CGNAT, metadata and special address', async () => {
    const refused = [
      'ftp://93.184.215.14/x',
      'file:///etc/passwd',
      'not a url',
      'http://127.0.0.1/x',
      'http://127.5.6.7:8080/x',
      'http://localhost:8080/x',
      'http://10.1.2.3/x',
      'http://172.16.0.1/x',
      'http://172.31.255.255/x',
      'http://192.168.1.1/x',
      'http://169.254.10.10/x',
      'http://169.254.169.254/latest/meta-data',
      'http://100.64.0.1/x',
      'http://100.127.255.254/x',
      'http://0.0.0.0/x',
      'http://224.0.0.1/x',
      'http://255.255.255.255/x',
      'http://[::1]/x',
      'http://[::]/x',
      'http://[fe80::1]/x',
      'http://[fc00::1]/x',
      'http://[fd00:ec2::254]/x',
      'http://[::ffff:127.0.0.1]/x',
      'http://[::ffff:169.254.169.254]/x',
      'http://[::ffff:10.0.0.1]/x',
      'http://[::127.0.0.1]/x',
      'http://[ff02::1]/x',
      'http://2130706433/x',
      'http://0x7f.1/x',
    ];
    for (const url of refused) {
      const response = await create(account.writeToken, body({ url }));
      expect(response.statusCode, url).toBe(400);
      expect(response.json(), url).toMatchObject({ error: 'error_validation', params: { field: 'url' } });
    }
  });

  it('classifies IPv4-mapped and IPv4-compatible IPv6 as the embedded IPv4 address', () => {
    expect(addressClass('::ffff:192.168.0.1')).toBe('private');
    expect(addressClass('::192.168.0.1')).toBe('private');
    expect(addressClass('::ffff:8.8.8.8')).toBe('unicast');
    expect(addressClass('2001:4860:4860::8888')).toBe('unicast');
  });

  it('allows private targets when the operator sets WEBHOOK_ALLOW_PRIVATE=true', async () => {
    const permissive = await buildTestApp({ WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_WORKERS: '0' });
    try {
      const response = await permissive.app.inject({
        method: 'POST',
        url: '/api/webhook/',
        headers: { authorization: account.writeToken },
        payload: body({ url: 'http://127.0.0.1:9/hook' }),
      });
      expect(response.statusCode, response.body).toBe(200);
      const scheme = await permissive.app.inject({
        method: 'POST',
        url: '/api/webhook/',
        headers: { authorization: account.writeToken },
        payload: body({ url: 'gopher://127.0.0.1/' }),
      });
      expect(scheme.statusCode).toBe(400);
    } finally {
      await permissive.close();
    }
  });
});

describe('DELETE /api/webhook/{webhookId}', () => {
  it('deletes a subscription; it disappears from the list; a second delete and foreign ids are 404', async () => {
    const created = (await create(account.writeToken, body({ name: 'to delete' }))).json<{ id: number }>();
    const other = await createAccount(t.runtime);
    const foreign = await t.app.inject({
      method: 'DELETE',
      url: `/api/webhook/${created.id}`,
      headers: { authorization: other.writeToken },
    });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json()).toMatchObject({
      error: 'error_not_found',
      params: { entity: 'webhook', id: String(created.id) },
    });

    const readOnly = await t.app.inject({
      method: 'DELETE',
      url: `/api/webhook/${created.id}`,
      headers: { authorization: account.readToken },
    });
    expect(readOnly.statusCode).toBe(400);

    const deleted = await t.app.inject({
      method: 'DELETE',
      url: `/api/webhook/${created.id}`,
      headers: { authorization: account.writeToken },
    });
    expect(deleted.statusCode).toBe(200);
    expect(deleted.body).toBe('');
    const list = await t.app.inject({
      method: 'GET',
      url: '/api/webhook/',
      headers: { authorization: account.readToken },
    });
    expect(list.json<Array<{ id: number }>>().map((row) => row.id)).not.toContain(created.id);
    const again = await t.app.inject({
      method: 'DELETE',
      url: `/api/webhook/${created.id}`,
      headers: { authorization: account.writeToken },
    });
    expect(again.statusCode).toBe(404);
  });

  it('never lists another client’s subscriptions', async () => {
    const other = await createAccount(t.runtime);
    const list = await t.app.inject({
      method: 'GET',
      url: '/api/webhook/',
      headers: { authorization: other.readToken },
    });
    expect(list.json()).toEqual([]);
  });
});
