/**
 * A slow receiver delays only its own deliveries (P29): with one worker, deliveries of another subscription
 * arrive while a receiver holds its answers; the held ones are recorded once when they end, and the watchdog jobs
 * that covered them do nothing. A service killed while a send outlives its batch redelivers it by the watchdog.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, type TestAccount } from '../helpers/factories.ts';
import { TEST_ADMIN_TOKEN, type TestApp } from '../helpers/test-app.ts';
import {
  spawnService,
  stopService,
  waitUntilReady,
  type ServiceProcess,
} from '../helpers/service-process.ts';
import {
  buildWebhookApp,
  createOwnDatabase,
  deliveryJobs,
  dispatcherOf,
  recordEvents,
  serviceAccountWithSubscription,
  serviceCall,
  startReceiver,
  waitFor,
  WEBHOOK_TEST_ENV,
  type DeliveryJobRow,
  type OwnDatabase,
  type Receiver,
} from '../fixtures/webhook-kit.ts';
import type { EventType } from '../../src/events/outbox.ts';
import { createDatabase } from '../../src/db/database.ts';
import { WATCHDOG_MARGIN_MS } from '../../src/modules/webhook/dispatcher.ts';

// Longer than the `until` below: a single worker stuck on the held batch would take that long.
const TIMEOUT_MS = 5_000;

let database: OwnDatabase;
let t: TestApp;
let receiver: Receiver;
let account: TestAccount;

beforeAll(async () => {
  database = await createOwnDatabase('webhook_slow');
  t = await buildWebhookApp(database.url, {
    WEBHOOK_WORKERS: '1',
    WEBHOOK_BATCH_SIZE: '2',
    WEBHOOK_SLOW_AFTER_MS: '100',
    WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
  });
  receiver = await startReceiver();
  account = await createAccount(t.runtime);
});
afterAll(async () => {
  await t?.close();
  await receiver?.close();
  await database?.drop();
});

async function subscribe(path: string, types: EventType[]): Promise<number> {
  const response = await t.app.inject({
    method: 'POST',
    url: '/api/webhook/',
    headers: { authorization: account.writeToken },
    payload: { name: path, url: `${receiver.url}${path}`, organizationId: account.organizationId, types },
  });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<{ id: number }>().id;
}

function deliveriesOf(webhookId: number) {
  return t.runtime.database.db
    .selectFrom('webhook_delivery')
    .select(['id', 'status', 'attempts', 'last_status_code'])
    .where('client_id', '=', account.clientId)
    .where('webhook_id', '=', webhookId)
    .orderBy('id')
    .execute();
}

const requestsTo = (path: string) => receiver.requests.filter((request) => request.path === path);

describe('slow receiver', () => {
  it('does not delay other deliveries, and its held deliveries are recorded once', async () => {
    const slow = await subscribe('/slow', ['ORDER_STATUS']);
    const fast = await subscribe('/fast', ['CREATE_ORDER']);
    const held: Array<() => void> = [];
    receiver.answer = (request) =>
      request.path === '/slow' ? new Promise((resolve) => held.push(() => resolve(200))) : 200;
    const event = { clientId: account.clientId, organizationId: account.organizationId };

    await recordEvents(t.runtime, { ...event, type: 'ORDER_STATUS' }, [1, 2, 3]);
    // The first batch (2 deliveries) is on the wire and held.
    await receiver.until(() => requestsTo('/slow').length >= 2);
    await recordEvents(
      t.runtime,
      { ...event, type: 'CREATE_ORDER' },
      [11, 12, 13, 14, 15, 16, 17, 18, 19, 20],
    );

    // (a) Every fast delivery arrives while the slow ones are still held.
    await receiver.until(() => requestsTo('/fast').length === 10, TIMEOUT_MS - 1_000);
    await receiver.until(() => requestsTo('/slow').length === 3, TIMEOUT_MS - 1_000);
    expect(held).toHaveLength(3);
    await waitFor('the fast deliveries recorded', async () =>
      (await deliveriesOf(fast)).every((row) => row.status === 'DELIVERED'),
    );
    const slowRows = await deliveriesOf(slow);
    expect(slowRows.map((row) => [row.status, row.attempts])).toEqual([
      ['PENDING', 0],
      ['PENDING', 0],
      ['PENDING', 0],
    ]);
    // Each held delivery: its own job (done, the worker moved on) and a watchdog for the same attempt, due after
    // the send timeout.
    const slowIds = slowRows.map((row) => row.id);
    await waitFor('the held batches completed', async () =>
      (await deliveryJobs(t.runtime.database.db, slowIds)).every(
        (job) => job.state === 'completed' || job.startAfter.getTime() > Date.now(),
      ),
    );
    const jobs = await deliveryJobs(t.runtime.database.db, slowIds);
    expect(dispatcherOf(t).backgroundSends).toBe(3);
    for (const id of slowIds) {
      const own = jobs.filter((job) => job.d === id);
      expect(own.map((job) => job.a)).toEqual([0, 0]);
      expect(own[0]!.state).toBe('completed');
      expect(own[1]!.state).toBe('created');
      expect(own[1]!.startAfter.getTime()).toBeGreaterThan(Date.now());
    }

    // (b) Released, the held deliveries are recorded DELIVERED once; their watchdogs then find them stale.
    for (const release of held) release();
    // The outcome is recorded before its send leaves the background count.
    await waitFor(
      'the held deliveries recorded and their sends ended',
      async () =>
        (await deliveriesOf(slow)).every((row) => row.status === 'DELIVERED') &&
        dispatcherOf(t).backgroundSends === 0,
    );
    await waitFor(
      'the watchdog jobs done',
      async () =>
        (await deliveryJobs(t.runtime.database.db, slowIds)).every((job) => job.state === 'completed'),
      TIMEOUT_MS + 20_000,
    );
    expect((await deliveriesOf(slow)).map((row) => [row.status, row.attempts, row.last_status_code])).toEqual(
      [
        ['DELIVERED', 1, 200],
        ['DELIVERED', 1, 200],
        ['DELIVERED', 1, 200],
      ],
    );
    expect(requestsTo('/slow')).toHaveLength(3);
    expect(new Set(requestsTo('/slow').map((request) => request.headers['webhook-id'])).size).toBe(3);
    expect(requestsTo('/fast')).toHaveLength(10);
  });
});

describe('slow receiver and a graceful stop', () => {
  it('records a send that outlived its batch before the runtime closes', async () => {
    const own = await createOwnDatabase('webhook_slow_stop');
    try {
      const stopping = await buildWebhookApp(own.url, {
        WEBHOOK_WORKERS: '1',
        WEBHOOK_SLOW_AFTER_MS: '100',
        WEBHOOK_TIMEOUT_MS: '1500',
      });
      const other = await createAccount(stopping.runtime);
      const response = await stopping.app.inject({
        method: 'POST',
        url: '/api/webhook/',
        headers: { authorization: other.writeToken },
        payload: {
          name: 'stop',
          url: `${receiver.url}/stop`,
          organizationId: other.organizationId,
          types: ['CREATE_ORDER'],
        },
      });
      expect(response.statusCode, response.body).toBe(200);
      receiver.answer = (request) => (request.path === '/stop' ? 'hang' : 200);
      await recordEvents(
        stopping.runtime,
        { clientId: other.clientId, organizationId: other.organizationId, type: 'CREATE_ORDER' },
        [1],
      );
      await waitFor('the send in the background', () =>
        Promise.resolve(dispatcherOf(stopping).backgroundSends === 1),
      );
      // The receiver never answers: the attempt ends at its timeout, long after everything else has stopped, and
      // its outcome must still reach the database before the pool closes.
      await stopping.close();

      const db = createDatabase(own.url, 1);
      try {
        const rows = await db.db
          .selectFrom('webhook_delivery')
          .select(['status', 'attempts', 'last_error'])
          .where('client_id', '=', other.clientId)
          .execute();
        expect(rows).toEqual([{ status: 'PENDING', attempts: 1, last_error: 'timeout after 1500 ms' }]);
      } finally {
        await db.close();
      }
    } finally {
      await own.drop();
    }
  });
});

describe('slow receiver and a crash', () => {
  const services: ServiceProcess[] = [];
  let own: OwnDatabase | undefined;
  afterAll(async () => {
    for (const service of services) await stopService(service);
    await own?.drop();
  });

  it('redelivers a send that outlived its batch when the process dies before it ends', async () => {
    own = await createOwnDatabase('webhook_slow_crash');
    const start = async () => {
      const service = await spawnService({
        DATABASE_URL: own!.url,
        ADMIN_TOKEN: TEST_ADMIN_TOKEN,
        SEED_DEMO: 'false',
        ...WEBHOOK_TEST_ENV,
        WEBHOOK_WORKERS: '1',
        WEBHOOK_BATCH_SIZE: '1',
        WEBHOOK_SLOW_AFTER_MS: '100',
        WEBHOOK_TIMEOUT_MS: '2000',
      });
      services.push(service);
      await waitUntilReady(service);
      return service;
    };
    const path = '/crash-slow';
    let killed = false;
    const held: Array<() => void> = [];
    // The first request to `path` is held until the process is dead; every other one is answered at once.
    receiver.answer = (request) =>
      request.path !== path || killed || requestsTo(path).indexOf(request) > 0
        ? 200
        : new Promise((resolve) => held.push(() => resolve(200)));
    const first = await start();
    const account = await serviceAccountWithSubscription(first, `${receiver.url}${path}`);
    const create = (name: string) =>
      serviceCall<{ id: number }>(first, 'POST', '/api/inbound/', account.token, {
        organizationId: account.organizationId,
        type: 'INCOME',
        name,
      });
    const slowOrder = await create('held');
    await receiver.until(() => held.length === 1);
    // One worker taking one job at a time: the next order arrives only once the held send left its batch.
    await create('after');
    await receiver.until(() => requestsTo(path).length === 2);

    const db = createDatabase(own.url, 1);
    try {
      const [delivery] = await db.db
        .selectFrom('webhook_delivery as d')
        .innerJoin('webhook_event as e', (join) =>
          join.onRef('e.client_id', '=', 'd.client_id').onRef('e.id', '=', 'd.event_id'),
        )
        .select(['d.id'])
        .where('d.client_id', '=', account.clientId)
        .where('e.entity_id', '=', slowOrder.id)
        .execute();
      const deliveryId = delivery!.id;
      // The batch is done and its attempt covered by a watchdog: no expiry of an active job can redeliver it.
      let jobsSeen: DeliveryJobRow[] = [];
      await waitFor('the held batch completed', async () => {
        jobsSeen = await deliveryJobs(db.db, [deliveryId]);
        return jobsSeen.length === 2 && jobsSeen[0]!.state === 'completed';
      }).catch((error: Error) => {
        throw new Error(`${error.message}; jobs ${JSON.stringify(jobsSeen)}\n${first.output()}`);
      });
      expect((await deliveryJobs(db.db, [deliveryId])).map((job) => [job.a, job.state])).toEqual([
        [0, 'completed'],
        [0, 'created'],
      ]);
      first.child.kill('SIGKILL');
      await first.exited;
      killed = true;
      for (const release of held) release();

      await start();
      const eventId = requestsTo(path)[0]!.headers['webhook-id'];
      await receiver.until(
        () => requestsTo(path).filter((request) => request.headers['webhook-id'] === eventId).length === 2,
      );
      await waitFor('the redelivery recorded', async () => {
        const row = await db.db
          .selectFrom('webhook_delivery')
          .select(['status', 'attempts'])
          .where('client_id', '=', account.clientId)
          .where('id', '=', deliveryId)
          .executeTakeFirstOrThrow();
        return row.status === 'DELIVERED';
      });
      const row = await db.db
        .selectFrom('webhook_delivery')
        .select(['status', 'attempts', 'last_status_code'])
        .where('client_id', '=', account.clientId)
        .where('id', '=', deliveryId)
        .executeTakeFirstOrThrow();
      expect(row).toEqual({ status: 'DELIVERED', attempts: 1, last_status_code: 200 });
      // A redelivery that itself outlives its batch (a loaded machine) leaves one more watchdog, stale once the
      // attempt is recorded: every job ends completed, and none sends again.
      await waitFor(
        'the jobs completed',
        async () => (await deliveryJobs(db.db, [deliveryId])).every((job) => job.state === 'completed'),
        WATCHDOG_MARGIN_MS + 10_000,
      );
      expect(requestsTo(path).filter((request) => request.headers['webhook-id'] === eventId)).toHaveLength(2);
    } finally {
      await db.close();
    }
  }, 120_000);
});
