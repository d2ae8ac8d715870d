/**
 * Start-up and memory figures: the embedded PostgreSQL's first start (initdb into a new directory) and warm
 * start (same directory again), the whole service's time to ready, and the idle RSS of a service process.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startEmbeddedPostgres } from '../src/db/embedded-postgres.ts';
import {
  check,
  formatMs,
  formatNumber,
  postgresMemory,
  rssKiB,
  sleep,
  type BenchPartResult,
  type ServerProcess,
} from './lib.ts';

const FIRST_START_TARGET_MS = 5_000;
const WARM_START_TARGET_MS = 1_500;
const IDLE_RSS_TARGET_MIB = 150;

/** First and warm start of `startEmbeddedPostgres`, in ms, each to a server that accepts connections. */
export async function measureEmbeddedStarts(): Promise<{ firstMs: number; warmMs: number }> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'seller-ops-bench-pg-'));
  try {
    let started = performance.now();
    const first = await startEmbeddedPostgres({ dataDir });
    const firstMs = performance.now() - started;
    if (!first.initialised) throw new Error(`${dataDir} was expected to be new`);
    await first.stop();

    started = performance.now();
    const warm = await startEmbeddedPostgres({ dataDir });
    const warmMs = performance.now() - started;
    await warm.stop();
    return { firstMs, warmMs };
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}

/** Idle memory of a running service: the Node process's RSS and its PostgreSQL's PSS, in KiB. */
export interface IdleMemory {
  nodeRssKiB: number;
  postgresPssKiB: number;
  postgresProcesses: number;
}

/** Waits `settleMs` without sending requests, then reads the service's memory. */
export async function measureIdleMemory(
  service: ServerProcess,
  dataDir: string,
  settleMs: number,
): Promise<IdleMemory> {
  await sleep(settleMs);
  const pid = service.child.pid;
  if (pid === undefined) throw new Error('the service process has no pid');
  const postgres = postgresMemory(dataDir);
  return { nodeRssKiB: rssKiB(pid), postgresPssKiB: postgres.pssKiB, postgresProcesses: postgres.processes };
}

const mib = (kib: number) => kib / 1024;

/** Rows and target checks of the start-up and memory figures. */
export function startupResult(figures: {
  embedded: { firstMs: number; warmMs: number };
  service: { firstReadyMs: number; warmReadyMs: number };
  idleEarly: IdleMemory;
  idle: IdleMemory;
  afterLoad: IdleMemory | undefined;
  earlySeconds: number;
  settleSeconds: number;
}): BenchPartResult {
  const { embedded, service, idleEarly, idle, afterLoad } = figures;
  const idleMiB = mib(idle.nodeRssKiB);
  const memoryDetail = (memory: IdleMemory) =>
    `PostgreSQL separately: ${formatNumber(mib(memory.postgresPssKiB), 1)} MiB PSS in ${memory.postgresProcesses} processes`;
  return {
    title: 'Start-up and memory',
    rows: [
      {
        name: 'embedded PostgreSQL, first start (initdb + start + create database)',
        value: formatMs(embedded.firstMs),
      },
      { name: 'embedded PostgreSQL, warm start (same data directory)', value: formatMs(embedded.warmMs) },
      {
        name: 'service first start to /ready (spawn, initdb, migrations, demo account)',
        value: formatMs(service.firstReadyMs),
      },
      { name: 'service warm start to /ready (same DATA_DIR)', value: formatMs(service.warmReadyMs) },
      {
        name: `service RSS, Node process, ${figures.earlySeconds} s after a warm start (before the start-up collection, P200)`,
        value: `${formatNumber(mib(idleEarly.nodeRssKiB), 1)} MiB`,
        detail: memoryDetail(idleEarly),
      },
      {
        name: `service idle RSS, Node process, ${figures.settleSeconds} s after a warm start`,
        value: `${formatNumber(idleMiB, 1)} MiB`,
        detail: memoryDetail(idle),
      },
      ...(afterLoad
        ? [
            {
              name: `service idle RSS, Node process, ${figures.settleSeconds} s after the load runs`,
              value: `${formatNumber(mib(afterLoad.nodeRssKiB), 1)} MiB`,
              detail: memoryDetail(afterLoad),
            },
          ]
        : []),
    ],
    targets: [
      check('embedded first start < 5 s', embedded.firstMs, FIRST_START_TARGET_MS, formatMs),
      check('embedded warm start < 1.5 s', embedded.warmMs, WARM_START_TARGET_MS, formatMs),
      check('idle RSS < 150 MiB', idleMiB, IDLE_RSS_TARGET_MIB, (value) => `${formatNumber(value, 1)} MiB`),
    ],
  };
}
