/**
 * Receipt figures: how many fiscal receipts per second go from commit to COMPLETED against provider
 * A's sandbox (the one the embedded default starts and the demo organization is configured with), and the
 * latency of `POST /api/receipt/order/{id}` (commit, then the provider's answer) while they are created.
 *
 * Data: `DOCUMENTS` receiving documents of the demo client with 2 positions each, seeded with
 * `INSERT … SELECT generate_series`. Load: `CONNECTIONS` clients, each creating the receipts of its share of
 * the documents one after another on a kept-alive connection. Completion comes from the refresh job
 * (`RECEIPT_REFRESH_SCHEDULE`, first refresh 1 s after the commit) with the sandbox fiscalising in 300 ms; the
 * count of COMPLETED receipts is read from the database every 50 ms. CPU time of the service process (which also
 * runs the sandbox on the embedded default) and of PostgreSQL is read from /proc before and after.
 */
import http from 'node:http';
import { sql } from 'kysely';
import { createDatabase } from '../src/db/database.ts';
import {
  cpuMs,
  formatMs,
  formatNumber,
  percentile,
  postgresPids,
  sleep,
  type BenchContext,
  type BenchPartResult,
} from './lib.ts';

const DOCUMENTS = 2_000;
const CONNECTIONS = 10;
/** The whole part gives up after this long. */
const LIMIT_MS = 120_000;

/** Seeds the documents; returns their ids. */
async function seed(context: BenchContext, db: ReturnType<typeof createDatabase>['db']): Promise<number[]> {
  const orders = await sql<{ id: number }>`
    insert into inbound_order (client_id, organization_id, type, name, created_date, service)
    select ${context.clientId}, ${context.organizationId}, 'INCOME', 'Receipt bench ' || i, now(), 'NONE'
    from generate_series(1, ${DOCUMENTS}::int) as i
    returning id`.execute(db);
  const ids = orders.rows.map((row) => row.id);
  await sql`
    insert into inbound_order_product (client_id, order_id, product_id, article, product_name, quantity, price)
    select ${context.clientId}, o.id, 7100000 + k, 'RCPT-' || k, 'Receipt bench product ' || k,
           1 + (o.id + k) % 12, (99 + (o.id * 7 + k * 31) % 900)::numeric(16, 2) + 0.9
    from unnest(${ids}::bigint[]) as o(id) cross join generate_series(1, 2) as k`.execute(db);
  return ids;
}

/** POSTs the receipts of `ids` one after another on one kept-alive connection; returns each latency in ms. */
async function createReceipts(
  context: BenchContext,
  ids: number[],
  failures: { count: number },
): Promise<number[]> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const base = new URL(context.serviceUrl);
  const timings: number[] = [];
  try {
    for (const id of ids) {
      const started = performance.now();
      const status = await new Promise<number | undefined>((resolve) => {
        const request = http.request(
          {
            host: base.hostname,
            port: base.port,
            method: 'POST',
            path: `/api/receipt/order/${id}`,
            agent,
            headers: { authorization: context.writeToken },
          },
          (response) => {
            response.resume();
            response.on('end', () => resolve(response.statusCode));
          },
        );
        request.on('error', () => resolve(undefined));
        request.setTimeout(30_000, () => request.destroy());
        request.end();
      });
      timings.push(performance.now() - started);
      if (status !== 200) failures.count += 1;
    }
  } finally {
    agent.destroy();
  }
  return timings;
}

/** Runs the receipt part of the bench against the service of `context`. */
export async function benchReceipts(
  context: BenchContext,
  log: (line: string) => void,
): Promise<BenchPartResult> {
  const database = createDatabase(context.databaseUrl, 1);
  const { db } = database;
  try {
    log(`receipts: seeding ${formatNumber(DOCUMENTS)} documents…`);
    const ids = await seed(context, db);
    const completedCount = async () =>
      (
        await sql<{ count: number }>`
          select count(*)::int as count from receipt where status = 'COMPLETED' and order_id = any(${ids}::bigint[])`.execute(
          db,
        )
      ).rows[0]?.count ?? 0;

    log(`receipts: ${formatNumber(DOCUMENTS)} receipts over ${CONNECTIONS} connections…`);
    const failures = { count: 0 };
    const postgres = postgresPids(context.dataDir);
    const cpuBefore = { node: cpuMs([context.servicePid]), postgres: cpuMs(postgres) };
    const started = performance.now();
    const shares = Array.from({ length: CONNECTIONS }, (_, index) =>
      ids.filter((_, at) => at % CONNECTIONS === index),
    );
    const timings = (
      await Promise.all(shares.map((share) => createReceipts(context, share, failures)))
    ).flat();
    const createdMs = performance.now() - started;
    let completed = await completedCount();
    while (completed < DOCUMENTS && performance.now() - started < LIMIT_MS) {
      await sleep(50);
      completed = await completedCount();
    }
    const completedMs = performance.now() - started;
    const perReceipt = (ms: number) => formatMs(ms / DOCUMENTS);
    const cpu = `CPU per receipt: Node ${perReceipt(cpuMs([context.servicePid]) - cpuBefore.node)} (the sandbox included), PostgreSQL ${perReceipt(cpuMs(postgres) - cpuBefore.postgres)}`;
    const statuses = await sql<{ status: string; count: number }>`
      select status, count(*)::int as count from receipt where order_id = any(${ids}::bigint[])
      group by status order by status`.execute(db);
    const mix = statuses.rows.map((row) => `${row.status} ${formatNumber(row.count)}`).join(', ');
    return {
      title: `Receipts (${formatNumber(DOCUMENTS)} receiving documents, provider A's sandbox)`,
      rows: [
        {
          name: `receipts from commit to COMPLETED (${CONNECTIONS} connections)`,
          value: `${formatNumber((completed / completedMs) * 1000)} receipts/s`,
          detail: `${formatNumber(completed)} of ${formatNumber(DOCUMENTS)} COMPLETED in ${formatMs(completedMs)}; ${mix}; ${cpu}`,
        },
        {
          name: `POST /api/receipt/order/{id} (${CONNECTIONS} connections)`,
          value: `p50 ${formatMs(percentile(timings, 50))}, p99 ${formatMs(percentile(timings, 99))}`,
          detail: `${formatNumber((DOCUMENTS / createdMs) * 1000)} receipts created/s; max ${formatMs(Math.max(...timings))}${failures.count > 0 ? `; ${failures.count} failures` : ''}`,
        },
      ],
      targets: [],
    };
  } finally {
    await database.close();
  }
}
