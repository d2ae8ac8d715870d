/**
 * `GET /metrics` through HTTP (P129–P132): guarded by METRICS_TOKEN; the Prometheus text format;
 * request durations by route template, method and status moving with requests; pool use; job queue depth and age
 * per queue; webhook delivery attempts by outcome; tasks and receipts by status; process metrics; and `/ready`
 * reporting the job queue. A database of its own, so counts are this file's alone.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, type TestAccount } from '../helpers/factories.ts';
import { expectError, send } from '../helpers/http.ts';
import { createTask, taskKindsGroup } from '../helpers/tasks.ts';
import {
  createOwnDatabase,
  recordEvents,
  startReceiver,
  waitFor,
  type OwnDatabase,
  type Receiver,
} from '../fixtures/webhook-kit.ts';
import { buildTestApp, type TestApp } from '../helpers/test-app.ts';
import { defineTask } from '../../src/modules/task/definition.ts';

const METRICS_TOKEN = 'test-metrics-token';
const Idle = defineTask({
  type: 'API_IMPORT_TASK',
  attempts: 1,
  backoffSeconds: 1,
  perform: async ({ progress }) => progress(100),
});

let database: OwnDatabase;
let t: TestApp;
let receiver: Receiver;
let account: TestAccount;

beforeAll(async () => {
  database = await createOwnDatabase('metrics');
  t = await buildTestApp(
    {
      WEBHOOK_ALLOW_PRIVATE: 'true',
      WEBHOOK_RETRY_SCHEDULE: '0.05,0.05,0.05',
      WEBHOOK_TIMEOUT_MS: '500',
      WEBHOOK_POLL_SECONDS: '1',
      METRICS_TOKEN,
    },
    database.url,
    { groups: [taskKindsGroup([Idle])] },
  );
  receiver = await startReceiver();
  account = await createAccount(t.runtime);
});
afterAll(async () => {
  await receiver?.close();
  await t?.close();
  await database?.drop();
});

/** One sample of the text format: metric name, labels and value. */
interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Scrapes `/metrics` with the token and parses its samples. */
async function scrape(): Promise<Sample[]> {
  const response = await t.app.inject({
    url: '/metrics',
    headers: { authorization: `Bearer ${METRICS_TOKEN}` },
  });
  expect(response.statusCode, response.body).toBe(200);
  expect(response.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
  return response.body
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
      if (!match) throw new Error(`not a sample: ${line}`);
      const labels: Record<string, string> = {};
      for (const pair of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g))
        labels[pair[1] as string] = pair[2] as string;
      return { name: match[1] as string, labels, value: Number(match[3]) };
    });
}

/** The value of the sample named `name` whose labels include `labels`; undefined when absent. */
function valueOf(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  return samples.find(
    (sample) =>
      sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
  )?.value;
}

describe('GET /metrics', () => {
  it('answers only the METRICS_TOKEN as a bearer token, in the error model otherwise, and is never rate limited', async () => {
    expectError(await t.app.inject('/metrics'), 401, 'auth_required');
    expectError(
      await t.app.inject({ url: '/metrics', headers: { authorization: 'Bearer wrong' } }),
      401,
      'auth_required',
    );
    expectError(
      await t.app.inject({ url: '/metrics', headers: { authorization: METRICS_TOKEN } }),
      401,
      'auth_required',
    );
    const samples = await scrape();
    expect(valueOf(samples, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
    expect(valueOf(samples, 'nodejs_heap_size_used_bytes')).toBeGreaterThan(0);
  });

  it('is open without METRICS_TOKEN', async () => {
    const open = await buildTestApp({ RATE_LIMIT_STORE: 'memory' }, database.url, { workers: false });
    try {
      const response = await open.app.inject('/metrics');
      expect(response.statusCode).toBe(200);
      expect(response.body).toContain('# TYPE seller_ops_http_request_duration_seconds histogram');
    } finally {
      await open.close();
    }
  });

  it('observes request durations by route template, method and status', async () => {
    const before = await scrape();
    const labels = { route: '/api/tag/find/:modelId', method: 'GET' };
    const count = (samples: Sample[], status: string) =>
      valueOf(samples, 'seller_ops_http_request_duration_seconds_count', { ...labels, status }) ?? 0;
    for (const modelId of [987654, 987655, 987656])
      await send(t.app, account.readToken, { method: 'GET', url: `/api/tag/find/${modelId}` });
    await send(t.app, account.readToken, { method: 'GET', url: '/api/tag/find/not-a-number' });
    await send(t.app, undefined, { method: 'GET', url: '/api/tag/find/1' });
    const after = await scrape();
    const statuses = after
      .filter((sample) => sample.name === 'seller_ops_http_request_duration_seconds_count')
      .filter((sample) => sample.labels.route === labels.route);
    const moved: Record<string, number> = {};
    for (const sample of statuses)
      moved[sample.labels.status as string] = sample.value - count(before, sample.labels.status as string);
    // 3 lookups of models no one has (404 or 200 with nothing, as the group answers) + 1 refused id + 1 without token.
    expect(Object.values(moved).reduce((sum, value) => sum + value, 0)).toBe(5);
    expect(moved['401']).toBe(1);
    expect(moved['400']).toBe(1);
    expect(
      valueOf(after, 'seller_ops_http_request_duration_seconds_sum', { ...labels, status: '401' }),
    ).toBeGreaterThan(0);
    // Raw URLs never become labels.
    expect(after.some((sample) => JSON.stringify(sample.labels).includes('987654'))).toBe(false);
    expect(after.some((sample) => JSON.stringify(sample.labels).includes('not-a-number'))).toBe(false);
    // A URL no route matches is labelled `unmatched`.
    await t.app.inject('/no/such/route/12345');
    expect(
      valueOf(await scrape(), 'seller_ops_http_request_duration_seconds_count', {
        route: 'unmatched',
        status: '404',
      }),
    ).toBeGreaterThanOrEqual(1);
  });

  it('reports the connection pool', async () => {
    const samples = await scrape();
    expect(
      valueOf(samples, 'seller_ops_database_pool_connections', { state: 'total' }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      valueOf(samples, 'seller_ops_database_pool_connections', { state: 'idle' }),
    ).toBeGreaterThanOrEqual(0);
    expect(valueOf(samples, 'seller_ops_database_pool_connections', { state: 'waiting' })).toBe(0);
  });

  it('reports job queue depth and the age of the oldest due job per queue, and /ready reports the queue', async () => {
    const queue = 'metrics-test';
    const { boss } = t.runtime.jobs;
    await boss.createQueue(queue);
    await boss.send(queue, {});
    await boss.send(queue, {}, { startAfter: 3600 });
    await sleep(1100);
    const samples = await scrape();
    expect(valueOf(samples, 'seller_ops_job_queue_jobs', { queue, state: 'due' })).toBe(1);
    expect(valueOf(samples, 'seller_ops_job_queue_jobs', { queue, state: 'delayed' })).toBe(1);
    expect(valueOf(samples, 'seller_ops_job_queue_jobs', { queue, state: 'active' })).toBe(0);
    expect(valueOf(samples, 'seller_ops_job_queue_oldest_due_seconds', { queue })).toBeGreaterThanOrEqual(1);
    // Queues of the service's own jobs are listed too.
    expect(
      valueOf(samples, 'seller_ops_job_queue_jobs', { queue: 'rate-limit-purge', state: 'due' }),
    ).toBeDefined();

    const ready = await t.app.inject('/ready');
    expect(ready.statusCode).toBe(200);
    const body = ready.json<{ status: string; jobQueue: Record<string, unknown> }>();
    expect(body.status).toBe('ready');
    expect(body.jobQueue).toMatchObject({ status: 'ready', workers: true });
    expect(body.jobQueue.dueJobs).toBeGreaterThanOrEqual(1);
    expect(body.jobQueue.oldestDueSeconds).toBeGreaterThanOrEqual(1);
  });

  it('counts webhook delivery attempts by outcome', async () => {
    const before = await scrape();
    const attempts = (samples: Sample[], outcome: string) =>
      valueOf(samples, 'seller_ops_webhook_delivery_attempts_total', { outcome }) ?? 0;
    const subscribed = await send(t.app, account.writeToken, {
      method: 'POST',
      url: '/api/webhook/',
      payload: {
        name: 'metrics',
        url: `${receiver.url}/hook`,
        organizationId: account.organizationId,
        types: ['CREATE_ORDER'],
      },
    });
    expect(subscribed.statusCode, subscribed.body).toBe(200);
    // The first event is delivered; the second is answered 500 four times: three retries, then failed.
    receiver.answer = (request) => (request.body.includes('"entity 2"') ? 500 : 200);
    const event = {
      clientId: account.clientId,
      organizationId: account.organizationId,
      type: 'CREATE_ORDER' as const,
    };
    await recordEvents(t.runtime, event, [1]);
    await recordEvents(t.runtime, event, [2]);
    await waitFor('every attempt recorded', async () => {
      const samples = await scrape();
      return (
        attempts(samples, 'delivered') - attempts(before, 'delivered') === 1 &&
        attempts(samples, 'failed') - attempts(before, 'failed') === 1
      );
    });
    const after = await scrape();
    expect(attempts(after, 'retry') - attempts(before, 'retry')).toBe(3);
    expect(attempts(after, 'gone') - attempts(before, 'gone')).toBe(0);
  });

  it('reports tasks and receipts by status', async () => {
    const tasks = (samples: Sample[]) =>
      samples
        .filter((sample) => sample.name === 'seller_ops_tasks')
        .reduce((sum, sample) => sum + sample.value, 0);
    const before = await scrape();
    await createTask(t.app, account.writeToken, Idle.type, { organizationId: account.organizationId });
    await createTask(t.app, account.writeToken, Idle.type, { organizationId: account.organizationId });
    const after = await scrape();
    expect(tasks(after) - tasks(before)).toBe(2);
    for (const status of [
      'CREATED',
      'RUNNING',
      'FINISHED',
      'ERROR',
      'RESTARTING',
      'INTERRUPTING',
      'INTERRUPTED',
    ])
      expect(valueOf(after, 'seller_ops_tasks', { status }), status).toBeDefined();
    await waitFor(
      'both tasks finished',
      async () => valueOf(await scrape(), 'seller_ops_tasks', { status: 'FINISHED' }) === 2,
    );
    // No receipt in this database: every status is reported, at 0.
    for (const status of ['CREATED', 'PENDING', 'COMPLETED', 'FAILED', 'CANCELLED'])
      expect(valueOf(after, 'seller_ops_receipts', { status }), status).toBe(0);
  });
});
