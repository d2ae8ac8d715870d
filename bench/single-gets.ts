/**
 * Single GETs at 32 connections, each beside its ceiling measured in the same run:
 *
 * - cached `GET /api/inbound/{id}` of a 50-product document against the bare `node:http` server answering the
 *   same bytes from memory (bench/ceiling-server.ts);
 * - uncached `GET /api/inbound/{id}` (50 products; `limit=100`, product paging, bypasses the document cache) and
 *   `GET /api/model/{modelId}` (10 views × 8 sizes; models are not cached) against the database-path ceiling, a
 *   bare `node:http` + `pg` server running the same SQL statements and answering `JSON.stringify` of the rows
 *   (bench/database-ceiling-server.ts).
 *
 * The service and its ceiling take turns: `ROUNDS` rounds of a short run each, the ceiling first in every other
 * round, and the ratio is the median of the rounds' ratios. This machine's speed drifts within seconds (a ceiling
 * measured 9,000 and 28,000 req/s a minute apart), so a run of each one after the other compares two different
 * machines.
 *
 * The statements are captured from the repository functions the service calls for these requests, through a
 * Kysely instance that records every compiled query, so they are the service's own text and values. The
 * database is the service's (the same rows, the same PostgreSQL), with a pool of the service's default size.
 */
import { Kysely, PostgresDialect } from 'kysely';
import { loadConfig } from '../src/config.ts';
import { createDatabase } from '../src/db/database.ts';
import type { DB } from '../src/db/schema.ts';
import { modelRepository } from '../src/modules/catalog/repository.ts';
import { orderRepository } from '../src/modules/inbound/repository.ts';
import { createLargeModel } from './catalog.ts';
import { createFiftyProductDocument } from './inbound.ts';
import {
  formatMicroseconds,
  formatNumber,
  recordOk,
  runLoad,
  runLoadWithCpu,
  startCeiling,
  startDatabaseCeiling,
  type BenchContext,
  type BenchPartResult,
  type BenchRow,
  type CapturedStatement,
  type CpuPerRequest,
  type LoadResult,
  type MeasuredLoad,
  type ServerProcess,
  type TargetCheck,
} from './lib.ts';

/** Connections of every load run (the setting for the single GETs). */
const CONNECTIONS = 32;
const WARMUP_SECONDS = 1;
/** Turns of service and ceiling per GET; each run lasts twice the part's load time divided by it (at least 2 s). */
const ROUNDS = 8;
/**
 * The bench service's `DATABASE_POOL_SIZE` (its default unless the bench's environment sets it); the
 * database-path ceiling uses a pool of the same size.
 */
const POOL_SIZE = loadConfig({ DATABASE_POOL_SIZE: process.env.DATABASE_POOL_SIZE }).databasePoolSize;
/** Product page size of the uncached document GET (all 50 positions fit). */
const PRODUCT_LIMIT = 100;

/**
 * The SQL statements the service runs for the uncached document GET (`orderRepository.findAnswer` with a page of
 * positions; the bench's service has no `PUBLIC_BASE_URL`) and for the model GET (`modelRepository.findCard`), one
 * statement each, as steps: each a list of statements run concurrently, the steps in order.
 */
async function captureStatements(
  context: BenchContext,
  orderId: number,
  modelId: number,
): Promise<{ document: CapturedStatement[][]; model: CapturedStatement[][] }> {
  const database = createDatabase(context.databaseUrl, 2);
  let captured: CapturedStatement[] = [];
  const db = new Kysely<DB>({
    dialect: new PostgresDialect({ pool: database.pool }),
    log: (event) => {
      captured.push({ text: event.query.sql, values: [...event.query.parameters] });
    },
  });
  const take = () => {
    const step = captured;
    captured = [];
    return step;
  };
  const { clientId } = context;
  try {
    await orderRepository.findAnswer(db, clientId, orderId, '', { limit: PRODUCT_LIMIT, offset: 0 });
    const documentRead = take();
    await modelRepository.findCard(db, clientId, modelId);
    const modelRead = take();
    return { document: [documentRead], model: [modelRead] };
  } finally {
    await db.destroy();
  }
}

/** Loads `path` of the server at `baseUrl` (a warm-up, then `seconds` measured) with its CPU a request. */
async function measure(
  baseUrl: string,
  path: string,
  token: string,
  seconds: number,
  pid: number,
  dataDir: string,
): Promise<MeasuredLoad> {
  const options = { url: baseUrl + path, headers: { authorization: token }, connections: CONNECTIONS };
  await runLoad({ ...options, seconds: WARMUP_SECONDS });
  return runLoadWithCpu({ ...options, seconds }, pid, dataDir);
}

/** One turn of the service, then its ceiling, then (for the cached GET) the bare framework. */
interface Round {
  service: MeasuredLoad;
  ceiling: MeasuredLoad;
  framework?: MeasuredLoad;
}

/** A GET of the service measured beside its ceiling, in rounds. */
interface Pair {
  name: string;
  ceilingName: string;
  target: number;
  rounds: Round[];
}

/** Runs the single-GET part against the service of `context`. */
export async function benchSingleGets(
  context: BenchContext,
  log: (line: string) => void,
): Promise<BenchPartResult> {
  const orderId = await createFiftyProductDocument(context, 'Single');
  const modelId = await createLargeModel(context, 'Single large');
  const cachedPath = `/api/inbound/${orderId}`;
  const uncachedPath = `/api/inbound/${orderId}?limit=${PRODUCT_LIMIT}`;
  const modelPath = `/api/model/${modelId}`;
  const recorded = await recordOk(context.serviceUrl, context.readToken, cachedPath);
  const statements = await captureStatements(context, orderId, modelId);
  const { readToken, loadSeconds, dataDir } = context;

  const servers: ServerProcess[] = [];
  try {
    const bytesCeiling = await startCeiling([recorded]);
    servers.push(bytesCeiling);
    const frameworkCeiling = await startCeiling([recorded], 'fastify');
    servers.push(frameworkCeiling);
    const databaseCeiling = await startDatabaseCeiling(context.databaseUrl, POOL_SIZE, {
      [uncachedPath]: statements.document,
      [modelPath]: statements.model,
    });
    servers.push(databaseCeiling);
    const pairs: [string, string, number, string, ServerProcess, ServerProcess?][] = [
      [
        'GET /api/inbound/{id} (50 products), cached',
        'bare node:http, same bytes',
        0.8,
        cachedPath,
        bytesCeiling,
        frameworkCeiling,
      ],
      [
        'GET /api/inbound/{id} (50 products), uncached',
        'node:http + pg, same SQL',
        0.7,
        uncachedPath,
        databaseCeiling,
      ],
      [
        'GET /api/model/{modelId} (10 × 8), uncached',
        'node:http + pg, same SQL',
        0.7,
        modelPath,
        databaseCeiling,
      ],
    ];
    const measured: Pair[] = [];
    for (const [name, ceilingName, target, path, ceiling, framework] of pairs) {
      log(`single GETs: ${name}`);
      const seconds = Math.max(2, Math.round((2 * loadSeconds) / ROUNDS));
      const rounds: Round[] = [];
      const measureService = () =>
        measure(context.serviceUrl, path, readToken, seconds, context.servicePid, dataDir);
      const measureCeiling = () =>
        measure(ceiling.url, path, readToken, seconds, ceilingPid(ceiling), dataDir);
      for (let round = 0; round < ROUNDS; round++) {
        // every other round the ceiling goes first, so a drift of the machine favours neither side
        const ceilingFirst = round % 2 === 1 ? await measureCeiling() : undefined;
        const service = await measureService();
        rounds.push({
          service,
          ceiling: ceilingFirst ?? (await measureCeiling()),
          ...(framework && {
            framework: await measure(framework.url, path, readToken, seconds, ceilingPid(framework), dataDir),
          }),
        });
      }
      measured.push({ name, ceilingName, target, rounds });
    }
    return singleGetsResult(measured, recorded.body.length);
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
  }
}

/** The pid of a ceiling's process (started by the bench, so it has one). */
function ceilingPid(ceiling: ServerProcess): number {
  if (ceiling.child.pid === undefined) throw new Error(`the ceiling at ${ceiling.url} has no process id`);
  return ceiling.child.pid;
}

const wholeMs = (ms: number) => (ms < 1 ? '< 1 ms' : `${formatNumber(ms)} ms`);

function describe(load: LoadResult): string {
  const failed = load.failures === 0 ? '' : `, ${formatNumber(load.failures)} FAILED`;
  return `${formatNumber(load.rps)} req/s, p50 ${wholeMs(load.p50)}, p99 ${wholeMs(load.p99)}${failed}`;
}

function singleGetsResult(pairs: Pair[], bytes: number): BenchPartResult {
  const rows: BenchRow[] = [];
  const targets: TargetCheck[] = [];
  for (const { name, ceilingName, target, rounds } of pairs) {
    const shareOf = (round: Round) => round.service.load.rps / round.ceiling.load.rps;
    const sorted = [...rounds].sort((a, b) => shareOf(a) - shareOf(b));
    // the median round (the lower middle one of an even count) stands for the GET
    const { service, ceiling, framework } = sorted[Math.floor((sorted.length - 1) / 2)]!;
    const share = shareOf({ service, ceiling });
    const range = `${formatNumber(shareOf(sorted[0]!), 2)}–${formatNumber(shareOf(sorted.at(-1)!), 2)}×`;
    const cpu = (key: keyof CpuPerRequest) =>
      `${formatMicroseconds(service.cpu[key])} → ${formatMicroseconds(ceiling.cpu[key])} µs`;
    const cpuDetail = `CPU per request, service → ceiling: Node user ${cpu('user')}, system ${cpu('system')}; PostgreSQL ${cpu('postgres')}`;
    rows.push({
      name,
      value: `${describe(service.load)}; ${formatNumber(share, 2)}× ceiling (median of ${rounds.length} rounds, ${range})`,
      detail: `ceiling (${ceilingName}): ${describe(ceiling.load)}; ${cpuDetail}`,
    });
    if (framework)
      rows.push({
        name: `… the same bytes from bare Fastify (no plugins or hooks), same round`,
        value: `${describe(framework.load)}; ${formatNumber(framework.load.rps / ceiling.load.rps, 2)}× ceiling`,
        detail: `CPU per request: Node user ${formatMicroseconds(framework.cpu.user)} µs, system ${formatMicroseconds(framework.cpu.system)} µs`,
      });
    targets.push({
      target: `${name} ≥ ${target}× ${ceilingName} (${CONNECTIONS} connections)`,
      measured: `${formatNumber(share, 2)}×`,
      met: share >= target && rounds.every((round) => round.service.load.failures === 0),
      ...(share >= target ? {} : { miss: `${formatNumber(target / share, 2)}× short` }),
    });
  }
  return {
    title: `Single GETs (${CONNECTIONS} connections; the document's answer ${formatNumber(bytes / 1024, 1)} KiB)`,
    rows,
    targets,
  };
}
