/**
 * What rate limits and metrics cost (P125–P132): the single GET (`GET /api/inbound/{id}`, a
 * document without positions) and a create (`POST /api/inbound/`) on service processes that differ only in the
 * rate limit: off (`RATE_LIMIT_MAX=0`), counted in memory (the embedded default) and counted in PostgreSQL (the
 * default on an external database: one upsert per request). Each process runs on the bench service's database
 * (`DATABASE_URL`) and the same operator key; load through autocannon at 10 connections, and one connection in
 * sequence for latency. The request histogram is always on (it is not switchable), so its cost is in every figure;
 * a scrape of `/metrics` is timed on its own.
 */
import {
  BENCH_RATE_LIMIT_MAX,
  callApi,
  formatMs,
  formatNumber,
  runLoad,
  runSequential,
  startService,
  type BenchContext,
  type BenchPartResult,
  type BenchRow,
  noFailures,
} from './lib.ts';

const LOAD_CONNECTIONS = 10;
const WARMUP_SECONDS = 1;
const SEQUENTIAL_MAX = { count: 1_000, seconds: 2 };

interface Variant {
  name: string;
  env: Record<string, string>;
}

const VARIANTS: Variant[] = [
  { name: 'no rate limit', env: { RATE_LIMIT_MAX: '0' } },
  { name: 'rate limit in memory', env: { RATE_LIMIT_STORE: 'memory' } },
  { name: 'rate limit in PostgreSQL', env: { RATE_LIMIT_STORE: 'database' } },
];

interface Figures {
  getRps: number;
  getP50: number;
  createRps: number;
  createP50: number;
  failures: number;
}

/** Runs the rate-limit and metrics part against processes on the database of `context`'s service. */
export async function benchLimits(
  context: BenchContext,
  log: (line: string) => void,
): Promise<BenchPartResult> {
  const seconds = Math.min(context.loadSeconds, 5);
  const document = await callApi<{ id: number }>(
    context.serviceUrl,
    context.writeToken,
    'POST',
    '/api/inbound/',
    {
      organizationId: context.organizationId,
      type: 'INCOME',
      name: 'Bench rate limits',
    },
  );
  const createBody = JSON.stringify({
    organizationId: context.organizationId,
    type: 'INCOME',
    name: 'Bench rate limits',
  });
  const figures: Figures[] = [];
  let scrape = { p50: 0, p99: 0, count: 0 };
  for (const variant of VARIANTS) {
    log(`rate limits: ${variant.name}`);
    const { service } = await startService(context.dataDir, {
      DATABASE_URL: context.databaseUrl,
      SEED_DEMO: 'false',
      WEBHOOK_WORKERS: '0',
      RATE_LIMIT_MAX: BENCH_RATE_LIMIT_MAX,
      ...variant.env,
    });
    try {
      const get = {
        url: `${service.url}/api/inbound/${document.id}`,
        headers: { authorization: context.readToken },
        connections: LOAD_CONNECTIONS,
      };
      await runLoad({ ...get, seconds: WARMUP_SECONDS });
      const getLoad = await runLoad({ ...get, seconds });
      const getSequence = await runSequential({
        baseUrl: service.url,
        headers: { authorization: context.readToken },
        request: () => ({ method: 'GET', path: `/api/inbound/${document.id}` }),
        ...{ maxCount: SEQUENTIAL_MAX.count, maxSeconds: SEQUENTIAL_MAX.seconds },
      });
      const create = {
        url: `${service.url}/api/inbound/`,
        method: 'POST' as const,
        headers: { authorization: context.writeToken, 'content-type': 'application/json' },
        body: createBody,
        connections: LOAD_CONNECTIONS,
      };
      await runLoad({ ...create, seconds: WARMUP_SECONDS });
      const createLoad = await runLoad({ ...create, seconds });
      const createSequence = await runSequential({
        baseUrl: service.url,
        headers: { authorization: context.writeToken },
        request: () => ({ method: 'POST', path: '/api/inbound/', body: createBody }),
        ...{ maxCount: SEQUENTIAL_MAX.count, maxSeconds: SEQUENTIAL_MAX.seconds },
      });
      figures.push({
        getRps: getLoad.rps,
        getP50: getSequence.p50,
        createRps: createLoad.rps,
        createP50: createSequence.p50,
        failures: getLoad.failures + getSequence.failures + createLoad.failures + createSequence.failures,
      });
      if (variant === VARIANTS[VARIANTS.length - 1])
        scrape = await runSequential({
          baseUrl: service.url,
          request: () => ({ method: 'GET', path: '/metrics' }),
          maxCount: 200,
          maxSeconds: SEQUENTIAL_MAX.seconds,
        });
    } finally {
      await service.stop();
    }
  }
  const base = figures[0] as Figures;
  const rows: BenchRow[] = VARIANTS.flatMap((variant, index) => {
    const figure = figures[index] as Figures;
    const versus = (value: number, baseline: number) =>
      index === 0 ? '' : ` (${formatNumber(value / baseline, 2)}× no limit)`;
    const over = (value: number, baseline: number) =>
      index === 0 ? '' : ` (${value >= baseline ? '+' : '−'}${formatMs(Math.abs(value - baseline))})`;
    return [
      {
        name: `GET /api/inbound/{id}, ${variant.name}`,
        value: `${formatNumber(figure.getRps)} req/s${versus(figure.getRps, base.getRps)}`,
        detail: `1 connection: p50 ${formatMs(figure.getP50)}${over(figure.getP50, base.getP50)}`,
      },
      {
        name: `POST /api/inbound/, ${variant.name}`,
        value: `${formatNumber(figure.createRps)} req/s${versus(figure.createRps, base.createRps)}`,
        detail: `1 connection: p50 ${formatMs(figure.createP50)}${over(figure.createP50, base.createP50)}`,
      },
    ];
  });
  rows.push({
    name: 'GET /metrics (one scrape, counts read from the database)',
    value: `p50 ${formatMs(scrape.p50)}`,
    detail: `p99 ${formatMs(scrape.p99)} (n=${formatNumber(scrape.count)})`,
  });
  const failures = figures.reduce((sum, figure) => sum + figure.failures, 0);
  return {
    title: 'Rate limits and metrics',
    rows,
    targets: [
      noFailures('every request of the rate-limit bench answered 200 (the limit is never reached)', failures),
    ],
  };
}
