/**
 * The cached read path of `GET /api/inbound/{orderId}`: hits skip the database, every change is visible to
 * the next GET of the same process, a change made by another process invalidates through notifications and is
 * seen at once by a GET that asks to revalidate (P198), a foreign client gets the same 404, and a read racing a
 * change never stores stale data.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/test-app.ts';
import { ResponseCache, orderChangeKeys } from '../../src/modules/inbound/order-cache.ts';
import { VersionReads } from '../../src/modules/inbound/version-reads.ts';
import type { Order } from '../../src/modules/inbound/schemas.ts';
import { expectError, newCaller, productId, type Caller } from './support.ts';

let first: TestApp;
let second: TestApp;
let c1: Caller;
beforeAll(async () => {
  first = await buildTestApp();
  second = await buildTestApp();
  c1 = await newCaller(first.app, first.runtime);
});
afterAll(async () => {
  await first.close();
  await second.close();
});

/** Changes a document of `caller` behind the service's back, so only a cache hit still shows the old value. */
const renameInDatabase = (caller: Caller, id: number, name: string) =>
  first.runtime.database.db
    .updateTable('inbound_order')
    .set({ name })
    .where('client_id', '=', caller.account.clientId)
    .where('id', '=', id)
    .execute();

/** Changes a document's name and version behind the service's back, with no notification. */
const changeInDatabase = (caller: Caller, id: number, name: string) =>
  first.runtime.database.db
    .updateTable('inbound_order')
    .set((eb) => ({ name, version_id: eb('version_id', '+', 1) }))
    .where('client_id', '=', caller.account.clientId)
    .where('id', '=', id)
    .execute();

/** Reads a document through `app` with the request headers `headers` (e.g. `Cache-Control`). */
async function getWith(app: TestApp['app'], id: number, headers: Record<string, string>): Promise<Order> {
  const response = await app.inject({
    method: 'GET',
    url: `/api/inbound/${id}`,
    headers: { authorization: c1.account.writeToken, ...headers },
  });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<Order>();
}

describe('GET cache', () => {
  it('serves repeated reads from memory and shows a change at the next GET', async () => {
    const order = await c1.create({ name: 'one' });
    expect((await c1.get(order.id)).name).toBe('one');
    await renameInDatabase(c1, order.id, 'behind');
    expect((await c1.get(order.id)).name).toBe('one');
    await c1.call('PATCH', '/api/inbound/', { id: order.id, name: 'two' });
    expect((await c1.get(order.id)).name).toBe('two');
    await c1.call('POST', `/api/inbound/${order.id}/product`, { productId: productId(), quantity: 3 });
    expect((await c1.get(order.id)).totalQuantity).toBe(3);
  });

  it("answers a foreign client's read of a cached document with 404", async () => {
    const order = await c1.create();
    await c1.get(order.id);
    const stranger = await newCaller(first.app, first.runtime);
    expectError(await stranger.call('GET', `/api/inbound/${order.id}`), 404, 'error_not_found', {
      entity: 'order',
      id: String(order.id),
    });
  });

  it("invalidates this process's entry when another process changes the document", async () => {
    const order = await c1.create({ name: 'one' });
    await c1.get(order.id);
    await renameInDatabase(c1, order.id, 'behind');
    expect((await c1.get(order.id)).name).toBe('one');
    const response = await second.app.inject({
      method: 'PATCH',
      url: '/api/inbound/',
      headers: { authorization: c1.account.writeToken },
      payload: { id: order.id, name: 'from second' },
    });
    expect(response.statusCode, response.body).toBe(200);
    await vi.waitFor(async () => expect((await c1.get(order.id)).name).toBe('from second'), {
      timeout: 10_000,
      interval: 20,
    });
  });

  it('serves a hit without reading the database unless the request asks to revalidate (P198)', async () => {
    const order = await c1.create({ name: 'one' });
    await c1.get(order.id);
    const asks: Array<Record<string, string>> = [
      { 'cache-control': 'no-cache' },
      { 'cache-control': 'max-age=0' },
      { pragma: 'no-cache' },
    ];
    for (const [round, headers] of asks.entries()) {
      await changeInDatabase(c1, order.id, `behind ${round}`);
      expect((await c1.get(order.id)).name).toBe(round === 0 ? 'one' : `behind ${round - 1}`);
      expect((await getWith(first.app, order.id, { 'cache-control': 'max-age=60' })).versionId).toBe(
        round + 1,
      );
      expect(await getWith(first.app, order.id, headers)).toMatchObject({
        name: `behind ${round}`,
        versionId: round + 2,
      });
      // the revalidated read is cached in its place
      expect((await c1.get(order.id)).name).toBe(`behind ${round}`);
    }
  });

  it("shows another process's answered change to every concurrent GET that asks to revalidate (P185, P198)", async () => {
    const orders = [await c1.create({ name: 'one' }), await c1.create({ name: 'one' })];
    for (const order of orders) await c1.get(order.id);
    const response = await second.app.inject({
      method: 'PATCH',
      url: '/api/inbound/',
      headers: { authorization: c1.account.writeToken },
      payload: { id: orders[0]?.id, name: 'from second' },
    });
    expect(response.statusCode, response.body).toBe(200);
    // no waiting for the notification: the coalesced version check reads after these GETs arrived
    const reads = await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        getWith(first.app, (orders[index % 2] as { id: number }).id, { 'cache-control': 'no-cache' }),
      ),
    );
    expect(reads.map((order) => order.name)).toEqual(
      Array.from({ length: 20 }, (_, index) => (index % 2 === 0 ? 'from second' : 'one')),
    );
  });

  it('invalidates every document of a bulk change made by another process', async () => {
    const orders = [await c1.create(), await c1.create()];
    for (const order of orders) await c1.get(order.id);
    const response = await second.app.inject({
      method: 'POST',
      url: '/api/inbound/status?status=SEND',
      headers: { authorization: c1.account.writeToken },
      payload: orders.map((order) => order.id),
    });
    expect(response.statusCode, response.body).toBe(200);
    for (const order of orders)
      await vi.waitFor(async () => expect((await c1.get(order.id)).status).toBe('SEND'), {
        timeout: 10_000,
        interval: 20,
      });
  });
});

describe('find cache', () => {
  it('drops the pages of a client when one of its documents changes, here or in another process', async () => {
    const caller = await newCaller(first.app, first.runtime);
    const order = await caller.create({ name: 'listed' });
    const names = async () =>
      (
        await caller.call<{ rows: Array<{ name: string }> }>('GET', '/api/inbound/find?limit=5')
      ).body.rows.map((row) => row.name);
    expect(await names()).toEqual(['listed']);
    await renameInDatabase(caller, order.id, 'behind');
    expect(await names()).toEqual(['listed']);
    await caller.call('POST', `/api/inbound/${order.id}/status?status=SEND`);
    expect(await names()).toEqual(['behind']);
    const response = await second.app.inject({
      method: 'POST',
      url: '/api/inbound/',
      headers: { authorization: caller.account.writeToken },
      payload: { organizationId: caller.account.organizationId, type: 'FBS', name: 'from second' },
    });
    expect(response.statusCode, response.body).toBe(200);
    await vi.waitFor(async () => expect(await names()).toEqual(['from second', 'behind']), {
      timeout: 10_000,
      interval: 20,
    });
  });
});

describe('ResponseCache', () => {
  it('refuses to store a read that began before an invalidation of its group or a reset', () => {
    const cache = new ResponseCache<number>();
    const early = cache.beginRead();
    cache.invalidate(1);
    expect(cache.store(1, 1, 10, Buffer.from('stale'), early)).toBe(false);
    expect(cache.store(2, 2, 10, Buffer.from('other group'), early)).toBe(true);
    expect(cache.store(1, 1, 10, Buffer.from('fresh'), cache.beginRead())).toBe(true);
    expect(cache.get(1, 10)?.body.toString()).toBe('fresh');
    expect(cache.get(1, 11)).toBeUndefined();
    const beforeReset = cache.beginRead();
    cache.clear();
    expect(cache.store(3, 3, 10, Buffer.from('stale'), beforeReset)).toBe(false);
    expect(cache.size).toBe(0);
  });

  it('drops every entry of an invalidated group', () => {
    const cache = new ResponseCache<string>();
    const read = cache.beginRead();
    cache.store('a', 1, 1, Buffer.from('a'), read);
    cache.store('b', 1, 1, Buffer.from('b'), read);
    cache.store('c', 2, 2, Buffer.from('c'), read);
    cache.invalidate(1);
    expect(
      [cache.get('a', 1), cache.get('b', 1), cache.get('c', 2)].map((hit) => hit?.body.toString()),
    ).toEqual([undefined, undefined, 'c']);
  });

  it('evicts the least recently used entries beyond its size bound', () => {
    const cache = new ResponseCache<number>(4);
    const read = cache.beginRead();
    for (const key of [1, 2]) cache.store(key, key, 1, Buffer.from(String(key)), read);
    cache.get(1, 1);
    for (const key of [3, 4, 5]) cache.store(key, key, 1, Buffer.from(String(key)), read);
    expect([1, 2, 3, 4, 5].map((key) => cache.get(key, 1)?.body.toString())).toEqual([
      '1',
      undefined,
      '3',
      '4',
      '5',
    ]);
  });

  it('packs many ids into notification keys below the payload limit', () => {
    const ids = Array.from({ length: 10_000 }, (_, index) => 1_000_000_000_000 + index);
    const keys = orderChangeKeys('origin', 42, ids);
    expect(keys.length).toBeGreaterThan(1);
    expect(keys.every((key) => key.length < 8_000 && key.startsWith('origin/42/'))).toBe(true);
    expect(keys.flatMap((key) => key.slice('origin/42/'.length).split(',')).map(Number)).toEqual(ids);
  });
});

describe('VersionReads', () => {
  /** A reader whose queries answer only when released, recording what each query asked. */
  function controlledReader() {
    const queries: { clientId: number; ids: number[]; release: (versions: Map<number, number>) => void }[] =
      [];
    const read = (clientId: number, ids: number[]) =>
      new Promise<Map<number, number>>((release) => queries.push({ clientId, ids, release }));
    return { queries, reads: new VersionReads(read) };
  }
  const flush = () => new Promise((resolve) => setImmediate(resolve));

  it('answers checks asked during a query from the next query, never from the one in flight', async () => {
    const { queries, reads } = controlledReader();
    const early = reads.versionOf(1, 10);
    await flush();
    expect(queries.map((query) => query.ids)).toEqual([[10]]);
    const late = [reads.versionOf(1, 10), reads.versionOf(1, 11), reads.versionOf(1, 10)];
    await flush();
    expect(queries).toHaveLength(1);
    queries[0]?.release(new Map([[10, 1]]));
    expect(await early).toBe(1);
    await flush();
    expect(queries.map((query) => query.ids)).toEqual([[10], [10, 11]]);
    queries[1]?.release(new Map([[10, 2]]));
    expect(await Promise.all(late)).toEqual([2, undefined, 2]);
  });

  it('reads each client separately and hands a failure to the checks of that query', async () => {
    const failing = new VersionReads(async (clientId, ids) => {
      if (clientId === 2) throw new Error('database down');
      return new Map(ids.map((id) => [id, id * 10]));
    });
    const [one, two] = await Promise.allSettled([failing.versionOf(1, 3), failing.versionOf(2, 3)]);
    expect(one).toEqual({ status: 'fulfilled', value: 30 });
    expect(two).toMatchObject({ status: 'rejected', reason: new Error('database down') });
    expect(await failing.versionOf(1, 4)).toBe(40);
  });
});
