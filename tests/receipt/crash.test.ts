/**
 * A SIGKILL between our commit and the provider's answer (D8.3, P75, P76): a real service process commits a
 * receipt and sends it to provider A's sandbox, which registers it but holds its answer; the process is killed;
 * another process's refresh job then sends the receipt again with the same external id and completes it, and
 * the sandbox fiscalised it exactly once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/test-app.ts';
import { createAccount } from '../helpers/factories.ts';
import {
  spawnService,
  stopService,
  waitUntilReady,
  type ServiceProcess,
} from '../helpers/service-process.ts';
import { createOwnDatabase, type OwnDatabase } from '../fixtures/webhook-kit.ts';
import {
  configureCashRegister,
  createDocument,
  RECEIPT_TEST_ENV,
  startProviderSandbox,
  storedUntil,
  waitFor,
  type Sandbox,
} from './kit.ts';

let database: OwnDatabase;
let sandbox: Sandbox;
let setup: TestApp;
let recovery: TestApp | undefined;
let service: ServiceProcess | undefined;

beforeAll(async () => {
  database = await createOwnDatabase('receipt_crash');
  sandbox = await startProviderSandbox('CASH_REGISTER_A');
  setup = await buildTestApp(RECEIPT_TEST_ENV, database.url, { workers: false });
});
afterAll(async () => {
  if (service) await stopService(service);
  await recovery?.close();
  await setup?.close();
  await sandbox?.server.close();
  await database?.drop();
});

describe('a receipt across a SIGKILL', () => {
  it('is recovered by the refresh job of another process without a second fiscalisation', async () => {
    const account = await createAccount(setup.runtime);
    await configureCashRegister(setup.app, account.organizationId, {
      service: 'CASH_REGISTER_A',
      baseUrl: sandbox.url,
    });
    const order = await createDocument(setup.app, account);
    const db = setup.runtime.database.db;

    // The first refresh is due 3 s after the commit: the killed process never gets to run it.
    service = await spawnService({
      DATABASE_URL: database.url,
      SEED_DEMO: 'false',
      CASH_REGISTER_TIMEOUT_MS: '30000',
      RECEIPT_REFRESH_SCHEDULE: '3',
      WEBHOOK_POLL_SECONDS: '1',
    });
    await waitUntilReady(service);
    await sandbox.fault({ mode: 'delay', operations: ['register'], count: 1, delayMs: 60_000 });
    const request = fetch(`${service.url}/api/receipt/order/${order.id}`, {
      method: 'POST',
      headers: { authorization: account.writeToken },
    }).then(
      (response) => response.status,
      () => 'no answer' as const,
    );
    let receiptId = 0;
    await waitFor('the receipt committed and registered by the provider', async () => {
      const row = await db
        .selectFrom('receipt')
        .select('id')
        .where('client_id', '=', account.clientId)
        .where('order_id', '=', order.id)
        .executeTakeFirst();
      receiptId = row?.id ?? 0;
      return receiptId > 0 && (await sandbox.documents(receiptId)).length === 1;
    });
    service.child.kill('SIGKILL');
    await service.exited;
    service = undefined;
    expect(await request).toBe('no answer');
    const orphan = await db
      .selectFrom('receipt')
      .select(['status', 'external_receipt_id'])
      .where('client_id', '=', account.clientId)
      .where('id', '=', receiptId)
      .executeTakeFirstOrThrow();
    expect(orphan).toEqual({ status: 'CREATED', external_receipt_id: null });

    recovery = await buildTestApp(RECEIPT_TEST_ENV, database.url);
    const done = await storedUntil(
      recovery.app,
      account.readToken,
      receiptId,
      (receipt) => receipt.status === 'COMPLETED',
    );
    expect(done.fiscalNumber).toMatch(/^\d+$/);
    const documents = await sandbox.documents(receiptId);
    expect(documents).toHaveLength(1);
    expect(documents[0]).toMatchObject({ registrations: 2, fiscalisations: 1, id: done.externalReceiptId });
  });
});
