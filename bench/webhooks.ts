/**
 * Webhook delivery bench: throughput from commit to receipt and commit-to-delivery latency, to a
 * loopback receiver in this (bench) process.
 *
 * The service under test is a second `bin/seller-ops.js serve` child process on its own database of the bench's
 * embedded PostgreSQL server, with `WEBHOOK_ALLOW_PRIVATE=true` (the receiver is on 127.0.0.1) and the default
 * delivery settings otherwise. It must not share a database with the bench's main service, whose workers refuse
 * loopback targets and would take the jobs.
 *
 * - Throughput: `POST /api/inbound/status` with 1,000 ids commits 1,000 ORDER_STATUS events in one transaction;
 *   the clock runs from the start of that call to the receipt of its 1,000th event. Five calls in sequence.
 * - Latency: documents created one at a time (`POST /api/inbound/`); each is timed from the start of its
 *   create call (before the commit, so an upper bound) to the receipt of its CREATE_ORDER.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { createDatabase } from '../src/db/database.ts';
import {
  callApi,
  check,
  formatMs,
  formatNumber,
  percentile,
  startService,
  type BenchContext,
  type BenchPartResult,
} from './lib.ts';

const BULK_IDS = 1_000;
const BULK_ROUNDS = 5;
const LATENCY_SAMPLES = 300;
const ADMIN_TOKEN = 'bench-webhooks-admin';

/** A receiver that notes when each event (by order id and kind) arrived. */
function startReceiver() {
  const arrivals = new Map<string, number>();
  const waiters: Array<{ key: string; resolve: (at: number) => void }> = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const at = performance.now();
      response.writeHead(200).end();
      const { id, status } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        id: number;
        status: string;
      };
      const key = `${String(request.headers['webhook-event-type'])}:${id}:${status}`;
      if (!arrivals.has(key)) arrivals.set(key, at);
      for (const waiter of waiters.filter((candidate) => candidate.key === key)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(at);
      }
    });
  });
  return {
    server,
    /** Forgets the arrivals so far (a status can be set again in a later round). */
    reset: () => arrivals.clear(),
    /** Resolves with the arrival time of the event `key` (`KIND:orderId:status`). */
    arrival(key: string, timeoutMs = 30_000): Promise<number> {
      const known = arrivals.get(key);
      if (known !== undefined) return Promise.resolve(known);
      return new Promise<number>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`webhook ${key} not received`)), timeoutMs);
        waiters.push({
          key,
          resolve: (at) => {
            clearTimeout(timer);
            resolve(at);
          },
        });
      });
    },
  };
}

/**
 * Runs the webhook bench against a service of its own on the bench's PostgreSQL server.
 * @returns the figures and the targets (≥ 1,000 deliveries/s; p99 < 200 ms)
 */
export async function benchWebhooks(context: BenchContext): Promise<BenchPartResult> {
  const log = (line: string) => process.stderr.write(`[bench] webhooks: ${line}\n`);
  const admin = createDatabase(context.databaseUrl, 1);
  const name = `webhook_bench_${Date.now()}`;
  await sql.raw(`create database ${name}`).execute(admin.db);
  const databaseUrl = new URL(context.databaseUrl);
  databaseUrl.pathname = `/${name}`;

  const receiver = startReceiver();
  await new Promise<void>((resolve) => receiver.server.listen(0, '127.0.0.1', resolve));
  const receiverUrl = `http://127.0.0.1:${(receiver.server.address() as AddressInfo).port}/bench`;

  const { service } = await startService(context.dataDir, {
    DATABASE_URL: databaseUrl.toString(),
    SEED_DEMO: 'false',
    ADMIN_TOKEN,
    WEBHOOK_ALLOW_PRIVATE: 'true',
  });
  const serviceUrl = service.url;
  try {
    const bearer = `Bearer ${ADMIN_TOKEN}`;
    const client = await callApi<{ id: number }>(serviceUrl, bearer, 'POST', '/admin/clients', {
      name: 'bench',
    });
    const organization = await callApi<{ id: number }>(
      serviceUrl,
      bearer,
      'POST',
      `/admin/clients/${client.id}/organizations`,
      { name: 'bench' },
    );
    const user = await callApi<{ id: number }>(
      serviceUrl,
      bearer,
      'POST',
      `/admin/clients/${client.id}/users`,
      {
        name: 'bench',
      },
    );
    const { token } = await callApi<{ token: string }>(
      serviceUrl,
      bearer,
      'POST',
      `/admin/users/${user.id}/tokens`,
      {
        access: 'WRITE',
      },
    );
    await callApi(serviceUrl, token, 'POST', '/api/webhook/', {
      name: 'bench',
      url: receiverUrl,
      organizationId: organization.id,
      types: ['CREATE_ORDER', 'ORDER_STATUS'],
    });
    const createOrder = () =>
      callApi<{ id: number }>(serviceUrl, token, 'POST', '/api/inbound/', {
        organizationId: organization.id,
        type: 'INCOME',
      });

    log(`latency: ${LATENCY_SAMPLES} documents created one at a time…`);
    const latencies: number[] = [];
    const createCalls: number[] = [];
    const ids: number[] = [];
    for (let index = 0; index < Math.max(LATENCY_SAMPLES, BULK_IDS); index++) {
      const started = performance.now();
      const order = await createOrder();
      createCalls.push(performance.now() - started);
      ids.push(order.id);
      if (index < LATENCY_SAMPLES)
        latencies.push((await receiver.arrival(`CREATE_ORDER:${order.id}:CREATED`)) - started);
    }

    log(`throughput: ${BULK_ROUNDS} × bulk status of ${formatNumber(BULK_IDS)} documents…`);
    const rates: number[] = [];
    const callRates: number[] = [];
    for (let round = 0; round < BULK_ROUNDS; round++) {
      const status = round % 2 === 0 ? 'PACKING' : 'READY_TO_SUPPLY';
      receiver.reset();
      const started = performance.now();
      await callApi(serviceUrl, token, 'POST', `/api/inbound/status?status=${status}`, ids);
      // The response leaves right after the commit: its arrival bounds the commit time from above.
      const committed = performance.now();
      const arrivals = await Promise.all(
        ids.map((id) => receiver.arrival(`ORDER_STATUS:${id}:${status}`, 60_000)),
      );
      const last = Math.max(...arrivals);
      rates.push(BULK_IDS / ((last - committed) / 1000));
      callRates.push(BULK_IDS / ((last - started) / 1000));
    }

    const p50 = percentile(latencies, 50);
    const p99 = percentile(latencies, 99);
    const throughput = percentile(rates, 50);
    const figures = {
      deliveriesPerSecond: Math.round(throughput),
      deliveriesPerSecondMin: Math.round(Math.min(...rates)),
      latencyP50Ms: Number(p50.toFixed(1)),
      latencyP99Ms: Number(p99.toFixed(1)),
      deliveriesPerSecondFromCallStart: Math.round(percentile(callRates, 50)),
      createCallP50Ms: Number(percentile(createCalls, 50).toFixed(1)),
    };
    log(JSON.stringify(figures));
    return {
      title: 'Webhooks',
      rows: [
        {
          name: `Delivery throughput (bulk status of ${formatNumber(BULK_IDS)}, commit → receipt)`,
          value: `${formatNumber(figures.deliveriesPerSecond)} deliveries/s`,
          detail:
            `median of ${BULK_ROUNDS} rounds; slowest ${formatNumber(figures.deliveriesPerSecondMin)}/s; ` +
            `${formatNumber(figures.deliveriesPerSecondFromCallStart)}/s counting the bulk call itself`,
        },
        {
          name: 'Commit → delivery latency (single create, sequential)',
          value: `p99 ${formatMs(p99)}`,
          detail:
            `p50 ${formatMs(p50)}, ${LATENCY_SAMPLES} events, timed from the start of the create call ` +
            `(the call alone: p50 ${formatMs(figures.createCallP50Ms)})`,
        },
      ],
      targets: [
        {
          target: 'webhook throughput ≥ 1,000 deliveries/s',
          measured: `${formatNumber(figures.deliveriesPerSecond)}/s`,
          met: figures.deliveriesPerSecond >= 1000,
          ...(figures.deliveriesPerSecond < 1000 && {
            miss: `${formatNumber(figures.deliveriesPerSecond / 1000, 2)}× the target`,
          }),
        },
        check('webhook p99 commit → delivery < 200 ms', p99, 200, (value) => formatMs(value)),
      ],
    };
  } finally {
    await service.stop();
    receiver.server.close();
    await sql.raw(`drop database if exists ${name} with (force)`).execute(admin.db);
    await admin.close();
  }
}
