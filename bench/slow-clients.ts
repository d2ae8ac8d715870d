/**
 * The service under slow, abusive clients (P164): one source (`127.0.0.2`) opens as many slow-body connections as
 * it can — each a `POST` announcing a 1 MB body, then one byte every 5 s; when the service closes one, it is opened
 * again a second later — while another source (`127.0.0.1`) sends ordinary `GET /api/inbound/{id}`s, each on a new
 * connection. Reported: failed ordinary requests, their p99 against the same requests on the idle service, the
 * service's open descriptors against its limit and connection cap, and what the caps did (refused connections,
 * requests cut for time).
 *
 * The service runs with the default edge settings on the bench service's database (its own process, so its
 * descriptors are its own). `BENCH_SLOW_SECONDS` (default 60) sets the attack's length.
 *
 *   node --import tsx bench/slow-clients.ts     this part alone, on a fresh embedded database (prints only)
 */
import { readdirSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { runningEmbeddedUrl } from '../src/db/embedded-postgres.ts';
import {
  BENCH_RATE_LIMIT_MAX,
  callApi,
  check,
  formatMs,
  formatNumber,
  noFailures,
  percentile,
  sleep,
  startService,
  type BenchContext,
  type BenchPartResult,
} from './lib.ts';
import { renderText } from './report.ts';

/** Connections the abusive source tries to hold at once (the 2,000 per process). */
const SLOW_CONNECTIONS = 2_000;
/** A slow client sends one byte of its body this often. */
const TRICKLE_MS = 5_000;
/** A slow client whose connection was closed opens a new one after this long. */
const REOPEN_MS = 1_000;
/** Pause between two ordinary GETs. */
const GET_PAUSE_MS = 50;
/** Seconds of ordinary GETs on the idle service. */
const IDLE_SECONDS = 10;
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

/** The abusive source: keeps `SLOW_CONNECTIONS` slow-body connections open or reopening until stopped. */
function slowClients(port: number, path: string, token: string) {
  let running = true;
  let opened = 0;
  const sockets = new Set<net.Socket>();
  const open = () => {
    if (!running) return;
    opened++;
    const socket = net.connect({ host: '127.0.0.1', port, localAddress: ABUSER });
    sockets.add(socket);
    let trickle: NodeJS.Timeout | undefined;
    socket.on('connect', () => {
      socket.write(
        `POST ${path} HTTP/1.1\r\nhost: bench\r\nauthorization: ${token}\r\n` +
          'content-type: application/json\r\ncontent-length: 1000000\r\n\r\n{',
      );
      trickle = setInterval(() => socket.write(' '), TRICKLE_MS);
    });
    socket.on('error', () => undefined);
    socket.on('data', () => undefined);
    socket.on('close', () => {
      clearInterval(trickle);
      sockets.delete(socket);
      setTimeout(open, REOPEN_MS).unref();
    });
  };
  for (let index = 0; index < SLOW_CONNECTIONS; index++) open();
  return {
    stop() {
      running = false;
      for (const socket of sockets) socket.destroy();
    },
    opened: () => opened,
  };
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
  const { service } = await startService(context.dataDir, {
    DATABASE_URL: context.databaseUrl,
    SEED_DEMO: 'false',
    WEBHOOK_WORKERS: '0',
    RATE_LIMIT_MAX: BENCH_RATE_LIMIT_MAX,
  });
  try {
    const pid = service.child.pid as number;
    const base = new URL(service.url);
    const getUrl = new URL(`/api/inbound/${document.id}`, service.url);
    log(`slow clients: ordinary GETs on the idle service (${IDLE_SECONDS} s)…`);
    const idleEnd = performance.now() + IDLE_SECONDS * 1000;
    const idle = await ordinaryGets(getUrl, context.readToken, () => performance.now() < idleEnd);
    const before = await metrics(service.url);

    log(
      `slow clients: ${formatNumber(SLOW_CONNECTIONS)} slow-body connections from ${ABUSER} for ${seconds} s…`,
    );
    const abuser = slowClients(Number(base.port), '/api/inbound/', context.writeToken);
    let maxDescriptors = 0;
    let maxOpen = 0;
    const sampler = setInterval(() => {
      maxDescriptors = Math.max(maxDescriptors, descriptors(pid));
    }, 250);
    const attackEnd = performance.now() + seconds * 1000;
    const [underLoad] = await Promise.all([
      ordinaryGets(getUrl, context.readToken, () => performance.now() < attackEnd),
      (async () => {
        while (performance.now() < attackEnd) {
          maxOpen = Math.max(
            maxOpen,
            (await metrics(service.url)).get('seller_ops_http_connections{state="open"}') ?? 0,
          );
          await sleep(1_000);
        }
      })(),
    ]);
    clearInterval(sampler);
    const after = await metrics(service.url);
    abuser.stop();
    const opened = abuser.opened();
    const delta = (name: string) => (after.get(name) ?? 0) - (before.get(name) ?? 0);
    const descriptorLimit = after.get('process_max_fds') ?? Number.NaN;
    const cap = after.get('seller_ops_http_connections{state="limit_total"}') ?? Number.NaN;
    const perSource = after.get('seller_ops_http_connections{state="limit_per_source"}') ?? Number.NaN;
    const ratio = underLoad.p99 / idle.p99;
    return {
      title: 'Slow clients (one abusive source, P164)',
      rows: [
        {
          name: `ordinary GET /api/inbound/{id}, new connection each, idle (${formatNumber(idle.timings.length)})`,
          value: `p99 ${formatMs(idle.p99)}`,
          detail: `p50 ${formatMs(idle.p50)}, ${formatNumber(idle.failures)} failed`,
        },
        {
          name: `… the same during the attack (${formatNumber(underLoad.timings.length + underLoad.failures)}, ${seconds} s)`,
          value: `p99 ${formatMs(underLoad.p99)}`,
          detail: `p50 ${formatMs(underLoad.p50)}, ${formatNumber(underLoad.failures)} failed, ${formatNumber(ratio, 2)}× idle p99`,
        },
        {
          name: `slow-body connections from ${ABUSER} (${formatNumber(SLOW_CONNECTIONS)} at once, reopened)`,
          value: `${formatNumber(opened)} opened`,
          detail: `every one reopened ${REOPEN_MS / 1000} s after the service closed it`,
        },
        {
          name: 'service: refused connections (per source, total), requests cut for time',
          value: `${formatNumber(delta('seller_ops_http_connections_refused_total{limit="per_source"}'))}, ${formatNumber(delta('seller_ops_http_connections_refused_total{limit="total"}'))}, ${formatNumber(delta('seller_ops_http_incomplete_requests_total{reason="timeout"}'))}`,
          detail: `cap ${formatNumber(perSource)} per source; at most ${formatNumber(maxOpen)} open connections seen`,
        },
        {
          name: 'service: open descriptors, most during the attack',
          value: formatNumber(maxDescriptors),
          detail: `limit ${formatNumber(descriptorLimit)}, connection cap ${formatNumber(cap)}`,
        },
      ],
      targets: [
        noFailures('ordinary GETs during the attack: 0 failed', underLoad.failures),
        check('ordinary GET p99 during the attack < 2× idle', underLoad.p99, 2 * idle.p99, formatMs),
        check('service descriptors < its connection cap', maxDescriptors, cap, formatNumber),
      ],
    };
  } finally {
    await service.stop();
  }
}

/** This part alone: a fresh service on the embedded database in a temporary DATA_DIR; prints the figures. */
async function main(): Promise<void> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'seller-ops-bench-slow-'));
  const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);
  const { service } = await startService(dataDir);
  try {
    const credentials = JSON.parse(await readFile(path.join(dataDir, 'demo-credentials.json'), 'utf8')) as {
      clientId: number;
      organizationId: number;
      readToken: string;
      writeToken: string;
    };
    const databaseUrl = await runningEmbeddedUrl(dataDir);
    if (!databaseUrl) throw new Error('cannot find the database of the running service');
    const started = performance.now();
    const part = await benchSlowClients(
      {
        serviceUrl: service.url,
        databaseUrl,
        loadSeconds: 0,
        servicePid: service.child.pid as number,
        dataDir,
        ...credentials,
      },
      log,
    );
    const cpus = os.cpus();
    process.stdout.write(
      `\n${renderText(
        {
          date: new Date().toISOString().slice(0, 16).replace('T', ' ') + ' UTC',
          cpus: os.availableParallelism(),
          cpuModel: cpus[0]?.model.trim() ?? 'unknown CPU',
          memoryGiB: Math.round(os.totalmem() / 2 ** 30),
          node: process.versions.node,
          database: 'embedded PostgreSQL (the default), fresh temporary DATA_DIR',
          loadSeconds: 0,
          durationSeconds: Math.round((performance.now() - started) / 1000),
        },
        [part],
      )}\n`,
    );
  } finally {
    await service.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await main();
  process.exit();
}
