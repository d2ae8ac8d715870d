/**
 * Citus beside plain PostgreSQL (decision P184, docs/scale-out.md): the same service and workload on a database
 * of the machine's PostgreSQL server and on the 3-node Citus cluster of `../shared/citus/cluster.sh` (coordinator
 * and two workers on loopback), in one run, as ratios Citus/plain.
 *
 * For each database: `seller-ops migrate`, a service process with `DATABASE_URL` on it, a new client; then the
 * inbound write workload (`CITUS_DOCUMENTS` documents created and moved through three statuses over 4
 * connections) and the read path on its documents: `GET /api/inbound/{id}` and `find` page 1 (limit 100), both
 * missing the response cache, under autocannon (10 connections) and on one connection in sequence. CPU time per
 * request is read from /proc for the service and for each database server.
 *
 * On the cluster `citus.multi_task_query_log_level = 'error'` is set on the database, as in CI: a statement
 * that needed more than one shard would fail its request, so a run without failures is also a run in which every
 * statement was routed to one shard. Both databases run with `synchronous_commit = off` (the cluster's servers
 * are started so), so commit flushes do not decide the comparison.
 *
 * Settings: `BENCH_CITUS_PORT` (coordinator port, workers on the next two; default 55432), `BENCH_CITUS_DIR`
 * (default a new temporary folder), `BENCH_PLAIN_SERVER_URL` (default postgres://postgres@127.0.0.1:5432/postgres),
 * `BENCH_PLAIN_DATABASE` (default seller_ops_bench_plain; dropped and created). Skipped, with the reason, when
 * the cluster cannot be started here (no built Citus, not root) or the plain server is unreachable.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import {
  cpuMs,
  formatMs,
  formatNumber,
  repoRoot,
  runLoad,
  runSequential,
  serverPids,
  startService,
  type BenchPartResult,
  type BenchRow,
  type LoadResult,
  type SequentialResult,
} from './lib.ts';
import { createAccount, inboundUnit, runUnits, type UnitRun } from './workload.ts';

const run = promisify(execFile);

const CITUS_DOCUMENTS = Number(process.env.BENCH_CITUS_DOCUMENTS ?? 2_000);
const WRITE_CONNECTIONS = 4;
const READ_CONNECTIONS = 10;
const SEQUENTIAL_MAX = { count: 1_000, seconds: 3 };
const CLUSTER_SCRIPT = path.resolve(repoRoot, '../shared/citus/cluster.sh');
const CITUS_LIBRARY = '/usr/lib/postgresql/15/lib/citus.so';
const CLUSTER_NODES = ['c', 'w1', 'w2'];
const TITLE = 'Citus (coordinator + 2 workers) beside plain PostgreSQL';

/** A database the service runs on, with the data directories of its servers (for CPU time). */
interface Target {
  name: string;
  databaseUrl: string;
  /** data directories of the servers: the plain server, or the coordinator then the workers */
  servers: string[];
  /** database settings made after the migrations, before the service starts */
  settingsAfterMigration: string[];
}

/** CPU time in ms of the service process and of each server of a target. */
interface CpuSample {
  node: number;
  servers: number[];
}

/** What one target measured. */
interface TargetFigures {
  write: UnitRun;
  writeCpu: CpuSample;
  single: { load: LoadResult; sequential: SequentialResult; cpu: CpuSample };
  find: { load: LoadResult; sequential: SequentialResult; cpu: CpuSample };
}

/** Why the cluster cannot run here, or undefined. */
function clusterUnavailable(): string | undefined {
  if (!existsSync(CLUSTER_SCRIPT)) return `no ${CLUSTER_SCRIPT}`;
  if (!existsSync(CITUS_LIBRARY))
    return `Citus is not built into PostgreSQL 15 (${CITUS_LIBRARY}); \`cluster.sh start\` builds it once (root, apt, ≈ 2 min)`;
  if (process.getuid?.() !== 0) return 'cluster.sh starts the servers as the postgres user and needs root';
  return undefined;
}

function skipped(reason: string, log: (line: string) => void): BenchPartResult {
  log(`citus: skipped: ${reason}`);
  return {
    title: TITLE,
    rows: [{ name: 'Citus beside plain PostgreSQL', value: 'skipped', detail: reason }],
    targets: [],
  };
}

/** Drops and creates the plain database; returns its URL and the server's data directory. */
async function createPlainDatabase(serverUrl: string, name: string): Promise<Target> {
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    const quoted = admin.escapeIdentifier(name);
    await admin.query(`drop database if exists ${quoted} with (force)`);
    await admin.query(`create database ${quoted}`);
    await admin.query(`alter database ${quoted} set synchronous_commit = off`);
    const directory = await admin.query<{ data_directory: string }>('show data_directory');
    const url = new URL(serverUrl);
    url.pathname = `/${name}`;
    return {
      name: 'plain',
      databaseUrl: url.toString(),
      servers: [directory.rows[0]?.data_directory ?? ''],
      settingsAfterMigration: [],
    };
  } finally {
    await admin.end();
  }
}

async function dropPlainDatabase(serverUrl: string, name: string): Promise<void> {
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`drop database if exists ${admin.escapeIdentifier(name)} with (force)`);
  } finally {
    await admin.end();
  }
}

/** Runs `seller-ops migrate` on `databaseUrl`. */
async function migrate(databaseUrl: string): Promise<void> {
  await run(process.execPath, [path.join(repoRoot, 'bin/seller-ops.js'), 'migrate'], {
    env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' },
    timeout: 300_000,
  });
}

/** Sets a database-level setting for every later session. */
async function alterDatabase(databaseUrl: string, setting: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const name = new URL(databaseUrl).pathname.slice(1);
    await client.query(`alter database ${client.escapeIdentifier(name)} set ${setting}`);
  } finally {
    await client.end();
  }
}

/** Migrates `target`, starts a service on it, creates a client and measures writes and reads. */
async function measureTarget(
  target: Target,
  loadSeconds: number,
  log: (line: string) => void,
): Promise<TargetFigures> {
  log(`citus: ${target.name}: migrating…`);
  await migrate(target.databaseUrl);
  for (const setting of target.settingsAfterMigration) await alterDatabase(target.databaseUrl, setting);
  const dataDir = await mkdtemp(path.join(os.tmpdir(), `seller-ops-${target.name}-`));
  const { service } = await startService(dataDir, { DATABASE_URL: target.databaseUrl });
  try {
    const servicePid = service.child.pid ?? 0;
    const sample = (): CpuSample => ({
      node: cpuMs([servicePid]),
      servers: target.servers.map((directory) => cpuMs(serverPids(directory))),
    });
    const account = await createAccount(target.databaseUrl, `Citus bench ${target.name}`);
    const orderIds: number[] = [];
    const unit = await inboundUnit(service.url, account, (id) => orderIds.push(id));
    log(
      `citus: ${target.name}: ${formatNumber(CITUS_DOCUMENTS)} documents, ${WRITE_CONNECTIONS} connections…`,
    );
    const writeBefore = sample();
    const write = await runUnits(CITUS_DOCUMENTS, WRITE_CONNECTIONS, unit, 600);
    const writeCpu = perUnit(writeBefore, sample(), Math.max(write.completedAt.length, 1));
    const headers = { authorization: account.readToken };
    const measureRead = async (pathFor: (index: number) => string) => {
      await runLoad({
        url: service.url + pathFor(-1),
        headers,
        pathFor,
        connections: READ_CONNECTIONS,
        seconds: 1,
      });
      const before = sample();
      const load = await runLoad({
        url: service.url + pathFor(-1),
        headers,
        pathFor,
        connections: READ_CONNECTIONS,
        seconds: loadSeconds,
      });
      const cpu = perUnit(before, sample(), Math.max(load.requests, 1));
      const sequential = await runSequential({
        baseUrl: service.url,
        headers,
        request: (index) => ({ method: 'GET', path: pathFor(index) }),
        maxCount: SEQUENTIAL_MAX.count,
        maxSeconds: SEQUENTIAL_MAX.seconds,
      });
      return { load, sequential, cpu };
    };
    const documentId = orderIds[Math.floor(orderIds.length / 2)];
    log(`citus: ${target.name}: single GET and find page 1…`);
    // `limit` pages the positions and `columns` only shapes exports: same answers, never from the response cache
    const single = await measureRead(() => `/api/inbound/${documentId}?limit=100`);
    const find = await measureRead((index) => `/api/inbound/find?limit=100&columns=bench${index}`);
    return { write, writeCpu, single, find };
  } finally {
    await service.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

function perUnit(before: CpuSample, after: CpuSample, units: number): CpuSample {
  return {
    node: (after.node - before.node) / units,
    servers: after.servers.map((value, index) => (value - (before.servers[index] ?? 0)) / units),
  };
}

/** Runs the Citus part: both databases, the same workload, in one run. */
export async function benchCitus(
  context: { loadSeconds: number },
  log: (line: string) => void,
): Promise<BenchPartResult> {
  const unavailable = clusterUnavailable();
  if (unavailable) return skipped(unavailable, log);
  const serverUrl = process.env.BENCH_PLAIN_SERVER_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const plainName = process.env.BENCH_PLAIN_DATABASE ?? 'seller_ops_bench_plain';
  let plain: Target;
  try {
    plain = await createPlainDatabase(serverUrl, plainName);
  } catch (error) {
    return skipped(`the plain PostgreSQL server (${serverUrl}) is unreachable: ${String(error)}`, log);
  }
  const clusterDir =
    process.env.BENCH_CITUS_DIR ?? (await mkdtemp(path.join(os.tmpdir(), 'seller-ops-citus-')));
  const port = process.env.BENCH_CITUS_PORT ?? '55432';
  try {
    log(`citus: starting the cluster in ${clusterDir} on port ${port}…`);
    let started: string;
    try {
      started = (await run(CLUSTER_SCRIPT, ['start', clusterDir, port], { timeout: 300_000 })).stdout;
    } catch (error) {
      return skipped(`cluster.sh start failed: ${String(error).slice(0, 500)}`, log);
    }
    const citusUrl = /^DATABASE_URL=(\S+)$/m.exec(started)?.[1];
    if (!citusUrl) return skipped(`cluster.sh start printed no DATABASE_URL: ${started}`, log);
    const citus: Target = {
      name: 'citus',
      databaseUrl: citusUrl,
      servers: CLUSTER_NODES.map((node) => path.join(clusterDir, node)),
      // as in CI: a statement that needs more than one shard fails instead of fanning out
      settingsAfterMigration: [`citus.multi_task_query_log_level = 'error'`],
    };
    const plainFigures = await measureTarget(plain, context.loadSeconds, log);
    const citusFigures = await measureTarget(citus, context.loadSeconds, log);
    return citusResult(plainFigures, citusFigures);
  } finally {
    await run(CLUSTER_SCRIPT, ['stop', clusterDir]).catch(() => undefined);
    await dropPlainDatabase(serverUrl, plainName).catch(() => undefined);
  }
}

const ms = (value: number) => formatMs(value);

/** CPU per unit: the service, then the servers (plain, or coordinator and workers). */
function describeCpu(cpu: CpuSample, servers: string[]): string {
  return [
    `Node ${ms(cpu.node)}`,
    ...cpu.servers.map((value, index) => `${servers[index]} ${ms(value)}`),
  ].join(', ');
}

const PLAIN_SERVERS = ['PostgreSQL'];
const CLUSTER_SERVERS = ['coordinator', 'worker 1', 'worker 2'];

function citusResult(plain: TargetFigures, citus: TargetFigures): BenchPartResult {
  const rate = (write: UnitRun) => (write.completedAt.length * 1000) / write.elapsedMs;
  const rows: BenchRow[] = [];
  const ratio = (value: number) => `${formatNumber(value, 2)}×`;
  rows.push({
    name: `inbound writes (create + 3 statuses), ${WRITE_CONNECTIONS} connections, ${formatNumber(CITUS_DOCUMENTS)} documents`,
    value: `Citus ${formatNumber(rate(citus.write), 1)} documents/s, plain ${formatNumber(rate(plain.write), 1)} (${ratio(rate(citus.write) / rate(plain.write))})`,
    detail: `CPU per document: plain ${describeCpu(plain.writeCpu, PLAIN_SERVERS)}; Citus ${describeCpu(citus.writeCpu, CLUSTER_SERVERS)}`,
  });
  for (const [name, key] of [
    ['GET /api/inbound/{id} (2 positions), uncached', 'single'],
    ['find limit=100 page 1, uncached', 'find'],
  ] as const) {
    const p = plain[key];
    const c = citus[key];
    rows.push({
      name: `${name}, ${READ_CONNECTIONS} connections`,
      value: `Citus ${formatNumber(c.load.rps)} req/s, plain ${formatNumber(p.load.rps)} (${ratio(c.load.rps / p.load.rps)})`,
      detail:
        `1 connection p50: Citus ${ms(c.sequential.p50)}, plain ${ms(p.sequential.p50)} ` +
        `(${ratio(c.sequential.p50 / p.sequential.p50)}); CPU per request: plain ${describeCpu(p.cpu, PLAIN_SERVERS)}; ` +
        `Citus ${describeCpu(c.cpu, CLUSTER_SERVERS)}`,
    });
  }
  const failures = (figures: TargetFigures) =>
    figures.write.failures +
    figures.single.load.failures +
    figures.single.sequential.failures +
    figures.find.load.failures +
    figures.find.sequential.failures;
  const citusFailures = failures(citus);
  const plainFailures = failures(plain);
  if (citus.write.firstFailure)
    rows.push({ name: 'first failed write on Citus', value: citus.write.firstFailure });
  return {
    title: TITLE,
    rows,
    targets: [
      {
        target:
          'every request answered 2xx, on the cluster with the multi-shard guard on (single-shard routing)',
        measured: `Citus ${formatNumber(citusFailures)} failed, plain ${formatNumber(plainFailures)} failed`,
        met: citusFailures === 0 && plainFailures === 0 && citus.write.completedAt.length === CITUS_DOCUMENTS,
      },
    ],
  };
}
