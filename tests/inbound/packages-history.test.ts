/** Cargo places, divergence and its fix, and history (D5.6, D5.7, D5.9). */
import { describe, expect, it } from 'vitest';
import { useTestApp } from '../helpers/test-app.ts';
import type { OrderHistory, OrderPackage, TotalDivergence } from '../../src/modules/inbound/schemas.ts';
import { expectEmpty, expectError, newCaller, productId, type Caller } from './support.ts';

let c: Caller;
useTestApp(async (app) => {
  c = await newCaller(app.app, app.runtime);
});

interface HistoryPage {
  rows: OrderHistory[];
  page: number;
  total?: number;
}

describe('cargo places', () => {
  it('replaces places: updates those with packageId, creates new ones, removes missing ones', async () => {
    const [a, b] = [productId(), productId()];
    const order = await c.create({
      products: [
        { productId: a, quantity: 4 },
        { productId: b, quantity: 2 },
      ],
    });
    const [pa, pb] = order.products ?? [];
    const url = `/api/inbound/updateOrderPackage?orderId=${order.id}`;
    expectEmpty(
      await c.call('POST', url, [
        { number: 'P1', weight: 10, items: [{ orderProductId: pa?.id, quantity: 3 }] },
        { number: 'P2', items: [{ orderProductId: pb?.id, productId: 1, quantity: 2 }] },
      ]),
    );
    const first = (await c.call<OrderPackage[]>('GET', `/api/inbound/getOrderPackage?orderId=${order.id}`))
      .body;
    expect(first.map((row) => [row.number, row.weight, row.items?.map((item) => item.productId)])).toEqual([
      ['P1', 10, [a]],
      ['P2', null, [b]],
    ]);
    const [p1, p2] = first;
    expectEmpty(
      await c.call('POST', url, [
        { packageId: p2?.packageId, number: 'P2b', items: [{ orderProductId: pb?.id, quantity: 1 }] },
        { number: 'P3', items: [] },
      ]),
    );
    const second = (await c.call<OrderPackage[]>('GET', `/api/inbound/getOrderPackage?orderId=${order.id}`))
      .body;
    expect(second.map((row) => row.number)).toEqual(['P2b', 'P3']);
    expect(second[0]?.packageId).toBe(p2?.packageId);
    expect(second.some((row) => row.packageId === p1?.packageId)).toBe(false);
    expect((await c.get(order.id)).versionId).toBe(3);
  });

  it("refuses an item of another document's position and a foreign packageId; nothing changes", async () => {
    const order = await c.create({ products: [{ productId: productId(), quantity: 1 }] });
    const other = await c.create({ products: [{ productId: productId(), quantity: 1 }] });
    const url = `/api/inbound/updateOrderPackage?orderId=${order.id}`;
    expectError(
      await c.call('POST', url, [
        { number: 'ok', items: [{ orderProductId: order.products?.[0]?.id, quantity: 1 }] },
        { items: [{ orderProductId: other.products?.[0]?.id, quantity: 1 }] },
      ]),
      400,
      'error_validation',
      { field: '1.items.0.orderProductId' },
    );
    await c.call('POST', `/api/inbound/updateOrderPackage?orderId=${other.id}`, [{ number: 'theirs' }]);
    const theirs = (await c.call<OrderPackage[]>('GET', `/api/inbound/getOrderPackage?orderId=${other.id}`))
      .body;
    expectError(await c.call('POST', url, [{ packageId: theirs[0]?.packageId }]), 404, 'error_not_found', {
      entity: 'orderPackage',
    });
    expect(
      (await c.call<OrderPackage[]>('GET', `/api/inbound/getOrderPackage?orderId=${order.id}`)).body,
    ).toEqual([]);
    expect((await c.get(order.id)).versionId).toBe(1);
  });
});

describe('divergence', () => {
  it('lists positions whose packed quantity differs; fix sets quantities to packed and records it', async () => {
    const [a, b, d] = [productId(), productId(), productId()];
    const order = await c.create({
      products: [
        { productId: a, quantity: 5, price: 2 },
        { productId: b, quantity: 2, price: 1 },
        { productId: d, quantity: 1, price: 1 },
      ],
    });
    const ids = Object.fromEntries((order.products ?? []).map((row) => [row.productId, row.id]));
    await c.call('POST', `/api/inbound/updateOrderPackage?orderId=${order.id}`, [
      {
        items: [
          { orderProductId: ids[a], quantity: 2 },
          { orderProductId: ids[b], quantity: 2 },
        ],
      },
      { items: [{ orderProductId: ids[a], quantity: 1 }] },
    ]);
    const divergence = await c.call<TotalDivergence>('GET', `/api/inbound/${order.id}/divergence`);
    expect(divergence.type).toMatch(/^application\/hal\+json/);
    expect(divergence.body).toMatchObject({ totalSupplied: 8, totalPacked: 5 });
    expect(
      divergence.body.divergence.map((row) => [row.product.id, row.supplyQuantity, row.packedQuantity]),
    ).toEqual([
      [a, 5, 3],
      [d, 1, 0],
    ]);

    expectEmpty(await c.call('POST', `/api/inbound/${order.id}/divergence/fix`));
    const fixed = await c.get(order.id);
    expect(fixed).toMatchObject({ totalQuantity: 5, totalPrice: 8, versionId: 3 });
    expect(
      (await c.call<TotalDivergence>('GET', `/api/inbound/${order.id}/divergence`)).body.divergence,
    ).toEqual([]);
    const history = (await c.call<HistoryPage>('GET', `/api/inbound/${order.id}/history?limit=1`)).body;
    expect(history.rows[0]).toMatchObject({
      action: 'DIVERGENCE_FIX',
      changes: {
        [`products.${a}.quantity`]: { from: 5, to: 3 },
        [`products.${d}.quantity`]: { from: 1, to: 0 },
      },
      totalQuantity: 5,
    });
    // Nothing left to fix: no-op.
    expectEmpty(await c.call('POST', `/api/inbound/${order.id}/divergence/fix`));
    expect((await c.get(order.id)).versionId).toBe(3);
  });
});

describe('history', () => {
  it('appends a snapshot per change with action, changes, user and version; pages newest first', async () => {
    const order = await c.create({ name: 'h' });
    const pid = productId();
    await c.call('PATCH', '/api/inbound/', { id: order.id, name: 'h2' });
    await c.call('POST', `/api/inbound/${order.id}/product`, { productId: pid, quantity: 2, price: 3 });
    await c.call('POST', `/api/inbound/${order.id}/status?status=SEND`);
    await c.call('DELETE', `/api/inbound/${order.id}`);
    await c.call('DELETE', `/api/inbound/${order.id}?deleted=false`);

    const all = (await c.call<HistoryPage>('GET', `/api/inbound/${order.id}/history?count=true`)).body;
    expect(all.total).toBe(6);
    expect(all.rows.map((row) => [row.action, row.versionId])).toEqual([
      ['RESTORE', 6],
      ['DELETE', 5],
      ['STATUS', 4],
      ['PRODUCT_ADD', 3],
      ['UPDATE', 2],
      ['CREATE', 1],
    ]);
    expect(all.rows[2]).toMatchObject({
      orderStatus: 'SEND',
      changes: { status: { from: 'CREATED', to: 'SEND' } },
      userId: c.account.userId,
      totalQuantity: 2,
      totalPrice: 6,
    });
    expect(all.rows[4]?.changes).toEqual({ name: { from: 'h', to: 'h2' } });
    expect(all.rows[3]?.changes).toMatchObject({
      [`products.${pid}`]: { from: null, to: { quantity: 2, price: 3 } },
      totalQuantity: { from: 0, to: 2 },
    });

    const page2 = (await c.call<HistoryPage>('GET', `/api/inbound/${order.id}/history?limit=4&page=2`)).body;
    expect(page2).toMatchObject({ page: 2 });
    expect(page2.total).toBeUndefined();
    expect(page2.rows.map((row) => row.action)).toEqual(['UPDATE', 'CREATE']);

    const future = (
      await c.call<HistoryPage>('GET', `/api/inbound/${order.id}/history?count=true&dateFrom=2999-01-01`)
    ).body;
    expect(future).toMatchObject({ rows: [], total: 0 });
    const past = (
      await c.call<HistoryPage>('GET', `/api/inbound/${order.id}/history?count=true&dateTo=2000-01-01`)
    ).body;
    expect(past.total).toBe(0);
    expectError(
      await c.call('GET', `/api/inbound/${order.id}/history?dateFrom=yesterday`),
      400,
      'error_validation',
      { field: 'dateFrom' },
    );
  });
});
