/**
 * Inbound figures: single document GET, `find` over 100,000 documents, bulk status of 1,000 ids, each beside
 * the ceiling (a bare `node:http` server answering the same bytes from memory).
 *
 * Data: 100,000 INCOME documents of the demo client with 3 positions each are seeded with
 * `INSERT … SELECT generate_series` through the project's database module (then VACUUM ANALYZE, as autovacuum
 * would do on a live system), plus one document with 50 positions created through the API.
 */
import { sql, type Kysely } from 'kysely';
import { createDatabase } from '../src/db/database.ts';
import type { DB } from '../src/db/schema.ts';
import {
  callApi,
  check,
  cpuMs,
  postgresPids,
  formatMs,
  formatNumber,
  recordAnswer,
  recordGet,
  runLoad,
  runSequential,
  startCeiling,
  type BenchContext,
  type BenchPartResult,
  type BenchRow,
  type LoadResult,
  type RecordedResponse,
  type SequentialResult,
  type TargetCheck,
} from './lib.ts';
import { createCatalogProducts } from './workload.ts';

/** Documents seeded for `find` (visible), plus `DELETED_DOCUMENTS` deleted ones that `find` must skip. */
export const SEEDED_DOCUMENTS = 100_000;
const DELETED_DOCUMENTS = 1_000;
/** Positions of each seeded document. */
export const POSITIONS_PER_DOCUMENT = 3;
const BULK_IDS = 1_000;
const LOAD_CONNECTIONS = 10;
const WARMUP_SECONDS = 1;
const SEQUENTIAL_MAX = { count: 2_000, seconds: 3 };
const BULK_CALLS = { count: 40, seconds: 60 };
/** Status mix of the seeded documents: most receipts are closed, a few are open. */
const SEED_STATUSES = [
  'FINISHED',
  'FINISHED',
  'FINISHED',
  'FINISHED',
  'FINISHED',
  'FINISHED',
  'CREATED',
  'PACKING',
  'READY_TO_SUPPLY',
  'CANCELED',
];
const FILTER_STATUS = 'CREATED';

/**
 * Seeds `SEEDED_DOCUMENTS` visible and `DELETED_DOCUMENTS` deleted documents with 3 positions each for the
 * demo client.
 * @returns the number of documents `find` can see (not deleted) and the ids used for bulk status
 */
async function seed(context: BenchContext): Promise<{ visible: number; bulkIds: number[]; seedMs: number }> {
  const database = createDatabase(context.databaseUrl, 1);
  const { db } = database;
  const { clientId, organizationId } = context;
  // every stride-th document is deleted: exactly DELETED_DOCUMENTS of them
  const all = SEEDED_DOCUMENTS + DELETED_DOCUMENTS;
  const stride = all / DELETED_DOCUMENTS;
  const started = performance.now();
  try {
    await sql`
      insert into inbound_order (client_id, organization_id, type, status, name, warehouse_id, external_order_id,
                                 created_date, created, modified_date, deleted, service)
      select ${clientId}, ${organizationId}, 'INCOME', (${SEED_STATUSES}::text[])[1 + i % ${SEED_STATUSES.length}],
             'Receiving ' || i, 1 + i % 3, 'SUP-' || lpad(i::text, 7, '0'), at, at, at,
             i % ${stride} = ${stride - 1}, 'NONE'
      from generate_series(1, ${all}::int) as i,
           lateral (select now() - (${all}::int - i) * interval '5 minutes' as at) as t
    `.execute(db);
    await seedPositions(db, clientId);
    await sql`vacuum analyze inbound_order, inbound_order_product`.execute(db);
    const seedMs = performance.now() - started;
    const bulk = await sql<{ id: number }>`
      select id from inbound_order where client_id = ${clientId} and not deleted
      order by id limit ${BULK_IDS} offset ${SEEDED_DOCUMENTS / 2}
    `.execute(db);
    const visible = await sql<{ count: number }>`
      select count(*)::int as count from inbound_order where client_id = ${clientId} and not deleted
    `.execute(db);
    return { visible: visible.rows[0]?.count ?? 0, bulkIds: bulk.rows.map((row) => row.id), seedMs };
  } finally {
    await database.close();
  }
}

/**
 * Gives every document of `clientId` with an id above `afterId` `POSITIONS_PER_DOCUMENT` positions (articles and
 * prices spread over 5,000 products) and sets its totals from them.
 */
export async function seedPositions(db: Kysely<DB>, clientId: number, afterId = 0): Promise<void> {
  await sql`
    insert into inbound_order_product (client_id, order_id, product_id, article, barcode, product_name,
                                       quantity, price, position, created_date, last_update_date)
    select o.client_id, o.id, 5100000 + n, 'ART-' || lpad(n::text, 5, '0'), '46000' || lpad(n::text, 8, '0'),
           'Product ' || n, 1 + (o.id * 7 + k) % 40, (99 + (o.id * 13 + k * 101) % 5000)::numeric(16, 2),
           k + 1, o.created, o.created
    from inbound_order as o
    cross join generate_series(0, ${POSITIONS_PER_DOCUMENT - 1}::int) as k
    cross join lateral (select ((o.id * ${POSITIONS_PER_DOCUMENT} + k) % 5000)::int as n) as p
    where o.client_id = ${clientId} and o.id > ${afterId}
  `.execute(db);
  await sql`
    update inbound_order as o
    set total_quantity = s.quantity, total_price = s.price
    from (select order_id, sum(quantity)::int as quantity, sum(quantity * price) as price
          from inbound_order_product where client_id = ${clientId} and order_id > ${afterId}
          group by order_id) as s
    where o.client_id = ${clientId} and o.id = s.order_id
  `.execute(db);
}

/**
 * Creates the document with 50 positions (catalog products) through the API; returns its id.
 * @param label names its catalog products (see `createCatalogProducts`)
 */
export async function createFiftyProductDocument(context: BenchContext, label = 'Inbound'): Promise<number> {
  const productIds = await createCatalogProducts(context.serviceUrl, context, label, 50);
  const products = productIds.map((productId, index) => ({
    productId,
    quantity: 5 + ((index * 7) % 60),
    price: 150 + ((index * 379) % 4000) + 0.9,
    product: {
      name: `Benchmark product ${index + 1}, size ${['S', 'M', 'L', 'XL'][index % 4]}`,
      article: `BENCH-${String(index + 1).padStart(3, '0')}`,
      barcode: `46099${String(index + 1).padStart(8, '0')}`,
    },
  }));
  const order = await callApi<{ id: number }>(
    context.serviceUrl,
    context.writeToken,
    'POST',
    '/api/inbound/',
    {
      organizationId: context.organizationId,
      type: 'INCOME',
      name: 'Benchmark receipt with 50 positions',
      warehouseId: 1,
      products,
    },
  );
  return order.id;
}

/**
 * A GET scenario, measured twice on the service: `cached`, the same URL again and again (after the first
 * request the service answers from its in-memory response cache, as for an integrator polling), and
 * `uncached`, where every request misses that cache and runs the database queries.
 */
interface GetScenario {
  name: string;
  path: string;
  /** the n-th request of the uncached variant; same answer as `path`, but not served from the cache */
  uncachedPath: (index: number) => string;
  /** how the uncached variant misses the cache */
  uncachedHow: string;
  /** checks the parsed body; returns a problem or undefined */
  verify: (body: Record<string, unknown>) => string | undefined;
}

/** CPU time per request in ms of the service's Node process and of its PostgreSQL, during the load run. */
interface CpuPerRequest {
  node: number;
  postgres: number;
}

/** Load (autocannon, 10 connections) and one-connection sequence figures of one variant. */
interface Measured {
  load: LoadResult;
  sequential: SequentialResult;
  /** only for the service */
  cpu?: CpuPerRequest;
}

/** Reads the CPU time used so far by the service's Node process and by its PostgreSQL, in ms. */
type CpuSampler = () => CpuPerRequest;

function cpuPerRequest(sample: CpuSampler, before: CpuPerRequest, requests: number): CpuPerRequest {
  const after = sample();
  return {
    node: (after.node - before.node) / requests,
    postgres: (after.postgres - before.postgres) / requests,
  };
}

/** Every figure of one GET scenario. */
interface GetFigures {
  scenario: GetScenario;
  bytes: number;
  cached: Measured;
  uncached: Measured;
  ceiling: Measured;
}

/** Fails when a recorded response is not a 200 that `verify` accepts. */
function verifyRecorded(scenario: GetScenario, response: RecordedResponse): void {
  const problem =
    response.status === 200
      ? scenario.verify(JSON.parse(response.body.toString('utf8')) as Record<string, unknown>)
      : `status ${response.status}: ${response.body.toString('utf8').slice(0, 300)}`;
  if (problem) throw new Error(`${scenario.name} (${response.url}): ${problem}`);
}

/**
 * A warm-up, then autocannon under load, then one connection in sequence, against `baseUrl`.
 * @param sampleCpu given for the service: CPU per request is measured over the load run
 */
async function measureGet(
  baseUrl: string,
  token: string,
  pathFor: (index: number) => string,
  loadSeconds: number,
  sampleCpu?: CpuSampler,
): Promise<Measured> {
  const headers = { authorization: token };
  const url = baseUrl + pathFor(0);
  const load = { url, headers, pathFor, connections: LOAD_CONNECTIONS };
  await runLoad({ ...load, seconds: WARMUP_SECONDS });
  const before = sampleCpu?.();
  const measured = await runLoad({ ...load, seconds: loadSeconds });
  const cpu = sampleCpu && before && cpuPerRequest(sampleCpu, before, measured.requests);
  const sequential = await runSequential({
    baseUrl,
    headers,
    request: (index) => ({ method: 'GET', path: pathFor(index) }),
    maxCount: SEQUENTIAL_MAX.count,
    maxSeconds: SEQUENTIAL_MAX.seconds,
  });
  return { load: measured, sequential, ...(cpu && { cpu }) };
}

/** Runs the inbound part of the bench against the service of `context`. */
export async function benchInbound(
  context: BenchContext,
  log: (line: string) => void,
): Promise<BenchPartResult> {
  log(
    `seeding ${formatNumber(SEEDED_DOCUMENTS + DELETED_DOCUMENTS)} documents × ${POSITIONS_PER_DOCUMENT} positions with SQL…`,
  );
  const { visible, bulkIds, seedMs } = await seed(context);
  log(`  seeded in ${formatMs(seedMs)} (incl. VACUUM ANALYZE)`);
  const fiftyId = await createFiftyProductDocument(context);
  const total = visible + 1;

  const rowsOf = (body: Record<string, unknown>) => (Array.isArray(body.rows) ? body.rows.length : -1);
  const hundredRows = (body: Record<string, unknown>): string | undefined =>
    rowsOf(body) === 100 ? undefined : 'expected 100 rows';
  // `columns` only shapes exports (D5.10), so the page is the same, but the URL (the cache key) is new
  const findScenario = (name: string, path: string, verify = hundredRows): GetScenario => ({
    name,
    path,
    uncachedPath: (index) => `${path}&columns=bench${index}`,
    uncachedHow: 'a unique ignored `columns` value per request',
    verify,
  });
  // The cursor that opens page 500 (keyset pagination, P172): the `nextCursor` of page 499 read by offset.
  const page499 = await recordGet(
    context.serviceUrl,
    context.readToken,
    '/api/inbound/find?limit=100&page=499',
  );
  const cursor500 = (JSON.parse(page499.body.toString('utf8')) as { nextCursor?: string }).nextCursor;
  if (cursor500 === undefined) throw new Error('find page 499 answered no nextCursor');
  const scenarios: GetScenario[] = [
    {
      name: 'GET /api/inbound/{id} (50 products)',
      path: `/api/inbound/${fiftyId}`,
      uncachedPath: () => `/api/inbound/${fiftyId}?limit=100`,
      uncachedHow: '`limit=100` (product paging bypasses the document cache)',
      verify: (body) =>
        Array.isArray(body.products) && body.products.length === 50 ? undefined : 'expected 50 products',
    },
    findScenario('find limit=100, first page', '/api/inbound/find?limit=100'),
    findScenario('find limit=100, page 500', '/api/inbound/find?limit=100&page=500'),
    findScenario(
      `find limit=100, status=${FILTER_STATUS}`,
      `/api/inbound/find?limit=100&status=${FILTER_STATUS}`,
    ),
    findScenario('find limit=100, count=true', '/api/inbound/find?limit=100&count=true', (body) =>
      rowsOf(body) === 100 && body.total === total ? undefined : `expected 100 rows and total ${total}`,
    ),
    findScenario(
      'find limit=100, page 500 by cursor',
      `/api/inbound/find?limit=100&cursor=${cursor500}`,
      (body) => (rowsOf(body) === 100 && body.page === 500 ? undefined : 'expected 100 rows of page 500'),
    ),
  ];

  const recorded: RecordedResponse[] = [];
  for (const scenario of scenarios) {
    const response = await recordGet(context.serviceUrl, context.readToken, scenario.path);
    verifyRecorded(scenario, response);
    verifyRecorded(
      scenario,
      await recordGet(context.serviceUrl, context.readToken, scenario.uncachedPath(-1)),
    );
    recorded.push(response);
  }

  const sampleCpu: CpuSampler = () => ({
    node: cpuMs([context.servicePid]),
    postgres: cpuMs(postgresPids(context.dataDir)),
  });
  const serviceFigures: Pick<GetFigures, 'cached' | 'uncached'>[] = [];
  for (const scenario of scenarios) {
    log(`service: ${scenario.name}`);
    const { serviceUrl, readToken, loadSeconds } = context;
    const cached = await measureGet(serviceUrl, readToken, () => scenario.path, loadSeconds, sampleCpu);
    const uncached = await measureGet(serviceUrl, readToken, scenario.uncachedPath, loadSeconds, sampleCpu);
    serviceFigures.push({ cached, uncached });
  }

  log(`bulk status of ${formatNumber(BULK_IDS)} ids…`);
  const bulkBody = JSON.stringify(bulkIds);
  const statuses = ['READY_TO_SUPPLY', 'SUPPLIED'];
  const bulkPath = (index: number) => `/api/inbound/status?status=${statuses[index % 2]}`;
  const headers = { authorization: context.writeToken };
  // untimed calls first, leaving every id at SUPPLIED, so each later call really changes all 1,000 documents
  for (const index of [1, 0, 1])
    await callApi(context.serviceUrl, context.writeToken, 'POST', bulkPath(index), bulkIds);
  const bulkResponse = await recordAnswer(
    'POST',
    bulkPath(0),
    await fetch(context.serviceUrl + bulkPath(0), {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: bulkBody,
    }),
  );
  if (bulkResponse.status !== 200) throw new Error(`bulk status: ${bulkResponse.body.toString('utf8')}`);
  const bulkSequence = (index: number) => ({
    method: 'POST' as const,
    path: bulkPath(index + 1),
    body: bulkBody,
  });
  const bulkCpuBefore = sampleCpu();
  const bulkService = await runSequential({
    baseUrl: context.serviceUrl,
    headers,
    request: bulkSequence,
    maxCount: BULK_CALLS.count,
    maxSeconds: BULK_CALLS.seconds,
  });
  const bulkCpu = cpuPerRequest(sampleCpu, bulkCpuBefore, bulkService.count);

  log('ceiling: same bytes from a bare node:http server');
  const ceiling = await startCeiling([...recorded, bulkResponse, { ...bulkResponse, url: bulkPath(1) }]);
  const ceilingFigures: Measured[] = [];
  let bulkCeiling: SequentialResult;
  try {
    for (const scenario of scenarios) {
      log(`ceiling: ${scenario.name}`);
      ceilingFigures.push(
        await measureGet(ceiling.url, context.readToken, () => scenario.path, context.loadSeconds),
      );
    }
    bulkCeiling = await runSequential({
      baseUrl: ceiling.url,
      headers,
      request: bulkSequence,
      maxCount: BULK_CALLS.count,
      maxSeconds: BULK_CALLS.seconds,
    });
  } finally {
    await ceiling.stop();
  }

  const figures: GetFigures[] = scenarios.map((scenario, index) => ({
    scenario,
    bytes: recorded[index]?.body.length ?? 0,
    ...(serviceFigures[index] as Pick<GetFigures, 'cached' | 'uncached'>),
    ceiling: ceilingFigures[index] as Measured,
  }));
  return inboundResult(
    figures,
    { service: bulkService, ceiling: bulkCeiling, ids: bulkIds.length, cpu: bulkCpu },
    total,
  );
}

/** autocannon's latencies are whole milliseconds, truncated: 0 means under 1 ms. */
const wholeMs = (ms: number) => (ms < 1 ? '< 1 ms' : `${formatNumber(ms)} ms`);

function describeLoad(load: LoadResult): string {
  return `${formatNumber(load.rps)} req/s, p50 ${wholeMs(load.p50)}, p99 ${wholeMs(load.p99)}`;
}

function describeSequential(result: SequentialResult): string {
  return `p50 ${formatMs(result.p50)}, p99 ${formatMs(result.p99)} (n=${formatNumber(result.count)})`;
}

function describeCpu(cpu: CpuPerRequest | undefined): string {
  return cpu ? `; CPU per request: Node ${formatMs(cpu.node)}, PostgreSQL ${formatMs(cpu.postgres)}` : '';
}

function failureCount(results: (LoadResult | SequentialResult)[]): number {
  return results.reduce((sum, result) => sum + result.failures, 0);
}

function failures(...results: (LoadResult | SequentialResult)[]): string {
  const count = failureCount(results);
  return count === 0 ? '' : `; ${formatNumber(count)} FAILED REQUESTS`;
}

const ratio = (service: Measured, ceiling: Measured) => service.load.rps / ceiling.load.rps;

function inboundResult(
  figures: GetFigures[],
  bulk: { service: SequentialResult; ceiling: SequentialResult; ids: number; cpu: CpuPerRequest },
  documents: number,
): BenchPartResult {
  const rows: BenchRow[] = [];
  for (const { scenario, bytes, cached, uncached, ceiling } of figures) {
    const variants: [string, Measured, string][] = [
      ['cached', cached, 'the same URL each time'],
      ['uncached', uncached, scenario.uncachedHow],
    ];
    rows.push({
      name: `${scenario.name} [${formatNumber(bytes / 1024, 1)} KiB], ceiling`,
      value: describeLoad(ceiling.load),
      detail: `1 connection: ${describeSequential(ceiling.sequential)}${failures(ceiling.load, ceiling.sequential)}`,
    });
    for (const [label, measured, how] of variants)
      rows.push({
        name: `${scenario.name}, ${label}`,
        value: `${describeLoad(measured.load)}; ${formatNumber(ratio(measured, ceiling), 2)}× ceiling`,
        detail: `1 connection: ${describeSequential(measured.sequential)}${describeCpu(measured.cpu)}; ${how}${failures(measured.load, measured.sequential)}`,
      });
  }
  rows.push({
    name: `POST /api/inbound/status with ${formatNumber(bulk.ids)} ids, in sequence`,
    value: describeSequential(bulk.service),
    detail: `max ${formatMs(bulk.service.max)}${describeCpu(bulk.cpu)}; ceiling ${describeSequential(bulk.ceiling)}${failures(bulk.service, bulk.ceiling)}`,
  });

  // The single GETs' and the OFFSET page 500's own targets were replaced by the single-gets part's ceilings and
  // by the cursor target below (docs/performance.md, dashboard); their figures stay in the rows above.
  const [, first, , , counted, cursor500Figures] = figures;
  const targets: TargetCheck[] = [];
  const latencyTargets: [GetFigures | undefined, string, number][] = [
    [first, 'find first page p99 < 20 ms', 20],
    [counted, 'find count=true p99 < 100 ms', 100],
  ];
  for (const [figure, target, limit] of latencyTargets) {
    if (!figure) continue;
    const judged = check(
      `${target}, uncached, ${LOAD_CONNECTIONS} connections`,
      figure.uncached.load.p99,
      limit,
      wholeMs,
    );
    judged.measured +=
      ` (1 connection: ${formatMs(figure.uncached.sequential.p99)}; ` +
      `cached: ${wholeMs(figure.cached.load.p99)})`;
    targets.push(judged);
  }
  if (first && cursor500Figures) {
    const deep = cursor500Figures.uncached.load.p99 / Math.max(first.uncached.load.p99, 1);
    targets.push({
      target: `find page 500 by cursor p99 ≤ 1.5× page 1, uncached, ${LOAD_CONNECTIONS} connections`,
      measured: `${formatNumber(deep, 2)}× (${wholeMs(cursor500Figures.uncached.load.p99)} against ${wholeMs(first.uncached.load.p99)})`,
      met: deep <= 1.5,
    });
  }
  targets.push(
    check(`bulk status of ${formatNumber(bulk.ids)} ids p99 < 300 ms`, bulk.service.p99, 300, formatMs),
  );
  const serviceResults = [
    ...figures.flatMap((figure) => [figure.cached, figure.uncached]).flatMap((m) => [m.load, m.sequential]),
    bulk.service,
  ];
  const failed = failureCount(serviceResults);
  targets.push({
    target: 'every service response a 2xx',
    measured: failed === 0 ? 'all' : `${formatNumber(failed)} failed`,
    met: failed === 0,
    ...(failed === 0 ? {} : { miss: 'see the rows' }),
  });
  return {
    title: `Inbound (${formatNumber(documents)} documents of one client, plus ${formatNumber(DELETED_DOCUMENTS)} deleted)`,
    rows,
    targets,
  };
}
