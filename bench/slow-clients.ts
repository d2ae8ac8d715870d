/**
 * The service under slow, abusive clients (P164): one source (`127.0.0.2`) opens as many slow-body connections as
 * it can — 2,000 tried at once, each a `POST` announcing a 1 MB body, then one byte every 5 s; when the service
 * closes one, it is opened again a second later — while another source (`127.0.0.1`) sends ordinary
 * `GET /api/inbound/{id}`s, each on a new connection. The same GETs, for as long, on the idle service first (after
 * `WARMUP_SECONDS` of them not counted) are the baseline; the same samplers (descriptors, `/metrics`) run in both
 * phases. The abusive source is a child process of its own (bench/slow-attacker.ts), so it does not delay the
 * ordinary GETs' event loop; its CPU is reported beside the service's.
 *
 * Reported: failed ordinary requests, their p99 against the idle one, the service's CPU in each phase, its open
 * descriptors against its limit and connection cap, and what the caps did (refused connections, requests cut for
 * time). The service runs with the default edge settings on the bench service's database (its own process, so its
 * descriptors are its own). `BENCH_SLOW_SECONDS` (default 60) sets the length of each phase.
 *
 *   npm run bench -- --only=slow-clients
 */
import { fork } from 'node:child_process';
import { readdirSync } from 'node:fs';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import {
  BENCH_RATE_LIMIT_MAX,
  callApi,
  check,
  cpuMs,
  formatMs,
  formatNumber,
  noFailures,
  percentile,
  sleep,
  startService,
  type BenchContext,
  type BenchPartResult,
} from './lib.ts';
import type { AttackerOptions, AttackerReport } from './slow-attacker.ts';

/** Connections the abusive source tries to hold at once (the 2,000 per process). */
const SLOW_CONNECTIONS = 2_000;
/** A slow client sends one byte of its body this often. */
const TRICKLE_MS = 5_000;
/** A slow client whose connection was closed opens a new one after this long. */
const REOPEN_MS = 1_000;
/** Pause between two ordinary GETs. */
const GET_PAUSE_MS = 50;
/** Seconds of ordinary GETs, not counted, before the idle phase: the new process compiles its hot paths first. */
const WARMUP_SECONDS = 5;
const ABUSER = '127.0.0.2';
const ORDINARY = '127.0.0.1';

/** One ordinary GET on a new connection from `ORDINARY`: its time in ms, or undefined when it failed. */
function ordinaryGet(url: URL, token: string): Promise<number | undefined> {
  const started = performance.now();
  return new Promise((resolve) => {
    const request = http.get(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        agent: false,
        localAddress: ORDINARY,
        headers: { authorization: token },
      },
      (response) => {
        response.resume();
        response.on('end', () =>
          resolve(response.statusCode === 200 ? performance.now() - started : undefined),
        );
        response.on('error', () => resolve(undefined));
      },
    );
    request.on('error', () => resolve(undefined));
    request.setTimeout(30_000, () => request.destroy());
  });
}

/** Sends ordinary GETs until `until()` is false; their times and failures. */
async function ordinaryGets(url: URL, token: string, until: () => boolean) {
  const timings: number[] = [];
  let failures = 0;
  while (until()) {
    const time = await ordinaryGet(url, token);
    if (time === undefined) failures++;
    else timings.push(time);
    await sleep(GET_PAUSE_MS);
  }
  return { timings, failures, p99: percentile(timings, 99), p50: percentile(timings, 50) };
}

/** Open descriptors of process `pid`. */
function descriptors(pid: number): number {
  return readdirSync(`/proc/${pid}/fd`).length;
}

/** Samples of `/metrics` by name (with labels), e.g. `process_max_fds`. */
async function metrics(serviceUrl: string): Promise<Map<string, number>> {
  const text = await (await fetch(`${serviceUrl}/metrics`)).text();
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || line === '') continue;
    const space = line.lastIndexOf(' ');
    samples.set(line.slice(0, space), Number(line.slice(space + 1)));
  }
  return samples;
}

/** What one phase measured: the ordinary GETs, and the service during them. */
interface Phase {
  timings: number[];
  failures: number;
  p50: number;
  p99: number;
  /** the service's CPU time during the phase, ms per second */
  serviceCpuMsPerSecond: number;
  /** most descriptors the service had open (read every 250 ms) */
  maxDescriptors: number;
  /** most open connections the service reported in `/metrics` (read every second) */
  maxOpen: number;
}

/** Ordinary GETs for `seconds` while the service's descriptors and `/metrics` are sampled. */
async function phase(service: { url: string; pid: number }, getUrl: URL, token: string, seconds: number) {
  let maxDescriptors = 0;
  let maxOpen = 0;
  const sampler = setInterval(() => {
    maxDescriptors = Math.max(maxDescriptors, descriptors(service.pid));
  }, 250);
  const started = performance.now();
  const cpuBefore = cpuMs([service.pid]);
  const end = started + seconds * 1000;
  const [gets] = await Promise.all([
    ordinaryGets(getUrl, token, () => performance.now() < end),
    (async () => {
      while (performance.now() < end) {
        const open = (await metrics(service.url)).get('seller_ops_http_connections{state="open"}');
        maxOpen = Math.max(maxOpen, open ?? 0);
        await sleep(1_000);
      }
    })(),
  ]);
  clearInterval(sampler);
  const elapsedSeconds = (performance.now() - started) / 1000;
  const result: Phase = {
    ...gets,
    serviceCpuMsPerSecond: (cpuMs([service.pid]) - cpuBefore) / elapsedSeconds,
    maxDescriptors,
    maxOpen,
  };
  return result;
}

/** Starts the abusive source (bench/slow-attacker.ts) as a child process; resolves once it is under way. */
async function startAttacker(options: AttackerOptions) {
  const child = fork(
    fileURLToPath(new URL('./slow-attacker.ts', import.meta.url)),
    [JSON.stringify(options)],
    {
      execArgv: ['--import', 'tsx'],
      stdio: 'inherit',
    },
  );
  await new Promise<void>((resolve, reject) => {
    child.once('message', () => resolve());
    child.once('exit', (code) => reject(new Error(`the attacker exited (${code}) before starting`)));
  });
  const pid = child.pid as number;
  const cpuBefore = cpuMs([pid]);
  const started = performance.now();
  return {
    /** Stops the attack: what it did, and its CPU time in ms per second of attack. */
    async stop(): Promise<AttackerReport & { cpuMsPerSecond: number; seconds: number }> {
      const seconds = (performance.now() - started) / 1000;
      const cpuMsPerSecond = (cpuMs([pid]) - cpuBefore) / seconds;
      const report = new Promise<AttackerReport>((resolve) =>
        child.once('message', (message) => resolve(message as AttackerReport)),
      );
      child.send('stop');
      const done = await report;
      return { ...done, cpuMsPerSecond, seconds };
    },
  };
}

/** Runs the slow-clients part against a service process of its own on `context`'s database. */
export async function benchSlowClients(
  context: BenchContext,
  log: (line: string) => void,
): Promise<BenchPartResult> {
  const seconds = Number(process.env.BENCH_SLOW_SECONDS ?? 60);
  const document = await callApi<{ id: number }>(
    context.serviceUrl,
    context.writeToken,
    'POST',
    '/api/inbound/',
    {
      organizationId: context.organizationId,
      type: 'INCOME',
      name: 'Bench slow clients',
    },
  );
  const started = await startService(context.dataDir, {
    DATABASE_URL: context.databaseUrl,
    SEED_DEMO: 'false',
    WEBHOOK_WORKERS: '0',
    RATE_LIMIT_MAX: BENCH_RATE_LIMIT_MAX,
  });
  const service = { url: started.service.url, pid: started.service.child.pid as number };
  try {
    const getUrl = new URL(`/api/inbound/${document.id}`, service.url);
    const warmupEnd = performance.now() + WARMUP_SECONDS * 1000;
    await ordinaryGets(getUrl, context.readToken, () => performance.now() < warmupEnd);
    log(`slow clients: ordinary GETs on the idle service (${seconds} s)…`);
    const idle = await phase(service, getUrl, context.readToken, seconds);
    const before = await metrics(service.url);

    log(
      `slow clients: ${formatNumber(SLOW_CONNECTIONS)} slow-body connections from ${ABUSER} for ${seconds} s…`,
    );
    const attacker = await startAttacker({
      port: Number(new URL(service.url).port),
      path: '/api/inbound/',
      token: context.writeToken,
      source: ABUSER,
      connections: SLOW_CONNECTIONS,
      trickleMs: TRICKLE_MS,
      reopenMs: REOPEN_MS,
    });
    let attack: AttackerReport & { cpuMsPerSecond: number; seconds: number };
    let underLoad: Phase;
    try {
      underLoad = await phase(service, getUrl, context.readToken, seconds);
    } finally {
      attack = await attacker.stop();
    }
    const after = await metrics(service.url);
    const delta = (name: string) => (after.get(name) ?? 0) - (before.get(name) ?? 0);
    const descriptorLimit = after.get('process_max_fds') ?? Number.NaN;
    const cap = after.get('seller_ops_http_connections{state="limit_total"}') ?? Number.NaN;
    const perSource = after.get('seller_ops_http_connections{state="limit_per_source"}') ?? Number.NaN;
    const ratio = underLoad.p99 / idle.p99;
    const gets = (result: Phase) => formatNumber(result.timings.length + result.failures);
    return {
      title: 'Slow clients (one abusive source, P164)',
      rows: [
        {
          name: `ordinary GET /api/inbound/{id}, new connection each, idle (${gets(idle)}, ${seconds} s)`,
          value: `p99 ${formatMs(idle.p99)}`,
          detail: `p50 ${formatMs(idle.p50)}, ${formatNumber(idle.failures)} failed; service CPU ${formatNumber(idle.serviceCpuMsPerSecond)} ms/s`,
        },
        {
          name: `… the same during the attack (${gets(underLoad)}, ${seconds} s)`,
          value: `p99 ${formatMs(underLoad.p99)}`,
          detail: `p50 ${formatMs(underLoad.p50)}, ${formatNumber(underLoad.failures)} failed, ${formatNumber(ratio, 2)}× idle p99; service CPU ${formatNumber(underLoad.serviceCpuMsPerSecond)} ms/s`,
        },
        {
          name: `slow-body connections from ${ABUSER} (${formatNumber(SLOW_CONNECTIONS)} tried at once, reopened)`,
          value: `${formatNumber(attack.opened / attack.seconds)} opened/s`,
          detail: `${formatNumber(attack.opened)} opened; the attacker's CPU ${formatNumber(attack.cpuMsPerSecond)} ms/s (own process)`,
        },
        {
          name: 'service: refused connections (per source, total), requests cut for time',
          value: `${formatNumber(delta('seller_ops_http_connections_refused_total{limit="per_source"}'))}, ${formatNumber(delta('seller_ops_http_connections_refused_total{limit="total"}'))}, ${formatNumber(delta('seller_ops_http_incomplete_requests_total{reason="timeout"}'))}`,
          detail: `cap ${formatNumber(perSource)} per source; at most ${formatNumber(underLoad.maxOpen)} open connections seen`,
        },
        {
          name: 'service: open descriptors, most idle → during the attack',
          value: `${formatNumber(idle.maxDescriptors)} → ${formatNumber(underLoad.maxDescriptors)}`,
          detail: `limit ${formatNumber(descriptorLimit)}, connection cap ${formatNumber(cap)}`,
        },
      ],
      targets: [
        noFailures('ordinary GETs during the attack: 0 failed', underLoad.failures),
        check('ordinary GET p99 during the attack < 2× idle', underLoad.p99, 2 * idle.p99, formatMs),
        check('service descriptors < its connection cap', underLoad.maxDescriptors, cap, formatNumber),
      ],
    };
  } finally {
    await started.service.stop();
  }
}
