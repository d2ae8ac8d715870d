/**
 * `GET /api/inbound/find` through HTTP (spec §4.1 filter set; decisions D4, D5.5, D5.10): each stored filter,
 * repeated array parameters, deleted documents hidden by default, paging with `total` only on `count=true`,
 * stable ordering with ties broken by id (pages never overlap or skip), and `withProducts`.
 * Every test works in a fresh account so that only its own documents can match.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/test-app.ts';
import { createAccount, type TestAccount } from '../helpers/factories.ts';
import {
  createOrder,
  deleteOrder,
  findOrders,
  marker,
  productLine,
  setStatus,
  type InboundRequest,
  type Order,
} from '../helpers/inbound.ts';

let t: TestApp;

beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => {
  await t.close();
});

/** A fresh account and a way to create its documents. */
async function workspace() {
  const account = await createAccount(t.runtime);
  const create = (body: Record<string, unknown> = {}) =>
    createOrder(t.app, account.writeToken, {
      organizationId: account.organizationId,
      type: 'INCOME',
      ...body,
    });
  const ids = async (query: InboundRequest['query'] = {}) =>
    (await findOrders(t.app, account.readToken, query)).rows.map((row) => row.id).sort((a, b) => a - b);
  return { account, create, ids };
}

const sorted = (...orders: Order[]) => orders.map((order) => order.id).sort((a, b) => a - b);

describe('filters', () => {
  it('status, and statuses as repeated parameters (a single value is a one-element array) (D4.3)', async () => {
    const { account, create, ids } = await workspace();
    const created = await create();
    const packing = await create();
    const supplied = await create();
    await setStatus(t.app, account.writeToken, packing.id, 'PACKING');
    await setStatus(t.app, account.writeToken, supplied.id, 'SUPPLIED');
    expect(await ids({ status: 'PACKING' })).toEqual(sorted(packing));
    expect(await ids({ statuses: ['PACKING', 'SUPPLIED'] })).toEqual(sorted(packing, supplied));
    expect(await ids({ statuses: ['CREATED'] })).toEqual(sorted(created));
    expect(await ids({ statuses: 'SUPPLIED' })).toEqual(sorted(supplied));
    expect(await ids({ status: 'CANCELED' })).toEqual([]);
  });

  it('type, organizationId and organizations', async () => {
    const { account, create, ids } = await workspace();
    const secondOrganization = await account.addOrganization();
    const income = await create();
    const movement = await create({ type: 'MOVEMENT' });
    const elsewhere = await create({ organizationId: secondOrganization, type: 'MOVEMENT' });
    expect(await ids({ type: 'INCOME' })).toEqual(sorted(income));
    expect(await ids({ type: 'MOVEMENT' })).toEqual(sorted(movement, elsewhere));
    expect(await ids({ organizationId: secondOrganization })).toEqual(sorted(elsewhere));
    expect(await ids({ organizationId: account.organizationId })).toEqual(sorted(income, movement));
    expect(await ids({ organizations: [secondOrganization] })).toEqual(sorted(elsewhere));
    expect(await ids({ type: 'MOVEMENT', organizationId: account.organizationId })).toEqual(sorted(movement));
  });

  it('ids as repeated parameters, and orderId', async () => {
    const { create, ids } = await workspace();
    const first = await create();
    const second = await create();
    const third = await create();
    expect(await ids({ ids: [first.id, third.id] })).toEqual(sorted(first, third));
    expect(await ids({ ids: [second.id] })).toEqual(sorted(second));
    expect(await ids({ orderId: second.id })).toEqual(sorted(second));
  });

  it('externalOrderId (exact) and query (document name or number)', async () => {
    const { create, ids } = await workspace();
    const external = marker('EXT');
    const named = marker('Receiving');
    const withExternal = await create({ externalOrderId: external });
    const withName = await create({ name: `Delivery ${named} from the supplier` });
    await create({ externalOrderId: marker('EXT'), name: 'Another delivery' });
    expect(await ids({ externalOrderId: external })).toEqual(sorted(withExternal));
    expect(await ids({ query: named })).toEqual(sorted(withName));
    expect(await ids({ query: String(withExternal.id) })).toContain(withExternal.id);
  });

  it('barcode (exact) and article of a position', async () => {
    const { create, ids } = await workspace();
    const barcode = `46${Date.now()}`;
    const article = marker('ART');
    const withBarcode = await create({
      products: [productLine({ product: { name: 'Coat', article: marker('A'), barcode } }), productLine()],
    });
    const withArticle = await create({ products: [productLine({ product: { name: 'Scarf', article } })] });
    await create({ products: [productLine()] });
    expect(await ids({ barcode })).toEqual(sorted(withBarcode));
    expect(await ids({ article })).toEqual(sorted(withArticle));
    expect(await ids({ barcode: `${barcode}9` })).toEqual([]);
  });

  it('deleted documents are hidden by default and shown with deleted=true (D5.5)', async () => {
    const { account, create, ids } = await workspace();
    const kept = await create();
    const removed = await create();
    await deleteOrder(t.app, account.writeToken, removed.id);
    expect(await ids()).toEqual(sorted(kept));
    expect(await ids({ deleted: true })).toContain(removed.id);
    expect(await ids({ ids: [kept.id, removed.id] })).toEqual(sorted(kept));
    await deleteOrder(t.app, account.writeToken, removed.id, false);
    expect(await ids()).toEqual(sorted(kept, removed));
  });

  it('actual=true keeps only documents that are not closed', async () => {
    const { account, create, ids } = await workspace();
    const open = await create();
    const packing = await create();
    const finished = await create();
    const canceled = await create();
    await setStatus(t.app, account.writeToken, packing.id, 'PACKING');
    await setStatus(t.app, account.writeToken, finished.id, 'FINISHED');
    await setStatus(t.app, account.writeToken, canceled.id, 'CANCELED');
    expect(await ids({ actual: true })).toEqual(sorted(open, packing));
    expect(await ids()).toEqual(sorted(open, packing, finished, canceled));
  });

  it('date filters: deliveryDate (a day) and deliveryDateFrom/To, createdDateFrom/To, modifiedDate/modifiedDateTo', async () => {
    const { account, create, ids } = await workspace();
    const march = await create({ deliveryDate: '2024-03-01T09:00:00Z', createdDate: '2024-02-20T09:00:00Z' });
    const april = await create({ deliveryDate: '2024-04-10T09:00:00Z', createdDate: '2024-04-01T09:00:00Z' });
    const may = await create({ deliveryDate: '2024-05-20T09:00:00Z', createdDate: '2024-05-15T09:00:00Z' });
    const undated = await create();
    expect(
      await ids({ deliveryDateFrom: '2024-04-01T00:00:00Z', deliveryDateTo: '2024-04-30T23:59:59Z' }),
    ).toEqual(sorted(april));
    expect(await ids({ deliveryDateFrom: '2024-04-01T00:00:00Z' })).toEqual(sorted(april, may));
    expect(await ids({ deliveryDateTo: '2024-04-30T23:59:59Z' })).toEqual(sorted(march, april));
    expect(await ids({ deliveryDate: '2024-04-10' })).toEqual(sorted(april));
    expect(await ids({ deliveryDateFrom: '2024-04-11', deliveryDateTo: '2024-05-19' })).toEqual([]);
    // Whether createdDateFrom/To bound `created` or `createdDate` the spec leaves open: only bounds that exclude
    // every document under both readings are asserted.
    expect(await ids({ createdDateFrom: '2100-01-01T00:00:00Z' })).toEqual([]);
    expect(await ids({ createdDateTo: '2000-01-01T00:00:00Z' })).toEqual([]);

    expect(await ids({ modifiedDate: '2100-01-01T00:00:00Z' })).toEqual([]);
    expect(await ids({ modifiedDateTo: '2000-01-01T00:00:00Z' })).toEqual([]);
    const current = (await findOrders(t.app, account.readToken, { ids: [may.id] })).rows[0];
    expect(await ids({ modifiedDate: String(current?.modifiedDate) })).toContain(may.id);
    expect(await ids({ modifiedDateTo: '2100-01-01T00:00:00Z' })).toEqual(sorted(march, april, may, undated));
  });
});

describe('pages (D4.1, D4.2)', () => {
  it('limit and page split the rows; total only with count=true; page is echoed', async () => {
    const { account, create } = await workspace();
    const made: Order[] = [];
    for (let index = 0; index < 5; index += 1) made.push(await create({ name: `Doc ${index}` }));
    const seen: number[] = [];
    for (const page of [1, 2, 3]) {
      const result = await findOrders(t.app, account.readToken, { limit: 2, page });
      expect(result.page).toBe(page);
      expect(result).not.toHaveProperty('total');
      expect(result.rows).toHaveLength(page === 3 ? 1 : 2);
      seen.push(...result.rows.map((row) => row.id));
    }
    // Default order: descending by id (D4.4).
    expect(seen).toEqual(made.map((order) => order.id).sort((a, b) => b - a));
    const empty = await findOrders(t.app, account.readToken, { limit: 2, page: 4, count: true });
    expect(empty).toMatchObject({ rows: [], page: 4, total: 5 });
    const counted = await findOrders(t.app, account.readToken, { limit: 2, count: true });
    expect(counted.total).toBe(5);
    expect(counted.rows).toHaveLength(2);
    const notCounted = await findOrders(t.app, account.readToken, { count: false });
    expect(notCounted).not.toHaveProperty('total');
    expect(notCounted.rows).toHaveLength(5);
  });

  it('default limit is 100 (D4.1)', async () => {
    const { account, create } = await workspace();
    for (let index = 0; index < 101; index += 1) await create();
    const first = await findOrders(t.app, account.readToken, { count: true });
    expect(first.rows).toHaveLength(100);
    expect(first.total).toBe(101);
    expect((await findOrders(t.app, account.readToken, { page: 2 })).rows).toHaveLength(1);
  });
});

describe('ordering (D4.4)', () => {
  /** Walks every page of `query` with a small limit and returns the rows in order. */
  async function walk(account: TestAccount, query: InboundRequest['query']): Promise<Order[]> {
    const rows: Order[] = [];
    for (let page = 1; page <= 20; page += 1) {
      const result = await findOrders(t.app, account.readToken, { ...query, limit: 2, page });
      rows.push(...result.rows);
      if (result.rows.length < 2) break;
    }
    return rows;
  }

  /** Asserts `rows` are sorted by `key` (direction `ascending`) with ties in one consistent id direction. */
  function expectOrdered(rows: Order[], key: (order: Order) => string | number, ascending: boolean): void {
    const tieDirections = new Set<number>();
    for (let index = 1; index < rows.length; index += 1) {
      const previous = rows[index - 1] as Order;
      const current = rows[index] as Order;
      const a = key(previous);
      const b = key(current);
      if (a === b) tieDirections.add(Math.sign(current.id - previous.id));
      else expect(ascending ? a < b : a > b, `${String(a)} then ${String(b)}`).toBe(true);
    }
    expect(tieDirections.has(0)).toBe(false);
    expect(tieDirections.size).toBeLessThanOrEqual(1);
  }

  it('pages never overlap or skip when many documents share the sort value', async () => {
    const { account, create } = await workspace();
    const names = ['b', 'a', 'b', 'a', 'c', 'a', 'b', 'a', 'c'];
    const made: Order[] = [];
    for (const name of names) made.push(await create({ name, deliveryDate: '2024-06-01T00:00:00Z' }));
    const all = made.map((order) => order.id).sort((a, b) => a - b);

    for (const ascending of [true, false]) {
      const byName = await walk(account, { sortBy: 'NAME', ascending });
      expect(byName.map((row) => row.id).sort((a, b) => a - b)).toEqual(all);
      expect(new Set(byName.map((row) => row.id)).size).toBe(all.length);
      expectOrdered(byName, (row) => String(row.name), ascending);

      for (const sortBy of ['STATUS', 'TYPE', 'DELIVERYDATE', 'ORGANIZATIONID']) {
        const rows = await walk(account, { sortBy, ascending });
        expect(
          rows.map((row) => row.id).sort((a, b) => a - b),
          sortBy,
        ).toEqual(all);
        expectOrdered(rows, () => 0, ascending);
      }
    }

    const byId = await walk(account, { sortBy: 'ID', ascending: true });
    expect(byId.map((row) => row.id)).toEqual(all);
  });

  it('sorts by NAME ignoring case, Cyrillic too (P222)', async () => {
    const { account, create } = await workspace();
    for (const name of ['beta', 'Яблоко', 'Gamma', 'арбуз', 'Alpha']) await create({ name });
    const ascending = ['Alpha', 'beta', 'Gamma', 'арбуз', 'Яблоко'];
    const names = async (query: InboundRequest['query']) =>
      (await walk(account, { sortBy: 'NAME', ...query })).map((row) => row.name);
    expect(await names({ ascending: true })).toEqual(ascending);
    expect(await names({ ascending: false })).toEqual([...ascending].reverse());
  });

  it('sorts by totals and dates in the asked direction', async () => {
    const { account, create } = await workspace();
    await create({
      products: [productLine({ quantity: 3, price: 1 })],
      deliveryDate: '2024-01-03T00:00:00Z',
    });
    await create({
      products: [productLine({ quantity: 1, price: 9 })],
      deliveryDate: '2024-01-01T00:00:00Z',
    });
    await create({
      products: [productLine({ quantity: 2, price: 5 })],
      deliveryDate: '2024-01-02T00:00:00Z',
    });
    expectOrdered(
      await walk(account, { sortBy: 'QUANTITY', ascending: true }),
      (row) => row.totalQuantity,
      true,
    );
    expectOrdered(await walk(account, { sortBy: 'PRICE', ascending: false }), (row) => row.totalPrice, false);
    expectOrdered(
      await walk(account, { sortBy: 'DELIVERYDATE', ascending: true }),
      (row) => Date.parse(String(row.deliveryDate)),
      true,
    );
  });
});

describe('withProducts (D5.10)', () => {
  it('returns documents without products unless withProducts=true', async () => {
    const { account, create } = await workspace();
    const line = productLine({ quantity: 2, price: 3 });
    const order = await create({ products: [line, productLine()] });
    const plain = await findOrders(t.app, account.readToken, { ids: [order.id] });
    expect(plain.rows[0]).not.toHaveProperty('products');
    expect(plain.rows[0]).toMatchObject({ id: order.id, totalQuantity: 3, totalPrice: 16 });
    const full = await findOrders(t.app, account.readToken, { ids: [order.id], withProducts: true });
    expect(full.rows[0]?.products).toHaveLength(2);
    expect(full.rows[0]?.products).toEqual(order.products);
  });

  it('accepts print-only and export-only parameters and ignores them (D5.10)', async () => {
    const { create, ids } = await workspace();
    const order = await create();
    expect(
      await ids({
        collectLabel: true,
        sortBySku: true,
        productLabel: false,
        servicesForLabel: ['SERVICE_01', 'NONE'],
        shippingServicesForLabel: ['CARRIER_01'],
        grouped: true,
        withAnalytics: false,
        columns: ['id'],
      }),
    ).toEqual(sorted(order));
  });
});
