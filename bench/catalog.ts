/**
 * Catalog figures: `GET /api/product/find` over 100,000 products of one client (first page, page 500, with
 * `query` on names, on articles and on a text every product holds, with `count=true`) and
 * `GET /api/model/{modelId}` of a model with 10 views × 8 sizes, each beside the ceiling (a bare `node:http`
 * server answering the same bytes from memory), with the CPU a request of the service's Node process and of its
 * PostgreSQL. The model GET is uncached (the catalog has no response cache): every request reads the card from
 * PostgreSQL.
 *
 * Data: 12,500 models × 1 view × 8 sizes of the demo client seeded with `INSERT … SELECT generate_series`
 * (then VACUUM ANALYZE), the sizes of a model with consecutive ids as `POST /api/model` gives them, plus the
 * 10 × 8 model created through the API.
 */
import { sql } from 'kysely';
import { createDatabase } from '../src/db/database.ts';
import {
  callApi,
  check,
  formatMicroseconds,
  formatMs,
  formatNumber,
  recordOk,
  runLoad,
  runLoadWithCpu,
  startCeiling,
  type BenchContext,
  type BenchPartResult,
  type BenchRow,
  type LoadResult,
  type MeasuredLoad,
  type RecordedResponse,
  type TargetCheck,
} from './lib.ts';

const MODELS = 12_500;
const SIZES_PER_MODEL = 8;
const LOAD_CONNECTIONS = 10;

/** Seeds the demo client's catalog with `MODELS × SIZES_PER_MODEL` products. */
async function seed(context: BenchContext): Promise<number> {
  const database = createDatabase(context.databaseUrl, 1);
  const { db } = database;
  const { clientId, organizationId } = context;
  const started = performance.now();
  try {
    const brand = await sql<{ id: number }>`
      insert into brand (client_id, name) values (${clientId}, 'Bench brand') returning id`.execute(db);
    const category = await sql<{ id: number }>`
      insert into category (client_id, name) values (${clientId}, 'Bench category') returning id`.execute(db);
    await sql`
      insert into product_model (client_id, organization_id, article, title, brand_id, category_id)
      select ${clientId}, ${organizationId}, 'BENCH-' || lpad(i::text, 6, '0'), 'Bench model ' || i,
             ${brand.rows[0]?.id}, ${category.rows[0]?.id}
      from generate_series(1, ${MODELS}::int) as i`.execute(db);
    await sql`
      insert into product_view (client_id, model_id, color)
      select client_id, id, (array['black','white','grey','navy'])[1 + id % 4]
      from product_model where client_id = ${clientId} and article like 'BENCH-%'`.execute(db);
    await sql`
      insert into product (client_id, model_id, view_id, name, size, barcode, position)
      select v.client_id, v.model_id, v.id, 'Bench product ' || v.model_id || '-' || s, 'S' || s,
             '47' || lpad((v.model_id * ${SIZES_PER_MODEL} + s)::text, 11, '0'), s
      from product_view as v cross join generate_series(1, ${SIZES_PER_MODEL}::int) as s
      where v.client_id = ${clientId}
      order by v.model_id, s`.execute(db);
    await sql`vacuum analyze product_model, product_view, product`.execute(db);
    return performance.now() - started;
  } finally {
    await database.close();
  }
}

/**
 * Creates the 10 views × 8 sizes model through the API; returns its id.
 * @param label names its brand, category and article (unique per bench part: names and articles are unique)
 */
export async function createLargeModel(context: BenchContext, label = 'Bench large'): Promise<number> {
  const brand = await callApi<{ id: number }>(context.serviceUrl, context.writeToken, 'POST', '/api/brand', {
    name: `${label} brand`,
  });
  const category = await callApi<{ id: number }>(
    context.serviceUrl,
    context.writeToken,
    'POST',
    '/api/category',
    {
      name: `${label} category`,
    },
  );
  const model = await callApi<{ id: number }>(context.serviceUrl, context.writeToken, 'POST', '/api/model', {
    article: label.toUpperCase().replaceAll(' ', '-'),
    title: 'Bench model with 10 colours × 8 sizes',
    brandId: brand.id,
    categoryId: category.id,
    organizationId: context.organizationId,
    views: Array.from({ length: 10 }, (_, view) => ({
      color: `colour ${view + 1}`,
      sizes: Array.from({ length: 8 }, (_, size) => ({
        name: `Large model colour ${view + 1} size ${size + 1}`,
        size: String(40 + size * 2),
        barcode: `48${String(view * 8 + size).padStart(11, '0')}`,
      })),
    })),
  });
  return model.id;
}

/** One load run of `path` at `baseUrl` after a 1 s warm-up. */
async function measure(baseUrl: string, token: string, path: string, seconds: number): Promise<LoadResult> {
  const load = { url: baseUrl + path, headers: { authorization: token }, connections: LOAD_CONNECTIONS };
  await runLoad({ ...load, seconds: 1 });
  return runLoad({ ...load, seconds });
}

/** `measure` of the service, with the CPU a request of its Node process and its PostgreSQL. */
async function measureService(context: BenchContext, path: string): Promise<MeasuredLoad> {
  const options = {
    url: context.serviceUrl + path,
    headers: { authorization: context.readToken },
    connections: LOAD_CONNECTIONS,
  };
  await runLoad({ ...options, seconds: 1 });
  return runLoadWithCpu({ ...options, seconds: context.loadSeconds }, context.servicePid, context.dataDir);
}

const wholeMs = (ms: number) => (ms < 1 ? '< 1 ms' : `${formatNumber(ms)} ms`);
const describe = (load: LoadResult) =>
  `${formatNumber(load.rps)} req/s, p50 ${wholeMs(load.p50)}, p99 ${wholeMs(load.p99)}`;

/** Runs the catalog part of the bench against the service of `context`. */
export async function benchCatalog(
  context: BenchContext,
  log: (line: string) => void,
): Promise<BenchPartResult> {
  log(`catalog: seeding ${formatNumber(MODELS * SIZES_PER_MODEL)} products with SQL…`);
  const seedMs = await seed(context);
  log(`  seeded in ${formatMs(seedMs)} (incl. VACUUM ANALYZE)`);
  const largeModel = await createLargeModel(context);
  const scenarios = [
    { name: 'product find, first page (100 rows)', path: '/api/product/find?sortBy=ID&limit=100' },
    { name: 'product find, page 500 (100 rows)', path: '/api/product/find?sortBy=ID&limit=100&page=500' },
    { name: 'product find with query (100 rows)', path: '/api/product/find?query=product%201234&limit=100' },
    // Ten models' articles match: their 80 products are found through the models.
    {
      name: 'product find with query of an article (80 rows)',
      path: '/api/product/find?query=BENCH-00123&limit=100',
    },
    // Every name and every article holds it: each way of matching stops at the page's end (P209).
    {
      name: 'product find with query every product holds (100 rows)',
      path: '/api/product/find?query=bench&limit=100',
    },
    { name: 'product find with count=true', path: '/api/product/find?sortBy=ID&limit=100&count=true' },
    { name: 'GET /api/model/{modelId} (10 views × 8 sizes)', path: `/api/model/${largeModel}` },
  ];
  const recorded: RecordedResponse[] = [];
  const service: MeasuredLoad[] = [];
  for (const scenario of scenarios) {
    log(`catalog: ${scenario.name}`);
    recorded.push(await recordOk(context.serviceUrl, context.readToken, scenario.path));
    service.push(await measureService(context, scenario.path));
  }
  const ceiling = await startCeiling(recorded);
  const bare: LoadResult[] = [];
  try {
    for (const scenario of scenarios)
      bare.push(await measure(ceiling.url, context.readToken, scenario.path, context.loadSeconds));
  } finally {
    await ceiling.stop();
  }
  const rows: BenchRow[] = scenarios.map((scenario, index) => {
    const { load: measured, cpu } = service[index] as MeasuredLoad;
    const top = bare[index] as LoadResult;
    const cpuDetail = `CPU a request: Node user ${formatMicroseconds(cpu.user)} µs, system ${formatMicroseconds(cpu.system)} µs, PostgreSQL ${formatMicroseconds(cpu.postgres)} µs`;
    return {
      name: `${scenario.name}, ${formatNumber(recorded[index]?.body.length ?? 0)} bytes`,
      value: describe(measured),
      detail: `ceiling ${describe(top)} (${formatNumber(measured.rps / top.rps, 2)}×)${measured.failures > 0 ? `, ${measured.failures} failures` : ''}; ${cpuDetail}`,
    };
  });
  const loadOf = (index: number) => (service[index] as MeasuredLoad).load;
  const firstPage = loadOf(0);
  const textSearch = loadOf(2);
  const articleSearch = loadOf(3);
  const modelGet = loadOf(6);
  const targets: TargetCheck[] = [
    check('product find, first page: p99 < 20 ms at 10 connections', firstPage.p99, 20, wholeMs),
    check('product find with query: p99 < 20 ms at 10 connections', textSearch.p99, 20, wholeMs),
    check(
      'product find with query of an article: p99 < 20 ms at 10 connections',
      articleSearch.p99,
      20,
      wholeMs,
    ),
    {
      target: 'GET /api/model/{modelId} (10 × 8), uncached: ≥ 1,500 req/s',
      measured: `${formatNumber(modelGet.rps)} req/s`,
      met: modelGet.rps >= 1_500,
      ...(modelGet.rps < 1_500 && { miss: `${formatNumber(modelGet.rps / 1_500, 2)}× the target` }),
    },
  ];
  return {
    title: `Catalog (${formatNumber(MODELS * SIZES_PER_MODEL)} products of one client)`,
    rows,
    targets,
  };
}
