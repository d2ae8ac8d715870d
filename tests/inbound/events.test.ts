/**
 * Events of the inbound group (spec §6, D9.3), observed through a recording `EventRecorder` installed on the
 * runtime: which kinds each change raises, bodies equal to GET, one render for a bulk change, and atomicity.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/test-app.ts';
import type { EventCandidate, EventRecorder } from '../../src/events/outbox.ts';
import { renderOrders } from '../../src/modules/inbound/render.ts';
import { expectEmpty, newCaller, productId, type Caller } from './support.ts';

interface Recorded extends EventCandidate {
  body: unknown;
}

let t: TestApp;
let c: Caller;
let recorded: Recorded[];
let renderCalls: number;
let original: EventRecorder | undefined;

const recorder: EventRecorder = {
  async record(trx, candidates, render) {
    renderCalls += 1;
    const bodies = await render(
      trx,
      candidates[0]?.clientId ?? 0,
      candidates.map((candidate) => candidate.entityId),
    );
    for (const candidate of candidates) recorded.push({ ...candidate, body: bodies.get(candidate.entityId) });
  },
};

beforeAll(async () => {
  t = await buildTestApp();
  c = await newCaller(t.app, t.runtime);
  original = t.runtime.changes.eventRecorder;
  t.runtime.changes.installRecorder(recorder);
});
afterAll(async () => {
  t.runtime.changes.installRecorder(original);
  await t.close();
});
beforeEach(() => {
  recorded = [];
  renderCalls = 0;
});

const kinds = () => recorded.map((event) => [event.type, event.entityId]);

describe('events', () => {
  it('raises CREATE_ORDER on create with the body GET returns', async () => {
    const order = await c.create({ products: [{ productId: productId(), quantity: 2, price: 1.25 }] });
    expect(kinds()).toEqual([['CREATE_ORDER', order.id]]);
    expect(recorded[0]).toMatchObject({
      clientId: c.account.clientId,
      organizationId: c.account.organizationId,
    });
    expect(recorded[0]?.body).toEqual(await c.get(order.id));
  });

  it('raises ORDER for field, product, cargo place, marking, delete and restore changes; none for no-ops', async () => {
    const order = await c.create();
    recorded = [];
    await c.call('PATCH', '/api/inbound/', { id: order.id, name: 'n' });
    await c.call('PATCH', '/api/inbound/', { id: order.id, name: 'n' });
    await c.call('POST', `/api/inbound/${order.id}/product`, { productId: productId(), quantity: 1 });
    await c.call('POST', `/api/inbound/updateOrderPackage?orderId=${order.id}`, [{ number: '1' }]);
    await c.call('POST', `/api/inbound/setOrderMarkingStatus?status=SUCCESS&orderId=${order.id}`);
    await c.call('DELETE', `/api/inbound/${order.id}`);
    await c.call('DELETE', `/api/inbound/${order.id}`);
    await c.call('DELETE', `/api/inbound/${order.id}?deleted=false`);
    expect(kinds()).toEqual(Array.from({ length: 6 }, () => ['ORDER', order.id]));
    expect(recorded.at(-1)?.body).toEqual(await c.get(order.id));
  });

  it('raises only ORDER_STATUS on status changes, one per changed document of a bulk call, one render', async () => {
    const [a, b, d] = [await c.create(), await c.create(), await c.create()];
    recorded = [];
    await c.call('POST', `/api/inbound/${d.id}/status?status=SEND`);
    expect(kinds()).toEqual([['ORDER_STATUS', d.id]]);
    recorded = [];
    renderCalls = 0;
    expectEmpty(await c.call('POST', '/api/inbound/status?status=SEND', [a.id, b.id, d.id]));
    expect(kinds()).toEqual([
      ['ORDER_STATUS', a.id],
      ['ORDER_STATUS', b.id],
    ]);
    expect(renderCalls).toBe(1);
    expect(recorded[0]?.body).toMatchObject({ id: a.id, status: 'SEND', products: [] });
  });

  it('raises nothing for a refused change, and a failing recorder rolls the change back', async () => {
    const order = await c.create({ name: 'before' });
    recorded = [];
    await c.call('POST', '/api/inbound/status?status=SEND', [order.id, 8_000_000_000_000_005]);
    expect(recorded).toEqual([]);
    t.runtime.changes.installRecorder({
      record: () => Promise.reject(new Error('outbox unavailable')),
    });
    try {
      const answer = await c.call('PATCH', '/api/inbound/', { id: order.id, name: 'after' });
      expect(answer.status).toBe(500);
    } finally {
      t.runtime.changes.installRecorder(recorder);
    }
    expect(await c.get(order.id)).toMatchObject({ name: 'before', versionId: 1 });
  });

  it('renderOrders renders any number of documents as GET does', async () => {
    const orders = [
      await c.create(),
      await c.create({ products: [{ productId: productId(), quantity: 1 }] }),
    ];
    const rendered = await renderOrders(
      t.runtime.database.db,
      c.account.clientId,
      orders.map((order) => order.id),
      '',
    );
    for (const order of orders) expect(rendered.get(order.id)).toEqual(await c.get(order.id));
  });
});
