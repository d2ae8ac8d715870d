/**
 * Uncached GET and `find` take each document's JSON text from PostgreSQL (src/modules/inbound/order-json.ts).
 * These tests hold those bytes equal to what the presenter gives for the same rows (`JSON.stringify` of
 * `presentOrder`, the path webhook events still use), over documents with every edge: NULL and set values of
 * each field, escapes and non-ASCII text, microsecond and pre-1000 timestamps, prices whose shortest decimal
 * differs from their stored text, a base URL that needs escaping, and product paging.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/test-app.ts';
import { presentOrder } from '../../src/modules/inbound/presenter.ts';
import { renderOrders } from '../../src/modules/inbound/render.ts';
import { orderRepository } from '../../src/modules/inbound/repository.ts';
import { newCaller, productId, type Caller } from './support.ts';

const BASE_URL = 'https://ops.example.test/seller "ops"\\x';
const NASTY = 'quote " backslash \\ slash / tab \t newline \n cr \r bs \b ff \f ctl \u0001\u001f del \u007f';
const UNICODE = 'Приёмка №5 — 🚚 \u2028\u2029 é';

let t: TestApp;
let c: Caller;
let ids: number[];

/** The presenter's bytes of a document with all (or a page of) its positions. */
async function presented(id: number, page?: { limit: number; offset: number }): Promise<string> {
  const order = (await renderOrders(t.runtime.database.db, [id], BASE_URL)).get(id);
  if (!order) throw new Error(`document ${id} not rendered`);
  const products = page ? order.products?.slice(page.offset, page.offset + page.limit) : order.products;
  return JSON.stringify({ ...order, products, _links: order._links });
}

beforeAll(async () => {
  t = await buildTestApp({ PUBLIC_BASE_URL: BASE_URL });
  c = await newCaller(t.app, t.runtime);
  ids = [];
  ids.push((await c.create({ type: 'INCOME' })).id);
  ids.push(
    (
      await c.create({
        type: 'FBS',
        name: NASTY,
        comment: UNICODE,
        boxType: 'MONO',
        markingType: 'IMPORT',
        warehouseId: 7,
        stockWarehouseId: 2 ** 40,
        serviceWarehouseId: 'W-"1"',
        externalOrderId: UNICODE,
        invoiceNumber: 9_007_199_254_740_991,
        trackingNumber: NASTY,
        supplyId: 5,
        supplierId: 6,
        incomeId: 8,
        userId: 2_147_483_647,
        express: true,
        updateInService: true,
        createdDate: '2024-02-29T23:59:59.999Z',
        deliveryDate: '2024-03-10T21:30:00Z',
        products: [
          { productId: productId(), quantity: 3, price: 0.1, product: { name: NASTY, article: UNICODE } },
          { productId: productId(), quantity: 1, price: 12_345_678_901_234.57, position: 4 },
          { productId: productId(), quantity: 0, price: 0 },
          { productId: productId(), quantity: 7, price: 636_911.8, product: { barcode: '0046' } },
        ],
      })
    ).id,
  );
  for (let index = 0; index < 30; index += 1) {
    const products = Array.from({ length: index % 4 }, (_, position) => ({
      productId: productId(),
      quantity: index + position,
      price: (index * 137 + position * 29) / 100,
    }));
    ids.push((await c.create({ name: `Receipt ${index}`, warehouseId: index, products })).id);
  }
  // values the API does not write: microseconds, early years, closed documents, a creating user
  const { db } = t.runtime.database;
  await sql`
    update inbound_order set
      created = '2024-01-01 00:00:00.123999+00', modified_date = '0999-12-31 23:59:59.000001+00',
      close_date = '2025-06-30 12:00:00.5+03', close_user_id = 42, created_user = ${NASTY}
    where id = ${ids[1]}`.execute(db);
  await sql`
    update inbound_order_product set created_user = ${UNICODE},
      created_date = '2023-12-31 23:59:59.999999+00', last_update_date = '2024-01-01 00:00:00.000999-05'
    where order_id = ${ids[1]}`.execute(db);
  // the shortest decimal of this price's double is …99999999999999.98 (JS and PostgreSQL agree)
  await sql`update inbound_order set total_price = 99999999999999.99 where id = ${ids[2]}`.execute(db);
  await sql`update inbound_order_product set price = 99999999999999.99 where order_id = ${ids[3]}`.execute(
    db,
  );
  await sql`
    update inbound_order set created_date = created - interval '1 microsecond' * id
    where id = any(${ids.slice(2)}::bigint[])`.execute(db);
});

afterAll(async () => {
  await t.close();
});

describe('uncached read bytes equal the presenter', () => {
  it('GET /api/inbound/{id} with all positions (D5.11)', async () => {
    for (const id of ids) {
      const answer = await c.call('GET', `/api/inbound/${id}`);
      expect(answer.status).toBe(200);
      expect(answer.raw).toBe(await presented(id));
    }
  });

  it('GET /api/inbound/{id} with product paging', async () => {
    const id = ids[1] as number;
    for (const [limit, page] of [
      [1, 1],
      [2, 2],
      [3, 2],
      [10, 1],
      [2, 5],
    ] as const) {
      const answer = await c.call('GET', `/api/inbound/${id}?limit=${limit}&page=${page}`);
      expect(answer.status).toBe(200);
      expect(answer.raw).toBe(await presented(id, { limit, offset: (page - 1) * limit }));
    }
  });

  it('find pages, with and without positions, with count', async () => {
    const { db } = t.runtime.database;
    const byId = new Map((await orderRepository.findMany(db, ids)).map((row) => [row.id, row]));
    const newestFirst = [...ids].sort((a, b) => b - a);
    for (const query of [
      'limit=100',
      'limit=100&count=true',
      'limit=7&page=2',
      'limit=100&withProducts=true',
    ]) {
      const path = `/api/inbound/find?${query}`;
      const answer = await c.call('GET', path);
      expect(answer.status).toBe(200);
      const params = new URLSearchParams(query);
      const limit = Number(params.get('limit'));
      const page = Number(params.get('page') ?? 1);
      const pageIds = newestFirst.slice((page - 1) * limit, page * limit);
      const rows = [];
      for (const id of pageIds)
        rows.push(
          params.has('withProducts')
            ? JSON.parse(await presented(id))
            : presentOrder(byId.get(id) as never, undefined, BASE_URL),
        );
      const expected = JSON.stringify({
        rows,
        page,
        ...(params.has('count') && { total: ids.length }),
        _links: { self: { href: `${BASE_URL}${path}` } },
      });
      expect(answer.raw).toBe(expected);
    }
  });
});
