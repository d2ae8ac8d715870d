/**
 * Provider base URLs set by the operator (P165): `http(s)` only, and never a link-local or cloud metadata target,
 * checked when saved — admin API and CLI — and again at connection by the outbound client, even though private
 * addresses are allowed for providers.
 */
import { execFile } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpClient } from '../../src/connectors/http-client.ts';
import { assertSafeWebhookUrl } from '../../src/connectors/url-guard.ts';
import {
  useTestApp,
  TEST_ADMIN_TOKEN,
  TEST_SECRET_KEY,
  testDatabaseUrl,
  type TestApp,
} from '../helpers/test-app.ts';
import { createAccount, type TestAccount } from '../helpers/factories.ts';

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

const admin = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };

/** Every refused form, with a word its reason must contain. */
const REFUSED: [url: string, reason: RegExp][] = [
  ['file:///etc/passwd', /only http and https/],
  ['ftp://10.0.0.5/api', /only http and https/],
  ['gopher://127.0.0.1:70/', /only http and https/],
  ['javascript:alert(1)', /only http and https/],
  ['http://169.254.169.254/latest/meta-data/', /link-local/],
  ['http://169.254.10.10:8080/', /link-local/],
  ['https://2852039166/', /link-local/], // 169.254.169.254 written as one number
  ['http://[fe80::1]/', /link-local/],
  ['http://[febf::1]/', /link-local/],
  ['http://[::ffff:169.254.169.254]/', /link-local/],
  ['http://[fd00:ec2::254]/', /metadata address/],
  ['http://100.100.100.200/', /metadata address/],
  ['http://metadata.google.internal/computeMetadata/v1/', /metadata service/],
  ['http://METADATA.google.internal./', /metadata service/],
  ['http://metadata/', /metadata service/],
  ['http://instance-data.ec2.internal/', /metadata service/],
];

/** Accepted: private and loopback addresses (an operator's own network, the sandboxes) and public names. */
const ACCEPTED = [
  'http://127.0.0.1:9000',
  'https://10.0.0.5/api/',
  'http://[fd12::1]:8080',
  'https://api.example.com',
];

const routes = {
  integrations: (organizationId: number, baseUrl: string) => ({
    url: `/admin/organizations/${organizationId}/integrations`,
    payload: { service: 'SERVICE_01', apiKey: 'key', baseUrl },
  }),
  'cash-register': (organizationId: number, baseUrl: string) => ({
    url: `/admin/organizations/${organizationId}/cash-register`,
    payload: {
      service: 'CASH_REGISTER_A',
      login: 'login',
      password: 'password',
      email: 'receipts@shop.example',
      paymentAddress: 'https://shop.example',
      taxationSystem: 'SIMPLIFIED_INCOME',
      inn: '7701234567',
      baseUrl,
    },
  }),
};

describe('provider base URLs in the admin API', () => {
  for (const [name, route] of Object.entries(routes)) {
    it(`${name}: refuses every non-http scheme, link-local and metadata target with error_validation on baseUrl`, async () => {
      for (const [url, reason] of REFUSED) {
        const response = await t.app.inject({
          method: 'POST',
          headers: admin,
          ...route(account.organizationId, url),
        });
        expect(response.statusCode, url).toBe(400);
        expect(response.json(), url).toMatchObject({
          error: 'error_validation',
          params: { field: 'baseUrl', reason: expect.stringMatching(reason) as unknown },
        });
      }
    });

    it(`${name}: stores private, loopback and public http(s) addresses`, async () => {
      for (const url of ACCEPTED) {
        const response = await t.app.inject({
          method: 'POST',
          headers: admin,
          ...route(account.organizationId, url),
        });
        expect(response.statusCode, url).toBe(200);
        expect(response.json(), url).toMatchObject({ baseUrl: url });
      }
    });
  }

  it('leaves the stored settings as they were when a URL is refused', async () => {
    const { clientId, organizationId } = await createAccount(t.runtime);
    const ok = routes['cash-register'](organizationId, 'http://127.0.0.1:9000');
    expect((await t.app.inject({ method: 'POST', headers: admin, ...ok })).statusCode).toBe(200);
    const bad = routes['cash-register'](organizationId, 'http://169.254.169.254/');
    expect((await t.app.inject({ method: 'POST', headers: admin, ...bad })).statusCode).toBe(400);
    const stored = await t.runtime.database.db
      .selectFrom('cash_register_setting')
      .select('base_url')
      .where('client_id', '=', clientId)
      .where('organization_id', '=', organizationId)
      .executeTakeFirstOrThrow();
    expect(stored.base_url).toBe('http://127.0.0.1:9000');
  });
});

describe('provider base URLs in the CLI', () => {
  const bin = path.resolve(import.meta.dirname, '../../bin/seller-ops.js');
  const cli = (...args: string[]) =>
    promisify(execFile)(process.execPath, [bin, ...args], {
      env: { ...process.env, DATABASE_URL: testDatabaseUrl(), SECRET_KEY: TEST_SECRET_KEY },
    });

  it('refuses a metadata base URL of an integration and a non-http one of a cash register', async () => {
    const organization = String(account.organizationId);
    await expect(
      cli(
        'integration',
        'set',
        '--organization',
        organization,
        '--service',
        'SERVICE_01',
        '--api-key',
        'k',
        '--base-url',
        'http://169.254.169.254/',
      ),
    ).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/error_validation.*baseUrl/) as unknown,
    });
    await expect(
      cli(
        'cash-register',
        'set',
        '--organization',
        organization,
        '--service',
        'CASH_REGISTER_B',
        '--login',
        'l',
        '--password',
        'p',
        '--taxation-system',
        'GENERAL',
        '--inn',
        '7701234567',
        '--base-url',
        'file:///etc/passwd',
      ),
    ).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/error_validation.*baseUrl/) as unknown,
    });
  });
});

describe('webhook targets with WEBHOOK_ALLOW_PRIVATE', () => {
  it('are refused when link-local or metadata, allowed when private', async () => {
    for (const [url, reason] of REFUSED)
      await expect(assertSafeWebhookUrl(url, true), url).rejects.toThrow(reason);
    await expect(assertSafeWebhookUrl('http://10.0.0.5/hook', true)).resolves.toBeInstanceOf(URL);
  });
});

describe('the outbound client where private targets are allowed', () => {
  let server: http.Server;
  let requests = 0;
  beforeAll(async () => {
    server = http.createServer((_request, response) => {
      requests += 1;
      response.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('reaches a loopback provider but refuses link-local and metadata targets before connecting', async () => {
    const client = new HttpClient({ timeoutMs: 2_000, allowPrivate: true, userAgent: 'test' });
    try {
      const { port } = server.address() as AddressInfo;
      expect((await client.request({ method: 'GET', url: `http://127.0.0.1:${port}/` })).text).toBe('ok');
      for (const [url] of REFUSED)
        await expect(client.request({ method: 'GET', url }), url).rejects.toMatchObject({
          name: 'HttpTransportError',
          kind: 'refused_target',
        });
      // a name goes through the guarded lookup; localhost resolves to loopback, allowed here
      expect((await client.request({ method: 'GET', url: `http://localhost:${port}/` })).text).toBe('ok');
      expect(requests).toBe(2);
      // a failed connection is told by its code, never with the address (a provider's is the operator's)
      await expect(client.request({ method: 'GET', url: 'http://127.0.0.1:1/' })).rejects.toMatchObject({
        kind: 'network',
        message: 'network error ECONNREFUSED',
      });
    } finally {
      client.close();
    }
  });
});
