/**
 * Regenerates `docs/images/campaign-stats.png`: the service on a throwaway database, a week of
 * the Market1 sandbox's statistics of a dozen campaigns stored as an import would store them, the export through
 * `POST /api/campaign/stats/xlsx` and the task's download, then LibreOffice headless renders the workbook to PDF,
 * and poppler's `pdftoppm` its first page to PNG. LibreOffice and poppler come from the operating system (no npm
 * package ships them): when missing, the script installs them with apt (Debian or Ubuntu, as root) and otherwise
 * stops naming them. It only redraws a picture of the docs: neither `npm test` nor CI runs it.
 *
 *   npm run render-workbook
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFile, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startMarket1Sandbox } from '../src/connectors/market1/sandbox.ts';
import { Market1Client } from '../src/connectors/market1/client.ts';
import type { SandboxServer } from '../src/connectors/sandboxes.ts';
import { loadConfig } from '../src/config.ts';
import { buildApp } from '../src/app.ts';
import { openRuntime, type Runtime } from '../src/runtime.ts';
import { createGroups, startGroupWorkers } from '../src/modules/index.ts';
import { MARKET1_SERVICE } from '../src/modules/campaign/market1-access.ts';
import { campaignRepository, statisticRepository } from '../src/modules/campaign/repository.ts';
import { createAccount } from '../tests/helpers/factories.ts';
import { openThrowawayDatabase, type ThrowawayDatabase } from './throwaway-database.ts';

const log = (line: string) => process.stderr.write(`[render-workbook] ${line}\n`);
const image = fileURLToPath(new URL('../docs/images/campaign-stats.png', import.meta.url));
const CAMPAIGNS = 12;
const DAYS = 7;

/** Runs a command, its output to stderr. */
const run = (command: string, args: string[]) => execFileSync(command, args, { stdio: ['ignore', 2, 2] });

/** Whether `command` is on PATH. */
function hasCommand(command: string): boolean {
  try {
    execFileSync('which', [command], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * Installs `packageName` with apt when `command` is missing.
 * @throws Error naming the package when the machine has no apt-get to install it with
 */
function ensureCommand(command: string, packageName: string): void {
  if (hasCommand(command)) return;
  if (!hasCommand('apt-get'))
    throw new Error(`${command} not found: install ${packageName} (or its equivalent) and run again`);
  log(`installing ${packageName} (apt-get update, apt-get install)…`);
  run('apt-get', ['update', '-qq']);
  run('apt-get', ['install', '-y', '--no-install-recommends', packageName]);
}

const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);

/** Stores a week of sandbox statistics of `CAMPAIGNS` campaigns for the account's organization, as the import does. */
async function storeSandboxStatistics(
  runtime: Runtime,
  sandbox: SandboxServer,
  owner: { clientId: number; organizationId: number },
): Promise<{ from: string; to: string }> {
  const client = new Market1Client();
  try {
    const market1 = client.forAccount({ apiKey: 'render-workbook', baseUrl: sandbox.url });
    const campaigns = (await market1.listCampaigns())
      .filter((campaign) => ['ACTIVE', 'PAUSED', 'FINISHED'].includes(campaign.status))
      .slice(0, CAMPAIGNS);
    const from = day(-DAYS);
    const to = day(-1);
    const statistics = await market1.getDailyStatistics({
      externalIds: campaigns.map((campaign) => campaign.externalId),
      dateFrom: from,
      dateTo: to,
    });
    await runtime.database.db.transaction().execute(async (trx) => {
      const stored = await campaignRepository.upsert(trx, { ...owner, service: MARKET1_SERVICE }, campaigns);
      const ids = stored.map((row) => row.id);
      const campaignIdOf = new Map(stored.map((row) => [row.external_id, row.id]));
      await statisticRepository.replaceRange(trx, { ...owner, campaignIdOf }, ids, from, to, statistics);
      await campaignRepository.markStatisticsImported(trx, owner.clientId, ids, new Date());
    });
    log(`stored ${campaigns.length} campaigns, ${statistics.length} statistics rows, ${from}..${to}`);
    return { from, to };
  } finally {
    client.close();
  }
}

let database: ThrowawayDatabase | undefined;
let runtime: Runtime | undefined;
let sandbox: SandboxServer | undefined;
try {
  ensureCommand('soffice', 'libreoffice-calc-nogui');
  ensureCommand('pdftoppm', 'poppler-utils');
  database = await openThrowawayDatabase(log);
  sandbox = await startMarket1Sandbox({ host: '127.0.0.1', port: 0, rateLimits: 'off' });
  const config = loadConfig({
    DATABASE_URL: database.databaseUrl,
    DATA_DIR: database.dataDir,
    SECRET_KEY: randomBytes(32).toString('hex'),
    LOG_LEVEL: 'silent',
    SEED_DEMO: 'false',
    MARKET1_API_URL: sandbox.url,
    TASK_PROGRESS_WRITE_MS: '50',
  });
  runtime = await openRuntime(config, database.databaseUrl, {});
  const groups = createGroups(runtime);
  const app = await buildApp(runtime, groups, { logger: false });
  await app.ready();
  await startGroupWorkers(runtime, groups);
  const account = await createAccount(runtime);
  const days = await storeSandboxStatistics(runtime, sandbox, account);

  const created = await app.inject({
    method: 'POST',
    url: '/api/campaign/stats/xlsx',
    headers: { authorization: account.writeToken },
    payload: {
      service: 'SERVICE_01',
      organizationId: account.organizationId,
      filter: { dateFrom: days.from, dateTo: days.to },
    },
  });
  if (created.statusCode !== 200) throw new Error(`export not started: ${created.body}`);
  const taskId = created.json<{ id: number }>().id;
  let task: { status: string; url?: string | null; message?: string | null };
  do {
    await new Promise((resolve) => setTimeout(resolve, 100));
    task = (
      await app.inject({
        method: 'GET',
        url: `/api/task/getTask?id=${taskId}`,
        headers: { authorization: account.readToken },
      })
    ).json();
  } while (!['FINISHED', 'ERROR', 'INTERRUPTED'].includes(task.status));
  if (task.status !== 'FINISHED' || !task.url)
    throw new Error(`export ended ${task.status}: ${task.message}`);
  const file = await app.inject({
    method: 'GET',
    url: task.url,
    headers: { authorization: account.readToken },
  });
  const workDir = path.join(database.dataDir, 'render');
  await mkdir(workDir, { recursive: true });
  const xlsx = path.join(workDir, 'campaign-stats.xlsx');
  await writeFile(xlsx, file.rawPayload);
  log(`exported ${file.rawPayload.length} bytes; rendering with LibreOffice…`);

  run('soffice', ['--headless', '--convert-to', 'pdf', '--outdir', workDir, xlsx]);
  const page = path.join(workDir, 'page');
  const pdf = path.join(workDir, 'campaign-stats.pdf');
  run('pdftoppm', ['-png', '-r', '110', '-f', '1', '-l', '1', '-singlefile', pdf, page]);
  await mkdir(path.dirname(image), { recursive: true });
  await copyFile(`${page}.png`, image);
  log(`written ${image}`);
} finally {
  if (runtime) await runtime.close();
  await sandbox?.close();
  await database?.close();
}
