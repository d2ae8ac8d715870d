/**
 * What the providers do wrong, and how receipts survive it (D8.2, D8.3, P74–P76), through HTTP against both
 * sandboxes: a refused registration (FAILED), a failed or cancelled fiscalisation, a time-out and a 5xx while
 * registering (the receipt stays CREATED, never FAILED by guess, and a resend with the same external id is
 * fiscalised once), an unavailable provider on update (503, the receipt kept), refused credentials, and provider
 * A's token expiry (renewed and the call retried once). No background workers: each step is an operation.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { expectError } from '../helpers/http.ts';
import {
  COMPANY_SETTINGS,
  configureCashRegister,
  createDocument,
  createReceipt,
  newReceipt,
  receiptAccount,
  updateReceipt,
  updateUntil,
  useReceiptApp,
  type Receipt,
} from './kit.ts';
import { CASH_REGISTER_SERVICES } from '../../src/connectors/cash-register/connector.ts';

const context = useReceiptApp({}, { workers: false });
const app = () => context.t.app;
const settled = (receipt: Receipt) => !['CREATED', 'PENDING'].includes(receipt.status);

afterEach(async () => {
  for (const sandbox of Object.values(context.sandboxes)) await sandbox.clearFault();
});

describe.each(CASH_REGISTER_SERVICES)('faults of %s', (service) => {
  const sandbox = () => context.sandboxes[service];

  it('fails a receipt the provider refuses, and allows a new one', async () => {
    const account = await receiptAccount(context, service);
    const order = await createDocument(app(), account);
    await sandbox().fault({ mode: 'reject', count: 1, message: 'INN of the seller is not registered' });
    const refused = await newReceipt(app(), account.writeToken, order.id);
    expect(refused).toMatchObject({
      status: 'FAILED',
      errorMessage: 'INN of the seller is not registered',
      completedDate: null,
      fiscalNumber: null,
    });
    expect(await sandbox().documents(refused.id)).toEqual([]);
    // Settled: an update does not ask the provider again.
    expect((await updateReceipt(app(), account.readToken, refused.id)).json()).toEqual(refused);
    const again = await newReceipt(app(), account.writeToken, order.id);
    expect(again.status).toBe('PENDING');
  });

  it('fails a receipt whose fiscalisation fails after it was accepted', async () => {
    const account = await receiptAccount(context, service);
    const order = await createDocument(app(), account);
    await sandbox().fault({
      mode: 'fail',
      operations: ['register'],
      count: 1,
      message: 'fiscal storage is full',
    });
    const accepted = await newReceipt(app(), account.writeToken, order.id);
    expect(accepted.status).toBe('PENDING');
    const failed = await updateUntil(app(), account.readToken, accepted.id, settled);
    expect(failed).toMatchObject({
      status: 'FAILED',
      errorMessage: 'fiscal storage is full',
      fiscalNumber: null,
    });
    expect(failed.providerStatus).toBe(service === 'CASH_REGISTER_A' ? 'fail' : 'Error');
  });

  it('keeps a receipt CREATED when registration times out, and resends it without a second fiscalisation', async () => {
    const account = await receiptAccount(context, service);
    const order = await createDocument(app(), account);
    await sandbox().fault({ mode: 'timeout', operations: ['register'], count: 1 });
    const created = await newReceipt(app(), account.writeToken, order.id);
    expect(created).toMatchObject({ status: 'CREATED', externalReceiptId: null });
    expect(created.errorMessage).toMatch(/timeout/);
    // The provider did register it before its answer was lost.
    expect((await sandbox().documents(created.id)).map((document) => document.registrations)).toEqual([1]);

    const done = await updateUntil(app(), account.readToken, created.id, settled);
    expect(done).toMatchObject({ status: 'COMPLETED', errorMessage: null });
    const documents = await sandbox().documents(created.id);
    expect(documents).toHaveLength(1);
    expect(documents[0]).toMatchObject({ registrations: 2, fiscalisations: 1, id: done.externalReceiptId });
  });

  it('keeps a receipt CREATED on a 5xx, then sends it', async () => {
    const account = await receiptAccount(context, service);
    const order = await createDocument(app(), account);
    await sandbox().fault({ mode: 'error5xx', operations: ['register'], count: 1 });
    const created = await newReceipt(app(), account.writeToken, order.id);
    expect(created).toMatchObject({ status: 'CREATED', errorMessage: 'the provider answered HTTP 503' });
    expect(await sandbox().documents(created.id)).toEqual([]);
    const done = await updateUntil(app(), account.readToken, created.id, settled);
    expect(done.status).toBe('COMPLETED');
    expect(await sandbox().documents(created.id)).toMatchObject([{ registrations: 1, fiscalisations: 1 }]);
  });

  it('answers 503 on update while the provider is unavailable, keeping the receipt', async () => {
    const account = await receiptAccount(context, service);
    const order = await createDocument(app(), account);
    const pending = await newReceipt(app(), account.writeToken, order.id);
    expect(pending.status).toBe('PENDING');
    for (const mode of ['error5xx', 'timeout']) {
      await sandbox().fault({ mode, operations: ['status'], count: 1 });
      const response = await updateReceipt(app(), account.readToken, pending.id);
      expectError(response, 503, 'error_cash_register_unavailable', {
        id: String(pending.id),
        status: 'PENDING',
      });
      expect(response.headers['retry-after']).toBe('5');
    }
    const done = await updateUntil(app(), account.readToken, pending.id, settled);
    expect(done).toMatchObject({ status: 'COMPLETED', errorMessage: null });
  });

  it('keeps a receipt CREATED while the provider refuses the credentials, and sends it once they are accepted', async () => {
    const account = await receiptAccount(context, service);
    const order = await createDocument(app(), account);
    // The sandbox accepts any login and password; its `credentials` fault refuses them as the provider does.
    await sandbox().fault({ mode: 'credentials' });
    const created = await newReceipt(app(), account.writeToken, order.id);
    expect(created.status).toBe('CREATED');
    expect(created.errorMessage).toMatch(/401/);
    expect(await sandbox().documents(created.id)).toEqual([]);
    expectError(
      await updateReceipt(app(), account.readToken, created.id),
      400,
      'error_cash_register_credentials_refused',
      {
        id: String(created.id),
        organizationId: account.organizationId,
        cashRegisterService: service,
      },
    );
    await sandbox().clearFault();
    expect((await updateUntil(app(), account.readToken, created.id, settled)).status).toBe('COMPLETED');
  });
});

describe('provider specifics', () => {
  it('cancels a receipt provider B cancels', async () => {
    const account = await receiptAccount(context, 'CASH_REGISTER_B');
    const order = await createDocument(app(), account);
    await context.sandboxes.CASH_REGISTER_B.fault({
      mode: 'cancel',
      operations: ['register'],
      count: 1,
      message: 'cancelled by the operator',
    });
    const accepted = await newReceipt(app(), account.writeToken, order.id);
    const cancelled = await updateUntil(app(), account.readToken, accepted.id, settled);
    expect(cancelled).toMatchObject({
      status: 'CANCELLED',
      providerStatus: 'Cancelled',
      errorMessage: 'cancelled by the operator',
      completedDate: null,
    });
  });

  it('renews an expired provider A token and retries the call once', async () => {
    const sandbox = context.sandboxes.CASH_REGISTER_A;
    const tokens = async () =>
      (await (await fetch(`${sandbox.url}/__sandbox/tokens`)).json()) as { issued: number; refused: number };
    const account = await receiptAccount(context, 'CASH_REGISTER_A');
    const order = await createDocument(app(), account);
    const other = await createDocument(app(), account);
    await sandbox.settings({ tokenTtlMs: 300 });
    try {
      const before = await tokens();
      expect((await newReceipt(app(), account.writeToken, order.id)).status).toBe('PENDING');
      const issued = await tokens();
      expect(issued.issued).toBe(before.issued + 1);
      await new Promise((resolve) => setTimeout(resolve, 400));
      // The cached token expired: refused once (error 11), renewed, and the registration sent again.
      expect((await newReceipt(app(), account.writeToken, other.id)).status).toBe('PENDING');
      expect(await tokens()).toEqual({ issued: issued.issued + 1, refused: issued.refused + 1 });
    } finally {
      await sandbox.settings({ tokenTtlMs: 24 * 60 * 60 * 1000 });
    }
  });

  it('sends nothing while settings saved before the company details lack one, naming it, and resumes once complete', async () => {
    const account = await receiptAccount(context, 'CASH_REGISTER_A');
    const order = await createDocument(app(), account);
    const pending = await newReceipt(app(), account.writeToken, order.id, 'EXPENSE');
    // As a row saved before migration 0020 would be.
    await context.t.runtime.database.db
      .updateTable('cash_register_setting')
      .set({ company_email: null })
      .where('client_id', '=', account.clientId)
      .where('organization_id', '=', account.organizationId)
      .execute();
    expectError(
      await createReceipt(app(), account.writeToken, order.id),
      400,
      'error_cash_register_not_configured',
      {
        organizationId: account.organizationId,
        missing: 'email',
      },
    );
    expectError(
      await updateReceipt(app(), account.readToken, pending.id),
      400,
      'error_cash_register_not_configured',
      {
        missing: 'email',
      },
    );
    await configureCashRegister(app(), account.organizationId, {
      service: 'CASH_REGISTER_A',
      baseUrl: context.sandboxes.CASH_REGISTER_A.url,
      login: `shop-${account.clientId}`,
    });
    expect((await updateUntil(app(), account.readToken, pending.id, settled)).status).toBe('COMPLETED');
  });

  it('sends provider A receipts to the organization’s group code, the login when unset', async () => {
    const sandbox = context.sandboxes.CASH_REGISTER_A;
    const account = await receiptAccount(context, 'CASH_REGISTER_A');
    const order = await createDocument(app(), account);
    const first = await newReceipt(app(), account.writeToken, order.id, 'EXPENSE');
    const settings = await configureCashRegister(app(), account.organizationId, {
      service: 'CASH_REGISTER_A',
      baseUrl: sandbox.url,
      login: 'shop',
      groupCode: 'shop-group-7',
    });
    expect(settings).toEqual({
      organizationId: account.organizationId,
      service: 'CASH_REGISTER_A',
      login: 'shop',
      baseUrl: sandbox.url,
      groupCode: 'shop-group-7',
      ...COMPANY_SETTINGS,
    });
    const second = await newReceipt(app(), account.writeToken, order.id);
    expect((await sandbox.documents(first.id))[0]?.account).toBe(
      `shop-${account.clientId}/shop-${account.clientId}`,
    );
    expect((await sandbox.documents(second.id))[0]?.account).toBe('shop/shop-group-7');
    expect((await updateUntil(app(), account.readToken, second.id, settled)).status).toBe('COMPLETED');
  });
});
