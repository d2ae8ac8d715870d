/**
 * `npm run bench`: one run of every benchmark on this machine, printed and recorded in docs/performance.md.
 *
 *   npm run bench                 full run (≈ 5 minutes)
 *   npm run bench -- --no-docs    print only, leave docs/performance.md alone
 *   BENCH_LOAD_SECONDS=3 npm run bench -- --no-docs   a quicker, noisier run
 *   npm run bench -- --only=inbound,catalog   only the named parts, printed (docs/performance.md untouched);
 *                                 `startup` names the start-up and idle-memory part, `--list` prints the names
 *
 * The service runs as users run it: `bin/seller-ops.js serve` in a child process on the embedded PostgreSQL
 * (the default) in a fresh temporary DATA_DIR, request logs off. autocannon runs in this process, so the
 * load generator never shares the service's event loop; the ceiling server is a child process as well.
 * An optional `bench/webhooks.ts` exporting `benchWebhooks(context)` is run when present.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { runningEmbeddedUrl } from '../src/db/embedded-postgres.ts';
import { benchCampaignStatistics } from './campaign-statistics.ts';
import { benchCampaignExport } from './campaign-export.ts';
import { benchCampaigns } from './campaigns.ts';
import { benchCatalog } from './catalog.ts';
import { benchCitus } from './citus.ts';
import { benchConditional } from './conditional.ts';
import { benchGrowth } from './growth.ts';
import { benchIdempotency } from './idempotency.ts';
import { benchInbound } from './inbound.ts';
import { benchLimits } from './limits.ts';
import { benchReadGrowth } from './read-growth.ts';
import { benchReceipts } from './receipts.ts';
import { benchSingleGets } from './single-gets.ts';
import { benchSlowClients } from './slow-clients.ts';
import {
  liveServers,
  startService,
  type BenchContext,
  type BenchPartResult,
  type ServerProcess,
} from './lib.ts';
import { renderMarkdown, renderText, writeDocs, type RunInfo } from './report.ts';
import { measureEmbeddedStarts, measureIdleMemory, startupResult } from './startup.ts';

/** Memory is read this long after the last request: V8's memory reducer shrinks an idle heap after ≈ 25 s. */
const SETTLE_SECONDS = 30;
/** An early reading, before the start-up garbage collection (5 s after ready, P200) and the memory reducer. */
const EARLY_SECONDS = 3;
/** The optional webhook part gets this long before it is reported as unfinished. */
const WEBHOOKS_TIME_LIMIT_SECONDS = 180;
const loadSeconds = Number(process.env.BENCH_LOAD_SECONDS ?? 8);
if (!(loadSeconds >= 1 && loadSeconds <= 60)) throw new Error('BENCH_LOAD_SECONDS must be 1..60');
const onlyArgument = process.argv.find((argument) => argument.startsWith('--only='));
/** Parts named by `--only=a,b`, or undefined for all of them; a partial run never rewrites the docs. */
const onlyParts = onlyArgument?.slice('--only='.length).split(',').filter(Boolean);
const writeDocsFile = !process.argv.includes('--no-docs') && onlyParts === undefined;

/** Temporary data directory of the run, removed at the end or on an interrupt. */
let runDataDir: string | undefined;

const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);

/** Signature of the optional webhook bench (bench/webhooks.ts). */
type BenchWebhooks = (context: BenchContext) => Promise<BenchPartResult>;

/** Runs the webhook part when bench/webhooks.ts exists; a failure or overrun is reported, not fatal. */
async function webhooksPart(context: BenchContext): Promise<BenchPartResult | undefined> {
  const module = new URL('./webhooks.ts', import.meta.url);
  if (!existsSync(module)) return undefined;
  log('webhooks…');
  let timer: NodeJS.Timeout | undefined;
  try {
    const { benchWebhooks } = (await import(module.href)) as { benchWebhooks: BenchWebhooks };
    return await Promise.race([
      benchWebhooks(context),
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`did not finish within ${WEBHOOKS_TIME_LIMIT_SECONDS} s`)),
          WEBHOOKS_TIME_LIMIT_SECONDS * 1000,
        );
      }),
    ]);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    log(`webhooks failed: ${message}`);
    return {
      title: 'Webhooks',
      rows: [{ name: 'webhook bench (bench/webhooks.ts)', value: 'FAILED', detail: message }],
      targets: [],
    };
  } finally {
    clearTimeout(timer);
  }
}

/** Every part after start-up, by the name `--only` selects it with, in the order a full run takes them. */
const benchParts: Record<
  string,
  (context: BenchContext, log: (line: string) => void) => Promise<BenchPartResult>
> = {
  inbound: benchInbound,
  'single-gets': benchSingleGets,
  catalog: benchCatalog,
  receipts: benchReceipts,
  idempotency: benchIdempotency,
  'campaign-statistics': benchCampaignStatistics,
  'campaign-export': benchCampaignExport,
  conditional: benchConditional,
  campaigns: benchCampaigns,
  limits: benchLimits,
  'slow-clients': benchSlowClients,
  growth: benchGrowth,
  'read-growth': benchReadGrowth,
  citus: benchCitus,
};
const partNames = ['startup', ...Object.keys(benchParts), 'webhooks'];
if (process.argv.includes('--list')) {
  process.stdout.write(`${partNames.join('\n')}\n`);
  process.exit(0);
}
const unknownParts = onlyParts?.filter((name) => !partNames.includes(name)) ?? [];
if (unknownParts.length > 0) throw new Error(`unknown bench parts: ${unknownParts.join(', ')} (see --list)`);

/** Whether a part runs: every part without `--only`, else only the named ones. */
function selected(name: string): boolean {
  return onlyParts === undefined || onlyParts.includes(name);
}

/** Stops every server process the bench started (on an interrupt). */
async function stopAll(): Promise<void> {
  await Promise.all([...liveServers].map((server) => server.stop(10_000)));
}

async function main(): Promise<void> {
  const runStarted = performance.now();
  const measureStartup = selected('startup');
  if (measureStartup) log('embedded PostgreSQL: first and warm start…');
  const embedded = measureStartup ? await measureEmbeddedStarts() : undefined;

  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'seller-ops-bench-'));
  runDataDir = dataDir;
  let service: ServerProcess | undefined;
  try {
    log(`service: first start in ${dataDir}…`);
    const first = await startService(dataDir);
    await first.service.stop();
    log('service: warm start…');
    const warm = await startService(dataDir);
    service = warm.service;
    if (measureStartup) log(`service: idle, memory after ${EARLY_SECONDS} s and ${SETTLE_SECONDS} s…`);
    const idleEarly = measureStartup
      ? await measureIdleMemory(service, dataDir, EARLY_SECONDS * 1000)
      : undefined;
    const idle = measureStartup
      ? await measureIdleMemory(service, dataDir, (SETTLE_SECONDS - EARLY_SECONDS) * 1000)
      : undefined;

    const credentials = JSON.parse(await readFile(path.join(dataDir, 'demo-credentials.json'), 'utf8')) as {
      clientId: number;
      organizationId: number;
      readToken: string;
      writeToken: string;
    };
    const databaseUrl = await runningEmbeddedUrl(dataDir);
    if (!databaseUrl) throw new Error('cannot find the database of the running service');
    const servicePid = service.child.pid;
    if (servicePid === undefined) throw new Error('the service process has no pid');
    const context: BenchContext = {
      serviceUrl: service.url,
      databaseUrl,
      loadSeconds,
      servicePid,
      dataDir,
      ...credentials,
    };

    const parts: BenchPartResult[] = [];
    for (const [name, run] of Object.entries(benchParts))
      if (selected(name)) parts.push(await run(context, log));
    const webhooks = selected('webhooks') ? await webhooksPart(context) : undefined;
    if (webhooks) parts.push(webhooks);

    if (embedded && idleEarly && idle) {
      log(`service: ${SETTLE_SECONDS} s idle after the load, then memory…`);
      const afterLoad = await measureIdleMemory(service, dataDir, SETTLE_SECONDS * 1000);
      parts.unshift(
        startupResult({
          embedded,
          service: { firstReadyMs: first.readyMs, warmReadyMs: warm.readyMs },
          idleEarly,
          idle,
          afterLoad,
          earlySeconds: EARLY_SECONDS,
          settleSeconds: SETTLE_SECONDS,
        }),
      );
    }

    const cpus = os.cpus();
    const info: RunInfo = {
      date: new Date().toISOString().slice(0, 16).replace('T', ' ') + ' UTC',
      cpus: os.availableParallelism(),
      cpuModel: cpus[0]?.model.trim() ?? 'unknown CPU',
      memoryGiB: Math.round(os.totalmem() / 2 ** 30),
      node: process.versions.node,
      database: 'embedded PostgreSQL (the default), fresh temporary DATA_DIR',
      loadSeconds,
      durationSeconds: Math.round((performance.now() - runStarted) / 1000),
    };
    process.stdout.write(`\n${renderText(info, parts)}\n`);
    if (writeDocsFile) log(`figures written to ${await writeDocs(renderMarkdown(info, parts))}`);
  } catch (error) {
    // say what happened to the service: a failure in the middle of a run is most often its exit
    const child = service?.child;
    if (child && (child.exitCode !== null || child.signalCode !== null))
      log(
        `the service exited (${child.exitCode ?? child.signalCode}); its last output:\n${service?.output()}`,
      );
    if (!existsSync(path.join(dataDir, 'pg', 'PG_VERSION')))
      log(`the data directory ${dataDir} was removed during the run`);
    throw error;
  } finally {
    await service?.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(signal, () => {
    log(`${signal}: stopping the processes the bench started…`);
    void stopAll()
      .then(() => (runDataDir ? rm(runDataDir, { recursive: true, force: true }) : undefined))
      .finally(() => process.exit(130));
  });

await main();
// a part that overran its time limit may still hold sockets or timers open
process.exit();
