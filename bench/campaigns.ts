/**
 * Campaign figures (spec §4.6, P103): how fast the campaign import writes campaigns and statistics rows, against
 * the Market1 sandbox with its rate limits off (with them on, the marketplace's one statistics request per 20 s
 * decides, not us). The sandbox runs in the bench process; the demo organization's integration is pointed at it
 * (`base_url` in SQL; its key stays the demo's sealed one).
 *
 * Measured: the first import of the demo organization (every campaign with details, 30 days of statistics), then
 * a reload of 180 days (every counter), each from the request to FINISHED as `getTask` reports it (polled every
 * 50 ms). Rows are counted in the database afterwards, less those other parts seeded in the organization. CPU
 * time of the service process and of PostgreSQL is read from /proc before and after each.
 */
import { sql } from 'kysely';
import { createDatabase } from '../src/db/database.ts';
import { startMarket1Sandbox } from '../src/connectors/market1/sandbox.ts';
import type { TmsTask } from '../src/modules/task/schemas.ts';
import {
  callApi,
  cpuMs,
  formatMs,
  formatNumber,
  postgresPids,
  sleep,
  type BenchContext,
  type BenchPartResult,
  type BenchRow,
} from './lib.ts';

/** Days of the reload. */
const RELOAD_DAYS = 180;
/** A task that is not FINISHED after this long fails the part. */
const LIMIT_MS = 120_000;

const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);

/** Waits for the task to end; throws unless it is FINISHED. */
async function finished(context: BenchContext, id: number): Promise<TmsTask> {
  const deadline = performance.now() + LIMIT_MS;
  for (;;) {
    const task = await callApi<TmsTask>(
      context.serviceUrl,
      context.readToken,
      'GET',
      `/api/task/getTask?id=${id}`,
    );
    if (task.status === 'FINISHED') return task;
    if (['ERROR', 'INTERRUPTED'].includes(task.status) || performance.now() > deadline)
      throw new Error(`campaign task ${id} did not finish: ${JSON.stringify(task)}`);
    await sleep(50);
  }
}

/** Runs the campaign part of the bench against the service of `context`. */
export async function benchCampaigns(
  context: BenchContext,
  log: (line: string) => void,
): Promise<BenchPartResult> {
  const sandbox = await startMarket1Sandbox({ host: '127.0.0.1', port: 0, rateLimits: 'off' });
  const database = createDatabase(context.databaseUrl, 1);
  const { db } = database;
  const query = `organizationId=${context.organizationId}&service=SERVICE_01`;
  const postgres = postgresPids(context.dataDir);
  const count = async () => {
    const result = await sql<{ campaigns: number; rows: number }>`
      select (select count(*)::int from campaign where organization_id = ${context.organizationId}) as campaigns,
             (select count(*)::int from campaign_statistic_day where organization_id = ${context.organizationId}) as rows`.execute(
      db,
    );
    return result.rows[0] ?? { campaigns: 0, rows: 0 };
  };
  /** Runs a task from its request to FINISHED; returns its time and the CPU it cost. */
  const measure = async (pathAndQuery: string, type: string) => {
    const cpuBefore = { node: cpuMs([context.servicePid]), postgres: cpuMs(postgres) };
    const started = performance.now();
    const answer = await callApi<TmsTask | undefined>(
      context.serviceUrl,
      context.readToken,
      'GET',
      pathAndQuery,
    );
    const id =
      answer?.id ??
      (
        await callApi<{ rows: TmsTask[] }>(
          context.serviceUrl,
          context.readToken,
          'GET',
          `/api/task/findTask?type=${type}&organizationId=${context.organizationId}&limit=1`,
        )
      ).rows[0]?.id;
    if (id === undefined) throw new Error(`no ${type} task`);
    await finished(context, id);
    const ms = performance.now() - started;
    return {
      ms,
      cpu: `CPU: Node ${formatMs(cpuMs([context.servicePid]) - cpuBefore.node)}, PostgreSQL ${formatMs(cpuMs(postgres) - cpuBefore.postgres)}`,
    };
  };
  try {
    await sql`update prepared_integration set base_url = ${sandbox.url}
              where organization_id = ${context.organizationId} and service = 'SERVICE_01'`.execute(db);
    const rows: BenchRow[] = [];
    // other parts seeded campaigns of the same organization; the import leaves them alone
    const seeded = await count();

    log('campaigns: first import…');
    const imported = await measure(`/api/campaign/updateCampaigns?${query}`, 'CAMPAIGN_IMPORT_TASK');
    const afterImport = await count();
    afterImport.campaigns -= seeded.campaigns;
    afterImport.rows -= seeded.rows;
    rows.push({
      name: 'first import (campaigns with details, 30 days of statistics)',
      value: `${formatNumber(((afterImport.campaigns + afterImport.rows) / imported.ms) * 1000)} rows/s`,
      detail: `${formatNumber(afterImport.campaigns)} campaigns and ${formatNumber(afterImport.rows)} statistics rows in ${formatMs(imported.ms)}; ${imported.cpu}`,
    });

    log(`campaigns: reload of ${RELOAD_DAYS} days…`);
    const reloaded = await measure(
      `/api/campaign/reloadCampaignStats?${query}&dateFrom=${day(1 - RELOAD_DAYS)}&dateTo=${day(0)}`,
      'CAMPAIGN_STATS_RELOAD_TASK',
    );
    const afterReload = await count();
    afterReload.rows -= seeded.rows;
    rows.push({
      name: `reload of ${RELOAD_DAYS} days (every counter)`,
      value: `${formatNumber((afterReload.rows / reloaded.ms) * 1000)} rows/s`,
      detail: `${formatNumber(afterReload.rows)} statistics rows replaced in ${formatMs(reloaded.ms)}; ${reloaded.cpu}`,
    });
    return {
      title: 'Campaigns (the demo organization, Market1 sandbox without rate limits)',
      rows,
      targets: [],
    };
  } finally {
    await database.close();
    await sandbox.close();
  }
}
