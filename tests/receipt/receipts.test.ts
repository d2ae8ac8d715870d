/**
 * Fiscal receipts through HTTP against both providers' sandboxes (spec §4.3, D8, P70–P79): the four operations,
 * the life cycle CREATED → PENDING → COMPLETED, exact amounts and the lines each provider receives, the rules of
 * D8.2 (one live receipt per type, refunds need a completed receipt), the errors of a document without a cash
 * register, deleted, empty or free, roles and tenancy. No background workers here: states move only through
 * the operations.
 */
import { describe, expect, it } from 'vitest';
import { createAccount } from '../helpers/factories.ts';
import { expectError, expectNotFound, expectValidation, MISSING_ID, send } from '../helpers/http.ts';
import {
  configureCashRegister,
  createDocument,
  createReceipt,
  getReceipt,
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
const completed = (receipt: Receipt) => receipt.status === 'COMPLETED';

describe.each(CASH_REGISTER_SERVICES)('receipts with %s', (service) => {
  it('creates an INCOME receipt (the default type), sends it and completes it on update', async () => {
    const account = await receiptAccount(context, service);
    const order = await createDocument(app(), account, [
      { quantity: 3, price: 33.33, name: 'Mug, white, 300 ml' },
      { quantity: 2, price: 0.01 },
      { quantity: 7, price: 249.9 },
    ]);
    const created = await newReceipt(app(), account.writeToken, order.id);
    expect(created).toMatchObject({
      clientId: account.clientId,
      orderId: order.id,
      organizationId: account.organizationId,
      cashRegisterService: service,
      status: 'PENDING',
      receiptType: 'INCOME',
      // 99.99 + 0.02 + 1749.30, exact to the kopeck
      totalAmount: 1849.31,
      fiscalNumber: null,
      fnsUrl: null,
      completedDate: null,
      errorMessage: null,
    });
    expect(created.externalReceiptId).toEqual(expect.any(String));
    expect(Object.keys(created).sort()).toEqual(
      [
        'id',
        'clientId',
        'orderId',
        'organizationId',
        'externalReceiptId',
        'fiscalNumber',
        'cashRegisterService',
        'fnsUrl',
        'status',
        'receiptType',
        'totalAmount',
        'createdDate',
        'completedDate',
        'errorMessage',
        'fiscalDocumentAttribute',
        'fiscalStorageNumber',
        'providerStatus',
      ].sort(),
    );

    const done = await updateUntil(app(), account.readToken, created.id, completed);
    expect(done.fiscalNumber).toMatch(/^\d+$/);
    expect(done.fiscalDocumentAttribute).toMatch(/^\d{1,10}$/);
    expect(done.fiscalStorageNumber).toMatch(/^\d{16}$/);
    expect(done.externalReceiptId).toBe(created.externalReceiptId);
    expect(Date.parse(done.completedDate ?? '')).toBeGreaterThanOrEqual(Date.parse(done.createdDate));
    // The tax-service URL is the sandbox's check page of this fiscal document.
    const check = await fetch(done.fnsUrl ?? '');
    expect(check.status).toBe(200);
    expect(await check.json()).toMatchObject({ fiscalDocumentAttribute: done.fiscalDocumentAttribute });
    expect(await getReceipt(app(), account.readToken, created.id)).toEqual(done);

    // What the provider received: one line per position, our receipt id as external id, fiscalised once.
    const [document, ...others] = await context.sandboxes[service].documents(created.id);
    expect(others).toEqual([]);
    expect(document).toMatchObject({ registrations: 1, fiscalisations: 1, total: 184931 });
    const lines = (document?.items ?? []) as Array<Record<string, unknown>>;
    if (service === 'CASH_REGISTER_A') {
      expect(document?.operation).toBe('sell');
      expect(lines).toEqual([
        {
          name: 'Mug, white, 300 ml',
          price: 33.33,
          quantity: 3,
          sum: 99.99,
          measure: 0,
          payment_method: 'full_payment',
          payment_object: 1,
          vat: { type: 'none' },
        },
        expect.objectContaining({ price: 0.01, quantity: 2, sum: 0.02 }),
        expect.objectContaining({ price: 249.9, quantity: 7, sum: 1749.3 }),
      ]);
    } else {
      expect(document?.operation).toBe('Income');
      expect(lines).toEqual([
        {
          Label: 'Mug, white, 300 ml',
          Price: 33.33,
          Quantity: 3,
          Amount: 99.99,
          Vat: null,
          Method: 4,
          Object: 1,
          MeasurementUnit: 'шт',
        },
        expect.objectContaining({ Price: 0.01, Quantity: 2, Amount: 0.02 }),
        expect.objectContaining({ Price: 249.9, Quantity: 7, Amount: 1749.3 }),
      ]);
    }
    // A position without a snapshot name carries its catalog product's name.
    const nameField = service === 'CASH_REGISTER_A' ? 'name' : 'Label';
    expect(lines[1]?.[nameField]).toBe('T-shirt black S1');
  });

  it('applies D8.2: one live receipt per type, refunds need a completed receipt', async () => {
    const account = await receiptAccount(context, service);
    const order = await createDocument(app(), account);
    expectError(
      await createReceipt(app(), account.writeToken, order.id, 'REFUND'),
      400,
      'error_receipt_refund_not_allowed',
      {
        receiptType: 'REFUND',
        requiredType: 'INCOME',
      },
    );
    expectError(
      await createReceipt(app(), account.writeToken, order.id, 'EXPENSE_REFUND'),
      400,
      'error_receipt_refund_not_allowed',
      { receiptType: 'EXPENSE_REFUND', requiredType: 'EXPENSE' },
    );
    const income = await newReceipt(app(), account.writeToken, order.id, 'INCOME');
    expectError(
      await createReceipt(app(), account.writeToken, order.id),
      400,
      'error_receipt_already_exists',
      {
        receiptType: 'INCOME',
        id: String(income.id),
      },
    );
    // Still PENDING: not a completed INCOME receipt yet.
    expectError(
      await createReceipt(app(), account.writeToken, order.id, 'REFUND'),
      400,
      'error_receipt_refund_not_allowed',
    );
    await updateUntil(app(), account.readToken, income.id, completed);
    const refund = await newReceipt(app(), account.writeToken, order.id, 'REFUND');
    expect(refund).toMatchObject({ receiptType: 'REFUND', totalAmount: income.totalAmount });
    expectError(
      await createReceipt(app(), account.writeToken, order.id, 'REFUND'),
      400,
      'error_receipt_already_exists',
    );

    const expense = await newReceipt(app(), account.writeToken, order.id, 'EXPENSE');
    await updateUntil(app(), account.readToken, expense.id, completed);
    const expenseRefund = await newReceipt(app(), account.writeToken, order.id, 'EXPENSE_REFUND');
    const operations = await Promise.all(
      [refund, expense, expenseRefund].map(
        async (receipt) => (await context.sandboxes[service].documents(receipt.id))[0]?.operation,
      ),
    );
    expect(operations).toEqual(
      service === 'CASH_REGISTER_A'
        ? ['sell_refund', 'buy', 'buy_refund']
        : ['IncomeReturn', 'Expense', 'ExpenseReturn'],
    );

    const listed = await send(app(), account.readToken, {
      method: 'GET',
      url: `/api/receipt/order/${order.id}`,
    });
    expect(listed.statusCode, listed.body).toBe(200);
    expect(listed.json<Receipt[]>().map((receipt) => [receipt.id, receipt.receiptType])).toEqual([
      [income.id, 'INCOME'],
      [refund.id, 'REFUND'],
      [expense.id, 'EXPENSE'],
      [expenseRefund.id, 'EXPENSE_REFUND'],
    ]);
  });
});

describe('receipt errors', () => {
  it('refuses an unknown type, a document without cash register, a deleted, empty or free document', async () => {
    const account = await receiptAccount(context, 'CASH_REGISTER_A');
    const order = await createDocument(app(), account);
    expectValidation(await createReceipt(app(), account.writeToken, order.id, 'SALE'), 'type');

    const unconfigured = await createAccount(context.t.runtime);
    const orphan = await createDocument(app(), unconfigured);
    expectError(
      await createReceipt(app(), unconfigured.writeToken, orphan.id),
      400,
      'error_cash_register_not_configured',
      {
        organizationId: unconfigured.organizationId,
      },
    );

    const deleted = await createDocument(app(), account);
    const removal = await send(app(), account.writeToken, {
      method: 'DELETE',
      url: `/api/inbound/${deleted.id}`,
    });
    expect(removal.statusCode, removal.body).toBe(200);
    expectError(await createReceipt(app(), account.writeToken, deleted.id), 400, 'error_order_deleted', {
      id: String(deleted.id),
    });

    const empty = await send(app(), account.writeToken, {
      method: 'POST',
      url: '/api/inbound/',
      payload: { organizationId: account.organizationId, type: 'INCOME', name: 'No positions' },
    });
    expect(empty.statusCode, empty.body).toBe(200);
    expectValidation(
      await createReceipt(app(), account.writeToken, empty.json<{ id: number }>().id),
      'orderId',
    );
    const noQuantity = await createDocument(app(), account, [{ quantity: 0, price: 10 }]);
    expectValidation(await createReceipt(app(), account.writeToken, noQuantity.id), 'orderId');
    const free = await createDocument(app(), account, [{ quantity: 5, price: 0 }]);
    const body = expectValidation(await createReceipt(app(), account.writeToken, free.id), 'orderId');
    expect(body.params.reason).toMatch(/total is 0/);

    // Nothing was stored for any refused request, and nothing was sent.
    for (const id of [order.id, deleted.id, free.id]) {
      const listed = await send(app(), account.readToken, { method: 'GET', url: `/api/receipt/order/${id}` });
      expect(listed.json()).toEqual([]);
    }
  });

  it('refuses a READ token on create, and answers another client’s ids like missing ones', async () => {
    const account = await receiptAccount(context, 'CASH_REGISTER_B');
    const stranger = await receiptAccount(context, 'CASH_REGISTER_B');
    const order = await createDocument(app(), account);
    expectError(await createReceipt(app(), account.readToken, order.id), 400, 'error_access_denied');
    expectError(await createReceipt(app(), undefined, order.id), 401, 'auth_required');
    const receipt = await newReceipt(app(), account.writeToken, order.id);

    expectNotFound(await createReceipt(app(), stranger.writeToken, order.id), order.id);
    expectNotFound(await createReceipt(app(), account.writeToken, MISSING_ID), MISSING_ID);
    for (const url of [`/api/receipt/${receipt.id}`, `/api/receipt/${receipt.id}/update`]) {
      const body = expectNotFound(await send(app(), stranger.readToken, { method: 'GET', url }), receipt.id);
      expect(body.params.entity).toBe('receipt');
    }
    const list = expectNotFound(
      await send(app(), stranger.readToken, { method: 'GET', url: `/api/receipt/order/${order.id}` }),
      order.id,
    );
    expect(list.params.entity).toBe('order');
    expectNotFound(
      await send(app(), account.readToken, { method: 'GET', url: `/api/receipt/${MISSING_ID}` }),
      MISSING_ID,
    );
    expectValidation(
      await send(app(), account.readToken, { method: 'GET', url: '/api/receipt/abc' }),
      'receiptId',
    );
    // A READ token may refresh (spec §4.3: update is read access).
    expect((await updateReceipt(app(), account.readToken, receipt.id)).statusCode).toBe(200);
  });

  it('counts an organization without baseUrl as not configured while the service has no provider URL', async () => {
    const account = await createAccount(context.t.runtime);
    await configureCashRegister(app(), account.organizationId, { service: 'CASH_REGISTER_A' });
    const order = await createDocument(app(), account);
    // The test app has no CASH_REGISTER_A_URL and runs no embedded sandbox: not configured.
    expectError(
      await createReceipt(app(), account.writeToken, order.id),
      400,
      'error_cash_register_not_configured',
    );
  });
});
