/**
 * Secrets at rest (P160): API keys, cash-register passwords, webhook secrets and webhook URL passwords are stored
 * sealed with the operator key, never returned after creation, opened only by the credential accessors and the
 * webhook dispatcher; plain values stored before sealing existed are sealed at start.
 */
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useTestApp, TEST_ADMIN_TOKEN, type TestApp } from '../helpers/test-app.ts';
import { createAccount } from '../helpers/factories.ts';
import { findCashRegister, findPreparedIntegration } from '../../src/modules/accounts/credentials.ts';
import { loadOperatorKey, SecretBox, SecretOpenError } from '../../src/security/secret-box.ts';
import { sealLegacySecrets } from '../../src/security/seal-legacy-secrets.ts';

let t: TestApp;
useTestApp(
  async (app) => {
    t = app;
  },
  { WEBHOOK_ALLOW_PRIVATE: 'true' },
  { workers: false },
);

const admin = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };
const API_KEY = 'market1-api-key-e3b0c44298fc1c149afbf4c8996fb924';
const PASSWORD = 'cash-register-password-27ae41e4649b934ca495991b7852b855';

describe('secrets at rest', () => {
  it('stores API keys, cash-register passwords and webhook secrets sealed, and opens them for use', async () => {
    const account = await createAccount(t.runtime);
    const integration = await t.app.inject({
      method: 'POST',
      url: `/admin/organizations/${account.organizationId}/integrations`,
      headers: admin,
      payload: { service: 'SERVICE_01', apiKey: API_KEY },
    });
    expect(integration.statusCode, integration.body).toBe(200);
    expect(integration.body).not.toContain(API_KEY);
    const cashRegister = await t.app.inject({
      method: 'POST',
      url: `/admin/organizations/${account.organizationId}/cash-register`,
      headers: admin,
      payload: {
        service: 'CASH_REGISTER_A',
        login: 'shop-login',
        password: PASSWORD,
        inn: '7700000000',
        email: 'receipts@example.com',
        paymentAddress: 'https://shop.example.com',
        taxationSystem: 'GENERAL',
      },
    });
    expect(cashRegister.statusCode, cashRegister.body).toBe(200);
    expect(cashRegister.body).not.toContain(PASSWORD);
    const webhook = await t.app.inject({
      method: 'POST',
      url: '/api/webhook/',
      headers: { authorization: account.writeToken },
      payload: {
        name: 'orders',
        url: 'http://127.0.0.1:9/hook',
        organizationId: account.organizationId,
        types: ['ORDER'],
      },
    });
    expect(webhook.statusCode, webhook.body).toBe(200);
    const { id: webhookId, secret } = webhook.json<{ id: number; secret: string }>();
    expect(secret).toMatch(/^whsec_/);

    const db = t.runtime.database.db;
    const stored = [
      (
        await db
          .selectFrom('prepared_integration')
          .select('api_key')
          .where('client_id', '=', account.clientId)
          .executeTakeFirstOrThrow()
      ).api_key,
      (
        await db
          .selectFrom('cash_register_setting')
          .select('password')
          .where('client_id', '=', account.clientId)
          .executeTakeFirstOrThrow()
      ).password,
      (
        await db
          .selectFrom('webhook')
          .select('secret')
          .where('client_id', '=', account.clientId)
          .where('id', '=', webhookId)
          .executeTakeFirstOrThrow()
      ).secret,
    ];
    for (const [index, plain] of [API_KEY, PASSWORD, secret].entries()) {
      expect(stored[index]).toMatch(/^sealed:v1:/);
      expect(stored[index]).not.toContain(plain);
      expect(t.runtime.secrets.open(stored[index] as string)).toBe(plain);
    }

    expect(
      await findPreparedIntegration(
        db,
        t.runtime.secrets,
        account.clientId,
        account.organizationId,
        'SERVICE_01',
      ),
    ).toEqual({
      organizationId: account.organizationId,
      service: 'SERVICE_01',
      apiKey: API_KEY,
      baseUrl: null,
    });
    expect(
      await findCashRegister(db, t.runtime.secrets, account.clientId, account.organizationId),
    ).toMatchObject({ service: 'CASH_REGISTER_A', login: 'shop-login', password: PASSWORD });
    // Another client's organization has no credentials.
    const other = await createAccount(t.runtime);
    expect(
      await findPreparedIntegration(
        db,
        t.runtime.secrets,
        other.clientId,
        account.organizationId,
        'SERVICE_01',
      ),
    ).toBeUndefined();
    expect(
      await findCashRegister(db, t.runtime.secrets, other.clientId, account.organizationId),
    ).toBeUndefined();
  });

  it('seals plain values stored before sealing existed, once', async () => {
    const account = await createAccount(t.runtime);
    const db = t.runtime.database.db;
    await db
      .insertInto('prepared_integration')
      .values({
        client_id: account.clientId,
        organization_id: account.organizationId,
        service: 'SERVICE_02',
        api_key: 'legacy-plain-key',
        base_url: null,
      })
      .execute();
    await db
      .insertInto('webhook')
      .values({
        client_id: account.clientId,
        organization_id: account.organizationId,
        name: 'legacy',
        url: 'https://hooks:legacy-pa55@example.com/hook',
        types: ['ORDER'],
        secret: 'whsec_bGVnYWN5LXBsYWluLXNlY3JldA==',
      })
      .execute();
    const listed = async () =>
      (
        await t.app.inject({
          method: 'GET',
          url: '/api/webhook/',
          headers: { authorization: account.readToken },
        })
      ).json<Array<{ url: string }>>();
    expect(await listed(), 'a password the previous release stored in the URL is not shown (P221)').toEqual([
      expect.objectContaining({ url: 'https://hooks:***@example.com/hook' }),
    ]);
    expect(await sealLegacySecrets(db, t.runtime.secrets)).toBeGreaterThanOrEqual(3);
    expect(await sealLegacySecrets(db, t.runtime.secrets)).toBe(0);
    expect(
      (
        await findPreparedIntegration(
          db,
          t.runtime.secrets,
          account.clientId,
          account.organizationId,
          'SERVICE_02',
        )
      )?.apiKey,
    ).toBe('legacy-plain-key');
    const webhook = await db
      .selectFrom('webhook')
      .select(['secret', 'url', 'url_password'])
      .where('client_id', '=', account.clientId)
      .executeTakeFirstOrThrow();
    expect(t.runtime.secrets.open(webhook.secret)).toBe('whsec_bGVnYWN5LXBsYWluLXNlY3JldA==');
    expect(webhook.url).toBe('https://hooks@example.com/hook');
    expect(t.runtime.secrets.open(webhook.url_password as string)).toBe('legacy-pa55');
    expect((await listed())[0]?.url).toBe('https://hooks:***@example.com/hook');
  });
});

describe('SecretBox and the operator key', () => {
  it('refuses a value sealed with another key or changed', () => {
    const box = new SecretBox(Buffer.alloc(32, 1));
    const sealed = box.seal('secret');
    expect(box.seal('secret')).not.toBe(sealed);
    expect(box.open(sealed)).toBe('secret');
    expect(() => new SecretBox(Buffer.alloc(32, 2)).open(sealed)).toThrow(SecretOpenError);
    // A character inside the IV and tag carries six significant bits (the last one may carry only two).
    const at = 'sealed:v1:'.length + 10;
    const changed = sealed.slice(0, at) + (sealed[at] === 'A' ? 'B' : 'A') + sealed.slice(at + 1);
    expect(() => box.open(changed)).toThrow(SecretOpenError);
    expect(() => box.open('plain')).toThrow(SecretOpenError);
  });

  it('creates the key file in DATA_DIR once (mode 0600), and prefers SECRET_KEY', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'seller-ops-key-'));
    try {
      const first = await loadOperatorKey(undefined, dataDir);
      const file = path.join(dataDir, 'secret-key');
      expect((await stat(file)).mode & 0o777).toBe(0o600);
      expect(await loadOperatorKey(undefined, dataDir)).toEqual(first);
      expect((await readFile(file, 'utf8')).trim()).toBe(first.toString('base64'));
      const hex = 'ab'.repeat(32);
      expect(await loadOperatorKey(hex, dataDir)).toEqual(Buffer.from(hex, 'hex'));
      await expect(loadOperatorKey('too-short', dataDir)).rejects.toThrow(/SECRET_KEY/);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
