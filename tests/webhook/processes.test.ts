/**
 * Delivery guarantees across real service processes (D9.3): a service SIGKILLed while deliveries are in flight
 * loses no event once it is started again (duplicates allowed, counted and reported), two services sharing
 * one database deliver every event between them, and a process that delivers nothing queues its events for
 * one that does.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  spawnService,
  stopService,
  waitUntilReady,
  type ServiceProcess,
} from '../helpers/service-process.ts';
import { TEST_ADMIN_TOKEN } from '../helpers/test-app.ts';
import {
  createOwnDatabase,
  serviceAccountWithSubscription,
  serviceCall,
  startReceiver,
  WEBHOOK_TEST_ENV,
  type OwnDatabase,
  type ReceivedRequest,
  type Receiver,
} from '../fixtures/webhook-kit.ts';

let database: OwnDatabase;
let receiver: Receiver;
const started: ServiceProcess[] = [];
/** Databases of single tests, dropped once every service stopped. */
const ownDatabases: OwnDatabase[] = [];

beforeAll(async () => {
  database = await createOwnDatabase('webhook_processes');
  receiver = await startReceiver();
});
afterAll(async () => {
  for (const service of started) await stopService(service);
  await receiver?.close();
  await database?.drop();
  for (const own of ownDatabases) await own.drop();
});

/** Starts a service on the file's database (or `databaseUrl`) with `env` added; waits until it is ready. */
async function start(env: Record<string, string> = {}, databaseUrl = database.url): Promise<ServiceProcess> {
  const service = await spawnService({
    DATABASE_URL: databaseUrl,
    ADMIN_TOKEN: TEST_ADMIN_TOKEN,
    SEED_DEMO: 'false',
    ...WEBHOOK_TEST_ENV,
    // Receivers here answer in time: only a crash may cause a redelivery.
    WEBHOOK_TIMEOUT_MS: '10000',
    WEBHOOK_JOB_EXPIRE_SECONDS: '2',
    ...env,
  });
  started.push(service);
  await waitUntilReady(service);
  return service;
}

/** Creates `count` documents, `parallel` at a time, spread over `services`; returns their ids. */
async function createDocuments(
  services: ServiceProcess[],
  account: { token: string; organizationId: number },
  count: number,
  parallel = 16,
): Promise<number[]> {
  const ids: number[] = [];
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const index = next++;
      const service = services[index % services.length] as ServiceProcess;
      const order = await serviceCall<{ id: number }>(service, 'POST', '/api/inbound/', account.token, {
        organizationId: account.organizationId,
        type: 'INCOME',
        name: `webhook process test ${index}`,
      });
      ids.push(order.id);
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
  return ids;
}

/** Requests the receiver never answered (they died with the killed process): not acknowledged, not received. */
const unanswered = new Set<ReceivedRequest>();

/**
 * Ids of the orders acknowledged on `path` (answered 2xx), their distinct events, and how many requests (answered
 * or not) repeated a webhook-id.
 */
function received(path: string) {
  const requests = receiver.requests.filter((request) => request.path === path);
  const acknowledged = requests.filter((request) => !unanswered.has(request));
  const eventIds = new Set(acknowledged.map((request) => request.headers['webhook-id']));
  const orderIds = new Set(acknowledged.map((request) => (JSON.parse(request.body) as { id: number }).id));
  const allEventIds = new Set(requests.map((request) => request.headers['webhook-id']));
  return { orderIds, events: eventIds.size, duplicates: requests.length - allEventIds.size };
}

describe('webhook delivery across processes', () => {
  it('delivers every CREATE_ORDER after a SIGKILL during deliveries (duplicates allowed)', async () => {
    const path = '/crash';
    // The first 50 deliveries are answered; later ones are held unanswered until the process is killed, so the
    // kill certainly lands while deliveries are in flight.
    let answered = 0;
    let killed = false;
    const held: Array<() => void> = [];
    receiver.answer = (request) => {
      if (request.path !== path || killed || answered < 50) {
        if (request.path === path) answered++;
        return 200;
      }
      unanswered.add(request);
      return new Promise((resolve) => held.push(() => resolve(200)));
    };
    const first = await start();
    const account = await serviceAccountWithSubscription(first, `${receiver.url}${path}`);
    const ids = await createDocuments([first], account, 200);
    expect(ids).toHaveLength(200);
    await receiver.until(() => unanswered.size >= 10);
    first.child.kill('SIGKILL');
    await first.exited;
    killed = true;
    const inFlight = held.length;
    const acknowledgedBeforeCrash = received(path).events;
    for (const release of held) release();

    await start();
    await receiver.until(() => received(path).orderIds.size === 200, 60_000);
    const { orderIds, events, duplicates } = received(path);
    expect(orderIds).toEqual(new Set(ids));
    expect(events).toBe(200);
    // Every request unanswered at the kill is delivered again: a duplicate, never a loss.
    expect(inFlight).toBeGreaterThan(0);
    expect(duplicates).toBeGreaterThanOrEqual(inFlight);
    process.stdout.write(
      `crash test: ${acknowledgedBeforeCrash} of 200 events acknowledged before SIGKILL (${inFlight} in flight), ` +
        `all 200 after restart, ${duplicates} duplicate deliveries\n`,
    );
  });

  it('delivers all 1,000 events with two processes sharing one database', async () => {
    const path = '/two-processes';
    receiver.answer = () => 200;
    const [one, two] = [await start(), await start()] as [ServiceProcess, ServiceProcess];
    const account = await serviceAccountWithSubscription(one, `${receiver.url}${path}`);
    const ids = await createDocuments([one, two], account, 1000);
    await receiver.until(() => received(path).orderIds.size === 1000, 60_000);
    const { orderIds, events, duplicates } = received(path);
    expect(orderIds).toEqual(new Set(ids));
    expect(events).toBe(1000);
    expect(duplicates).toBe(0);
  });

  it('queues the events of a process that delivers nothing (WEBHOOK_WORKERS=0) on a fresh database for one that does', async () => {
    const path = '/no-workers';
    receiver.answer = () => 200;
    const fresh = await createOwnDatabase('webhook_no_workers');
    ownDatabases.push(fresh);
    const quiet = await start({ WEBHOOK_WORKERS: '0' }, fresh.url);
    const account = await serviceAccountWithSubscription(quiet, `${receiver.url}${path}`);
    const ids = await createDocuments([quiet], account, 5, 1);
    await start({}, fresh.url);
    await receiver.until(() => received(path).orderIds.size === 5, 60_000);
    expect(received(path).orderIds).toEqual(new Set(ids));
    // A database of its own and two starts: slow on Citus during a whole run.
  }, 120_000);
});
