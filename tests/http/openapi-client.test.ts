/**
 * A client generated from `/openapi.json` by `openapi-typescript` type-checks against a usage file without a
 * single cast: typed int64 path ids, query parameters, request bodies and the `application/hal+json`
 * answers of the inbound group.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/test-app.ts';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');

let t: TestApp;
let dir: string;
beforeAll(async () => {
  t = await buildTestApp({}, undefined, { workers: false });
  dir = await mkdtemp(path.join(os.tmpdir(), 'seller-ops-client-'));
});
afterAll(async () => {
  await t.close();
  await rm(dir, { recursive: true, force: true });
});

const usage = `
import type { paths } from './schema.ts';

type GetOrder = paths['/api/inbound/{orderId}']['get'];
export const path: GetOrder['parameters']['path'] = { orderId: 42 };
export const query: NonNullable<GetOrder['parameters']['query']> = { limit: 10, page: 1 };
type Order = GetOrder['responses'][200]['content']['application/hal+json'];
export const totalOf = (order: Order): number => order.totalPrice + order.totalQuantity;
export const firstProductId = (order: Order): number | undefined => order.products?.[0]?.productId;

type Create = paths['/api/inbound/']['post'];
export const body: Create['requestBody']['content']['application/json'] = {
  organizationId: 1,
  type: 'INCOME',
  products: [{ productId: 7, quantity: 2, price: 10.5 }],
};
type Find = paths['/api/inbound/find']['get'];
export const find: NonNullable<Find['parameters']['query']> = { statuses: ['CREATED', 'FINISHED'], count: true };
type Error400 = GetOrder['responses'][400]['content']['application/json'];
export const code = (error: Error400): string => error.error + error.localMessage;

type Webhooks = paths['/api/webhook/']['get']['responses'][200]['content']['application/json'];
export const names = (list: Webhooks): string[] => list.map((webhook) => webhook.name);
type DeleteWebhook = paths['/api/webhook/{webhookId}']['delete'];
export const webhook: DeleteWebhook['parameters']['path'] = { webhookId: 3 };
`;

describe('a client generated from /openapi.json', () => {
  it('type-checks a usage file without casts', async () => {
    await writeFile(path.join(dir, 'openapi.json'), (await t.app.inject('/openapi.json')).body);
    await run(process.execPath, [
      path.join(root, 'node_modules/openapi-typescript/bin/cli.js'),
      path.join(dir, 'openapi.json'),
      '--output',
      path.join(dir, 'schema.ts'),
    ]);
    await writeFile(path.join(dir, 'usage.ts'), usage);
    await writeFile(
      path.join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          noEmit: true,
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          allowImportingTsExtensions: true,
          skipLibCheck: true,
        },
        files: ['usage.ts'],
      }),
    );
    const checked = await run(process.execPath, [
      path.join(root, 'node_modules/typescript/bin/tsc'),
      '-p',
      dir,
    ]).then(
      () => '',
      (error: { stdout?: string; message?: string }) => error.stdout ?? error.message ?? 'tsc failed',
    );
    expect(checked).toBe('');
  }, 120_000);
});
