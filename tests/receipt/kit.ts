/**
 * Test kit of the receipt group: an app on a database of the file's own (every runtime with workers runs the
 * refresh jobs it finds; a database per file keeps other files' workers, with other settings, off these
 * receipts), both cash-register sandboxes on loopback with their control API, accounts configured for a sandbox
 * through the admin API, and receiving documents with catalog products.
 */
import { afterAll, beforeAll, expect } from 'vitest';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { buildTestApp, TEST_ADMIN_TOKEN, type TestApp } from '../helpers/test-app.ts';
import { createAccount, type TestAccount } from '../helpers/factories.ts';
import { createModel } from '../helpers/catalog.ts';
import { send } from '../helpers/http.ts';
import { createOwnDatabase, waitFor, type OwnDatabase } from '../fixtures/webhook-kit.ts';
import { startSandbox, type SandboxServer } from '../../src/connectors/sandboxes.ts';
import type { SandboxDocument } from '../../src/connectors/cash-register/sandbox-kit.ts';
import type { CashRegisterService } from '../../src/connectors/cash-register/connector.ts';
import type { Receipt } from '../../src/modules/receipt/schemas.ts';
import type { Order } from '../../src/modules/inbound/schemas.ts';
import type { RuntimeOptions } from '../../src/runtime.ts';

export type { Receipt };
export { waitFor };

/** Settings of every receipt test app: short provider time limit and refresh delays. */
export const RECEIPT_TEST_ENV: Record<string, string> = {
  CASH_REGISTER_TIMEOUT_MS: '1000',
  RECEIPT_REFRESH_SCHEDULE: '0.2,0.2,0.5',
  WEBHOOK_POLL_SECONDS: '1',
};

/** A sandbox with its control API (`sandbox-kit.ts`). */
export interface Sandbox {
  url: string;
  server: SandboxServer;
  /** `POST /__sandbox/faults`. */
  fault(fault: {
    mode: string;
    operations?: Array<'register' | 'status'>;
    count?: number;
    delayMs?: number;
    message?: string;
  }): Promise<void>;
  /** `DELETE /__sandbox/faults`. */
  clearFault(): Promise<void>;
  /** `POST /__sandbox/settings`. */
  settings(settings: { processingMs?: number; tokenTtlMs?: number }): Promise<void>;
  /** The receipts registered under our receipt id `receiptId` (its external id). */
  documents(receiptId: number): Promise<SandboxDocument[]>;
}

async function control(url: string, method: 'POST' | 'DELETE', path: string, body?: object): Promise<void> {
  const response = await fetch(`${url}${path}`, {
    method,
    ...(body && { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  expect(response.status, await response.clone().text()).toBe(200);
}

/** Starts the sandbox of `service` on a free loopback port, fiscalising in 100 ms. */
export async function startProviderSandbox(service: CashRegisterService): Promise<Sandbox> {
  const server = await startSandbox(service === 'CASH_REGISTER_A' ? 'cash-register-a' : 'cash-register-b');
  const sandbox: Sandbox = {
    url: server.url,
    server,
    fault: (fault) => control(server.url, 'POST', '/__sandbox/faults', fault),
    clearFault: () => control(server.url, 'DELETE', '/__sandbox/faults'),
    settings: (settings) => control(server.url, 'POST', '/__sandbox/settings', settings),
    documents: async (receiptId) => {
      const { receipts } = (await (await fetch(`${server.url}/__sandbox/receipts`)).json()) as {
        receipts: SandboxDocument[];
      };
      return receipts.filter((document) => document.externalId === String(receiptId));
    },
  };
  await sandbox.settings({ processingMs: 100 });
  return sandbox;
}

/** What `useReceiptApp` provides once its `beforeAll` ran. */
export interface ReceiptContext {
  t: TestApp;
  database: OwnDatabase;
  sandboxes: Record<CashRegisterService, Sandbox>;
}

/**
 * Builds this file's app on a database of its own with both sandboxes, and closes everything after the file.
 * @returns the context, filled in `beforeAll`
 */
export function useReceiptApp(
  env: Record<string, string> = {},
  options: RuntimeOptions = {},
): ReceiptContext {
  const context = {} as ReceiptContext;
  beforeAll(async () => {
    context.database = await createOwnDatabase('receipt');
    context.sandboxes = {
      CASH_REGISTER_A: await startProviderSandbox('CASH_REGISTER_A'),
      CASH_REGISTER_B: await startProviderSandbox('CASH_REGISTER_B'),
    };
    context.t = await buildTestApp({ ...RECEIPT_TEST_ENV, ...env }, context.database.url, options);
  });
  afterAll(async () => {
    await context.t?.close();
    for (const sandbox of Object.values(context.sandboxes ?? {})) await sandbox.server.close();
    await context.database?.drop();
  });
  return context;
}

/** The company details of every test organization's receipts (both providers' required ones). */
export const COMPANY_SETTINGS = {
  inn: '7700000000',
  email: 'receipts@example.com',
  paymentAddress: 'https://shop.example.com',
  taxationSystem: 'SIMPLIFIED_INCOME',
} as const;

/** Sets an organization's cash register through the admin API (D1.4); returns the settings it answers. */
export async function configureCashRegister(
  app: FastifyInstance,
  organizationId: number,
  settings: {
    service: CashRegisterService;
    baseUrl?: string;
    login?: string;
    password?: string;
    groupCode?: string;
    inn?: string | null;
    email?: string | null;
    paymentAddress?: string | null;
    taxationSystem?: string | null;
  },
): Promise<Record<string, unknown>> {
  const response = await app.inject({
    method: 'POST',
    url: `/admin/organizations/${organizationId}/cash-register`,
    headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
    payload: { ...COMPANY_SETTINGS, login: 'shop', password: 'any-password', ...settings },
  });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<Record<string, unknown>>();
}

/** A fresh account whose organization uses the sandbox of `service`. */
export async function receiptAccount(
  context: ReceiptContext,
  service: CashRegisterService,
): Promise<TestAccount> {
  const account = await createAccount(context.t.runtime);
  await configureCashRegister(context.t.app, account.organizationId, {
    service,
    baseUrl: context.sandboxes[service].url,
    login: `shop-${account.clientId}`,
  });
  return account;
}

/** A position of a document to create: quantity, price and an optional snapshot name. */
export interface PositionInput {
  quantity: number;
  price: number;
  name?: string;
}

/** Creates a receiving document with one catalog product per position (P15); returns it. */
export async function createDocument(
  app: FastifyInstance,
  account: TestAccount,
  positions: PositionInput[] = [{ quantity: 3, price: 33.33 }],
): Promise<Order> {
  const sizes = positions.map((_, index) => `S${index}`);
  const model = await createModel(app, account, ['black'], sizes);
  const products = model.views[0]?.sizes ?? [];
  const response = await send(app, account.writeToken, {
    method: 'POST',
    url: '/api/inbound/',
    payload: {
      organizationId: account.organizationId,
      type: 'INCOME',
      name: 'Receiving for a receipt',
      products: positions.map((position, index) => ({
        productId: products[index]?.id,
        quantity: position.quantity,
        price: position.price,
        ...(position.name !== undefined && { product: { name: position.name } }),
      })),
    },
  });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<Order>();
}

/** `POST /api/receipt/order/{orderId}` with an optional `type`. */
export function createReceipt(
  app: FastifyInstance,
  token: string | undefined,
  orderId: number,
  type?: string,
): Promise<LightMyRequestResponse> {
  return send(app, token, {
    method: 'POST',
    url: `/api/receipt/order/${orderId}`,
    ...(type !== undefined && { query: { type } }),
  });
}

/** Creates a receipt, expecting success; returns it. */
export async function newReceipt(
  app: FastifyInstance,
  token: string,
  orderId: number,
  type?: string,
): Promise<Receipt> {
  const response = await createReceipt(app, token, orderId, type);
  expect(response.statusCode, response.body).toBe(200);
  return response.json<Receipt>();
}

/** `GET /api/receipt/{receiptId}/update`. */
export function updateReceipt(app: FastifyInstance, token: string, receiptId: number) {
  return send(app, token, { method: 'GET', url: `/api/receipt/${receiptId}/update` });
}

/** `GET /api/receipt/{receiptId}`, expecting success. */
export async function getReceipt(app: FastifyInstance, token: string, receiptId: number): Promise<Receipt> {
  const response = await send(app, token, { method: 'GET', url: `/api/receipt/${receiptId}` });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<Receipt>();
}

/** Refreshes a receipt through `GET …/update` until `predicate` holds for it; returns it. */
export async function updateUntil(
  app: FastifyInstance,
  token: string,
  receiptId: number,
  predicate: (receipt: Receipt) => boolean,
): Promise<Receipt> {
  let last: Receipt | undefined;
  await waitFor(`receipt ${receiptId} to change`, async () => {
    const response = await updateReceipt(app, token, receiptId);
    if (response.statusCode !== 200) return false;
    last = response.json<Receipt>();
    return predicate(last);
  });
  return last as Receipt;
}

/** Waits until the stored receipt (read without refreshing) satisfies `predicate`; returns it. */
export async function storedUntil(
  app: FastifyInstance,
  token: string,
  receiptId: number,
  predicate: (receipt: Receipt) => boolean,
): Promise<Receipt> {
  let last: Receipt | undefined;
  await waitFor(`stored receipt ${receiptId}`, async () => {
    last = await getReceipt(app, token, receiptId);
    return predicate(last);
  });
  return last as Receipt;
}
