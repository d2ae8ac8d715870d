/**
 * How read cost grows with the data: `find` page 1, page 500 by cursor and `count=true`, and the single GET, at
 * 10,000, 100,000 and 1,000,000 documents of one client, and the XLSX campaign statistics export at 10,000 and
 * 100,000 rows. Every read is uncached (a unique ignored `columns` value; `limit=100` on the GET) and measured
 * beside its ceiling in the same run (a bare `node:http` server answering the same bytes); its growth is its
 * p99 at each size over its p99 at the first size.
 *
 * Data: a client of its own (its documents are the only ones its `find` sees, whatever other parts seeded),
 * grown with `INSERT … SELECT generate_series` as bench/inbound.ts seeds (3 positions a document); the trigram
 * indexes are dropped during each insert and built again after it (PostgreSQL's advice for bulk loading), then
 * VACUUM ANALYZE. `READ_GROWTH_SIZES=10000,100000` picks other sizes.
 */
import { sql, type Kysely } from 'kysely';
import { createDatabase } from '../src/db/database.ts';
import type { DB } from '../src/db/schema.ts';
import { AccountService } from '../src/modules/accounts/service.ts';
import { loadOperatorKey, SecretBox } from '../src/security/secret-box.ts';
import { POSITIONS_PER_DOCUMENT, seedPositions } from './inbound.ts';
import { DAYS, exportStatistics, seedCampaignDays, type ExportFigures } from './campaign-export.ts';
import {
  callApi,
  formatMs,
  formatNumber,
  recordOk,
  runLoad,
  startCeiling,
  type BenchContext,
  type BenchPartResult,
  type BenchRow,
  type LoadResult,
} from './lib.ts';

const DEFAULT_SIZES = [10_000, 100_000, 1_000_000];
/** Page size of the `find` scenarios: page 500 exists from 10,000 documents on. */
const PAGE_LIMIT = 20;
const LOAD_CONNECTIONS = 10;
const EXPORT_ROWS = [10_000, 100_000];
const STATUSES = ['FINISHED', 'FINISHED', 'FINISHED', 'FINISHED', 'CREATED', 'PACKING', 'READY_TO_SUPPLY'];

/** The sizes of this run, ascending. */
function sizes(): number[] {
  const text = process.env.READ_GROWTH_SIZES;
  const parsed = text ? text.split(',').map(Number) : DEFAULT_SIZES;
  if (parsed.some((size) => !Number.isSafeInteger(size) || size < PAGE_LIMIT * 500))
    throw new Error(`READ_GROWTH_SIZES: whole numbers of at least ${PAGE_LIMIT * 500}`);
  return parsed.sort((a, b) => a - b);
}

/** A client with one organization and a READ token, whose documents this part alone writes. */
async function createGrowthClient(
  db: Kysely<DB>,
  dataDir: string,
): Promise<{ clientId: number; organizationId: number; readToken: string }> {
  const accounts = new AccountService(db, new SecretBox(await loadOperatorKey(undefined, dataDir)));
  const client = await accounts.createClient({ name: 'Read growth bench' });
  const organization = await accounts.createOrganization(client.id, { name: 'Read growth organization' });
  const user = await accounts.createUser(client.id, { name: 'Read growth user', lang: 'en', role: 'OWNER' });
  const read = await accounts.createToken(user.id, { access: 'READ', name: 'read growth' });
  return { clientId: client.id, organizationId: organization.id, readToken: read.token };
}

/**
 * Adds documents `from + 1` … `to` (numbered in creation order, 5 minutes apart) with their positions, the
 * trigram indexes of both tables dropped during the insert and built again after it.
 */
async function grow(
  db: Kysely<DB>,
  owner: { clientId: number; organizationId: number },
  from: number,
  to: number,
): Promise<void> {
  const { clientId, organizationId } = owner;
  const trigram = await sql<{ name: string; definition: string }>`
    select indexname as name, indexdef as definition from pg_indexes
    where tablename in ('inbound_order', 'inbound_order_product') and indexdef like '%gin_trgm_ops%'
  `.execute(db);
  const last = await sql<{ id: number | null }>`
    select max(id) as id from inbound_order where client_id = ${clientId}
  `.execute(db);
  const lastId = Number(last.rows[0]?.id ?? 0);
  for (const index of trigram.rows) await sql`drop index ${sql.id(index.name)}`.execute(db);
  try {
    await sql`
      insert into inbound_order (client_id, organization_id, type, status, name, warehouse_id, external_order_id,
                                 created_date, created, modified_date, deleted, service)
      select ${clientId}, ${organizationId}, 'INCOME', (${STATUSES}::text[])[1 + i % ${STATUSES.length}],
             'Receiving ' || i, 1 + i % 3, 'GROW-' || lpad(i::text, 8, '0'), at, at, at, false, 'NONE'
      from generate_series(${from + 1}::int, ${to}::int) as i,
           lateral (select timestamptz '2020-01-01' + i * interval '5 minutes' as at) as t
    `.execute(db);
    await seedPositions(db, clientId, lastId);
  } finally {
    for (const index of trigram.rows) await sql.raw(index.definition).execute(db);
  }
  await sql`vacuum analyze inbound_order, inbound_order_product`.execute(db);
}

interface Scenario {
  name: string;
  /** the path recorded for the ceiling */
  path: string;
  /** the n-th uncached request */
  uncachedPath: (index: number) => string;
}

interface SizeFigures {
  size: number;
  service: LoadResult[];
  ceiling: LoadResult[];
}

/** The scenarios at one size: page 500's cursor is the `nextCursor` of page 499 read by `page`. */
async function scenariosAt(baseUrl: string, readToken: string, documentId: number): Promise<Scenario[]> {
  const find = `/api/inbound/find?limit=${PAGE_LIMIT}`;
  const page499 = await callApi<{ nextCursor?: string }>(baseUrl, readToken, 'GET', `${find}&page=499`);
  if (page499.nextCursor === undefined) throw new Error('find page 499 answered no nextCursor');
  const findScenario = (name: string, path: string): Scenario => ({
    name,
    path,
    uncachedPath: (index) => `${path}&columns=growth${index}`,
  });
  return [
    findScenario(`find limit=${PAGE_LIMIT}, page 1`, find),
    findScenario(`find limit=${PAGE_LIMIT}, page 500 by cursor`, `${find}&cursor=${page499.nextCursor}`),
    findScenario(`find limit=${PAGE_LIMIT}, count=true`, `${find}&count=true`),
    {
      name: `GET /api/inbound/{id} (${POSITIONS_PER_DOCUMENT} products)`,
      path: `/api/inbound/${documentId}?limit=100`,
      // product paging bypasses the document cache (as in bench/inbound.ts)
      uncachedPath: () => `/api/inbound/${documentId}?limit=100`,
    },
  ];
}

/** Measures every scenario at the current size, uncached on the service and replayed by the ceiling. */
async function measureSize(
  context: BenchContext,
  readToken: string,
  size: number,
  documentId: number,
  log: (line: string) => void,
): Promise<{ figures: SizeFigures; names: string[] }> {
  const scenarios = await scenariosAt(context.serviceUrl, readToken, documentId);
  const headers = { authorization: readToken };
  const service: LoadResult[] = [];
  for (const scenario of scenarios) {
    log(`read growth, ${formatNumber(size)} documents: ${scenario.name}`);
    service.push(
      await runLoad({
        url: context.serviceUrl,
        pathFor: scenario.uncachedPath,
        headers,
        connections: LOAD_CONNECTIONS,
        seconds: context.loadSeconds,
      }),
    );
  }
  const recorded = await Promise.all(
    scenarios.map((scenario) => recordOk(context.serviceUrl, readToken, scenario.path)),
  );
  const ceilingServer = await startCeiling(recorded);
  const ceiling: LoadResult[] = [];
  try {
    for (const scenario of scenarios)
      ceiling.push(
        await runLoad({
          url: ceilingServer.url + scenario.path,
          headers,
          connections: LOAD_CONNECTIONS,
          seconds: context.loadSeconds,
        }),
      );
  } finally {
    await ceilingServer.stop();
  }
  return { figures: { size, service, ceiling }, names: scenarios.map((scenario) => scenario.name) };
}

/** Runs the part: grows the data size by size, measuring at each; then the exports. */
export async function benchReadGrowth(
  context: BenchContext,
  log: (line: string) => void,
): Promise<BenchPartResult> {
  const database = createDatabase(context.databaseUrl, 1);
  const bySize: SizeFigures[] = [];
  let names: string[] = [];
  const seedRows: BenchRow[] = [];
  try {
    const owner = await createGrowthClient(database.db, context.dataDir);
    let seeded = 0;
    for (const size of sizes()) {
      log(`read growth: growing to ${formatNumber(size)} documents…`);
      const started = performance.now();
      await grow(database.db, owner, seeded, size);
      seedRows.push({
        name: `seed: documents ${formatNumber(seeded + 1)}–${formatNumber(size)}`,
        value: formatMs(performance.now() - started),
      });
      seeded = size;
      const middle = await sql<{ id: number }>`
        select id from inbound_order where client_id = ${owner.clientId} order by id offset ${size / 2} limit 1
      `.execute(database.db);
      const documentId = middle.rows[0]?.id;
      if (documentId === undefined) throw new Error('no document to GET');
      const measured = await measureSize(context, owner.readToken, size, documentId, log);
      names = measured.names;
      bySize.push(measured.figures);
    }
  } finally {
    await database.close();
  }

  const exports: ExportFigures[] = [];
  for (const rows of EXPORT_ROWS) {
    const prefix = `Growth statistics ${rows}`;
    log(`read growth: XLSX export of ${formatNumber(rows)} rows…`);
    await seedCampaignDays(context, {
      campaigns: rows / DAYS,
      namePrefix: prefix,
      externalIdBase: 7_000_000 + rows,
    });
    exports.push(await exportStatistics(context, `${prefix} `, rows));
  }
  return readGrowthResult(names, bySize, exports, seedRows);
}

const wholeMs = (ms: number) => (ms < 1 ? '< 1 ms' : `${formatNumber(ms)} ms`);

/** Rows of the part: per scenario and size, p99 and its growth, throughput and its share of the ceiling. */
function readGrowthResult(
  names: string[],
  bySize: SizeFigures[],
  exports: ExportFigures[],
  seedRows: BenchRow[],
): BenchPartResult {
  const first = bySize[0];
  const rows: BenchRow[] = [...seedRows];
  names.forEach((name, index) => {
    for (const figures of bySize) {
      const service = figures.service[index] as LoadResult;
      const ceiling = figures.ceiling[index] as LoadResult;
      const base = first?.service[index] as LoadResult;
      const growth = Math.max(service.p99, 1) / Math.max(base.p99, 1);
      rows.push({
        name: `${name}, ${formatNumber(figures.size)} documents (uncached)`,
        value: `p99 ${wholeMs(service.p99)} (${formatNumber(growth, 2)}× at ${formatNumber(first?.size ?? 0)})`,
        detail:
          `${formatNumber(service.rps)} req/s, p50 ${wholeMs(service.p50)}; ` +
          `${formatNumber(service.rps / ceiling.rps, 2)}× the ceiling (${formatNumber(ceiling.rps)} req/s)` +
          (service.failures > 0 ? `; ${formatNumber(service.failures)} failures` : ''),
      });
    }
  });
  const firstExport = exports[0] as ExportFigures;
  for (const figures of exports) {
    const perRow = figures.exportMs / figures.rows / (firstExport.exportMs / firstExport.rows);
    rows.push({
      name: `XLSX campaign statistics export, ${formatNumber(figures.rows)} rows, until FINISHED`,
      value: `${formatNumber(figures.exportMs / 1000, 1)} s (time per row ${formatNumber(perRow, 2)}× at ${formatNumber(firstExport.rows)})`,
      detail: `${formatNumber((figures.rows / figures.exportMs) * 1000)} rows/s; RSS peak +${formatNumber((figures.peakKiB - figures.baselineKiB) / 1024, 1)} MiB`,
    });
  }
  return { title: 'How read cost grows', rows, targets: [] };
}
