/**
 * `examples/catalog-sync.ts` runs against a live service and verifies its own result: paging,
 * find-or-create, a card with two colours × three sizes, a multi-value and a SUGGEST parameter, PUT after a
 * fresh read, and a verification read. Run twice, the second run finds the card by its article.
 */
import { execFile } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { useTestApp, TEST_ADMIN_TOKEN } from '../helpers/test-app.ts';
import { createAccount, type TestAccount } from '../helpers/factories.ts';
import { sampleDictionary } from '../../src/modules/catalog/dictionary.ts';

const run = promisify(execFile);
const example = path.resolve(import.meta.dirname, '../../examples/catalog-sync.ts');

let account: TestAccount;
let url: string;
useTestApp(
  async (app) => {
    account = await createAccount(app.runtime);
    const loaded = await app.app.inject({
      method: 'POST',
      url: '/admin/dictionaries',
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
      payload: sampleDictionary(),
    });
    expect(loaded.statusCode, loaded.body).toBe(200);
    await app.app.listen({ port: 0, host: '127.0.0.1' });
    url = `http://127.0.0.1:${(app.app.server.address() as AddressInfo).port}`;
  },
  {},
  { workers: false },
);

const sync = () =>
  run(process.execPath, ['--import', 'tsx', example], {
    env: {
      ...process.env,
      SELLER_OPS_URL: url,
      SELLER_OPS_TOKEN: account.writeToken,
      SELLER_OPS_ORGANIZATION_ID: String(account.organizationId),
    },
  });

describe('examples/catalog-sync.ts', () => {
  it('creates, replaces and verifies a card, then finds it by article on a second run', async () => {
    const first = await sync();
    expect(first.stdout).toContain('created model');
    expect(first.stdout).toContain('version 1 → 2');
    expect(first.stdout).toMatch(/verified: 8 products, each colour has XL and its own Color value: yes/);
    const second = await sync();
    expect(second.stdout).toContain('1. 8 products in the catalog, in 1 models');
    expect(second.stdout).toContain('model NW-TEE-BASIC exists');
    expect(second.stdout).toContain('version 2 → 3');
  });
});
