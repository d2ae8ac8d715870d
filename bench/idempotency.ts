/**
 * What idempotency keys cost on a create (D3.2): `POST /api/inbound/` (a document without positions)
 * without a key, with a new key each time, and repeated with one key (every request after the first is a replay
 * from the store). Each at 10 connections (autocannon, with CPU per request of Node and PostgreSQL) and then on one
 * kept-alive connection in sequence.
 *
 * A keyed create adds to the plain one: the claim (an INSERT committed on its own: one more WAL flush), the lock of
 * the claim at the start of the change's transaction and the UPDATE storing the answer before its commit.
 */
import { randomUUID } from 'node:crypto';
import {
  cpuMs,
  formatMs,
  formatNumber,
  postgresPids,
  runLoad,
  runSequential,
  type BenchContext,
  type BenchPartResult,
  type BenchRow,
  type LoadResult,
  type SequentialResult,
  noFailures,
} from './lib.ts';

const PATH = '/api/inbound/';
const LOAD_CONNECTIONS = 10;
const WARMUP_SECONDS = 1;
const SEQUENTIAL_MAX = { count: 1_000, seconds: 4 };

interface Scenario {
  name: string;
  /** The key of the n-th request of a phase (warm-up, load, sequence), or none. */
  keyFor?: (phase: string, index: number) => string;
}

interface Figures {
  load: LoadResult;
  sequential: SequentialResult;
  /** CPU ms per request over the load run. */
  cpu: { node: number; postgres: number };
}

const wholeMs = (ms: number) => (ms < 1 ? '< 1 ms' : `${formatNumber(ms)} ms`);

/** Runs the idempotency part of the bench against the service of `context`. */
export async function benchIdempotency(
  context: BenchContext,
  log: (line: string) => void,
): Promise<BenchPartResult> {
  const run = randomUUID().slice(0, 8);
  const body = JSON.stringify({
    organizationId: context.organizationId,
    type: 'INCOME',
    name: 'Bench idempotency',
  });
  const scenarios: Scenario[] = [
    { name: 'create without a key' },
    { name: 'create with a new key each time', keyFor: (phase, index) => `bench-${run}-${phase}-${index}` },
    // The warm-up stores the answer (its first requests meet the first one in flight: 409); then only replays.
    { name: 'the same create repeated with one key (replays)', keyFor: () => `bench-${run}-replayed` },
  ];
  const headers = { authorization: context.writeToken, 'content-type': 'application/json' };
  const cpu = () => ({ node: cpuMs([context.servicePid]), postgres: cpuMs(postgresPids(context.dataDir)) });
  const figures: Figures[] = [];
  for (const scenario of scenarios) {
    log(`idempotency: ${scenario.name}`);
    const { keyFor } = scenario;
    const keyed = (phase: string) =>
      keyFor && ((index: number) => ({ 'Idempotency-Key': keyFor(phase, index) }));
    const load = {
      url: context.serviceUrl + PATH,
      method: 'POST' as const,
      headers,
      body,
      connections: LOAD_CONNECTIONS,
    };
    const warmupKeys = keyed('warmup');
    await runLoad({ ...load, seconds: WARMUP_SECONDS, ...(warmupKeys && { headersFor: warmupKeys }) });
    const loadKeys = keyed('load');
    const before = cpu();
    const measured = await runLoad({
      ...load,
      seconds: context.loadSeconds,
      ...(loadKeys && { headersFor: loadKeys }),
    });
    const after = cpu();
    const sequenceKeys = keyed('sequence');
    const sequential = await runSequential({
      baseUrl: context.serviceUrl,
      headers: { authorization: context.writeToken },
      request: (index) => ({
        method: 'POST',
        path: PATH,
        body,
        ...(sequenceKeys && { headers: sequenceKeys(index) }),
      }),
      maxCount: SEQUENTIAL_MAX.count,
      maxSeconds: SEQUENTIAL_MAX.seconds,
    });
    figures.push({
      load: measured,
      sequential,
      cpu: {
        node: (after.node - before.node) / measured.requests,
        postgres: (after.postgres - before.postgres) / measured.requests,
      },
    });
  }
  const plain = figures[0] as Figures;
  const rows: BenchRow[] = scenarios.map((scenario, index) => {
    const { load, sequential, cpu: used } = figures[index] as Figures;
    const ratio = index === 0 ? '' : `; ${formatNumber(load.rps / plain.load.rps, 2)}× the plain create`;
    const extra =
      index === 0 ? '' : `, ${formatMs(sequential.p50 - plain.sequential.p50)} over the plain create at p50`;
    return {
      name: `POST /api/inbound/, ${scenario.name}`,
      value: `${formatNumber(load.rps)} req/s, p50 ${wholeMs(load.p50)}, p99 ${wholeMs(load.p99)}${ratio}`,
      detail:
        `1 connection: p50 ${formatMs(sequential.p50)}, p99 ${formatMs(sequential.p99)} (n=${formatNumber(sequential.count)})${extra}; ` +
        `CPU per request: Node ${formatMs(used.node)}, PostgreSQL ${formatMs(used.postgres)}` +
        (load.failures + sequential.failures > 0 ? `; ${load.failures + sequential.failures} failures` : ''),
    };
  });
  const failures = figures.reduce(
    (sum, figure) => sum + figure.load.failures + figure.sequential.failures,
    0,
  );
  return {
    title: 'Idempotency keys (a create, D3.2)',
    rows,
    targets: [noFailures('every create and replay answered 200', failures)],
  };
}
