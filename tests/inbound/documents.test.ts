/** Documents and positions: create, read, PATCH, versions and conflicts, totals, products (D5.1–D5.3). */
import { describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { useTestApp, type TestApp } from '../helpers/test-app.ts';
import { createAccount } from '../helpers/factories.ts';
import type { Order, OrderProduct } from '../../src/modules/inbound/schemas.ts';
import { presentOrder } from '../../src/modules/inbound/presenter.ts';
import { orderRepository, productRepository } from '../../src/modules/inbound/repository.ts';
import { expectError, newCaller, productId, type Caller } from './support.ts';

let t: TestApp;
let c: Caller;
useTestApp(async (app) => {
  t = app;
  c = await newCaller(app.app, app.runtime);
});

describe('create and read', () => {
  it('creates a document with status CREATED, marking UNKNOWN, version 1 and computed totals', async () => {
    const [a, b] = [productId(), productId()];
    const answer = await c.call<Order>('POST', '/api/inbound/', {
      organizationId: c.account.organizationId,
      type: 'INCOME',
      name: 'First supply',
      deliveryDate: '2024-05-01T10:00:00+03:00',
      status: 'FINISHED',
      totalQuantity: 999,
      totalPrice: 1,
      versionId: 77,
      products: [
        { productId: a, quantity: 3, price: 10.5, product: { name: 'Cup', article: 'CUP-1' } },
        { productId: b, quantity: 2, price: 0.1 },
      ],
    });
    expect(answer.status, answer.raw).toBe(200);
    expect(answer.type).toMatch(/^application\/hal\+json/);
    const order = answer.body;
    expect(order).toMatchObject({
      organizationId: c.account.organizationId,
      clientId: c.account.clientId,
      type: 'INCOME',
      status: 'CREATED',
      markingStatus: 'UNKNOWN',
      versionId: 1,
      name: 'First supply',
      deliveryDate: '2024-05-01T07:00:00.000Z',
      deleted: false,
      totalQuantity: 5,
      totalPrice: 31.7,
      _links: { self: { href: `/api/inbound/${order.id}` } },
    });
    expect(order.products?.map((row) => [row.productId, row.quantity, row.price])).toEqual([
      [a, 3, 10.5],
      [b, 2, 0.1],
    ]);
    expect(await c.get(order.id)).toEqual(order);
  });

  it('pages the products of GET with limit/page, bypassing the cache', async () => {
    const ids = [productId(), productId(), productId()];
    const order = await c.create({ products: ids.map((id) => ({ productId: id, quantity: 1 })) });
    await c.get(order.id);
    const page = await c.call<Order>('GET', `/api/inbound/${order.id}?limit=2&page=2`);
    expect(page.status, page.raw).toBe(200);
    expect(page.body.products?.map((row) => row.productId)).toEqual([ids[2]]);
    expect(page.body.totalQuantity).toBe(3);
    const whole = await c.get(order.id);
    expect(whole.products).toHaveLength(3);
    // The document and its page of positions are one read: the same fields as the whole document.
    expect(page.body).toEqual({ ...whole, products: whole.products?.slice(2) });
    expect((await c.call<Order>('GET', `/api/inbound/${order.id}?page=2`)).body.products).toEqual([]);
    const other = await newCaller(t.app, t.runtime);
    expectError(await other.call('GET', `/api/inbound/${order.id}?limit=2`), 404, 'error_not_found');
  });

  it('answers GET with the bytes of JSON.stringify of the presented rows (rendered by PostgreSQL, P201)', async () => {
    const names = [
      'quote " back \\ slash',
      'controls \n\t\r\b\f \u0001\u001f \u007f',
      'ü 😀 \u2028\u2029 </script>',
    ];
    const order = await c.create({
      products: names.map((name, index) => ({ productId: productId(), quantity: index, product: { name } })),
    });
    const prices = ['99999999999999.99', '0.01', '12.50'];
    const times = ['2024-01-02 03:04:05.999999+00', '1999-12-31 23:59:59.0005+03', '2030-06-30 12:00:00+00'];
    const db = t.runtime.database.db;
    for (const [index, position] of (order.products ?? []).entries())
      await sql`update inbound_order_product set price = ${prices[index]}, created_date = ${times[index]},
        last_update_date = ${times[(index + 1) % 3]}, article = null, barcode = ${`"${index}"`}
        where client_id = ${c.account.clientId} and id = ${position.id}`.execute(db);
    // the document's own fields: text to escape, every optional field set, times with microseconds
    await sql`update inbound_order set name = ${names[1]}, comment = ${names[2]}, marking_type = 'CIS',
        box_type = 'BOX', service_warehouse_id = '"w"', external_order_id = 'EXT\\1', invoice_number = 12,
        tracking_number = 'TRK', supply_id = 9007199254740991, supplier_id = 3, income_id = 4, close_user_id = 5,
        created_user = 'robot', express = true, update_in_service = true, warehouse_id = 7, stock_warehouse_id = 8,
        created_date = ${times[0]}, delivery_date = ${times[1]}, close_date = ${times[2]},
        created = ${times[1]}, modified_date = ${times[0]}, total_price = ${prices[0]}
      where client_id = ${c.account.clientId} and id = ${order.id}`.execute(db);
    const stored = await orderRepository.find(db, c.account.clientId, order.id);
    const rows = await productRepository.listByOrder(db, c.account.clientId, order.id);
    const expected = JSON.stringify(presentOrder(stored!, rows, t.runtime.config.publicBaseUrl));
    expect((await c.call('GET', `/api/inbound/${order.id}?limit=10`)).raw).toBe(expected);
    expect((await c.call('GET', `/api/inbound/${order.id}`)).raw).toBe(expected);
    for (const baseUrl of ['https://api.example.com/so "1"', 'http://[::1]:8080'])
      expect((await orderRepository.findAnswer(db, c.account.clientId, order.id, baseUrl))?.json).toBe(
        JSON.stringify(presentOrder(stored!, rows, baseUrl)),
      );
    const empty = await c.create();
    const bare = await orderRepository.find(db, c.account.clientId, empty.id);
    expect((await c.call('GET', `/api/inbound/${empty.id}`)).raw).toBe(
      JSON.stringify(presentOrder(bare!, [], t.runtime.config.publicBaseUrl)),
    );
  });

  it('refuses an organization of another client and a missing productId', async () => {
    const other = await createAccount(t.runtime);
    expectError(
      await c.call('POST', '/api/inbound/', { organizationId: other.organizationId, type: 'FBS' }),
      400,
      'error_organization_not_found',
      { organizationId: other.organizationId },
    );
    expectError(
      await c.call('POST', '/api/inbound/', {
        organizationId: c.account.organizationId,
        type: 'FBS',
        products: [{ productId: productId() }, { quantity: 1 }],
      }),
      400,
      'error_validation',
      { field: 'products.1.productId' },
    );
  });

  it("answers another client's document like a missing one", async () => {
    const order = await c.create();
    const stranger = await newCaller(t.app, t.runtime);
    for (const id of [order.id, 8_000_000_000_000_001]) {
      expectError(await stranger.call('GET', `/api/inbound/${id}`), 404, 'error_not_found', {
        entity: 'order',
        id: String(id),
      });
    }
    expectError(
      await stranger.call('PATCH', '/api/inbound/', { id: order.id, name: 'x' }),
      404,
      'error_not_found',
    );
  });
});

describe('PATCH', () => {
  it('changes only the given fields, null clears, read-only fields are ignored, version +1 per change', async () => {
    const order = await c.create({ name: 'A', comment: 'keep', trackingNumber: 'T-1' });
    const answer = await c.call<Order>('PATCH', '/api/inbound/', {
      id: order.id,
      versionId: 1,
      name: 'B',
      trackingNumber: null,
      status: 'FINISHED',
      deleted: true,
      totalPrice: 500,
    });
    expect(answer.status, answer.raw).toBe(200);
    expect(answer.body).toMatchObject({
      name: 'B',
      comment: 'keep',
      trackingNumber: null,
      status: 'CREATED',
      deleted: false,
      totalPrice: 0,
      versionId: 2,
    });
    const same = await c.call<Order>('PATCH', '/api/inbound/', { id: order.id, name: 'B' });
    expect(same.body.versionId).toBe(2);
    const last = await c.call<Order>('PATCH', '/api/inbound/', { id: order.id, comment: 'x' });
    expect(last.body.versionId).toBe(3);
  });

  it('answers 409 error_version_conflict for a stale versionId and changes nothing', async () => {
    const order = await c.create({ name: 'v1' });
    await c.call('PATCH', '/api/inbound/', { id: order.id, name: 'v2' });
    expectError(
      await c.call('PATCH', '/api/inbound/', { id: order.id, versionId: 1, name: 'stale' }),
      409,
      'error_version_conflict',
      { id: String(order.id), currentVersionId: 2 },
    );
    expect((await c.get(order.id)).name).toBe('v2');
  });
});

describe('products', () => {
  it('adds with defaults, refuses a second row of the same product, recomputes totals exactly', async () => {
    const order = await c.create();
    const a = productId();
    const added = await c.call<OrderProduct>('POST', `/api/inbound/${order.id}/product`, { productId: a });
    expect(added.status, added.raw).toBe(200);
    expect(added.body).toMatchObject({ productId: a, quantity: 0, price: 0, orderId: order.id });
    expectError(
      await c.call('POST', `/api/inbound/${order.id}/product`, { productId: a, quantity: 1 }),
      400,
      'error_validation',
      { field: 'productId' },
    );
    expectError(
      await c.call('POST', `/api/inbound/${order.id}/product`, { quantity: 1 }),
      400,
      'error_validation',
      { field: 'productId' },
    );
    expectError(
      await c.call('POST', `/api/inbound/${order.id}/product`, { productId: productId(), price: 1.005 }),
      400,
      'error_validation',
      { field: 'price' },
    );
    const b = productId();
    await c.call('POST', `/api/inbound/${order.id}/product`, { productId: b, quantity: 3, price: 0.1 });
    const put = await c.call<OrderProduct>('PUT', `/api/inbound/${order.id}/product`, {
      productId: a,
      quantity: 7,
      price: 19.99,
    });
    expect(put.body).toMatchObject({ quantity: 7, price: 19.99 });
    const byId = await c.call<OrderProduct>('PUT', `/api/inbound/${order.id}/product`, {
      id: put.body.id,
      quantity: 1,
      versionId: 4,
    });
    expect(byId.status, byId.raw).toBe(200);
    const read = await c.get(order.id);
    // 1 × 19.99 + 3 × 0.10, exact
    expect(read).toMatchObject({ totalQuantity: 4, totalPrice: 20.29, versionId: 5 });
  });

  it('refuses a stale versionId on product PUT and an unknown position with orderProduct 404', async () => {
    const a = productId();
    const order = await c.create({ products: [{ productId: a, quantity: 1 }] });
    expectError(
      await c.call('PUT', `/api/inbound/${order.id}/product`, { productId: a, quantity: 2, versionId: 9 }),
      409,
      'error_version_conflict',
      { currentVersionId: 1 },
    );
    expectError(
      await c.call('PUT', `/api/inbound/${order.id}/product`, { id: 8_000_000_000_001, quantity: 2 }),
      404,
      'error_not_found',
      { entity: 'orderProduct', id: '8000000000001' },
    );
    expectError(
      await c.call('PUT', `/api/inbound/${order.id}/product`, { productId: productId(), quantity: 2 }),
      404,
      'error_not_found',
      { entity: 'orderProduct' },
    );
    expect((await c.get(order.id)).versionId).toBe(1);
  });
});

describe('createdUser', () => {
  it("records the token user's name on the document and on each position it adds", async () => {
    const user = await t.runtime.database.db
      .selectFrom('app_user')
      .select('name')
      .where('client_id', '=', c.account.clientId)
      .where('id', '=', c.account.userId)
      .executeTakeFirstOrThrow();
    const order = await c.create({ products: [{ productId: productId(), quantity: 1 }] });
    expect(order.createdUser).toBe(user.name);
    expect(order.products?.[0]?.createdUser).toBe(user.name);
    const added = await c.call<OrderProduct>('POST', `/api/inbound/${order.id}/product`, {
      productId: productId(),
    });
    expect(added.body.createdUser).toBe(user.name);
  });
});
