/**
 * Backup and restore end to end (docs/operations.md "Backup and restore"): every group is filled through the API
 * on a database of its own, `seller-ops backup` runs while tags keep being written, `seller-ops restore` loads
 * the archive into an empty target of this run's kind (a fresh data directory on the embedded default, a fresh
 * database on the server PostgreSQL), and a real service started on it answers as the original did for
 * everything acknowledged before the snapshot: the same documents, products and history, catalog, keyword
 * groups, tags, receipts, webhooks and deliveries, tasks and their files, with the same tokens; its sealed
 * cash-register password, Market1 key and webhook secret open again.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { buildTestApp, TEST_SECRET_KEY, type TestApp } from '../helpers/test-app.ts';
import { createAccount, type TestAccount } from '../helpers/factories.ts';
import { send } from '../helpers/http.ts';
import { setStatus } from '../helpers/inbound.ts';
import { waitForTask, waitForTaskAt } from '../helpers/tasks.ts';
import {
  spawnService,
  stopService,
  waitUntilReady,
  type ServiceProcess,
} from '../helpers/service-process.ts';
import {
  configureCashRegister,
  createDocument,
  newReceipt,
  startProviderSandbox,
  storedUntil,
  RECEIPT_TEST_ENV,
  type Sandbox,
} from '../receipt/kit.ts';
import { CAMPAIGN_TEST_ENV, prepareIntegration, startCampaignSandbox } from '../campaign/kit.ts';
import { seedCampaigns, startExport } from '../campaign/export-kit.ts';
import {
  createOwnDatabase,
  startReceiver,
  WEBHOOK_TEST_ENV,
  type OwnDatabase,
  type Receiver,
} from '../fixtures/webhook-kit.ts';
import { emptyRestoreTarget, runCli, temporaryDirectory, type RestoreTarget } from './kit.ts';

const SERVICE_ENV = { ...RECEIPT_TEST_ENV, ...CAMPAIGN_TEST_ENV, ...WEBHOOK_TEST_ENV };

let source: OwnDatabase;
let t: TestApp;
let cashRegister: Sandbox;
let market1: Awaited<ReturnType<typeof startCampaignSandbox>>;
let receiver: Receiver;
let target: RestoreTarget | undefined;
let restored: ServiceProcess | undefined;
let archiveDir: Awaited<ReturnType<typeof temporaryDirectory>>;

beforeAll(async () => {
  source = await createOwnDatabase('backup_source');
  cashRegister = await startProviderSandbox('CASH_REGISTER_A');
  market1 = await startCampaignSandbox();
  receiver = await startReceiver();
  archiveDir = await temporaryDirectory('archives');
  t = await buildTestApp(SERVICE_ENV, source.url);
});

afterAll(async () => {
  if (restored) await stopService(restored);
  await target?.cleanup();
  await t?.close();
  await receiver?.close();
  await market1?.close();
  await cashRegister?.server.close();
  await source?.drop();
  await archiveDir?.cleanup();
});

/** An answer of the API: status and body as text. */
type Answer = { status: number; body: string };

/** What the original service holds for `account`, read through GETs that every group answers. */
function readPaths(ids: {
  orderId: number;
  modelId: number;
  keywordGroupId: number;
  receiptId: number;
  webhookId: number;
  taskId: number;
}): string[] {
  return [
    `/api/inbound/${ids.orderId}`,
    `/api/inbound/${ids.orderId}/history`,
    `/api/inbound/getOrderPackage?orderId=${ids.orderId}`,
    `/api/inbound/find`,
    `/api/model/${ids.modelId}`,
    `/api/product/find`,
    `/api/brand/find`,
    `/api/category/find`,
    `/api/keyword/group/${ids.keywordGroupId}`,
    `/api/keyword/group`,
    `/api/receipt/${ids.receiptId}`,
    `/api/webhook/`,
    `/api/webhook/${ids.webhookId}/deliveries`,
    `/api/task/getTask?id=${ids.taskId}`,
    `/api/task/${ids.taskId}/file`,
  ];
}

async function sourceAnswer(token: string, url: string): Promise<Answer> {
  const response = await send(t.app, token, { method: 'GET', url });
  return { status: response.statusCode, body: response.rawPayload.toString('base64') };
}

async function restoredAnswer(token: string, url: string): Promise<Answer> {
  const response = await fetch(`${restored?.url}${url}`, { headers: { authorization: token } });
  return { status: response.status, body: Buffer.from(await response.arrayBuffer()).toString('base64') };
}

/** Names of the account's tags, in creation order (every page). */
async function tagNames(read: (url: string) => Promise<Answer>): Promise<string[]> {
  const names: string[] = [];
  for (let page = 1; ; page++) {
    const answer = await read(`/api/tag?sortBy=ID&ascending=true&limit=500&page=${page}`);
    expect(answer.status).toBe(200);
    const { rows } = JSON.parse(Buffer.from(answer.body, 'base64').toString('utf8')) as {
      rows: Array<{ name: string }>;
    };
    names.push(...rows.map((tag) => tag.name));
    if (rows.length < 500) return names;
  }
}

/** Fills every group for `account`; returns the ids the comparison reads and the webhook's secret. */
async function fillEveryGroup(account: TestAccount) {
  const ok = async <T>(method: 'POST' | 'PUT', url: string, payload: unknown): Promise<T> => {
    const response = await send(t.app, account.writeToken, { method, url, payload });
    expect(response.statusCode, response.body).toBe(200);
    return response.json<T>();
  };
  const webhook = await ok<{ id: number; secret: string }>('POST', '/api/webhook/', {
    name: 'backup',
    url: receiver.url,
    organizationId: account.organizationId,
    types: ['CREATE_ORDER'],
  });
  await configureCashRegister(t.app, account.organizationId, {
    service: 'CASH_REGISTER_A',
    baseUrl: cashRegister.url,
    login: `shop-${account.clientId}`,
  });
  const apiKey = `backup-key-${account.clientId}`;
  await prepareIntegration(t.app, account.organizationId, { apiKey, baseUrl: market1.url });

  const order = await createDocument(t.app, account, [
    { quantity: 2, price: 10.5 },
    { quantity: 1, price: 99.99, name: 'Vase' },
  ]);
  await setStatus(t.app, account.writeToken, order.id, 'ORDER_CREATED');
  const receipt = await newReceipt(t.app, account.writeToken, order.id);
  await storedUntil(t.app, account.readToken, receipt.id, (stored) => stored.status === 'COMPLETED');
  const keywordGroup = await ok<{ id: number }>('POST', '/api/keyword/group?groupName=Winter', [
    'coat',
    'scarf',
  ]);
  await ok('POST', '/api/tag', { name: 'before-0' });
  await seedCampaigns(t.runtime.database.db, account, [
    {
      externalId: 701,
      name: 'Coats',
      days: {
        '2026-01-01': [
          { product: 1, views: 100, clicks: 5, expenses: '10.50', orders: 1, ordersAmount: '99.00' },
        ],
      },
    },
  ]);
  const task = await startExport(t.app, account.writeToken, {
    service: 'SERVICE_01',
    organizationId: account.organizationId,
    filter: { dateFrom: '2026-01-01', dateTo: '2026-01-01' },
  });
  const finished = await waitForTask(t.app, account.readToken, task.id, ['FINISHED', 'ERROR', 'INTERRUPTED']);
  expect(finished.status, finished.message ?? '').toBe('FINISHED');
  await receiver.until((requests) => requests.length >= 1);
  await expect
    .poll(async () => {
      const answer = await send(t.app, account.readToken, {
        method: 'GET',
        url: `/api/webhook/${webhook.id}/deliveries`,
      });
      return answer.json<{ rows: Array<{ status: string }> }>().rows.map((row) => row.status);
    })
    .toEqual(['DELIVERED']);
  const products = await send(t.app, account.readToken, { method: 'GET', url: '/api/product/find' });
  const modelId = products.json<{ rows: Array<{ modelId: number }> }>().rows[0]?.modelId ?? 0;
  return {
    ids: {
      orderId: order.id,
      modelId,
      keywordGroupId: keywordGroup.id,
      receiptId: receipt.id,
      webhookId: webhook.id,
      taskId: task.id,
    },
    webhookSecret: webhook.secret,
    apiKey,
  };
}

describe('seller-ops backup and restore', () => {
  it('restores every group as acknowledged before the snapshot, taken while writes continue', async () => {
    const account = await createAccount(t.runtime);
    const { ids, webhookSecret } = await fillEveryGroup(account);
    const paths = readPaths(ids);
    const before = await Promise.all(paths.map((url) => sourceAnswer(account.readToken, url)));
    for (const [index, answer] of before.entries()) expect(answer.status, paths[index]).toBe(200);

    // Tags are written one after another while the backup runs: a consistent snapshot holds a prefix of them.
    let writing = true;
    const written: string[] = [];
    const writes = (async () => {
      for (let index = 1; writing; index++) {
        const response = await send(t.app, account.writeToken, {
          method: 'POST',
          url: '/api/tag',
          payload: { name: `during-${index}` },
        });
        expect(response.statusCode, response.body).toBe(200);
        written.push(`during-${index}`);
      }
    })();
    while (written.length < 3) await new Promise((resolve) => setTimeout(resolve, 10));
    const acknowledgedBefore = written.length;
    const archive = path.join(archiveDir.path, 'round-trip.tar.gz');
    const backup = await runCli(['backup', '--out', archive], {
      DATABASE_URL: source.url,
      SECRET_KEY: TEST_SECRET_KEY,
    });
    const acknowledgedAfter = written.length;
    writing = false;
    await writes;
    expect(backup.code, backup.stderr).toBe(0);
    expect(backup.stderr).toMatch(/backup: inbound_order: \d+ rows/);
    expect(backup.stderr).toContain(`written to ${archive}`);

    target = await emptyRestoreTarget();
    const restore = await runCli(['restore', archive], { ...target.env, SECRET_KEY: '' });
    expect(restore.code, restore.stderr).toBe(0);
    expect(restore.stderr).toContain('restore: done');
    expect(await readFile(path.join(target.env.DATA_DIR ?? '', 'secret-key'), 'utf8')).toBe(
      `${Buffer.from(TEST_SECRET_KEY, 'hex').toString('base64')}\n`,
    );

    restored = await spawnService({ ...SERVICE_ENV, ...target.env, SECRET_KEY: '', SEED_DEMO: 'false' });
    await waitUntilReady(restored);
    const after = await Promise.all(paths.map((url) => restoredAnswer(account.readToken, url)));
    for (const [index, url] of paths.entries()) expect(after[index], url).toEqual(before[index]);

    const restoredTags = await tagNames((url) => restoredAnswer(account.readToken, url));
    expect(restoredTags.slice(0, 1 + acknowledgedBefore)).toEqual([
      'before-0',
      ...written.slice(0, acknowledgedBefore),
    ]);
    expect(restoredTags).toEqual(['before-0', ...written.slice(0, restoredTags.length - 1)]);
    expect(restoredTags.length - 1).toBeLessThanOrEqual(acknowledgedAfter);

    // The sealed secrets open: a new document is announced to the webhook with the same secret, its receipt is
    // fiscalised with the stored cash-register password, and a campaign import reaches Market1 with the stored key.
    const call = async <T>(method: string, url: string, payload?: unknown): Promise<T> => {
      const response = await fetch(`${restored?.url}${url}`, {
        method,
        headers: { authorization: account.writeToken, 'content-type': 'application/json' },
        body: payload === undefined ? undefined : JSON.stringify(payload),
      });
      const text = await response.text();
      expect(response.status, text).toBe(200);
      return JSON.parse(text) as T;
    };
    const order = await call<{ id: number; products: Array<{ productId: number }> }>(
      'GET',
      `/api/inbound/${ids.orderId}`,
    );
    const created = await call<{ id: number }>('POST', '/api/inbound/', {
      organizationId: account.organizationId,
      type: 'INCOME',
      name: 'After the restore',
      products: [{ productId: order.products[0]?.productId, quantity: 1, price: 5 }],
    });
    await receiver.until((requests) => requests.length >= 2);
    const announced = receiver.requests[1];
    expect(new Webhook(webhookSecret).verify(announced?.body ?? '', announced?.headers ?? {})).toMatchObject({
      id: created.id,
    });
    const receipt = await call<{ id: number }>('POST', `/api/receipt/order/${created.id}`);
    await expect
      .poll(async () => (await call<{ status: string }>('GET', `/api/receipt/${receipt.id}`)).status, {
        timeout: 20_000,
      })
      .toBe('COMPLETED');
    const importTask = await call<{ id: number }>(
      'GET',
      `/api/campaign/updateCampaigns?organizationId=${account.organizationId}&service=SERVICE_01`,
    );
    const imported = await waitForTaskAt(restored.url, account.readToken, importTask.id, [
      'FINISHED',
      'ERROR',
      'INTERRUPTED',
    ]);
    expect(imported.status, imported.message ?? '').toBe('FINISHED');
  }, 240_000);
});
