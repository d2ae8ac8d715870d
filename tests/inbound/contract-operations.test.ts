/**
 * Each inbound operation of spec §4.1 through HTTP: its success and response shape (D5.1, D5.11, D4.2) and
 * each error D2–D5 name for it: `error_validation` naming the field (D3.2, D4.1), `error_version_conflict`
 * (D5.2), `error_order_deleted` (D5.4), the all-or-nothing bulk status (D5.4), duplicate positions (D5.3),
 * `error_organization_not_found`, unsafe int64, body limit and malformed JSON (D3.2).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/test-app.ts';
import { createAccount, type TestAccount } from '../helpers/factories.ts';
import {
  MISSING_ID,
  createOrder,
  deleteOrder,
  expectEmpty,
  expectError,
  expectHal,
  expectNotFound,
  expectSelfLink,
  expectValidation,
  getHistory,
  getOrder,
  getPackages,
  newProductId,
  positionOf,
  productLine,
  putPackages,
  send,
  setStatus,
  snapshot,
  type ListPage,
  type Order,
  type OrderHistory,
  type OrderProduct,
  type TotalDivergence,
} from '../helpers/inbound.ts';

let t: TestApp;
let account: TestAccount;
let other: TestAccount;

beforeAll(async () => {
  t = await buildTestApp();
  account = await createAccount(t.runtime);
  other = await createAccount(t.runtime);
});
afterAll(async () => {
  await t.close();
});

/** A minimal valid create body of `account`. */
function createBody(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { organizationId: account.organizationId, type: 'INCOME', ...extra };
}

/** A document of `account` with the given positions (default: one position of 4 × 25.00). */
async function newOrder(
  products: ReturnType<typeof productLine>[] = [productLine({ quantity: 4, price: 25 })],
) {
  return createOrder(t.app, account.writeToken, createBody({ products }));
}

const ORDER_FIELDS = [
  'id',
  'versionId',
  'clientId',
  'organizationId',
  'type',
  'status',
  'markingStatus',
  'service',
  'name',
  'comment',
  'externalOrderId',
  'warehouseId',
  'createdDate',
  'deliveryDate',
  'closeDate',
  'modifiedDate',
  'deleted',
  'totalQuantity',
  'totalPrice',
  '_links',
];
const POSITION_FIELDS = ['id', 'orderId', 'productId', 'product', 'quantity', 'introducedQuantity', 'price'];

describe('POST /api/inbound/ (create)', () => {
  it('creates a document with positions; status CREATED, marking UNKNOWN, totals computed (D5.1, D5.3)', async () => {
    const first = productLine({
      quantity: 10,
      price: 100.5,
      product: { name: 'Coat', article: 'C-1', barcode: '4600000000011' },
    });
    const second = productLine({ quantity: 3, price: 0.99 });
    const response = await send(t.app, account.writeToken, {
      method: 'POST',
      url: '/api/inbound/',
      payload: createBody({
        name: 'Receiving 1',
        comment: 'first delivery',
        externalOrderId: 'EXT-1',
        warehouseId: 12,
        deliveryDate: '2024-05-02T10:00:00.000Z',
        products: [first, second],
      }),
    });
    const order = expectHal<Order>(response);
    for (const field of ORDER_FIELDS) expect(order, field).toHaveProperty(field);
    expect(order).toMatchObject({
      clientId: account.clientId,
      organizationId: account.organizationId,
      type: 'INCOME',
      status: 'CREATED',
      markingStatus: 'UNKNOWN',
      name: 'Receiving 1',
      comment: 'first delivery',
      externalOrderId: 'EXT-1',
      warehouseId: 12,
      deleted: false,
      totalQuantity: 13,
      totalPrice: 1007.97,
    });
    expect(new Date(String(order.deliveryDate)).toISOString()).toBe('2024-05-02T10:00:00.000Z');
    expect(order.versionId).toBeTypeOf('number');
    expectSelfLink(order, `/api/inbound/${order.id}`);
    expect(order.products).toHaveLength(2);
    const position = positionOf(order, first.productId);
    for (const field of POSITION_FIELDS) expect(position, field).toHaveProperty(field);
    expect(position).toMatchObject({
      orderId: order.id,
      productId: first.productId,
      quantity: 10,
      price: 100.5,
      introducedQuantity: 0,
      product: { id: first.productId, name: 'Coat', article: 'C-1', barcode: '4600000000011' },
    });
  });

  it('ignores read-only fields of the request and never trusts totals (D5.1, D5.3)', async () => {
    const order = await createOrder(
      t.app,
      account.writeToken,
      createBody({
        status: 'FINISHED',
        markingStatus: 'SUCCESS',
        clientId: other.clientId,
        deleted: true,
        totalQuantity: 999,
        totalPrice: 1,
        products: [productLine({ quantity: 2, price: 7.25 })],
      }),
    );
    expect(order).toMatchObject({
      status: 'CREATED',
      markingStatus: 'UNKNOWN',
      clientId: account.clientId,
      deleted: false,
      totalQuantity: 2,
      totalPrice: 14.5,
    });
  });

  it('computes totalPrice exactly to 0.01, never with binary floating-point drift (D5.3)', async () => {
    const order = await createOrder(
      t.app,
      account.writeToken,
      createBody({
        products: [
          productLine({ quantity: 3, price: 0.1 }),
          productLine({ quantity: 1, price: 0.2 }),
          productLine({ quantity: 7, price: 19_999_999.99 }),
        ],
      }),
    );
    expect(order.totalQuantity).toBe(11);
    // 3 × 0.10 + 0.20 + 7 × 19,999,999.99; summed in binary floating point this would be 140000000.42999998.
    expect(order.totalPrice).toBe(140_000_000.43);
  });

  it('requires type and organizationId, and refuses an unknown type (D5.1, D3.2)', async () => {
    const create = (payload: unknown) =>
      send(t.app, account.writeToken, { method: 'POST', url: '/api/inbound/', payload });
    expectValidation(await create({ organizationId: account.organizationId }), 'type');
    expectValidation(await create({ type: 'INCOME' }), 'organizationId');
    expectValidation(await create(createBody({ type: 'GIFT' })), 'type');
  });

  it('refuses a negative quantity, a price with 3 decimals and wrongly typed fields, naming the path (D5.3)', async () => {
    const create = (payload: unknown) =>
      send(t.app, account.writeToken, { method: 'POST', url: '/api/inbound/', payload });
    expectValidation(
      await create(createBody({ products: [productLine({ quantity: -1 })] })),
      'products.0.quantity',
    );
    expectValidation(
      await create(createBody({ products: [productLine(), productLine({ price: 1.234 })] })),
      'products.1.price',
    );
    expectValidation(
      await create(createBody({ products: [{ ...productLine(), quantity: 'many' }] })),
      'products.0.quantity',
    );
    expectValidation(await create(createBody({ express: 'maybe' })), 'express');
    expectValidation(await create(createBody({ warehouseId: 'north' })), 'warehouseId');
    expectValidation(await create(createBody({ deliveryDate: 'next tuesday' })), 'deliveryDate');
  });

  it('refuses two positions of the same product (D5.3)', async () => {
    const productId = newProductId();
    const response = await send(t.app, account.writeToken, {
      method: 'POST',
      url: '/api/inbound/',
      payload: createBody({ products: [productLine({ productId }), productLine({ productId })] }),
    });
    expectValidation(response, /^products\.\d+\.productId$/);
  });

  it('refuses an organization of another client, like a missing one: 400 error_organization_not_found', async () => {
    const before = await documentTotal(account);
    for (const organizationId of [other.organizationId, MISSING_ID]) {
      const response = await send(t.app, account.writeToken, {
        method: 'POST',
        url: '/api/inbound/',
        payload: createBody({ organizationId }),
      });
      expectError(response, 400, 'error_organization_not_found');
    }
    expect(await documentTotal(account)).toBe(before);
  });

  it('refuses an int64 beyond 2^53 in the JSON body instead of rounding it (D3.2)', async () => {
    const before = await documentTotal(account);
    const response = await send(t.app, account.writeToken, {
      method: 'POST',
      url: '/api/inbound/',
      payload: `{"organizationId": ${account.organizationId}, "type": "INCOME", "invoiceNumber": 9007199254740993}`,
    });
    expectValidation(response, /invoiceNumber/);
    expect(await documentTotal(account)).toBe(before);
  });

  it('answers malformed JSON with error_validation on field body', async () => {
    const response = await send(t.app, account.writeToken, {
      method: 'POST',
      url: '/api/inbound/',
      payload: `{"organizationId": ${account.organizationId}, "type": "INCOME",`,
    });
    expectValidation(response, 'body');
  });

  it('answers a body larger than the limit with 413 error_payload_too_large', async () => {
    const comment = 'x'.repeat(t.config.bodyLimitBytes + 1024);
    const response = await send(t.app, account.writeToken, {
      method: 'POST',
      url: '/api/inbound/',
      payload: createBody({ comment }),
    });
    expectError(response, 413, 'error_payload_too_large', { limit: t.config.bodyLimitBytes });
  });
});

/** Number of documents of `client` (deleted included), through `find` with `count=true`. */
async function documentTotal(client: TestAccount): Promise<number | undefined> {
  const response = await send(t.app, client.readToken, {
    method: 'GET',
    url: '/api/inbound/find',
    query: { count: true, deleted: true, limit: 1 },
  });
  return expectHal<ListPage<Order>>(response).total;
}

describe('GET /api/inbound/{orderId}', () => {
  it('returns the document with its positions as application/hal+json with _links.self (D5.11)', async () => {
    const created = await newOrder();
    const order = await getOrder(t.app, account.readToken, created.id);
    expect(order).toMatchObject({
      id: created.id,
      versionId: created.versionId,
      clientId: account.clientId,
      status: 'CREATED',
      totalQuantity: created.totalQuantity,
      totalPrice: created.totalPrice,
    });
    expect(order.products).toEqual(created.products);
    expectSelfLink(order, `/api/inbound/${created.id}`);
    expect(order.products).toHaveLength(1);
  });

  it('accepts the documented options', async () => {
    const created = await newOrder();
    const response = await send(t.app, account.readToken, {
      method: 'GET',
      url: `/api/inbound/${created.id}`,
      query: {
        withReservedStocks: true,
        withComponents: false,
        replaceSetByComponent: false,
        forceReplaceSetByComponent: false,
        calculatePriceSums: true,
        withWarehouse: true,
        limit: 10,
        page: 1,
      },
    });
    expect(expectHal<Order>(response).id).toBe(created.id);
  });

  it('refuses a non-numeric orderId and answers a missing one with 404 (D3.2, D2.5)', async () => {
    expectValidation(
      await send(t.app, account.readToken, { method: 'GET', url: '/api/inbound/abc' }),
      'orderId',
    );
    expectNotFound(
      await send(t.app, account.readToken, { method: 'GET', url: `/api/inbound/${MISSING_ID}` }),
      MISSING_ID,
    );
  });
});

describe('PATCH /api/inbound/', () => {
  const patch = (payload: unknown) =>
    send(t.app, account.writeToken, { method: 'PATCH', url: '/api/inbound/', payload });

  it('changes the given fields, keeps the others and increases versionId (D5.2)', async () => {
    const created = await newOrder();
    const response = await patch({
      id: created.id,
      versionId: created.versionId,
      name: 'Renamed',
      externalOrderId: 'EXT-9',
    });
    const patched = expectHal<Order>(response);
    expectSelfLink(patched, `/api/inbound/${created.id}`);
    expect(patched).toMatchObject({
      id: created.id,
      name: 'Renamed',
      externalOrderId: 'EXT-9',
      type: 'INCOME',
    });
    expect(patched.versionId).toBeGreaterThan(created.versionId);
    const read = await getOrder(t.app, account.readToken, created.id);
    expect(read).toMatchObject({
      name: 'Renamed',
      externalOrderId: 'EXT-9',
      totalQuantity: 4,
      totalPrice: 100,
    });
    expect(read.products).toHaveLength(1);
    expect(read.versionId).toBe(patched.versionId);
  });

  it('applies a change without versionId (last write wins) (D5.2)', async () => {
    const created = await newOrder();
    const patched = expectHal<Order>(await patch({ id: created.id, comment: 'no version' }));
    expect(patched.comment).toBe('no version');
    expect(patched.versionId).toBeGreaterThan(created.versionId);
  });

  it('refuses a stale versionId with 409 error_version_conflict; nothing changes (D5.2)', async () => {
    const created = await newOrder();
    expectHal<Order>(await patch({ id: created.id, versionId: created.versionId, name: 'First' }));
    const before = await snapshot(t.app, account.readToken, created.id);
    const response = await patch({ id: created.id, versionId: created.versionId, name: 'Second' });
    const body = expectError(response, 409, 'error_version_conflict');
    expect(String(body.params.id)).toBe(String(created.id));
    expect(String(body.params.currentVersionId)).toBe(String(before.order.versionId));
    expect(await snapshot(t.app, account.readToken, created.id)).toEqual(before);
  });

  it('lets exactly one of two concurrent PATCHes with the same versionId win (D5.2)', async () => {
    const created = await newOrder();
    const responses = await Promise.all(
      ['Left', 'Right'].map((name) => patch({ id: created.id, versionId: created.versionId, name })),
    );
    const codes = responses.map((response) => response.statusCode).sort();
    expect(codes).toEqual([200, 409]);
    const winner = responses.find((response) => response.statusCode === 200)?.json<Order>();
    const loser = responses.find((response) => response.statusCode === 409);
    expectError(loser as NonNullable<typeof loser>, 409, 'error_version_conflict');
    const read = await getOrder(t.app, account.readToken, created.id);
    expect(read.name).toBe(winner?.name);
    expect(read.versionId).toBe(winner?.versionId);
  });

  it('ignores read-only fields (status, totals, deleted) (D5.1)', async () => {
    const created = await newOrder();
    const patched = expectHal<Order>(
      await patch({
        id: created.id,
        status: 'FINISHED',
        totalQuantity: 1,
        totalPrice: 1,
        deleted: true,
        comment: 'c',
      }),
    );
    expect(patched).toMatchObject({
      status: 'CREATED',
      totalQuantity: 4,
      totalPrice: 100,
      deleted: false,
      comment: 'c',
    });
  });

  it('requires id and validates field types (D3.2)', async () => {
    const created = await newOrder();
    expectValidation(await patch({ name: 'no id' }), 'id');
    expectValidation(await patch({ id: created.id, type: 'GIFT' }), 'type');
    expectValidation(await patch({ id: created.id, express: 'maybe' }), 'express');
  });

  it("refuses moving the document to another client's organization", async () => {
    const created = await newOrder();
    const before = await snapshot(t.app, account.readToken, created.id);
    expectError(
      await patch({ id: created.id, organizationId: other.organizationId }),
      400,
      'error_organization_not_found',
    );
    expect(await snapshot(t.app, account.readToken, created.id)).toEqual(before);
  });

  it('answers a missing id with 404 error_not_found (D2.5)', async () => {
    expectNotFound(await patch({ id: MISSING_ID, name: 'x' }), MISSING_ID);
  });
});

describe('DELETE /api/inbound/{orderId}', () => {
  it('marks the document deleted (200, empty body), GET still returns it, deleted=false restores it (D5.5)', async () => {
    const created = await newOrder();
    expectEmpty(
      await send(t.app, account.writeToken, { method: 'DELETE', url: `/api/inbound/${created.id}` }),
    );
    const deleted = await getOrder(t.app, account.readToken, created.id);
    expect(deleted.deleted).toBe(true);
    expect(deleted.versionId).toBeGreaterThan(created.versionId);

    expectEmpty(
      await send(t.app, account.writeToken, {
        method: 'DELETE',
        url: `/api/inbound/${created.id}`,
        query: { deleted: false },
      }),
    );
    const restored = await getOrder(t.app, account.readToken, created.id);
    expect(restored.deleted).toBe(false);
    expect(restored.versionId).toBeGreaterThan(deleted.versionId);
  });

  it('refuses a non-boolean deleted and a non-numeric id (D3.2)', async () => {
    const created = await newOrder();
    expectValidation(
      await send(t.app, account.writeToken, {
        method: 'DELETE',
        url: `/api/inbound/${created.id}`,
        query: { deleted: 'perhaps' },
      }),
      'deleted',
    );
    expectValidation(
      await send(t.app, account.writeToken, { method: 'DELETE', url: '/api/inbound/x1' }),
      'orderId',
    );
  });
});

describe('POST /api/inbound/{orderId}/product (add)', () => {
  const add = (orderId: number, payload: unknown) =>
    send(t.app, account.writeToken, { method: 'POST', url: `/api/inbound/${orderId}/product`, payload });

  it('adds a position, returns it as OrderProduct and recomputes the totals (D5.3)', async () => {
    const created = await newOrder();
    const line = productLine({
      quantity: 6,
      price: 1.5,
      product: { name: 'Scarf', article: 'S-1', barcode: '4600000000028' },
    });
    const position = expectHal<OrderProduct>(await add(created.id, line));
    for (const field of POSITION_FIELDS) expect(position, field).toHaveProperty(field);
    expect(position).toMatchObject({
      orderId: created.id,
      productId: line.productId,
      quantity: 6,
      price: 1.5,
      introducedQuantity: 0,
      product: { id: line.productId, name: 'Scarf', article: 'S-1', barcode: '4600000000028' },
    });
    expectSelfLink(position, /\/api\/inbound\//);
    const order = await getOrder(t.app, account.readToken, created.id);
    expect(order).toMatchObject({ totalQuantity: 10, totalPrice: 109 });
    expect(order.versionId).toBeGreaterThan(created.versionId);
    expect(positionOf(order, line.productId).id).toBe(position.id);
  });

  it('refuses a second position of the same product; nothing changes (D5.3)', async () => {
    const line = productLine({ quantity: 4, price: 25 });
    const created = await newOrder([line]);
    const before = await snapshot(t.app, account.readToken, created.id);
    expectValidation(await add(created.id, { ...line, quantity: 1 }), 'productId');
    expect(await snapshot(t.app, account.readToken, created.id)).toEqual(before);
  });

  it('refuses a negative quantity, a price with 3 decimals, wrong types and a missing productId (D5.3, D3.2)', async () => {
    const created = await newOrder();
    expectValidation(await add(created.id, productLine({ quantity: -2 })), 'quantity');
    expectValidation(await add(created.id, productLine({ quantity: 1.5 })), 'quantity');
    expectValidation(await add(created.id, productLine({ price: 10.005 })), 'price');
    expectValidation(await add(created.id, productLine({ price: -1 })), 'price');
    expectValidation(await add(created.id, { ...productLine(), quantity: 'six' }), 'quantity');
    expectValidation(await add(created.id, { quantity: 1, price: 1 }), 'productId');
    expectValidation(await add(created.id, `{"productId": 9007199254740993, "quantity": 1}`), /productId/);
  });
});

describe('PUT /api/inbound/{orderId}/product (update)', () => {
  const update = (orderId: number, payload: unknown) =>
    send(t.app, account.writeToken, { method: 'PUT', url: `/api/inbound/${orderId}/product`, payload });

  it('updates a position by productId with the current versionId and recomputes totals (D5.2, D5.3)', async () => {
    const line = productLine({ quantity: 4, price: 25 });
    const created = await newOrder([line]);
    const position = expectHal<OrderProduct>(
      await update(created.id, {
        productId: line.productId,
        quantity: 8,
        price: 12.34,
        versionId: created.versionId,
      }),
    );
    expect(position).toMatchObject({
      orderId: created.id,
      productId: line.productId,
      quantity: 8,
      price: 12.34,
    });
    expectSelfLink(position, /\/api\/inbound\//);
    const order = await getOrder(t.app, account.readToken, created.id);
    expect(order).toMatchObject({ totalQuantity: 8, totalPrice: 98.72 });
    expect(order.versionId).toBeGreaterThan(created.versionId);
  });

  it('updates a position identified by its position id', async () => {
    const line = productLine({ quantity: 4, price: 25 });
    const created = await newOrder([line]);
    const positionId = positionOf(created, line.productId).id;
    const position = expectHal<OrderProduct>(await update(created.id, { id: positionId, quantity: 1 }));
    expect(position).toMatchObject({ id: positionId, productId: line.productId, quantity: 1 });
  });

  it('refuses a stale versionId with 409 error_version_conflict; nothing changes (D5.2)', async () => {
    const line = productLine({ quantity: 4, price: 25 });
    const created = await newOrder([line]);
    expectHal<OrderProduct>(
      await update(created.id, { productId: line.productId, quantity: 5, versionId: created.versionId }),
    );
    const before = await snapshot(t.app, account.readToken, created.id);
    const response = await update(created.id, {
      productId: line.productId,
      quantity: 6,
      versionId: created.versionId,
    });
    expectError(response, 409, 'error_version_conflict');
    expect(await snapshot(t.app, account.readToken, created.id)).toEqual(before);
  });

  it('refuses invalid values and answers a product not in the document with 404 (D5.3, D2.5)', async () => {
    const line = productLine({ quantity: 4, price: 25 });
    const created = await newOrder([line]);
    expectValidation(await update(created.id, { productId: line.productId, quantity: -1 }), 'quantity');
    expectValidation(await update(created.id, { productId: line.productId, price: 0.001 }), 'price');
    expectError(await update(created.id, { productId: newProductId(), quantity: 1 }), 404, 'error_not_found');
  });
});

describe('POST /api/inbound/{orderId}/status', () => {
  const setTo = (orderId: number, status?: string) =>
    send(t.app, account.writeToken, {
      method: 'POST',
      url: `/api/inbound/${orderId}/status`,
      ...(status === undefined ? {} : { query: { status } }),
    });

  it('sets any listed status (200, empty); the same status again is a no-op (D5.4)', async () => {
    const created = await newOrder();
    expectEmpty(await setTo(created.id, 'READY_TO_SUPPLY'));
    const changed = await getOrder(t.app, account.readToken, created.id);
    expect(changed.status).toBe('READY_TO_SUPPLY');
    expect(changed.versionId).toBeGreaterThan(created.versionId);

    const before = await snapshot(t.app, account.readToken, created.id);
    expectEmpty(await setTo(created.id, 'READY_TO_SUPPLY'));
    expect(await snapshot(t.app, account.readToken, created.id)).toEqual(before);

    expectEmpty(await setTo(created.id, 'CREATED'));
    expect((await getOrder(t.app, account.readToken, created.id)).status).toBe('CREATED');
  });

  it('refuses a missing or unknown status naming field status (D3.2)', async () => {
    const created = await newOrder();
    expectValidation(await setTo(created.id), 'status');
    expectValidation(await setTo(created.id, 'LOST'), 'status');
    expectValidation(await setTo(created.id, 'created'), 'status');
  });
});

describe('POST /api/inbound/status (bulk)', () => {
  const bulk = (ids: unknown, status = 'PACKING', token = account.writeToken) =>
    send(t.app, token, { method: 'POST', url: '/api/inbound/status', query: { status }, payload: ids });
  const sortedIds = (value: unknown) => (value as unknown[]).map(String).sort();

  it('sets the status of every listed document (200, empty) (D5.4)', async () => {
    const first = await newOrder();
    const second = await newOrder();
    expectEmpty(await bulk([first.id, second.id], 'SUPPLIED'));
    expect((await getOrder(t.app, account.readToken, first.id)).status).toBe('SUPPLIED');
    expect((await getOrder(t.app, account.readToken, second.id)).status).toBe('SUPPLIED');
  });

  it('is all-or-nothing: unknown and foreign ids → 404 error_not_found listing all of them, nothing changes (D5.4)', async () => {
    const good = await newOrder();
    const foreign = await createOrder(t.app, other.writeToken, {
      organizationId: other.organizationId,
      type: 'INCOME',
    });
    const before = await snapshot(t.app, account.readToken, good.id);
    const foreignBefore = await snapshot(t.app, other.readToken, foreign.id);

    const body = expectError(await bulk([good.id, MISSING_ID, foreign.id]), 404, 'error_not_found');
    expect(sortedIds(body.params.ids)).toEqual([String(MISSING_ID), String(foreign.id)].sort());

    expect(await snapshot(t.app, account.readToken, good.id)).toEqual(before);
    expect(await snapshot(t.app, other.readToken, foreign.id)).toEqual(foreignBefore);
  });

  it('is all-or-nothing: deleted ids → 400 error_order_deleted listing them, nothing changes (D5.4)', async () => {
    const good = await newOrder();
    const gone = await newOrder();
    const goneToo = await newOrder();
    await deleteOrder(t.app, account.writeToken, gone.id);
    await deleteOrder(t.app, account.writeToken, goneToo.id);
    const before = await snapshot(t.app, account.readToken, good.id);
    const goneBefore = await snapshot(t.app, account.readToken, gone.id);

    const body = expectError(await bulk([good.id, gone.id, goneToo.id]), 400, 'error_order_deleted');
    expect(sortedIds(body.params.ids)).toEqual([String(gone.id), String(goneToo.id)].sort());

    expect(await snapshot(t.app, account.readToken, good.id)).toEqual(before);
    expect(await snapshot(t.app, account.readToken, gone.id)).toEqual(goneBefore);
  });

  it('changes nothing when unknown and deleted ids are mixed (D5.4)', async () => {
    const good = await newOrder();
    const gone = await newOrder();
    await deleteOrder(t.app, account.writeToken, gone.id);
    const before = await snapshot(t.app, account.readToken, good.id);
    const response = await bulk([good.id, gone.id, MISSING_ID]);
    expect([400, 404]).toContain(response.statusCode);
    expect(['error_order_deleted', 'error_not_found']).toContain(response.json<{ error: string }>().error);
    expect(await snapshot(t.app, account.readToken, good.id)).toEqual(before);
  });

  it('validates the status and the id array (D3.2)', async () => {
    const good = await newOrder();
    expectValidation(await bulk([good.id], 'LOST'), 'status');
    expectValidation(await bulk([]), 'body');
    // Up to 10,000 ids per call (D5.4).
    expectValidation(await bulk(Array.from({ length: 10_001 }, (_, index) => good.id + index)), 'body');
    expectValidation(await bulk(['abc']), '0');
    expectValidation(await bulk(`[${good.id}, 9007199254740993]`), /^(body|1)$/);
  });
});

describe('divergence: GET /api/inbound/{orderId}/divergence and POST .../divergence/fix', () => {
  it('lists positions whose packed quantity differs from the supplied one, with totals (D5.7)', async () => {
    const packedFully = productLine({ quantity: 2, price: 1 });
    const notPacked = productLine({ quantity: 3, price: 1 });
    const created = await newOrder([packedFully, notPacked]);
    await putPackages(t.app, account.writeToken, created.id, [
      {
        number: 'P1',
        items: [{ orderProductId: positionOf(created, packedFully.productId).id, quantity: 2 }],
      },
    ]);
    const response = await send(t.app, account.readToken, {
      method: 'GET',
      url: `/api/inbound/${created.id}/divergence`,
    });
    const divergence = expectHal<TotalDivergence>(response);
    expectSelfLink(divergence, `/api/inbound/${created.id}/divergence`);
    expect(divergence).toMatchObject({ totalSupplied: 5, totalPacked: 2 });
    expect(divergence.divergence).toHaveLength(1);
    expect(divergence.divergence[0]).toMatchObject({
      orderId: created.id,
      product: { id: notPacked.productId },
      supplyQuantity: 3,
      packedQuantity: 0,
    });
  });

  it('fix sets each quantity to its packed quantity (200, empty), leaves no divergence and writes history (D5.7)', async () => {
    const line = productLine({ quantity: 5, price: 2 });
    const created = await newOrder([line]);
    await putPackages(t.app, account.writeToken, created.id, [
      { number: 'P1', items: [{ orderProductId: positionOf(created, line.productId).id, quantity: 4 }] },
    ]);
    const historyBefore = await getHistory(t.app, account.readToken, created.id, { count: true });
    expectEmpty(
      await send(t.app, account.writeToken, {
        method: 'POST',
        url: `/api/inbound/${created.id}/divergence/fix`,
      }),
    );
    const divergence = expectHal<TotalDivergence>(
      await send(t.app, account.readToken, { method: 'GET', url: `/api/inbound/${created.id}/divergence` }),
    );
    expect(divergence).toMatchObject({ divergence: [], totalSupplied: 4, totalPacked: 4 });
    const order = await getOrder(t.app, account.readToken, created.id);
    expect(positionOf(order, line.productId).quantity).toBe(4);
    expect(order).toMatchObject({ totalQuantity: 4, totalPrice: 8 });
    const historyAfter = await getHistory(t.app, account.readToken, created.id, { count: true });
    expect(historyAfter.total).toBe((historyBefore.total ?? 0) + 1);
  });
});

describe('cargo places: POST /api/inbound/updateOrderPackage and GET /api/inbound/getOrderPackage', () => {
  it('replaces the packages: rows with packageId updated, new ones created, missing ones removed (D5.6)', async () => {
    const a = productLine({ quantity: 5 });
    const b = productLine({ quantity: 5 });
    const created = await newOrder([a, b]);
    const aId = positionOf(created, a.productId).id;
    const bId = positionOf(created, b.productId).id;
    await putPackages(t.app, account.writeToken, created.id, [
      {
        number: 'BOX-1',
        width: 10,
        height: 20,
        length: 30,
        weight: 400,
        items: [{ orderProductId: aId, quantity: 5 }],
      },
      { number: 'BOX-2', items: [{ orderProductId: bId, quantity: 2 }] },
    ]);
    const response = await send(t.app, account.readToken, {
      method: 'GET',
      url: '/api/inbound/getOrderPackage',
      query: { orderId: created.id },
    });
    const first = expectHal<NonNullable<Order['packages']>>(response);
    expect(first).toHaveLength(2);
    const box1 = first.find((box) => box.number === 'BOX-1');
    expect(box1).toMatchObject({
      orderId: created.id,
      width: 10,
      height: 20,
      length: 30,
      weight: 400,
      items: [{ orderProductId: aId, productId: a.productId, quantity: 5 }],
    });
    expect(box1?.packageId).toBeTypeOf('number');
    expect(box1?.items?.[0]?.packageId).toBe(box1?.packageId);

    await putPackages(t.app, account.writeToken, created.id, [
      { packageId: box1?.packageId, number: 'BOX-1A', items: [{ orderProductId: aId, quantity: 4 }] },
      { number: 'BOX-3', items: [{ orderProductId: bId, quantity: 5 }] },
    ]);
    const second = await getPackages(t.app, account.readToken, created.id);
    expect(second.map((box) => box.number).sort()).toEqual(['BOX-1A', 'BOX-3']);
    const renamed = second.find((box) => box.number === 'BOX-1A');
    expect(renamed?.packageId).toBe(box1?.packageId);
    expect(renamed?.items).toMatchObject([{ orderProductId: aId, quantity: 4 }]);
    expect(second.find((box) => box.number === 'BOX-3')?.items).toMatchObject([
      { orderProductId: bId, quantity: 5 },
    ]);

    await putPackages(t.app, account.writeToken, created.id, []);
    expect(await getPackages(t.app, account.readToken, created.id)).toEqual([]);
  });

  it("refuses an item of another document's position; nothing changes (D5.6)", async () => {
    const created = await newOrder();
    const elsewhere = await newOrder();
    const before = await snapshot(t.app, account.readToken, created.id);
    const response = await send(t.app, account.writeToken, {
      method: 'POST',
      url: '/api/inbound/updateOrderPackage',
      query: { orderId: created.id },
      payload: [
        { number: 'OK', items: [{ orderProductId: created.products?.[0]?.id, quantity: 1 }] },
        { number: 'BAD', items: [{ orderProductId: elsewhere.products?.[0]?.id, quantity: 1 }] },
      ],
    });
    // The second cargo place's first item is the offending field, as a dotted path (D3.2).
    expectValidation(response, '1.items.0.orderProductId');
    expect(await snapshot(t.app, account.readToken, created.id)).toEqual(before);
  });

  it('validates orderId and the items (D3.2)', async () => {
    const created = await newOrder();
    const post = (query: Record<string, string | number>, payload: unknown) =>
      send(t.app, account.writeToken, {
        method: 'POST',
        url: '/api/inbound/updateOrderPackage',
        query,
        payload,
      });
    expectValidation(await post({}, []), 'orderId');
    expectValidation(await post({ orderId: 'x' }, []), 'orderId');
    expectValidation(
      await post({ orderId: created.id }, [
        { items: [{ orderProductId: created.products?.[0]?.id, quantity: -1 }] },
      ]),
      '0.items.0.quantity',
    );
    expectValidation(
      await send(t.app, account.readToken, { method: 'GET', url: '/api/inbound/getOrderPackage' }),
      'orderId',
    );
  });
});

describe('POST /api/inbound/setOrderMarkingStatus', () => {
  it('sets the marking status (200, empty) and validates it (D3.2)', async () => {
    const created = await newOrder();
    const post = (query: Record<string, string | number>) =>
      send(t.app, account.writeToken, { method: 'POST', url: '/api/inbound/setOrderMarkingStatus', query });
    expectEmpty(await post({ orderId: created.id, status: 'MARKS_RECEIVED' }));
    const order = await getOrder(t.app, account.readToken, created.id);
    expect(order.markingStatus).toBe('MARKS_RECEIVED');
    expect(order.versionId).toBeGreaterThan(created.versionId);
    expectValidation(await post({ orderId: created.id, status: 'SIGNED' }), 'status');
    expectValidation(await post({ orderId: created.id }), 'status');
    expectValidation(await post({ status: 'SUCCESS' }), 'orderId');
  });
});

describe('receiving stock at FINISHED (D5.8)', () => {
  it('records stock only for INCOME documents', async () => {
    const line = productLine({ quantity: 5, price: 1 });
    const movement = await createOrder(t.app, account.writeToken, {
      organizationId: account.organizationId,
      type: 'MOVEMENT',
      products: [line],
    });
    await setStatus(t.app, account.writeToken, movement.id, 'FINISHED');
    const read = await getOrder(t.app, account.readToken, movement.id);
    expect(read.status).toBe('FINISHED');
    expect(positionOf(read, line.productId).introducedQuantity).toBe(0);
  });

  it('records the stock once when a document reaches FINISHED again', async () => {
    const line = productLine({ quantity: 5, price: 1 });
    const created = await newOrder([line]);
    await setStatus(t.app, account.writeToken, created.id, 'FINISHED');
    await setStatus(t.app, account.writeToken, created.id, 'PACKING');
    await setStatus(t.app, account.writeToken, created.id, 'FINISHED');
    const read = await getOrder(t.app, account.readToken, created.id);
    expect(positionOf(read, line.productId).introducedQuantity).toBe(5);
  });
});

describe('POST /api/inbound/removeIncomeStock', () => {
  it('reverses the stock received at FINISHED (200, empty) once (D5.8)', async () => {
    const line = productLine({ quantity: 7, price: 3 });
    const created = await newOrder([line]);
    await setStatus(t.app, account.writeToken, created.id, 'FINISHED');
    expect(
      positionOf(await getOrder(t.app, account.readToken, created.id), line.productId).introducedQuantity,
    ).toBe(7);
    const remove = () =>
      send(t.app, account.writeToken, {
        method: 'POST',
        url: '/api/inbound/removeIncomeStock',
        query: { orderId: created.id },
      });
    expectEmpty(await remove());
    const removed = await snapshot(t.app, account.readToken, created.id);
    expect(positionOf(removed.order, line.productId).introducedQuantity).toBe(0);
    expectEmpty(await remove());
    expect(await snapshot(t.app, account.readToken, created.id)).toEqual(removed);
  });

  it('reverses the stock once even when two removals run at the same time (D5.8)', async () => {
    const line = productLine({ quantity: 4, price: 1 });
    const created = await newOrder([line]);
    await setStatus(t.app, account.writeToken, created.id, 'FINISHED');
    const before = await getHistory(t.app, account.readToken, created.id, { count: true });
    const responses = await Promise.all(
      [1, 2].map(() =>
        send(t.app, account.writeToken, {
          method: 'POST',
          url: '/api/inbound/removeIncomeStock',
          query: { orderId: created.id },
        }),
      ),
    );
    for (const response of responses) expectEmpty(response);
    const after = await snapshot(t.app, account.readToken, created.id);
    expect(positionOf(after.order, line.productId).introducedQuantity).toBe(0);
    expect(after.historyTotal).toBe((before.total ?? 0) + 1);
  });

  it('validates orderId (D3.2)', async () => {
    expectValidation(
      await send(t.app, account.writeToken, { method: 'POST', url: '/api/inbound/removeIncomeStock' }),
      'orderId',
    );
    expectValidation(
      await send(t.app, account.writeToken, {
        method: 'POST',
        url: '/api/inbound/removeIncomeStock',
        query: { orderId: '1.5' },
      }),
      'orderId',
    );
  });
});

describe('GET /api/inbound/{orderId}/history', () => {
  it('pages OrderHistory rows newest first; total only with count=true (D5.9, D4.2)', async () => {
    const created = await newOrder();
    await setStatus(t.app, account.writeToken, created.id, 'PACKING');
    await setStatus(t.app, account.writeToken, created.id, 'SUPPLIED');
    const page = await getHistory(t.app, account.readToken, created.id);
    expectSelfLink(page, `/api/inbound/${created.id}/history`);
    expect(page.page).toBe(1);
    expect(page).not.toHaveProperty('total');
    expect(page.rows).toHaveLength(3);
    const [newest] = page.rows as [OrderHistory];
    for (const field of [
      'id',
      'orderId',
      'organizationId',
      'clientId',
      'date',
      'userId',
      'orderStatus',
      'orderType',
      'totalQuantity',
      'totalPrice',
      'versionId',
    ])
      expect(newest, field).toHaveProperty(field);
    expect(newest).toMatchObject({
      orderId: created.id,
      organizationId: account.organizationId,
      clientId: account.clientId,
      userId: account.userId,
      orderStatus: 'SUPPLIED',
      orderType: 'INCOME',
      totalQuantity: 4,
      totalPrice: 100,
    });
    expect(page.rows.map((row) => row.orderStatus)).toEqual(['SUPPLIED', 'PACKING', 'CREATED']);

    const counted = await getHistory(t.app, account.readToken, created.id, {
      count: true,
      limit: 1,
      page: 2,
    });
    expect(counted).toMatchObject({ page: 2, total: 3 });
    expect(counted.rows).toHaveLength(1);
    expect(counted.rows[0]?.id).toBe(page.rows[1]?.id);
  });

  it('records what changed in each row (D5.9)', async () => {
    const created = await createOrder(t.app, account.writeToken, createBody({ name: 'Before' }));
    expectHal<Order>(
      await send(t.app, account.writeToken, {
        method: 'PATCH',
        url: '/api/inbound/',
        payload: { id: created.id, name: 'After' },
      }),
    );
    const [newest, oldest] = (await getHistory(t.app, account.readToken, created.id)).rows;
    expect(typeof newest?.action).toBe('string');
    expect(newest?.action).not.toBe(oldest?.action);
    expect(newest?.changes).toMatchObject({ name: { from: 'Before', to: 'After' } });
  });

  it('validates limit 1..500 and page ≥ 1 (D4.1)', async () => {
    const created = await newOrder();
    const history = (query: Record<string, string | number>) =>
      send(t.app, account.readToken, { method: 'GET', url: `/api/inbound/${created.id}/history`, query });
    expectValidation(await history({ limit: 501 }), 'limit');
    expectValidation(await history({ limit: 0 }), 'limit');
    expectValidation(await history({ page: 0 }), 'page');
    expectHal<ListPage<OrderHistory>>(await history({ limit: 500 }));
  });
});

describe('GET /api/inbound/find', () => {
  it('returns {rows, page, _links} without products; validates limit, page and enum filters (D4, D5.10)', async () => {
    const created = await newOrder();
    const page = expectHal<ListPage<Order>>(
      await send(t.app, account.readToken, {
        method: 'GET',
        url: '/api/inbound/find',
        query: { ids: [created.id] },
      }),
    );
    expectSelfLink(page, '/api/inbound/find');
    expect(page.page).toBe(1);
    expect(page).not.toHaveProperty('total');
    expect(page.rows).toHaveLength(1);
    expect(page.rows[0]).toMatchObject({ id: created.id, totalQuantity: 4 });
    expect(page.rows[0]).not.toHaveProperty('products');

    const find = (query: Record<string, string | number>) =>
      send(t.app, account.readToken, { method: 'GET', url: '/api/inbound/find', query });
    expectValidation(await find({ limit: 501 }), 'limit');
    expectValidation(await find({ page: 0 }), 'page');
    expectValidation(await find({ status: 'LOST' }), 'status');
    expectValidation(await find({ statuses: 'LOST' }), /^statuses(\.0)?$/);
    expectValidation(await find({ sortBy: 'COLOUR' }), 'sortBy');
    expectValidation(await find({ type: 'GIFT' }), 'type');
  });
});

describe('a deleted document rejects every change except restore with 400 error_order_deleted (D5.4, D5.5)', () => {
  it('refuses PATCH, product add/update, status, marking, packages, fix and stock removal; reads still work', async () => {
    const line = productLine({ quantity: 3, price: 2 });
    const created = await newOrder([line]);
    const positionId = positionOf(created, line.productId).id;
    await deleteOrder(t.app, account.writeToken, created.id);
    const before = await snapshot(t.app, account.readToken, created.id);
    expect(before.order.deleted).toBe(true);

    const changes = [
      { method: 'PATCH', url: '/api/inbound/', payload: { id: created.id, name: 'x' } },
      { method: 'POST', url: `/api/inbound/${created.id}/product`, payload: productLine() },
      {
        method: 'PUT',
        url: `/api/inbound/${created.id}/product`,
        payload: { productId: line.productId, quantity: 1 },
      },
      { method: 'POST', url: `/api/inbound/${created.id}/status`, query: { status: 'PACKING' } },
      { method: 'POST', url: `/api/inbound/${created.id}/divergence/fix` },
      {
        method: 'POST',
        url: '/api/inbound/updateOrderPackage',
        query: { orderId: created.id },
        payload: [{ number: 'B', items: [{ orderProductId: positionId, quantity: 1 }] }],
      },
      {
        method: 'POST',
        url: '/api/inbound/setOrderMarkingStatus',
        query: { orderId: created.id, status: 'SUCCESS' },
      },
      { method: 'POST', url: '/api/inbound/removeIncomeStock', query: { orderId: created.id } },
    ] as const;
    for (const change of changes) {
      const body = expectError(await send(t.app, account.writeToken, change), 400, 'error_order_deleted');
      expect(String(body.params.id), `${change.method} ${change.url}`).toBe(String(created.id));
    }
    expect(await snapshot(t.app, account.readToken, created.id)).toEqual(before);

    expectHal<TotalDivergence>(
      await send(t.app, account.readToken, { method: 'GET', url: `/api/inbound/${created.id}/divergence` }),
    );
    await deleteOrder(t.app, account.writeToken, created.id, false);
    expectEmpty(
      await send(t.app, account.writeToken, {
        method: 'POST',
        url: `/api/inbound/${created.id}/status`,
        query: { status: 'PACKING' },
      }),
    );
    expect((await getOrder(t.app, account.readToken, created.id)).status).toBe('PACKING');
  });
});
