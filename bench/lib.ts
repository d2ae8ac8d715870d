/**
 * Building blocks of `npm run bench`: the service and the ceiling server as child processes, load through
 * autocannon, sequential timing with sub-millisecond resolution, percentiles and process memory.
 *
 * Everything runs on loopback. Every request loop is bounded in count and in time.
 */
import { execFileSync, spawn, type ChildProcess, type Serializable } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import { createServer } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { SERVICE_NODE_OPTIONS } from '../src/node-options.ts';

/** Root folder of the repository. */
export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** A row of the printed table: one measured figure. */
export interface BenchRow {
  /** what was measured, e.g. "GET /api/inbound/{id} (50 products)" */
  name: string;
  /** the figure with its unit, e.g. "2,310 req/s" */
  value: string;
  /** the comparison or detail, e.g. "ceiling 9,800 req/s (0.24×)" */
  detail?: string;
}

/** A target of the issue and whether the run met it. */
export interface TargetCheck {
  target: string;
  measured: string;
  met: boolean;
  /** when missed: by how much (e.g. "1.6× over") */
  miss?: string;
}

/** What every bench part can use: the running service and the demo account on it. */
export interface BenchContext {
  /** `http://127.0.0.1:<port>` of the service child process */
  serviceUrl: string;
  /** URL of the service's database (for fast seeding with SQL) */
  databaseUrl: string;
  clientId: number;
  organizationId: number;
  readToken: string;
  writeToken: string;
  /** seconds of each autocannon throughput run */
  loadSeconds: number;
  /** pid of the service's Node process */
  servicePid: number;
  /** the service's DATA_DIR (its embedded PostgreSQL lives in `<dataDir>/pg`) */
  dataDir: string;
}

/** Results of a bench part, merged into the printed table and docs/performance.md. */
export interface BenchPartResult {
  title: string;
  rows: BenchRow[];
  targets: TargetCheck[];
}

/** Picks a free loopback TCP port. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** A child process that serves HTTP on loopback. */
export interface ServerProcess {
  child: ChildProcess;
  url: string;
  /** What the process printed so far (for error messages). */
  output(): string;
  /** Sends SIGTERM and waits for the exit (SIGKILL after `graceMs`). */
  stop(graceMs?: number): Promise<void>;
}

/** Server processes started by the bench and not yet exited, so an interrupted run can stop them. */
export const liveServers = new Set<ServerProcess>();

function trackChild(child: ChildProcess, url: string): ServerProcess {
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-20_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  const server: ServerProcess = {
    child,
    url,
    output: () => output,
    async stop(graceMs = 30_000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
  liveServers.add(server);
  void exited.then(() => liveServers.delete(server));
  return server;
}

/** The bench's rate limit: counted as usual (the cost stays in every figure), never reached (P125). */
export const BENCH_RATE_LIMIT_MAX = '1000000000';

/**
 * Starts `bin/seller-ops.js serve` on the embedded PostgreSQL in `dataDir` (no DATABASE_URL) with request
 * logs off (`LOG_LEVEL=warn`) and a rate limit no load reaches, and waits for `GET /ready`. `extraEnv` adds or
 * overrides settings (e.g. `DATABASE_URL` of a running service's database, to start a second process on it).
 * Node runs it with the service's options, as `npm start` does (P218), then the flags of `BENCH_SERVICE_NODE_FLAGS`
 * (space-separated, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`; a V8 flag given again there wins).
 * @returns the process and the milliseconds from spawn to the first 200 of `/ready`
 * @throws when the process exits first or is not ready within 120 s
 */
export async function startService(
  dataDir: string,
  extraEnv: Record<string, string> = {},
): Promise<{ service: ServerProcess; readyMs: number }> {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATA_DIR: dataDir,
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    RATE_LIMIT_MAX: BENCH_RATE_LIMIT_MAX,
  };
  delete env.DATABASE_URL;
  delete env.SEED_DEMO;
  delete env.RATE_LIMIT_STORE;
  delete env.REDIS_URL;
  Object.assign(env, extraEnv);
  const started = performance.now();
  const nodeFlags = process.env.BENCH_SERVICE_NODE_FLAGS?.split(' ').filter(Boolean) ?? [];
  const serviceArgs = [
    ...SERVICE_NODE_OPTIONS,
    ...nodeFlags,
    path.join(repoRoot, 'bin/seller-ops.js'),
    'serve',
  ];
  const child = spawn(process.execPath, serviceArgs, {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const service = trackChild(child, `http://127.0.0.1:${port}`);
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`service exited (${child.exitCode ?? child.signalCode}):\n${service.output()}`);
    const status = await httpStatus(`${service.url}/ready`);
    if (status === 200) return { service, readyMs: performance.now() - started };
    await sleep(10);
  }
  await service.stop();
  throw new Error(`service not ready after 120 s:\n${service.output()}`);
}

function httpStatus(url: string): Promise<number | undefined> {
  return new Promise((resolve) => {
    const request = http.get(url, { agent: false }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode));
    });
    request.on('error', () => resolve(undefined));
    request.setTimeout(5_000, () => request.destroy());
  });
}

/** A response recorded from the service that the ceiling server replays byte for byte. */
export interface RecordedResponse {
  method: 'GET' | 'POST';
  /** path and query, exactly as requested */
  url: string;
  status: number;
  /** the answer's header fields as the service sent them, less `answerHeaders`' exceptions */
  headers: Record<string, string>;
  body: Buffer;
}

/** Header fields Node writes for every answer of its own (`Date`, keep-alive, length), and the request id. */
const PER_ANSWER_FIELDS = new Set([
  'date',
  'connection',
  'keep-alive',
  'content-length',
  'transfer-encoding',
  'x-request-id',
]);

/**
 * The header fields of the service's `response` that a ceiling sends with the same body (content type, `ETag`,
 * `RateLimit`, `RateLimit-Policy`, `Vary`…): the same bytes, but for the fields Node writes itself and the
 * request id, which the ceiling makes anew like the service.
 */
function answerHeaders(response: Response): Record<string, string> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    if (!PER_ANSWER_FIELDS.has(name)) headers[name] = value;
  });
  return headers;
}

/** The service's `response` to `method url` as a ceiling replays it: status, `answerHeaders` and the whole body. */
export async function recordAnswer(
  method: RecordedResponse['method'],
  url: string,
  response: Response,
): Promise<RecordedResponse> {
  const body = Buffer.from(await response.arrayBuffer());
  return { method, url, status: response.status, headers: answerHeaders(response), body };
}

/** The service's answer to `GET path` with `token`, for a ceiling to replay (any status). */
export async function recordGet(baseUrl: string, token: string, path: string): Promise<RecordedResponse> {
  const response = await fetch(baseUrl + path, {
    headers: { authorization: token },
    signal: AbortSignal.timeout(60_000),
  });
  return recordAnswer('GET', path, response);
}

/** `recordGet`, failing on anything but a 200 (with its status and body). */
export async function recordOk(baseUrl: string, token: string, path: string): Promise<RecordedResponse> {
  const recorded = await recordGet(baseUrl, token, path);
  if (recorded.status !== 200)
    throw new Error(`GET ${path}: ${recorded.status} ${recorded.body.toString('utf8')}`);
  return recorded;
}

/**
 * Starts `script` (a bench server under bench/) as a child process, sends it `setup` over IPC and waits for the
 * port it listens on.
 * @throws when it exits first or does not answer within 10 s
 */
async function startBenchServer(script: string, setup: unknown): Promise<ServerProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'bench', script)], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${script} did not start in 10 s`)), 10_000);
    child.once('message', (message: { port: number }) => {
      clearTimeout(timer);
      resolve(message.port);
    });
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
    child.send(setup as Serializable);
  });
  child.disconnect();
  return trackChild(child, `http://127.0.0.1:${port}`);
}

/**
 * Starts the ceiling: a bare `node:http` server (bench/ceiling-server.ts, its own process like the service)
 * that answers each recorded request with the same status, header fields (`recordAnswer`) and body and a
 * request-id header of the same size, from memory; with `framework: 'fastify'`, a Fastify instance without
 * plugins or hooks does.
 */
export function startCeiling(
  responses: RecordedResponse[],
  framework: 'node:http' | 'fastify' = 'node:http',
): Promise<ServerProcess> {
  return startBenchServer('ceiling-server.ts', {
    framework,
    recorded: responses.map((response) => ({
      key: `${response.method} ${response.url}`,
      status: response.status,
      headers: response.headers,
      body: response.body.toString('base64'),
    })),
  });
}

/** A SQL statement as the service's Kysely compiles it: text and values. */
export interface CapturedStatement {
  text: string;
  values: unknown[];
}

/**
 * Starts the database-path ceiling (bench/database-ceiling-server.ts): a bare `node:http` + `pg` server that
 * answers `GET <path>` by running `routes[path]` (steps in order, the statements of a step concurrently) on
 * `databaseUrl` with a pool of `poolSize`, and sending `JSON.stringify` of the rows.
 */
export function startDatabaseCeiling(
  databaseUrl: string,
  poolSize: number,
  routes: Record<string, CapturedStatement[][]>,
): Promise<ServerProcess> {
  const byKey = Object.fromEntries(Object.entries(routes).map(([url, steps]) => [`GET ${url}`, steps]));
  return startBenchServer('database-ceiling-server.ts', { databaseUrl, poolSize, routes: byKey });
}

/** Throughput and latency of one autocannon run. */
export interface LoadResult {
  connections: number;
  seconds: number;
  requests: number;
  /** mean requests per second */
  rps: number;
  /** latency percentiles in ms (autocannon records whole milliseconds) */
  p50: number;
  p99: number;
  /** non-2xx responses, socket errors and timeouts */
  failures: number;
}

/** Options of a load run. */
export interface LoadOptions {
  url: string;
  /** path and query of the n-th request (default: the path of `url` every time) */
  pathFor?: (index: number) => string;
  /** more headers of the n-th request (e.g. a new `Idempotency-Key` each time) */
  headersFor?: (index: number) => Record<string, string>;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  connections: number;
  seconds: number;
}

/** Runs autocannon against `url` for `seconds` (its own timeout bounds every request at 10 s). */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const { pathFor, headersFor } = options;
  let sent = 0;
  const setupRequest = (request: autocannon.Request) => {
    const index = sent++;
    return {
      ...request,
      ...(pathFor && { path: pathFor(index) }),
      ...(headersFor && { headers: { ...request.headers, ...headersFor(index) } }),
    };
  };
  const result = await autocannon({
    url: options.url,
    method: options.method ?? 'GET',
    headers: options.headers ?? {},
    ...(options.body === undefined ? {} : { body: options.body }),
    ...((pathFor || headersFor) && { requests: [{ setupRequest }] }),
    connections: options.connections,
    duration: options.seconds,
    timeout: 10,
  });
  return {
    connections: options.connections,
    seconds: options.seconds,
    requests: result.requests.total,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    failures: result.non2xx + result.errors + result.timeouts,
  };
}

/** Latencies of sequential requests on one kept-alive connection, in ms with microsecond resolution. */
export interface SequentialResult {
  count: number;
  p50: number;
  p99: number;
  max: number;
  /** responses other than `expectStatus`, or request errors */
  failures: number;
}

/**
 * Sends requests one after another on one kept-alive connection and times each with `performance.now()`;
 * stops after `maxCount` requests or `maxSeconds`, whichever comes first.
 * @param request builds the i-th request (method, path and query, body)
 */
export async function runSequential(options: {
  baseUrl: string;
  headers?: Record<string, string>;
  request: (index: number) => {
    method: 'GET' | 'POST';
    path: string;
    body?: string;
    headers?: Record<string, string>;
  };
  maxCount: number;
  maxSeconds: number;
  expectStatus?: number;
}): Promise<SequentialResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const base = new URL(options.baseUrl);
  const timings: number[] = [];
  let failures = 0;
  const deadline = performance.now() + options.maxSeconds * 1000;
  try {
    for (let index = 0; index < options.maxCount && performance.now() < deadline; index++) {
      const { method, path: requestPath, body, headers } = options.request(index);
      const started = performance.now();
      const status = await new Promise<number | undefined>((resolve) => {
        const request = http.request(
          {
            host: base.hostname,
            port: base.port,
            method,
            path: requestPath,
            agent,
            headers: {
              ...options.headers,
              ...headers,
              ...(body === undefined
                ? {}
                : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }),
            },
          },
          (response) => {
            response.resume();
            response.on('end', () => resolve(response.statusCode));
          },
        );
        request.on('error', () => resolve(undefined));
        request.setTimeout(30_000, () => request.destroy());
        request.end(body);
      });
      timings.push(performance.now() - started);
      if (status !== (options.expectStatus ?? 200)) failures++;
    }
  } finally {
    agent.destroy();
  }
  return {
    count: timings.length,
    p50: percentile(timings, 50),
    p99: percentile(timings, 99),
    max: Math.max(...timings),
    failures,
  };
}

/** The `p`-th percentile (nearest rank) of `values`; NaN for none. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1] as number;
}

/** Resident set size of a process in KiB (`VmRSS` of /proc/<pid>/status). */
export function rssKiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /^VmRSS:\s+(\d+) kB/m.exec(status);
  if (!match) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(match[1]);
}

/** The embedded PostgreSQL of `dataDir`: its postmaster (from `pg/postmaster.pid`) and its child processes. */
export function postgresPids(dataDir: string): number[] {
  return serverPids(path.join(dataDir, 'pg'));
}

/** A PostgreSQL server by its data directory: its postmaster (from `postmaster.pid`) and its child processes. */
export function serverPids(dataDirectory: string): number[] {
  const postmaster = Number.parseInt(
    readFileSync(path.join(dataDirectory, 'postmaster.pid'), 'utf8').split('\n')[0] ?? '',
    10,
  );
  const pids = [postmaster];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    if (procStat(Number(entry))?.[1] === String(postmaster)) pids.push(Number(entry));
  }
  return pids;
}

/** Fields of /proc/<pid>/stat after the command name (index 0 = state, 1 = parent pid); undefined if gone. */
function procStat(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

const clockTicksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/**
 * CPU time used so far by `pids` (user + system, plus that of their exited and reaped children), in ms.
 * Resolution: one clock tick (10 ms at the usual 100 Hz).
 */
export function cpuMs(pids: number[]): number {
  const { user, system } = cpuTimesMs(pids);
  return user + system;
}

/**
 * CPU time used so far by `pids` in user and in system (kernel) mode, each with that of their exited and reaped
 * children, in ms; resolution as `cpuMs`.
 */
export function cpuTimesMs(pids: number[]): { user: number; system: number } {
  let user = 0;
  let system = 0;
  for (const pid of pids) {
    const fields = procStat(pid);
    if (!fields) continue;
    // utime, stime, cutime, cstime: fields 14..17 of stat, 11..14 here
    user += Number(fields[11] ?? 0) + Number(fields[13] ?? 0);
    system += Number(fields[12] ?? 0) + Number(fields[14] ?? 0);
  }
  return { user: (user * 1000) / clockTicksPerSecond, system: (system * 1000) / clockTicksPerSecond };
}

/** CPU a request of a server's Node process (user and system mode) and of the service's PostgreSQL, in ms. */
export interface CpuPerRequest {
  user: number;
  system: number;
  postgres: number;
}

/** One load run's figures, with the server's CPU a request. */
export interface MeasuredLoad {
  load: LoadResult;
  cpu: CpuPerRequest;
}

/**
 * `runLoad(options)` (no warm-up), reading the CPU that the Node process `pid` and the PostgreSQL of `dataDir`
 * (idle for a bytes ceiling) used meanwhile, divided by the requests answered.
 */
export async function runLoadWithCpu(
  options: LoadOptions,
  pid: number,
  dataDir: string,
): Promise<MeasuredLoad> {
  const sample = () => ({ ...cpuTimesMs([pid]), postgres: cpuMs(postgresPids(dataDir)) });
  const before = sample();
  const load = await runLoad(options);
  const after = sample();
  const perRequest = (key: keyof CpuPerRequest) => (after[key] - before[key]) / Math.max(load.requests, 1);
  return {
    load,
    cpu: { user: perRequest('user'), system: perRequest('system'), postgres: perRequest('postgres') },
  };
}

/**
 * Memory of the embedded PostgreSQL of `dataDir` as the sum of the proportional set sizes of its processes
 * (PSS counts shared buffers once, where a sum of RSS would count them per process).
 */
export function postgresMemory(dataDir: string): { processes: number; pssKiB: number } {
  const pids = postgresPids(dataDir);
  let pssKiB = 0;
  for (const pid of pids) {
    try {
      const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
      pssKiB += Number(/^Pss:\s+(\d+) kB/m.exec(rollup)?.[1] ?? 0);
    } catch {
      // the process ended while we looked
    }
  }
  return { processes: pids.length, pssKiB };
}

/** Waits `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Formats a number with thousands separators and `digits` decimals. */
export function formatNumber(value: number, digits = 0): string {
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** Formats milliseconds as whole microseconds (without the unit). */
export function formatMicroseconds(ms: number): string {
  return formatNumber(ms * 1000);
}

/** Formats milliseconds: 2 decimals below 10 ms, 1 below 100 ms, none above. */
export function formatMs(ms: number): string {
  const digits = ms < 10 ? 2 : ms < 100 ? 1 : 0;
  return `${formatNumber(ms, digits)} ms`;
}

/** Calls the service's JSON API with `token`; returns the parsed body. @throws on a non-2xx answer */
export async function callApi<T>(
  baseUrl: string,
  token: string,
  method: 'GET' | 'POST' | 'PATCH',
  pathAndQuery: string,
  body?: unknown,
): Promise<T> {
  const response = await fetch(baseUrl + pathAndQuery, {
    method,
    headers: {
      authorization: token,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(60_000),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${pathAndQuery} → ${response.status} ${text.slice(0, 500)}`);
  return (text === '' ? undefined : JSON.parse(text)) as T;
}

/** A target met when no request got an unexpected answer; `failures` counts the others. */
export function noFailures(target: string, failures: number): TargetCheck {
  return {
    target,
    measured: failures === 0 ? 'all' : `${formatNumber(failures)} other answers`,
    met: failures === 0,
  };
}

/** A "less than" target: met when `value < limit`; otherwise says how far over it is. */
export function check(
  target: string,
  value: number,
  limit: number,
  format: (value: number) => string,
): TargetCheck {
  const met = value < limit;
  return {
    target,
    measured: format(value),
    met,
    ...(met ? {} : { miss: `${formatNumber(value / limit, 2)}× the limit (+${format(value - limit)})` }),
  };
}
