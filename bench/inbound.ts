/**
 * Inbound figures: single document GET, `find` over 100,000 documents, bulk status of 1,000 ids, each beside
 * the ceiling (a bare `node:http` server answering the same bytes from memory).
 *
 * Data: 100,000 INCOME documents of the demo client with 3 positions each are seeded with
 * `INSERT … SELECT generate_series` through the project's database module (then VACUUM ANALYZE, as autovacuum
 * would do on a live system), plus one document with 50 positions created through the API.
 */
import { sql } from 'kysely';
import { createDatabase } from '../src/db/database.ts';
import {
  callApi,
  check,
  formatMs,
  formatNumber,
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

/** Documents seeded for `find`. */
export const SEEDED_DOCUMENTS = 100_000;
const POSITIONS_PER_DOCUMENT = 3;
const BULK_IDS = 1_000;
const LOAD_CONNECTIONS = 10;
const WARMUP_SECONDS = 2;
const SEQUENTIAL_MAX = { count: 2_000, seconds: 4 };
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
 * Seeds `SEEDED_DOCUMENTS` documents (1 in 100 deleted) with 3 positions each for the demo client.
 * @returns the number of documents `find` can see (not deleted) and the ids used for bulk status
 */
async function seed(context: BenchContext): Promise<{ visible: number; bulkIds: number[]; seedMs: number }> {
  const database = createDatabase(context.databaseUrl, 1);
  const { db } = database;
  const { clientId, organizationId } = context;
  const started = performance.now();
  try {
    await sql`
      insert into inbound_order (client_id, organization_id, type, status, name, warehouse_id, external_order_id,
                                 created_date, created, modified_date, deleted, service)
      select ${clientId}, ${organizationId}, 'INCOME', (${SEED_STATUSES}::text[])[1 + i % ${SEED_STATUSES.length}],
             'Receiving ' || i, 1 + i % 3, 'SUP-' || lpad(i::text, 7, '0'), at, at, at, i % 100 = 99, 'NONE'
      from generate_series(1, ${SEEDED_DOCUMENTS}::int) as i,
           lateral (select now() - (${SEEDED_DOCUMENTS}::int - i) * interval '5 minutes' as at) as t
    `.execute(db);
    await sql`
      insert into inbound_order_product (client_id, order_id, product_id, article, barcode, product_name,
                                         quantity, price, position, created_date, last_update_date)
      select o.client_id, o.id, 5100000 + n, 'ART-' || lpad(n::text, 5, '0'), '46000' || lpad(n::text, 8, '0'),
             'Product ' || n, 1 + (o.id * 7 + k) % 40, (99 + (o.id * 13 + k * 101) % 5000)::numeric(16, 2),
             k + 1, o.created, o.created
      from inbound_order as o
      cross join generate_series(0, ${POSITIONS_PER_DOCUMENT - 1}::int) as k
      cross join lateral (select ((o.id * ${POSITIONS_PER_DOCUMENT} + k) % 5000)::int as n) as p
      where o.client_id = ${clientId}
    `.execute(db);
    await sql`
      update inbound_order as o
      set total_quantity = s.quantity, total_price = s.price
      from (select order_id, sum(quantity)::int as quantity, sum(quantity * price) as price
            from inbound_order_product where client_id = ${clientId} group by order_id) as s
      where o.id = s.order_id
    `.execute(db);
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

/** Creates the document with 50 positions through the API; returns its id. */
async function createFiftyProductDocument(context: BenchContext): Promise<number> {
  const products = Array.from({ length: 50 }, (_, index) => ({
    productId: 7_200_000 + index,
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

interface GetScenario {
  name: string;
  path: string;
  /** checks the parsed body; returns a problem or undefined */
  verify: (body: Record<string, unknown>) => string | undefined;
}

/** Both sides of one GET scenario. */
interface GetFigures {
  scenario: GetScenario;
  bytes: number;
  service: { load: LoadResult; sequential: SequentialResult };
  ceiling: { load: LoadResult; sequential: SequentialResult };
}

async function record(baseUrl: string, token: string, path: string): Promise<RecordedResponse> {
  const response = await fetch(baseUrl + path, {
    headers: { authorization: token },
    signal: AbortSignal.timeout(60_000),
  });
  const body = Buffer.from(await response.arrayBuffer());
  return {
    method: 'GET',
    url: path,
    status: response.status,
    contentType: response.headers.get('content-type') ?? undefined,
    body,
  };
}

/** autocannon under load, then one connection in sequence, against `baseUrl + path`. */
async function measureGet(baseUrl: string, token: string, path: string, loadSeconds: number) {
  const headers = { authorization: token };
  const url = baseUrl + path;
  await runLoad({ url, headers, connections: LOAD_CONNECTIONS, seconds: WARMUP_SECONDS });
  const load = await runLoad({ url, headers, connections: LOAD_CONNECTIONS, seconds: loadSeconds });
  const sequential = await runSequential({
    baseUrl,
    headers,
    request: () => ({ method: 'GET', path }),
    maxCount: SEQUENTIAL_MAX.count,
    maxSeconds: SEQUENTIAL_MAX.seconds,
  });
  return { load, sequential };
}

/** Runs the inbound part of the bench against the service of `context`. */
export async function benchInbound(
  context: BenchContext,
  log: (line: string) => void,
): Promise<BenchPartResult> {
  log(`seeding ${formatNumber(SEEDED_DOCUMENTS)} documents × ${POSITIONS_PER_DOCUMENT} positions with SQL…`);
  const { visible, bulkIds, seedMs } = await seed(context);
  log(`  seeded in ${formatMs(seedMs)} (incl. VACUUM ANALYZE)`);
  const fiftyId = await createFiftyProductDocument(context);
  const total = visible + 1;

  const rowsOf = (body: Record<string, unknown>) => (Array.isArray(body.rows) ? body.rows.length : -1);
  const scenarios: GetScenario[] = [
    {
      name: 'GET /api/inbound/{id} (50 products)',
      path: `/api/inbound/${fiftyId}`,
      verify: (body) =>
        Array.isArray(body.products) && body.products.length === 50 ? undefined : 'expected 50 products',
    },
    {
      name: 'find limit=100, first page',
      path: '/api/inbound/find?limit=100',
      verify: (body) => (rowsOf(body) === 100 ? undefined : 'expected 100 rows'),
    },
    {
      name: 'find limit=100, page 500',
      path: '/api/inbound/find?limit=100&page=500',
      verify: (body) => (rowsOf(body) === 100 ? undefined : 'expected 100 rows'),
    },
    {
      name: `find limit=100, status=${FILTER_STATUS}`,
      path: `/api/inbound/find?limit=100&status=${FILTER_STATUS}`,
      verify: (body) => (rowsOf(body) === 100 ? undefined : 'expected 100 rows'),
    },
    {
      name: 'find limit=100, count=true',
      path: '/api/inbound/find?limit=100&count=true',
      verify: (body) =>
        rowsOf(body) === 100 && body.total === total ? undefined : `expected 100 rows and total ${total}`,
    },
  ];

  const recorded: RecordedResponse[] = [];
  for (const scenario of scenarios) {
    const response = await record(context.serviceUrl, context.readToken, scenario.path);
    const problem =
      response.status === 200
        ? scenario.verify(JSON.parse(response.body.toString('utf8')) as Record<string, unknown>)
        : `status ${response.status}: ${response.body.toString('utf8').slice(0, 300)}`;
    if (problem) throw new Error(`${scenario.name}: ${problem}`);
    recorded.push(response);
  }

  const serviceFigures: GetFigures['service'][] = [];
  for (const scenario of scenarios) {
    log(`service: ${scenario.name}`);
    serviceFigures.push(
      await measureGet(context.serviceUrl, context.readToken, scenario.path, context.loadSeconds),
    );
  }

  log(`bulk status of ${formatNumber(BULK_IDS)} ids…`);
  const bulkBody = JSON.stringify(bulkIds);
  const statuses = ['READY_TO_SUPPLY', 'SUPPLIED'];
  const bulkPath = (index: number) => `/api/inbound/status?status=${statuses[index % 2]}`;
  const headers = { authorization: context.writeToken };
  // untimed calls first, leaving every id at SUPPLIED, so each later call really changes all 1,000 documents
  for (const index of [1, 0, 1])
    await callApi(context.serviceUrl, context.writeToken, 'POST', bulkPath(index), bulkIds);
  const bulkRecorded = await fetch(context.serviceUrl + bulkPath(0), {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: bulkBody,
  });
  const bulkResponse: RecordedResponse = {
    method: 'POST',
    url: bulkPath(0),
    status: bulkRecorded.status,
    contentType: bulkRecorded.headers.get('content-type') ?? undefined,
    body: Buffer.from(await bulkRecorded.arrayBuffer()),
  };
  if (bulkResponse.status !== 200) throw new Error(`bulk status: ${bulkResponse.body.toString('utf8')}`);
  const bulkSequence = (index: number) => ({
    method: 'POST' as const,
    path: bulkPath(index + 1),
    body: bulkBody,
  });
  const bulkService = await runSequential({
    baseUrl: context.serviceUrl,
    headers,
    request: bulkSequence,
    maxCount: BULK_CALLS.count,
    maxSeconds: BULK_CALLS.seconds,
  });

  log('ceiling: same bytes from a bare node:http server');
  const ceiling = await startCeiling([...recorded, bulkResponse, { ...bulkResponse, url: bulkPath(1) }]);
  const ceilingFigures: GetFigures['ceiling'][] = [];
  let bulkCeiling: SequentialResult;
  try {
    for (const scenario of scenarios) {
      log(`ceiling: ${scenario.name}`);
      ceilingFigures.push(
        await measureGet(ceiling.url, context.readToken, scenario.path, context.loadSeconds),
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
    service: serviceFigures[index] as GetFigures['service'],
    ceiling: ceilingFigures[index] as GetFigures['ceiling'],
  }));
  return inboundResult(figures, { service: bulkService, ceiling: bulkCeiling, ids: bulkIds.length }, total);
}

function describeLoad(load: LoadResult): string {
  return `${formatNumber(load.rps)} req/s, p50 ${formatMs(load.p50)}, p99 ${formatMs(load.p99)}`;
}

function describeSequential(result: SequentialResult): string {
  return `p50 ${formatMs(result.p50)}, p99 ${formatMs(result.p99)} (n=${formatNumber(result.count)})`;
}

function failures(...results: (LoadResult | SequentialResult)[]): string {
  const count = results.reduce((sum, result) => sum + result.failures, 0);
  return count === 0 ? '' : `; ${formatNumber(count)} FAILED REQUESTS`;
}

function inboundResult(
  figures: GetFigures[],
  bulk: { service: SequentialResult; ceiling: SequentialResult; ids: number },
  documents: number,
): BenchPartResult {
  const rows: BenchRow[] = [];
  for (const { scenario, bytes, service, ceiling } of figures) {
    rows.push({
      name: `${scenario.name} [${formatNumber(bytes / 1024, 1)} KiB], ${LOAD_CONNECTIONS} connections`,
      value: describeLoad(service.load),
      detail: `ceiling ${describeLoad(ceiling.load)}; ratio ${formatNumber(service.load.rps / ceiling.load.rps, 2)}×${failures(service.load, ceiling.load)}`,
    });
    rows.push({
      name: `${scenario.name}, 1 connection in sequence`,
      value: describeSequential(service.sequential),
      detail: `ceiling ${describeSequential(ceiling.sequential)}${failures(service.sequential, ceiling.sequential)}`,
    });
  }
  rows.push({
    name: `POST /api/inbound/status with ${formatNumber(bulk.ids)} ids, in sequence`,
    value: describeSequential(bulk.service),
    detail: `max ${formatMs(bulk.service.max)}; ceiling ${describeSequential(bulk.ceiling)}${failures(bulk.service, bulk.ceiling)}`,
  });

  const [single, first, page500, , counted] = figures;
  const targets: TargetCheck[] = [];
  if (single) {
    const ratio = single.service.load.rps / single.ceiling.load.rps;
    targets.push({
      target: 'single GET ≥ 0.5× the ceiling (req/s)',
      measured: `${formatNumber(ratio, 2)}×`,
      met: ratio >= 0.5,
      ...(ratio >= 0.5 ? {} : { miss: `${formatNumber(0.5 / ratio, 2)}× short of 0.5×` }),
    });
  }
  const latencyTargets: [GetFigures | undefined, string, number][] = [
    [first, 'find first page p99 < 20 ms', 20],
    [page500, 'find page 500 p99 < 20 ms', 20],
    [counted, 'find count=true p99 < 100 ms', 100],
  ];
  for (const [figure, target, limit] of latencyTargets) {
    if (!figure) continue;
    targets.push(check(`${target} (1 connection)`, figure.service.sequential.p99, limit, formatMs));
    targets.push(
      check(`${target} (${LOAD_CONNECTIONS} connections)`, figure.service.load.p99, limit, formatMs),
    );
  }
  targets.push(
    check(`bulk status of ${formatNumber(bulk.ids)} ids p99 < 300 ms`, bulk.service.p99, 300, formatMs),
  );
  const serviceResults = [
    ...figures.flatMap((figure) => [figure.service.load, figure.service.sequential]),
    bulk.service,
  ];
  if (failures(...serviceResults) !== '')
    targets.push({ target: 'no failed requests', measured: 'some failed', met: false, miss: 'see the rows' });
  return {
    title: `Inbound (${formatNumber(documents)} documents of one client)`,
    rows,
    targets,
  };
}
