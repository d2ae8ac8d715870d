/**
 * Write growth (decision P183): whether writes stay as fast as a client's tables grow, whatever the planner's
 * statistics say. Each workload runs `GROWTH_UNITS` units over 4 connections and is measured in 20 windows of
 * equal unit counts; the target is the last window's rate ≥ 0.8× the first's.
 *
 * The part starts its own service on a fresh embedded database (`DATA_DIR` in a new temporary folder, autovacuum
 * as configured) and runs, in order:
 * 1. inbound: an INCOME document created and moved through three statuses, 0 → `GROWTH_UNITS` documents of the
 *    demo client;
 * 2. catalog: a model (one view, two sizes) created and one of its products patched, 0 → `GROWTH_UNITS` models;
 * 3. receipts: a receipt of each document of 1. created against provider A's sandbox;
 * 4. inbound again, for a new client on a table already holding `GROWTH_SEEDED` documents of 100 other clients
 *    (seeded with `INSERT … SELECT generate_series`, secondary indexes rebuilt after the load, then `ANALYZE`).
 *
 * Sizes: `BENCH_GROWTH_UNITS` (default 20,000) and `BENCH_GROWTH_SEEDED` (default 1,000,000).
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { createDatabase } from '../src/db/database.ts';
import { runningEmbeddedUrl } from '../src/db/embedded-postgres.ts';
import {
  callApi,
  formatMs,
  formatNumber,
  startService,
  type BenchPartResult,
  type BenchRow,
  type TargetCheck,
} from './lib.ts';
import {
  createAccount,
  inboundUnit,
  rateWindows,
  runUnits,
  windowTable,
  type Account,
  type Unit,
  type UnitRun,
} from './workload.ts';

const GROWTH_UNITS = Number(process.env.BENCH_GROWTH_UNITS ?? 20_000);
const GROWTH_SEEDED = Number(process.env.BENCH_GROWTH_SEEDED ?? 1_000_000);
const CONNECTIONS = 4;
const WINDOWS = 20;
/** Each workload gives up after this long. */
const LIMIT_SECONDS = 900;
/** The tenants the seeded documents belong to. */
const SEEDED_CLIENTS = 100;
/** The target: the last window's rate at least this share of the first's. */
const KEPT_SHARE = 0.8;

/** One measured workload. */
interface Workload {
  name: string;
  unit: string;
  run: UnitRun;
}

/** The catalog unit: a model with one view of two sizes, then one of its products renamed (JSON merge patch). */
async function catalogUnit(serviceUrl: string, account: Account): Promise<Unit> {
  const post = <T>(pathname: string, body: unknown) =>
    callApi<T>(serviceUrl, account.writeToken, 'POST', pathname, body);
  const brand = await post<{ id: number }>('/api/brand', { name: 'Growth brand' });
  const category = await post<{ id: number }>('/api/category', { name: 'Growth category' });
  return async (index) => {
    const model = await post<{
      id: number;
      versionId: number;
      views: Array<{ sizes: Array<{ id: number }> }>;
    }>('/api/model', {
      article: `GROWTH-${String(index + 1).padStart(7, '0')}`,
      title: `Growth model ${index + 1}`,
      brandId: brand.id,
      categoryId: category.id,
      organizationId: account.organizationId,
      views: [{ sizes: ['S', 'M'].map((size) => ({ name: `Growth product ${index + 1} ${size}`, size })) }],
    });
    const productId = model.views[0]?.sizes[0]?.id;
    if (productId === undefined) throw new Error(`model ${model.id} came back without products`);
    await callApi(serviceUrl, account.writeToken, 'PATCH', `/api/product/${productId}`, {
      name: `Growth product ${index + 1} S, renamed`,
      versionId: model.versionId,
    });
  };
}

/** The receipt unit: `POST /api/receipt/order/{id}` of the index-th document of `orderIds`. */
function receiptUnit(serviceUrl: string, account: Account, orderIds: number[]): Unit {
  return async (index) => {
    await callApi(serviceUrl, account.writeToken, 'POST', `/api/receipt/order/${orderIds[index]}`);
  };
}

/** Tables the seeded documents fill; their secondary indexes are built once after the load. */
const SEEDED_TABLES = ['inbound_order', 'inbound_order_product', 'inbound_order_history'];

/**
 * Seeds `documents` FINISHED INCOME documents (two positions and one history row each) spread over
 * `SEEDED_CLIENTS` new clients, in one transaction: the secondary indexes of the three tables (not those of
 * keys) are dropped and built again after the load, which is minutes faster than maintaining the trigram indexes
 * row by row; then `ANALYZE`.
 * @returns the milliseconds it took, `ANALYZE` included
 */
async function seedOtherClients(databaseUrl: string, documents: number): Promise<number> {
  const database = createDatabase(databaseUrl, 1);
  const { db } = database;
  const started = performance.now();
  const perClient = Math.ceil(documents / SEEDED_CLIENTS);
  try {
    await db.transaction().execute(async (trx) => {
      await sql`set local maintenance_work_mem = '256MB'`.execute(trx);
      const indexes = await sql<{ name: string; definition: string }>`
        select indexname as name, indexdef as definition from pg_indexes
        where schemaname = current_schema() and tablename = any(${SEEDED_TABLES}::text[])
          and not exists (select 1 from pg_constraint where conindid = format('%I', indexname)::regclass)`.execute(
        trx,
      );
      for (const index of indexes.rows) await sql`drop index ${sql.id(index.name)}`.execute(trx);
      const clients = await sql<{ id: number }>`
        insert into client (name) select 'Growth tenant ' || i from generate_series(1, ${SEEDED_CLIENTS}::int) i
        returning id`.execute(trx);
      const clientIds = clients.rows.map((row) => row.id);
      await sql`
        insert into organization (client_id, name)
        select id, 'Growth tenant organization' from unnest(${clientIds}::bigint[]) as c(id)`.execute(trx);
      await sql`
        insert into inbound_order (client_id, organization_id, type, status, name, warehouse_id, external_order_id,
                                   total_quantity, total_price, created_date, created, modified_date, service)
        select o.client_id, o.id, 'INCOME', 'FINISHED', 'Tenant receipt ' || i, 1 + i % 3,
               'T-' || lpad(i::text, 7, '0'), 4, 480, at, at, at, 'NONE'
        from organization o
        cross join generate_series(1, ${perClient}::int) as i
        cross join lateral (select now() - (${perClient}::int - i) * interval '1 minute' as at) as t
        where o.client_id = any(${clientIds}::bigint[])`.execute(trx);
      await sql`
        insert into inbound_order_product (client_id, order_id, product_id, article, product_name, quantity, price,
                                           position, created_date, last_update_date)
        select d.client_id, d.id, 6000000 + (d.id * 2 + k) % 5000, 'TN-' || (d.id * 2 + k) % 5000,
               'Tenant product ' || (d.id * 2 + k) % 5000, 2, 120, k + 1, d.created, d.created
        from inbound_order d cross join generate_series(0, 1) as k
        where d.client_id = any(${clientIds}::bigint[])`.execute(trx);
      await sql`
        insert into inbound_order_history (client_id, order_id, organization_id, action, order_status, order_type,
                                           total_quantity, total_price, version_id)
        select d.client_id, d.id, d.organization_id, 'CREATE', 'CREATED', 'INCOME', 4, 480, 1
        from inbound_order d where d.client_id = any(${clientIds}::bigint[])`.execute(trx);
      for (const index of indexes.rows) await sql.raw(index.definition).execute(trx);
    });
    await sql`analyze`.execute(db);
    return performance.now() - started;
  } finally {
    await database.close();
  }
}

/** Runs one workload of `GROWTH_UNITS` units and prints its window table. */
async function measure(
  name: string,
  unitName: string,
  unit: Unit,
  log: (line: string) => void,
): Promise<Workload> {
  log(`growth: ${name}…`);
  const run = await runUnits(GROWTH_UNITS, CONNECTIONS, unit, LIMIT_SECONDS);
  const windows = rateWindows(run.completedAt, Math.ceil(GROWTH_UNITS / WINDOWS));
  log(`growth: ${name}, ${formatMs(run.elapsedMs)}\n${windowTable(windows, unitName)}`);
  if (run.failures > 0) log(`growth: ${formatNumber(run.failures)} units failed; first: ${run.firstFailure}`);
  return { name, unit: unitName, run };
}

/** Runs the growth part on a service of its own (a fresh embedded database). */
export async function benchGrowth(_context: unknown, log: (line: string) => void): Promise<BenchPartResult> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'seller-ops-growth-'));
  const { service } = await startService(dataDir);
  try {
    const demo = JSON.parse(await readFile(path.join(dataDir, 'demo-credentials.json'), 'utf8')) as Account;
    const databaseUrl = await runningEmbeddedUrl(dataDir);
    if (!databaseUrl) throw new Error('cannot find the database of the growth service');
    const units = formatNumber(GROWTH_UNITS);
    const orderIds: number[] = [];
    const workloads: Workload[] = [
      await measure(
        `inbound, 0 → ${units} documents of one client (fresh database)`,
        'documents',
        await inboundUnit(service.url, demo, (id) => orderIds.push(id)),
        log,
      ),
      await measure(
        `catalog, 0 → ${units} models of one client`,
        'models',
        await catalogUnit(service.url, demo),
        log,
      ),
      await measure(
        `receipts, 0 → ${units} receipts of one client (provider A's sandbox)`,
        'receipts',
        receiptUnit(service.url, demo, orderIds),
        log,
      ),
    ];
    log(`growth: seeding ${formatNumber(GROWTH_SEEDED)} documents of ${SEEDED_CLIENTS} other clients…`);
    const seedMs = await seedOtherClients(databaseUrl, GROWTH_SEEDED);
    log(`growth: seeded in ${formatMs(seedMs)} (indexes rebuilt, ANALYZE included)`);
    const fresh = await createAccount(databaseUrl, 'Growth new client');
    workloads.push(
      await measure(
        `inbound, 0 → ${units} documents of a new client beside ${formatNumber(GROWTH_SEEDED)} analyzed ones`,
        'documents',
        await inboundUnit(service.url, fresh),
        log,
      ),
    );
    return growthResult(workloads, seedMs);
  } finally {
    await service.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

function growthResult(workloads: Workload[], seedMs: number): BenchPartResult {
  const rows: BenchRow[] = [];
  const targets: TargetCheck[] = [];
  for (const { name, unit, run } of workloads) {
    const windows = rateWindows(run.completedAt, Math.ceil(GROWTH_UNITS / WINDOWS));
    const first = windows[0]?.rate ?? 0;
    const last = windows.at(-1)?.rate ?? 0;
    const kept = first > 0 ? last / first : 0;
    rows.push({
      name: `${name}, ${CONNECTIONS} connections`,
      value: `first window ${formatNumber(first, 1)} ${unit}/s, last ${formatNumber(last, 1)} (${formatNumber(kept, 2)}×)`,
      detail:
        `${formatNumber(run.completedAt.length)} in ${formatMs(run.elapsedMs)}; per window of ` +
        `${formatNumber(Math.ceil(GROWTH_UNITS / WINDOWS))}: ${windows.map((window) => formatNumber(window.rate, 0)).join(', ')}` +
        (run.failures > 0 ? `; ${formatNumber(run.failures)} FAILED (${run.firstFailure})` : ''),
    });
    const complete = run.failures === 0 && run.completedAt.length === GROWTH_UNITS;
    targets.push({
      target: `${name}: last window ≥ ${KEPT_SHARE}× the first`,
      measured: `${formatNumber(kept, 2)}×${complete ? '' : ' (incomplete run)'}`,
      met: kept >= KEPT_SHARE && complete,
      ...(kept >= KEPT_SHARE
        ? {}
        : { miss: `${formatNumber(KEPT_SHARE / Math.max(kept, 0.001), 2)}× short` }),
    });
  }
  rows.push({
    name: `seeding ${formatNumber(GROWTH_SEEDED)} documents (2 positions, 1 history row each) with SQL`,
    value: formatMs(seedMs),
    detail: 'one transaction; secondary indexes built after the load; ANALYZE',
  });
  return { title: `Write growth (fresh embedded database, ${CONNECTIONS} connections)`, rows, targets };
}
