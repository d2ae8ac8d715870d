/**
 * Webhook delivery (D9.2, D9.3) with a real HTTP receiver on loopback: signature, headers, retries with the
 * same webhook-id, timeout, 410, deletion, rollback, redirects, delivery log and redelivery, send-time guard, and
 * the Standard Webhooks recommendations: the published signature test vector, secret rotation with a grace
 * period (both signatures), `Retry-After` and per-endpoint throttling (P167–P168).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { createAccount, type TestAccount } from '../helpers/factories.ts';
import type { TestApp } from '../helpers/test-app.ts';
import {
  buildWebhookApp,
  createOwnDatabase,
  recordEvents,
  renderStub,
  startReceiver,
  waitFor,
  type OwnDatabase,
  type Receiver,
} from '../fixtures/webhook-kit.ts';
import { parseRetryAfter, WebhookSender } from '../../src/modules/webhook/sender.ts';
import { endpointBackoffMs, MAX_RETRY_AFTER_MS, retryDelayMs } from '../../src/modules/webhook/dispatcher.ts';
import { expectError, expectNotFound, expectValidation } from '../helpers/http.ts';
import { loadConfig } from '../../src/config.ts';
import type { EventType } from '../../src/events/outbox.ts';

let database: OwnDatabase;
let t: TestApp;
let receiver: Receiver;
let account: TestAccount;
let nextEntityId = 1;

beforeAll(async () => {
  database = await createOwnDatabase('webhook_delivery');
  t = await buildWebhookApp(database.url);
});
afterAll(async () => {
  await t?.close();
  await database?.drop();
});
beforeEach(async () => {
  await receiver?.close();
  receiver = await startReceiver();
  account = await createAccount(t.runtime);
});

interface Created {
  id: number;
  secret: string;
}

async function subscribe(
  types: EventType[] = ['CREATE_ORDER'],
  url = `${receiver.url}/hook`,
): Promise<Created> {
  const response = await t.app.inject({
    method: 'POST',
    url: '/api/webhook/',
    headers: { authorization: account.writeToken },
    payload: { name: 'test', url, organizationId: account.organizationId, types },
  });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<Created>();
}

function emit(type: EventType, count = 1, rollback = false): Promise<number[]> {
  const ids = Array.from({ length: count }, () => nextEntityId++);
  return recordEvents(
    t.runtime,
    { clientId: account.clientId, organizationId: account.organizationId, type },
    ids,
    rollback,
  ).then(() => ids);
}

interface DeliveryRow {
  id: number;
  eventId: string;
  eventType: string;
  entityId: number;
  status: string;
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  nextAttemptAt: string | null;
  deliveredAt: string | null;
}

async function deliveries(
  webhookId: number,
  query = '',
): Promise<{ rows: DeliveryRow[]; page: number; total?: number }> {
  const response = await t.app.inject({
    method: 'GET',
    url: `/api/webhook/${webhookId}/deliveries${query}`,
    headers: { authorization: account.readToken },
  });
  expect(response.statusCode, response.body).toBe(200);
  return response.json();
}

/** Waits until every delivery of the webhook has left PENDING. */
async function settled(webhookId: number): Promise<DeliveryRow[]> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const { rows } = await deliveries(webhookId);
    if (rows.length > 0 && rows.every((row) => row.status !== 'PENDING')) return rows;
    if (Date.now() > deadline) throw new Error(`deliveries still pending: ${JSON.stringify(rows)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('delivery', () => {
  it('sends the credentials of the URL as Basic authorization, though answers show them masked and the row holds them sealed (P221)', async () => {
    const url = receiver.url.replace('://', '://receiver:pa55%40w0rd@');
    await subscribe(['CREATE_ORDER'], `${url}/hook`);
    await emit('CREATE_ORDER');
    await receiver.until((requests) => requests.length === 1);
    expect(receiver.requests[0]?.headers.authorization).toBe(
      `Basic ${Buffer.from('receiver:pa55@w0rd').toString('base64')}`,
    );
  });

  it('POSTs the entity with Standard Webhooks headers that the library verifies', async () => {
    const webhook = await subscribe();
    const [entityId] = await emit('CREATE_ORDER');
    await receiver.until((requests) => requests.length === 1);
    const [request] = receiver.requests;
    expect(request).toBeDefined();
    expect(request!.method).toBe('POST');
    expect(request!.path).toBe('/hook');
    expect(request!.headers['content-type']).toBe('application/json');
    expect(request!.headers['user-agent']).toBe('seller-ops-webhooks/1');
    expect(request!.headers['webhook-event-type']).toBe('CREATE_ORDER');
    expect(request!.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    const verified = new Webhook(webhook.secret).verify(request!.body, request!.headers);
    expect(verified).toEqual(renderStub(entityId!));
    expect(() =>
      new Webhook(`whsec_${Buffer.alloc(32, 1).toString('base64')}`).verify(request!.body, request!.headers),
    ).toThrow();

    const [row] = await settled(webhook.id);
    expect(row).toMatchObject({
      eventId: request!.headers['webhook-id'],
      eventType: 'CREATE_ORDER',
      entityId,
      status: 'DELIVERED',
      attempts: 1,
      lastStatusCode: 200,
      lastError: null,
      nextAttemptAt: null,
    });
    expect(row!.deliveredAt).not.toBeNull();
  });

  it('sends only the subscribed kinds of the subscribed organization', async () => {
    await subscribe(['ORDER_STATUS']);
    const otherOrganization = await account.addOrganization();
    await recordEvents(
      t.runtime,
      { clientId: account.clientId, organizationId: otherOrganization, type: 'ORDER_STATUS' },
      [nextEntityId++],
    );
    await emit('CREATE_ORDER');
    const [wanted] = await emit('ORDER_STATUS');
    await receiver.until((requests) => requests.length >= 1);
    // The wanted event was recorded last: had the others been sent, they would have arrived before it settled.
    const rows = await t.runtime.database.db
      .selectFrom('webhook_delivery')
      .selectAll()
      .where('client_id', '=', account.clientId)
      .execute();
    expect(rows).toHaveLength(1);
    expect(JSON.parse(receiver.requests[0]!.body)).toEqual(renderStub(wanted!));
  });

  it('retries after a 500 with the same webhook-id and signs every attempt', async () => {
    const webhook = await subscribe();
    receiver.answer = (_request, index) => (index === 0 ? 500 : 200);
    await emit('CREATE_ORDER');
    await receiver.until((requests) => requests.length === 2);
    const [first, second] = receiver.requests;
    expect(second!.headers['webhook-id']).toBe(first!.headers['webhook-id']);
    expect(second!.body).toBe(first!.body);
    new Webhook(webhook.secret).verify(second!.body, second!.headers);
    const [row] = await settled(webhook.id);
    expect(row).toMatchObject({ status: 'DELIVERED', attempts: 2, lastStatusCode: 200 });
  });

  it('retries after a timeout', async () => {
    const webhook = await subscribe();
    receiver.answer = (_request, index) => (index === 0 ? 'hang' : 204);
    await emit('CREATE_ORDER');
    await receiver.until((requests) => requests.length === 2);
    expect(receiver.requests[1]!.headers['webhook-id']).toBe(receiver.requests[0]!.headers['webhook-id']);
    const [row] = await settled(webhook.id);
    expect(row).toMatchObject({ status: 'DELIVERED', attempts: 2, lastStatusCode: 204 });
  });

  it('does not follow redirects and gives up after the schedule, keeping the attempt log', async () => {
    const webhook = await subscribe();
    receiver.answer = () => 302;
    await emit('CREATE_ORDER');
    const [row] = await settled(webhook.id);
    // 1 attempt + 3 retries of WEBHOOK_RETRY_SCHEDULE=0.05,0.05,0.05.
    expect(row).toMatchObject({
      status: 'FAILED',
      attempts: 4,
      lastStatusCode: 302,
      lastError: 'HTTP 302',
      nextAttemptAt: null,
    });
    expect(receiver.requests.map((request) => request.path)).toEqual(['/hook', '/hook', '/hook', '/hook']);

    // Redelivery on request: a new attempt now, with the same webhook-id.
    receiver.answer = () => 200;
    const retry = await t.app.inject({
      method: 'POST',
      url: `/api/webhook/${webhook.id}/deliveries/${row!.id}/retry`,
      headers: { authorization: account.writeToken },
    });
    expect(retry.statusCode, retry.body).toBe(200);
    expect(retry.json()).toMatchObject({ id: row!.id, status: 'PENDING' });
    await receiver.until((requests) => requests.length === 5);
    expect(receiver.requests[4]!.headers['webhook-id']).toBe(row!.eventId);
    const [after] = await settled(webhook.id);
    expect(after).toMatchObject({ status: 'DELIVERED', attempts: 5, lastStatusCode: 200 });
  });

  it('disables the subscription on 410 and cancels its pending deliveries', async () => {
    const webhook = await subscribe();
    receiver.answer = () => 410;
    await emit('CREATE_ORDER');
    const [row] = await settled(webhook.id);
    expect(row).toMatchObject({ status: 'FAILED', attempts: 1, lastStatusCode: 410 });
    const list = await t.app.inject({
      method: 'GET',
      url: '/api/webhook/',
      headers: { authorization: account.readToken },
    });
    expect(list.json()).toEqual([expect.objectContaining({ id: webhook.id, enabled: false })]);
    await emit('CREATE_ORDER', 3);
    expect((await deliveries(webhook.id)).rows).toHaveLength(1);
    const retry = await t.app.inject({
      method: 'POST',
      url: `/api/webhook/${webhook.id}/deliveries/${row!.id}/retry`,
      headers: { authorization: account.writeToken },
    });
    expect(retry.statusCode).toBe(400);
    expect(retry.json()).toMatchObject({ error: 'error_webhook_disabled' });
    expect(receiver.requests).toHaveLength(1);
  });

  it('sends nothing more to a deleted subscription, and cancels what was pending', async () => {
    const deleted = await subscribe();
    const barrier = await subscribe(['CREATE_ORDER'], `${receiver.url}/barrier`);
    receiver.answer = (request) => (request.path === '/hook' ? 503 : 200);
    await emit('CREATE_ORDER');
    await receiver.until((requests) => requests.some((request) => request.path === '/hook'));
    const response = await t.app.inject({
      method: 'DELETE',
      url: `/api/webhook/${deleted.id}`,
      headers: { authorization: account.writeToken },
    });
    expect(response.statusCode).toBe(200);
    const hookRequestsAtDelete = receiver.requests.filter((request) => request.path === '/hook').length;
    await emit('CREATE_ORDER', 2);
    await receiver.until(
      (requests) => requests.filter((request) => request.path === '/barrier').length === 3,
    );
    await settled(barrier.id);
    const rows = await t.runtime.database.db
      .selectFrom('webhook_delivery')
      .select(['status'])
      .where('client_id', '=', account.clientId)
      .where('webhook_id', '=', deleted.id)
      .execute();
    expect(rows).toEqual([{ status: 'CANCELLED' }]);
    // At most an attempt that was already in flight when the delete committed.
    expect(receiver.requests.filter((request) => request.path === '/hook').length).toBeLessThanOrEqual(
      hookRequestsAtDelete + 1,
    );
  });

  it('emits nothing for a rolled-back change', async () => {
    const webhook = await subscribe();
    const [rolledBack] = await emit('CREATE_ORDER', 1, true);
    const [committed] = await emit('CREATE_ORDER');
    await receiver.until((requests) => requests.length >= 1);
    const rows = await settled(webhook.id);
    expect(rows.map((row) => row.entityId)).toEqual([committed]);
    expect(receiver.requests.map((request) => (JSON.parse(request.body) as { id: number }).id)).toEqual([
      committed,
    ]);
    const events = await t.runtime.database.db
      .selectFrom('webhook_event')
      .select('id')
      .where('client_id', '=', account.clientId)
      .where('entity_id', '=', rolledBack!)
      .execute();
    expect(events).toEqual([]);
  });

  it('delivers a burst of events once each and pages the delivery log', async () => {
    const webhook = await subscribe();
    const ids = await emit('CREATE_ORDER', 120);
    await receiver.until((requests) => new Set(requests.map((r) => r.headers['webhook-id'])).size === 120);
    expect(
      new Set(receiver.requests.map((request) => (JSON.parse(request.body) as { id: number }).id)),
    ).toEqual(new Set(ids));
    await settled(webhook.id);
    const first = await deliveries(webhook.id, '?limit=50&page=1&count=true');
    const third = await deliveries(webhook.id, '?limit=50&page=3');
    expect(first.total).toBe(120);
    expect(first.rows).toHaveLength(50);
    expect(third.rows).toHaveLength(20);
    expect(third.page).toBe(3);
    expect(first.rows[0]!.id).toBeGreaterThan(first.rows[1]!.id);
    const bad = await t.app.inject({
      method: 'GET',
      url: `/api/webhook/${webhook.id}/deliveries?limit=501`,
      headers: { authorization: account.readToken },
    });
    expect(bad.json()).toMatchObject({ error: 'error_validation', params: { field: 'limit' } });
  });

  it('hides another client’s delivery log and deliveries', async () => {
    const webhook = await subscribe();
    await emit('CREATE_ORDER');
    const [row] = await settled(webhook.id);
    const other = await createAccount(t.runtime);
    const log = await t.app.inject({
      method: 'GET',
      url: `/api/webhook/${webhook.id}/deliveries`,
      headers: { authorization: other.readToken },
    });
    expect(log.statusCode).toBe(404);
    const retry = await t.app.inject({
      method: 'POST',
      url: `/api/webhook/${webhook.id}/deliveries/${row!.id}/retry`,
      headers: { authorization: other.writeToken },
    });
    expect(retry.statusCode).toBe(404);
  });
});

describe('send-time address check', () => {
  it('refuses loopback targets when sending, for IP literals and for host names', async () => {
    const sender = new WebhookSender({ timeoutMs: 1_000, allowPrivate: false });
    try {
      const message = {
        secrets: [`whsec_${Buffer.alloc(32, 7).toString('base64')}`],
        eventId: 'msg_1',
        type: 'ORDER',
        payload: '{}',
      };
      const port = new URL(receiver.url).port;
      for (const url of [
        `http://127.0.0.1:${port}/x`,
        `http://localhost:${port}/x`,
        `http://[::ffff:127.0.0.1]:${port}/x`,
      ]) {
        const outcome = await sender.send({ ...message, url });
        expect(outcome.delivered, url).toBe(false);
        expect(outcome.statusCode).toBeNull();
        expect(outcome.error).toMatch(/target refused/);
      }
      expect(receiver.requests).toHaveLength(0);
    } finally {
      sender.close();
    }
  });
});

describe('retry schedule', () => {
  it('applies ±20 % jitter to each delay and gives up after the last one', () => {
    const schedule = [1, 5, 30];
    expect(retryDelayMs(schedule, 1, () => 0)).toBe(800);
    expect(retryDelayMs(schedule, 1, () => 1)).toBe(1200);
    expect(retryDelayMs(schedule, 2, () => 0.5)).toBe(5000);
    expect(retryDelayMs(schedule, 3, () => 0.25)).toBe(27_000);
    expect(retryDelayMs(schedule, 4)).toBeUndefined();
    const defaults = loadConfig({}).webhookRetrySchedule;
    const totalHours = defaults.reduce((sum, seconds) => sum + seconds, 0) / 3600;
    expect(totalHours).toBeGreaterThan(23);
    expect(totalHours).toBeLessThan(25);
  });
});

/**
 * The signature test vector the Standard Webhooks project publishes with its reference libraries
 * (standard-webhooks/standard-webhooks, `libraries/javascript/src/webhook.test.ts`, "sign function works").
 */
const TEST_VECTOR = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  messageId: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestamp: 1614265330,
  payload: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
};

describe('the Standard Webhooks test vector', () => {
  it('is what a delivery carries for the vector’s secret, id, time and body, alone and beside a newer secret', async () => {
    const sender = new WebhookSender({
      timeoutMs: 2_000,
      allowPrivate: true,
      clock: () => new Date(TEST_VECTOR.timestamp * 1000),
    });
    const newer = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;
    try {
      const message = {
        url: `${receiver.url}/vector`,
        eventId: TEST_VECTOR.messageId,
        type: 'ORDER',
        payload: TEST_VECTOR.payload,
      };
      expect(await sender.send({ ...message, secrets: [TEST_VECTOR.secret] })).toMatchObject({
        delivered: true,
      });
      expect(await sender.send({ ...message, secrets: [newer, TEST_VECTOR.secret] })).toMatchObject({
        delivered: true,
      });
    } finally {
      sender.close();
    }
    const [alone, rotated] = receiver.requests;
    expect(alone!.body).toBe(TEST_VECTOR.payload);
    expect(alone!.headers['webhook-id']).toBe(TEST_VECTOR.messageId);
    expect(alone!.headers['webhook-timestamp']).toBe(String(TEST_VECTOR.timestamp));
    expect(alone!.headers['webhook-signature']).toBe(TEST_VECTOR.signature);
    const signatures = rotated!.headers['webhook-signature']!.split(' ');
    expect(signatures).toHaveLength(2);
    expect(signatures[0]).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(signatures[0]).not.toBe(TEST_VECTOR.signature);
    expect(signatures[1]).toBe(TEST_VECTOR.signature);
  });
});

describe('secret rotation', () => {
  const rotate = (webhookId: number | string, payload?: object, token = account.writeToken) =>
    t.app.inject({
      method: 'POST',
      url: `/api/webhook/${webhookId}/secret/rotate`,
      headers: { authorization: token },
      ...(payload && { payload }),
    });

  it('signs with the new and the previous secret during the grace period, then with the new one only', async () => {
    const webhook = await subscribe();
    const rotated = await rotate(webhook.id, { gracePeriodSeconds: 3_600 });
    expect(rotated.statusCode, rotated.body).toBe(200);
    const body = rotated.json<Created & { previousSecretExpiresAt: string; enabled: boolean }>();
    expect(body).toMatchObject({ id: webhook.id, enabled: true });
    expect(body.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(body.secret).not.toBe(webhook.secret);
    const graceEnd = Date.parse(body.previousSecretExpiresAt) - Date.now();
    expect(graceEnd).toBeGreaterThan(3_500_000);
    expect(graceEnd).toBeLessThanOrEqual(3_600_000);

    await emit('CREATE_ORDER');
    await receiver.until((requests) => requests.length === 1);
    const during = receiver.requests[0]!;
    expect(during.headers['webhook-signature']!.split(' ')).toHaveLength(2);
    // A receiver verifies with either secret: the one it still has and the new one.
    new Webhook(webhook.secret).verify(during.body, during.headers);
    new Webhook(body.secret).verify(during.body, during.headers);

    // No grace period: the replaced secret stops signing at once (and the one of the earlier rotation with it).
    const immediate = await rotate(webhook.id, { gracePeriodSeconds: 0 });
    expect(immediate.statusCode, immediate.body).toBe(200);
    const latest = immediate.json<Created & { previousSecretExpiresAt: string | null }>();
    expect(latest.previousSecretExpiresAt).toBeNull();
    await emit('CREATE_ORDER');
    await receiver.until((requests) => requests.length === 2);
    const after = receiver.requests[1]!;
    expect(after.headers['webhook-signature']!.split(' ')).toHaveLength(1);
    new Webhook(latest.secret).verify(after.body, after.headers);
    expect(() => new Webhook(body.secret).verify(after.body, after.headers)).toThrow();
    expect(() => new Webhook(webhook.secret).verify(after.body, after.headers)).toThrow();
  });

  it('takes a 24 h grace period without a body, and keeps the secret sealed at rest', async () => {
    const webhook = await subscribe();
    const rotated = await rotate(webhook.id);
    expect(rotated.statusCode, rotated.body).toBe(200);
    const graceEnd = Date.parse(rotated.json<{ previousSecretExpiresAt: string }>().previousSecretExpiresAt);
    expect(graceEnd - Date.now()).toBeGreaterThan(86_300_000);
    const row = await t.runtime.database.db
      .selectFrom('webhook')
      .select(['secret', 'previous_secret'])
      .where('client_id', '=', account.clientId)
      .where('id', '=', webhook.id)
      .executeTakeFirstOrThrow();
    expect(row.secret).toMatch(/^sealed:v1:/);
    expect(row.previous_secret).toMatch(/^sealed:v1:/);
    expect(t.runtime.secrets.open(row.previous_secret!)).toBe(webhook.secret);
  });

  it('refuses a READ token, a foreign or unknown webhook and a grace period out of range', async () => {
    const webhook = await subscribe();
    expectError(await rotate(webhook.id, {}, account.readToken), 400, 'error_access_denied');
    const other = await createAccount(t.runtime);
    expectNotFound(await rotate(webhook.id, {}, other.writeToken), webhook.id);
    expectNotFound(await rotate(999_999_999), 999_999_999);
    expectValidation(await rotate(webhook.id, { gracePeriodSeconds: -1 }), 'gracePeriodSeconds');
    expectValidation(await rotate(webhook.id, { gracePeriodSeconds: 604_801 }), 'gracePeriodSeconds');
    // Nothing changed: the original secret still signs alone.
    await emit('CREATE_ORDER');
    await receiver.until((requests) => requests.length === 1);
    const request = receiver.requests[0]!;
    expect(request.headers['webhook-signature']!.split(' ')).toHaveLength(1);
    new Webhook(webhook.secret).verify(request.body, request.headers);
  });
});

describe('throttling: Retry-After and per-endpoint backoff', () => {
  /** The subscription's throttle as stored. */
  const throttleOf = (webhookId: number) =>
    t.runtime.database.db
      .selectFrom('webhook')
      .select(['throttled_until', 'throttle_level'])
      .where('client_id', '=', account.clientId)
      .where('id', '=', webhookId)
      .executeTakeFirstOrThrow();

  it('waits the Retry-After of a 429 before the next attempt, then ends the throttle', async () => {
    const webhook = await subscribe();
    receiver.answer = (_request, index) =>
      index === 0 ? { status: 429, headers: { 'retry-after': '2' } } : 200;
    await emit('CREATE_ORDER');
    await receiver.until((requests) => requests.length === 1);
    await waitFor(
      'the 429 to be recorded',
      async () => (await deliveries(webhook.id)).rows[0]?.attempts === 1,
    );
    const [throttled] = (await deliveries(webhook.id)).rows;
    const row = await t.runtime.database.db
      .selectFrom('webhook_delivery')
      .select(['last_attempt_at', 'next_attempt_at'])
      .where('client_id', '=', account.clientId)
      .where('id', '=', throttled!.id)
      .executeTakeFirstOrThrow();
    // The schedule says 50 ms here; the receiver asked for 2 s.
    expect(row.next_attempt_at!.getTime() - row.last_attempt_at!.getTime()).toBeGreaterThan(1_900);
    expect(await throttleOf(webhook.id)).toMatchObject({ throttle_level: 1 });

    const [delivered] = await settled(webhook.id);
    expect(delivered).toMatchObject({ status: 'DELIVERED', attempts: 2 });
    expect(await throttleOf(webhook.id)).toEqual({ throttled_until: null, throttle_level: 0 });
  });

  it('holds back every delivery to an endpoint that answered 502, without counting an attempt', async () => {
    const webhook = await subscribe();
    receiver.answer = (_request, index) => (index === 0 ? 502 : 200);
    const [first] = await emit('CREATE_ORDER');
    await waitFor(
      'the 502 to be recorded',
      async () => (await deliveries(webhook.id)).rows[0]?.attempts === 1,
    );
    const { throttled_until: until } = await throttleOf(webhook.id);
    expect(until).not.toBeNull();
    // Recorded while the endpoint is throttled (about a second): deferred to the throttle's end.
    const [second] = await emit('CREATE_ORDER');
    await receiver.until((requests) => requests.length === 3);
    const rows = await settled(webhook.id);
    const byEntity = new Map(rows.map((row) => [row.entityId, row]));
    expect(byEntity.get(first!)).toMatchObject({ status: 'DELIVERED', attempts: 2 });
    expect(byEntity.get(second!)).toMatchObject({ status: 'DELIVERED', attempts: 1 });
    const lastAttempts = await t.runtime.database.db
      .selectFrom('webhook_delivery')
      .select('last_attempt_at')
      .where('client_id', '=', account.clientId)
      .where('webhook_id', '=', webhook.id)
      .execute();
    // Both last attempts waited for the throttle's end (times of one machine: the process and its database).
    expect(lastAttempts).toHaveLength(2);
    for (const { last_attempt_at: at } of lastAttempts)
      expect(at!.getTime()).toBeGreaterThanOrEqual(until!.getTime() - 100);
    expect(await throttleOf(webhook.id)).toEqual({ throttled_until: null, throttle_level: 0 });
  });

  it('backs off 1 s doubling to 10 min, and reads Retry-After as seconds or an HTTP date', () => {
    expect(endpointBackoffMs(1, () => 0.5)).toBe(1_000);
    expect(endpointBackoffMs(2, () => 0.5)).toBe(2_000);
    expect(endpointBackoffMs(4, () => 0)).toBe(6_400);
    expect(endpointBackoffMs(30, () => 0.5)).toBe(600_000);
    const now = new Date('2026-11-25T12:00:00Z');
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter('Wed, 25 Nov 2026 12:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('Wed, 25 Nov 2026 11:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter('-5', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
    expect(MAX_RETRY_AFTER_MS).toBe(3_600_000);
  });
});
