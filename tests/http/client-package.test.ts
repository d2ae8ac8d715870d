/**
 * The typed client package `clients/typescript/` (P170): its committed document, types and compiled files are
 * exactly what `npm run client:generate` makes from the `/openapi.json` this service serves (no drift); it packs
 * with its compiled files; and against the service it sends the token, an `Idempotency-Key` (a retry is
 * replayed), an `If-Match` from a read's `ETag` (a stale one is 409 as an `ApiError` in the error model), and
 * pages through a find.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  allRows,
  allRowsByCursor,
  ApiError,
  createSellerOpsClient,
  idempotencyKey,
  ifMatch,
  ok,
  type SellerOpsClient,
} from '@seller-ops/client';
import { buildTestApp, type TestApp } from '../helpers/test-app.ts';
import { createAccount, type TestAccount } from '../helpers/factories.ts';
import { CLIENT_DIRECTORY, committedClient, renderClient } from '../../scripts/client-generate.ts';

const run = promisify(execFile);

let t: TestApp;
let account: TestAccount;
let api: SellerOpsClient;
beforeAll(async () => {
  t = await buildTestApp({}, undefined, { workers: false });
  account = await createAccount(t.runtime);
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = t.app.server.address() as { port: number };
  api = createSellerOpsClient({ baseUrl: `http://127.0.0.1:${port}/`, token: account.writeToken });
});
afterAll(async () => {
  await t.close();
});

describe('clients/typescript', () => {
  it('is what npm run client:generate makes from the served /openapi.json', async () => {
    const rendered = await renderClient((await t.app.inject('/openapi.json')).body);
    const committed = await committedClient();
    expect([...committed.keys()].sort(), 'run npm run client:generate').toEqual([...rendered.keys()].sort());
    for (const [name, text] of rendered)
      expect(committed.get(name) === text, `${name} differs: run npm run client:generate`).toBe(true);
  }, 120_000);

  it('packs with its compiled files, types and document', async () => {
    const { stdout } = await run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
      cwd: CLIENT_DIRECTORY,
    });
    const [packed] = JSON.parse(stdout) as Array<{ files: Array<{ path: string }> }>;
    expect(packed!.files.map((file) => file.path).sort()).toEqual(
      expect.arrayContaining([
        'dist/index.d.ts',
        'dist/index.js',
        'dist/schema.d.ts',
        'openapi.json',
        'package.json',
        'src/index.ts',
        'src/schema.ts',
      ]),
    );
  });

  it('creates once per idempotency key, changes with If-Match, refuses a stale one as an ApiError', async () => {
    const key = idempotencyKey();
    const body = { organizationId: account.organizationId, type: 'INCOME' as const, name: 'Typed client' };
    const created = await api.POST('/api/inbound/', { body, headers: key });
    const replayed = await api.POST('/api/inbound/', { body, headers: key });
    expect(created.response.status).toBe(200);
    expect(replayed.response.headers.get('idempotent-replayed')).toBe('true');
    expect(replayed.data?.id).toBe(created.data?.id);
    const orderId = created.data!.id;
    expect(typeof orderId).toBe('number');

    const read = await api.GET('/api/inbound/{orderId}', { params: { path: { orderId } } });
    const changed = await ok(
      api.PATCH('/api/inbound/', {
        body: { id: orderId, comment: 'checked' },
        headers: ifMatch(read.response),
      }),
    );
    expect(changed).toMatchObject({ id: orderId, comment: 'checked', versionId: read.data!.versionId + 1 });

    const stale = ok(
      api.PATCH('/api/inbound/', { body: { id: orderId, comment: 'late' }, headers: ifMatch(read.response) }),
    );
    await expect(stale).rejects.toBeInstanceOf(ApiError);
    await expect(stale).rejects.toMatchObject({ status: 409, body: { error: 'error_version_conflict' } });
  });

  it('pages through a find with allRows', async () => {
    const names = ['Alpha', 'Beta', 'Gamma', 'Delta', 'Epsilon'].map((name) => `Paged ${name} ${Date.now()}`);
    for (const name of names) await ok(api.POST('/api/brand', { body: { name } }));
    const rows = [];
    for await (const row of allRows(
      (page) => ok(api.GET('/api/brand/find', { params: { query: { query: 'Paged', limit: 2, page } } })),
      2,
    ))
      rows.push(row.name);
    expect(rows.sort()).toEqual([...names].sort());
  });

  it('pages through a find by cursor with allRowsByCursor, past rows added meanwhile', async () => {
    const created: number[] = [];
    const create = async (name: string) => {
      const order = await ok(
        api.POST('/api/inbound/', { body: { organizationId: account.organizationId, type: 'INCOME', name } }),
      );
      created.push(order.id);
    };
    for (let index = 0; index < 5; index += 1) await create(`Cursor walk ${index}`);
    const ids: number[] = [];
    for await (const row of allRowsByCursor((cursor) =>
      ok(api.GET('/api/inbound/find', { params: { query: { limit: 2, cursor, query: 'Cursor walk' } } })),
    )) {
      ids.push(row.id);
      if (ids.length === 1) await create('Cursor walk, added while paging');
    }
    // Each row once; every row that existed throughout is read (the one added meanwhile, by the sort order).
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual(expect.arrayContaining(created.slice(0, 5)));
  });
});
