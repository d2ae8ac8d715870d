/** Status, bulk status, delete/restore, marking status and receiving stock (D5.4, D5.5, D5.8). */
import { describe, expect, it } from 'vitest';
import { useTestApp, type TestApp } from '../helpers/test-app.ts';
import { expectEmpty, expectError, newCaller, productId, type Caller } from './support.ts';

let t: TestApp;
let c: Caller;
useTestApp(async (app) => {
  t = app;
  c = await newCaller(app.app, app.runtime);
});

const historyTotal = async (caller: Caller, id: number) =>
  (await caller.call<{ total: number }>('GET', `/api/inbound/${id}/history?count=true&limit=1`)).body.total;

const ledger = (orderId: number) =>
  t.runtime.database.db
    .selectFrom('stock_ledger')
    .select(['product_id', 'quantity', 'reason', 'warehouse_id'])
    .where('client_id', '=', c.account.clientId)
    .where('order_id', '=', orderId)
    .orderBy('id')
    .execute();

describe('single status', () => {
  it('sets any status; the current one is a no-op; a closed one stamps closeDate and closeUserId', async () => {
    const order = await c.create({ type: 'FBS' });
    expectEmpty(await c.call('POST', `/api/inbound/${order.id}/status?status=PACKING`));
    const packing = await c.get(order.id);
    expect(packing).toMatchObject({ status: 'PACKING', versionId: 2, closeDate: null, closeUserId: null });
    expectEmpty(await c.call('POST', `/api/inbound/${order.id}/status?status=PACKING`));
    expect((await c.get(order.id)).versionId).toBe(2);
    expect(await historyTotal(c, order.id)).toBe(2);
    expectEmpty(await c.call('POST', `/api/inbound/${order.id}/status?status=CANCELED`));
    const canceled = await c.get(order.id);
    expect(canceled.closeUserId).toBe(c.account.userId);
    expect(canceled.closeDate).not.toBeNull();
  });
});

describe('bulk status', () => {
  it('changes every listed document once, ignoring duplicates', async () => {
    const a = await c.create();
    const b = await c.create();
    expectEmpty(await c.call('POST', '/api/inbound/status?status=SEND', [a.id, b.id, a.id]));
    for (const id of [a.id, b.id]) expect(await c.get(id)).toMatchObject({ status: 'SEND', versionId: 2 });
  });

  it('is all or nothing: a missing or foreign id → 404 listing them; a deleted one → 400; nothing changes', async () => {
    const a = await c.create();
    const b = await c.create();
    const stranger = await newCaller(t.app, t.runtime);
    const foreign = await stranger.create();
    const missing = 8_000_000_000_000_003;
    expectError(
      await c.call('POST', '/api/inbound/status?status=SEND', [a.id, foreign.id, b.id, missing]),
      404,
      'error_not_found',
      { entity: 'order', id: String(foreign.id), ids: [String(foreign.id), String(missing)] },
    );
    await c.call('DELETE', `/api/inbound/${b.id}`);
    expectError(
      await c.call('POST', '/api/inbound/status?status=SEND', [a.id, b.id]),
      400,
      'error_order_deleted',
      { id: String(b.id), ids: [String(b.id)] },
    );
    expect(await c.get(a.id)).toMatchObject({ status: 'CREATED', versionId: 1 });
    expect(await stranger.get(foreign.id)).toMatchObject({ status: 'CREATED', versionId: 1 });
    expect(await historyTotal(c, a.id)).toBe(1);
  });
});

describe('delete and restore', () => {
  it('deletes once, rejects changes of a deleted document, restores with deleted=false', async () => {
    const order = await c.create({ products: [{ productId: productId(), quantity: 1 }] });
    expectEmpty(await c.call('DELETE', `/api/inbound/${order.id}`));
    expectEmpty(await c.call('DELETE', `/api/inbound/${order.id}`));
    const deleted = await c.get(order.id);
    expect(deleted).toMatchObject({ deleted: true, versionId: 2 });
    const refused = { id: String(order.id) };
    expectError(
      await c.call('PATCH', '/api/inbound/', { id: order.id, name: 'x' }),
      400,
      'error_order_deleted',
      refused,
    );
    expectError(
      await c.call('POST', `/api/inbound/${order.id}/product`, { productId: productId() }),
      400,
      'error_order_deleted',
      refused,
    );
    expectError(
      await c.call('POST', `/api/inbound/${order.id}/status?status=SEND`),
      400,
      'error_order_deleted',
      refused,
    );
    expectError(
      await c.call('POST', `/api/inbound/setOrderMarkingStatus?status=SUCCESS&orderId=${order.id}`),
      400,
      'error_order_deleted',
      refused,
    );
    expectError(
      await c.call('POST', `/api/inbound/updateOrderPackage?orderId=${order.id}`, []),
      400,
      'error_order_deleted',
      refused,
    );
    expect((await c.get(order.id)).versionId).toBe(2);
    expectEmpty(await c.call('DELETE', `/api/inbound/${order.id}?deleted=false`));
    expect(await c.get(order.id)).toMatchObject({ deleted: false, versionId: 3 });
  });
});

describe('marking status', () => {
  it('sets the value; the same value is a no-op', async () => {
    const order = await c.create();
    const url = `/api/inbound/setOrderMarkingStatus?status=MARKS_RECEIVED&orderId=${order.id}`;
    expectEmpty(await c.call('POST', url));
    expectEmpty(await c.call('POST', url));
    expect(await c.get(order.id)).toMatchObject({ markingStatus: 'MARKS_RECEIVED', versionId: 2 });
  });
});

describe('receiving stock', () => {
  it('records stock once when an INCOME document is FINISHED and removes it once', async () => {
    const [a, b] = [productId(), productId()];
    const order = await c.create({
      warehouseId: 42,
      products: [
        { productId: a, quantity: 5 },
        { productId: b, quantity: 0 },
      ],
    });
    expectEmpty(await c.call('POST', `/api/inbound/${order.id}/status?status=FINISHED`));
    expect(await ledger(order.id)).toEqual([
      { product_id: a, quantity: 5, reason: 'INCOME_RECEIVED', warehouse_id: 42 },
    ]);
    const finished = await c.get(order.id);
    expect(finished.products?.map((row) => row.introducedQuantity)).toEqual([5, 0]);
    // Leaving and reaching FINISHED again never records twice.
    await c.call('POST', `/api/inbound/${order.id}/status?status=SEND`);
    await c.call('POST', `/api/inbound/${order.id}/status?status=FINISHED`);
    expect(await ledger(order.id)).toHaveLength(1);

    expectEmpty(await c.call('POST', `/api/inbound/removeIncomeStock?orderId=${order.id}`));
    const version = (await c.get(order.id)).versionId;
    expectEmpty(await c.call('POST', `/api/inbound/removeIncomeStock?orderId=${order.id}`));
    expect(await ledger(order.id)).toEqual([
      { product_id: a, quantity: 5, reason: 'INCOME_RECEIVED', warehouse_id: 42 },
      { product_id: a, quantity: -5, reason: 'INCOME_REMOVED', warehouse_id: 42 },
    ]);
    const removed = await c.get(order.id);
    expect(removed.versionId).toBe(version);
    expect(removed.products?.map((row) => row.introducedQuantity)).toEqual([0, 0]);
  });

  it('records stock for every INCOME document of a bulk FINISHED, and none for other types', async () => {
    const income = await c.create({ products: [{ productId: productId(), quantity: 2 }] });
    const other = await c.create({ type: 'FBS', products: [{ productId: productId(), quantity: 3 }] });
    expectEmpty(await c.call('POST', '/api/inbound/status?status=FINISHED', [income.id, other.id]));
    expect(await ledger(income.id)).toHaveLength(1);
    expect(await ledger(other.id)).toHaveLength(0);
  });
});
