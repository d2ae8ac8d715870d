/**
 * Inbound changes raise webhook events end to end (spec §6, D9.2): the body is the document exactly as
 * `GET /api/inbound/{orderId}` returns it at the time of the change.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { createAccount, type TestAccount } from '../helpers/factories.ts';
import type { TestApp } from '../helpers/test-app.ts';
import { createOrder, deleteOrder, getOrder, productLine, send, setStatus } from '../helpers/inbound.ts';
import { provideProducts } from '../helpers/catalog-products.ts';
import {
  buildWebhookApp,
  createOwnDatabase,
  startReceiver,
  type OwnDatabase,
  type Receiver,
} from '../fixtures/webhook-kit.ts';

let database: OwnDatabase;
let t: TestApp;
let receiver: Receiver;
let account: TestAccount;
let secret: string;

beforeAll(async () => {
  database = await createOwnDatabase('webhook_inbound');
  t = await buildWebhookApp(database.url);
  receiver = await startReceiver();
  account = await createAccount(t.runtime);
  const response = await t.app.inject({
    method: 'POST',
    url: '/api/webhook/',
    headers: { authorization: account.writeToken },
    payload: {
      name: 'all kinds',
      url: `${receiver.url}/events`,
      organizationId: account.organizationId,
      types: ['CREATE_ORDER', 'ORDER', 'ORDER_STATUS'],
    },
  });
  expect(response.statusCode, response.body).toBe(200);
  secret = response.json<{ secret: string }>().secret;
});
afterAll(async () => {
  await receiver?.close();
  await t?.close();
  await database?.drop();
});

/** Waits for the events of `orderId` of kind `type` and returns their verified bodies. */
async function eventsOf(
  orderId: number,
  type: string,
  count: number,
): Promise<Array<Record<string, unknown>>> {
  const matching = () =>
    receiver.requests.filter(
      (request) =>
        request.headers['webhook-event-type'] === type &&
        (JSON.parse(request.body) as { id: number }).id === orderId,
    );
  await receiver.until(() => matching().length >= count);
  return matching().map(
    (request) => new Webhook(secret).verify(request.body, request.headers) as Record<string, unknown>,
  );
}

describe('inbound events', () => {
  it('sends CREATE_ORDER with the document as GET returns it', async () => {
    const line = productLine({ quantity: 3, price: 12.5 });
    // This file has a database of its own: the product is made a catalog product there.
    await provideProducts(account.writeToken, [line.productId], database.url);
    const order = await createOrder(t.app, account.writeToken, {
      organizationId: account.organizationId,
      type: 'INCOME',
      products: [line],
    });
    const [body] = await eventsOf(order.id, 'CREATE_ORDER', 1);
    expect(body).toEqual(JSON.parse(JSON.stringify(await getOrder(t.app, account.writeToken, order.id))));
  });

  it('sends ORDER_STATUS for single and bulk status changes, and ORDER for deletion', async () => {
    const orders = [];
    for (let index = 0; index < 3; index++)
      orders.push(
        await createOrder(t.app, account.writeToken, { organizationId: account.organizationId, type: 'FBO' }),
      );
    const [first, second, third] = orders as [(typeof orders)[0], (typeof orders)[0], (typeof orders)[0]];
    await setStatus(t.app, account.writeToken, first.id, 'PACKING');
    const [single] = await eventsOf(first.id, 'ORDER_STATUS', 1);
    expect(single).toMatchObject({ id: first.id, status: 'PACKING' });

    const bulk = await send(t.app, account.writeToken, {
      method: 'POST',
      url: '/api/inbound/status',
      query: { status: 'SEND' },
      payload: [second.id, third.id],
    });
    expect(bulk.statusCode, bulk.body).toBe(200);
    for (const order of [second, third]) {
      const [body] = await eventsOf(order.id, 'ORDER_STATUS', 1);
      expect(body).toMatchObject({ id: order.id, status: 'SEND' });
    }

    await deleteOrder(t.app, account.writeToken, first.id);
    const [deleted] = await eventsOf(first.id, 'ORDER', 1);
    expect(deleted).toMatchObject({ id: first.id, deleted: true });
  });
});
