/**
 * One realistic receiving day through HTTP (decisions D5.2, D5.3, D5.6–D5.9): an INCOME document with three
 * positions is packed into cargo places with one line short, the divergence names exactly that line, it is
 * fixed, the document is FINISHED (stock received), the stock is removed twice (the second call a no-op),
 * and the history tells the whole story newest first with versionId increasing.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/test-app.ts';
import { createAccount, type TestAccount } from '../helpers/factories.ts';
import {
  createOrder,
  expectEmpty,
  expectHal,
  getHistory,
  getOrder,
  getPackages,
  positionOf,
  productLine,
  putPackages,
  send,
  setStatus,
  type Order,
  type TotalDivergence,
} from '../helpers/inbound.ts';

let t: TestApp;
let account: TestAccount;

beforeAll(async () => {
  t = await buildTestApp();
  account = await createAccount(t.runtime);
});
afterAll(async () => {
  await t.close();
});

async function divergenceOf(orderId: number): Promise<TotalDivergence> {
  return expectHal<TotalDivergence>(
    await send(t.app, account.readToken, { method: 'GET', url: `/api/inbound/${orderId}/divergence` }),
  );
}

it('receives a delivery from creation to stock removal', async () => {
  const coats = productLine({
    quantity: 10,
    price: 100.5,
    product: { name: 'Coat', article: 'COAT-1', barcode: '4600000000101' },
  });
  const scarves = productLine({
    quantity: 5,
    price: 20,
    product: { name: 'Scarf', article: 'SCARF-1', barcode: '4600000000102' },
  });
  const gloves = productLine({
    quantity: 3,
    price: 0.99,
    product: { name: 'Gloves', article: 'GLOVE-1', barcode: '4600000000103' },
  });
  const versions: number[] = [];
  const track = (order: Order) => {
    versions.push(order.versionId);
    return order;
  };

  // 1. Morning: the supplier's delivery note becomes an INCOME document.
  const created = track(
    await createOrder(t.app, account.writeToken, {
      organizationId: account.organizationId,
      type: 'INCOME',
      name: 'Delivery from the supplier',
      warehouseId: 1,
      externalOrderId: 'NOTE-2024-0501',
      products: [coats, scarves, gloves],
    }),
  );
  expect(created).toMatchObject({ status: 'CREATED', totalQuantity: 18, totalPrice: 1107.97 });
  const coatsId = positionOf(created, coats.productId).id;
  const scarvesId = positionOf(created, scarves.productId).id;
  const glovesId = positionOf(created, gloves.productId).id;

  // 2. The storekeeper packs two cargo places; one pair of gloves is missing.
  await putPackages(t.app, account.writeToken, created.id, [
    {
      number: 'PALLET-1',
      weight: 35_000,
      items: [
        { orderProductId: coatsId, quantity: 10 },
        { orderProductId: scarvesId, quantity: 2 },
      ],
    },
    {
      number: 'BOX-2',
      items: [
        { orderProductId: scarvesId, quantity: 3 },
        { orderProductId: glovesId, quantity: 2 },
      ],
    },
  ]);
  const packages = await getPackages(t.app, account.readToken, created.id);
  expect(packages.map((box) => box.number).sort()).toEqual(['BOX-2', 'PALLET-1']);
  expect(packages.flatMap((box) => box.items ?? []).reduce((sum, item) => sum + item.quantity, 0)).toBe(17);
  track(await getOrder(t.app, account.readToken, created.id));

  // 3. The divergence names exactly the short-packed line.
  const divergence = await divergenceOf(created.id);
  expect(divergence.totalSupplied).toBe(18);
  expect(divergence.totalPacked).toBe(17);
  expect(divergence.divergence).toHaveLength(1);
  expect(divergence.divergence[0]).toMatchObject({
    orderId: created.id,
    product: { id: gloves.productId },
    supplyQuantity: 3,
    packedQuantity: 2,
  });

  // 4. The manager accepts what was packed.
  expectEmpty(
    await send(t.app, account.writeToken, {
      method: 'POST',
      url: `/api/inbound/${created.id}/divergence/fix`,
    }),
  );
  expect(await divergenceOf(created.id)).toMatchObject({
    divergence: [],
    totalSupplied: 17,
    totalPacked: 17,
  });
  const fixed = track(await getOrder(t.app, account.readToken, created.id));
  expect(positionOf(fixed, gloves.productId).quantity).toBe(2);
  expect(positionOf(fixed, coats.productId).quantity).toBe(10);
  expect(fixed).toMatchObject({ totalQuantity: 17, totalPrice: 1106.98 });

  // 5. Marking is not needed for these goods.
  expectEmpty(
    await send(t.app, account.writeToken, {
      method: 'POST',
      url: '/api/inbound/setOrderMarkingStatus',
      query: { orderId: created.id, status: 'NO_NEED_MARKING' },
    }),
  );
  expect(track(await getOrder(t.app, account.readToken, created.id)).markingStatus).toBe('NO_NEED_MARKING');

  // 6. Receiving is finished: the stock is recorded per position.
  await setStatus(t.app, account.writeToken, created.id, 'FINISHED');
  const finished = track(await getOrder(t.app, account.readToken, created.id));
  expect(finished.status).toBe('FINISHED');
  expect(finished.closeDate).not.toBeNull();
  expect(finished.products?.map((row) => [row.productId, row.introducedQuantity]).sort()).toEqual(
    [
      [coats.productId, 10],
      [scarves.productId, 5],
      [gloves.productId, 2],
    ].sort(),
  );

  // 7. The delivery turns out to be booked twice: the received stock is removed, and a retry changes nothing.
  const removeStock = () =>
    send(t.app, account.writeToken, {
      method: 'POST',
      url: '/api/inbound/removeIncomeStock',
      query: { orderId: created.id },
    });
  expectEmpty(await removeStock());
  const removed = track(await getOrder(t.app, account.readToken, created.id));
  expect(removed.products?.map((row) => row.introducedQuantity)).toEqual([0, 0, 0]);
  const historyAfterRemoval = await getHistory(t.app, account.readToken, created.id, { count: true });

  expectEmpty(await removeStock());
  const again = await getOrder(t.app, account.readToken, created.id);
  expect(again).toEqual(removed);
  expect(await getHistory(t.app, account.readToken, created.id, { count: true })).toEqual(
    historyAfterRemoval,
  );

  // versionId increased on every change.
  for (let index = 1; index < versions.length; index += 1) {
    expect(versions[index], `change ${index}`).toBeGreaterThan(versions[index - 1] as number);
  }

  // 8. The history tells each step, newest first, versionId increasing over time.
  const history = historyAfterRemoval;
  expect(history.total).toBe(versions.length);
  expect(history.rows).toHaveLength(versions.length);
  expect(history.rows.map((row) => row.versionId)).toEqual([...versions].reverse());
  expect(history.rows.map((row) => row.orderStatus)).toEqual([
    'FINISHED',
    'FINISHED',
    'CREATED',
    'CREATED',
    'CREATED',
    'CREATED',
  ]);
  expect(history.rows.map((row) => row.totalQuantity)).toEqual([17, 17, 17, 17, 18, 18]);
  const dates = history.rows.map((row) => Date.parse(row.date));
  for (let index = 1; index < dates.length; index += 1) {
    expect(dates[index]).toBeLessThanOrEqual(dates[index - 1] as number);
  }
  for (const row of history.rows) {
    expect(row).toMatchObject({ orderId: created.id, orderType: 'INCOME', userId: account.userId });
  }
  expect(new Set(history.rows.map((row) => row.action)).size).toBeGreaterThan(1);
});
