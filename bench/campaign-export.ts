/**
 * Campaign statistics export figures (P115): `POST /api/campaign/stats/xlsx` of 100,000 rows
 * (500 campaigns × 200 days, two products a day summed into each row) until the task is FINISHED, the download
 * of its file, and the service's peak RSS growth while the task ran (sampled every 50 ms from /proc). Targets:
 * under 15 s and under 100 MiB.
 *
 * Data: the demo client's organization, seeded with `INSERT … SELECT generate_series` (then VACUUM ANALYZE).
 */
import { sql } from 'kysely';
import { createDatabase } from '../src/db/database.ts';
import {
  callApi,
  check,
  formatMs,
  formatNumber,
  rssKiB,
  sleep,
  type BenchContext,
  type BenchPartResult,
} from './lib.ts';

const CAMPAIGNS = 500;
/** Days of statistics of each seeded campaign. */
export const DAYS = 200;
/** Products of each campaign day (summed into one row of the export). */
export const PRODUCTS_PER_DAY = 2;
const ROWS = CAMPAIGNS * DAYS;
const TIME_TARGET_MS = 15_000;
const RSS_TARGET_MIB = 100;
const FIRST_DAY = '2025-06-01';

/** Which campaigns a seed writes: `campaigns` named `<namePrefix> <i>`, external ids from `externalIdBase + 1`. */
export interface CampaignSeed {
  campaigns: number;
  namePrefix: string;
  externalIdBase: number;
}

/**
 * Seeds campaigns of the demo organization with `DAYS` days of `PRODUCTS_PER_DAY` products each
 * (`campaigns × DAYS` statistics rows); returns the time taken in ms.
 */
export async function seedCampaignDays(context: BenchContext, seedOf: CampaignSeed): Promise<number> {
  const { campaigns, namePrefix, externalIdBase } = seedOf;
  const database = createDatabase(context.databaseUrl, 1);
  const { db } = database;
  const { clientId, organizationId } = context;
  const started = performance.now();
  try {
    await sql`
      insert into campaign (client_id, organization_id, service, external_id, name, type, status,
                            external_product_ids)
      select ${clientId}, ${organizationId}, 'SERVICE_01', ${externalIdBase}::bigint + i, ${namePrefix} || ' ' || i,
             (array['AUTO','IN_SEARCH','IN_CARD','IN_CATALOG'])[1 + i % 4],
             (array['ACTIVE','PAUSED','FINISHED'])[1 + i % 3],
             array[${externalIdBase}::bigint + 1000000 + i * 2, ${externalIdBase}::bigint + 1000001 + i * 2]
      from generate_series(1, ${campaigns}::int) as i`.execute(db);
    await sql`
      insert into campaign_statistic_day (campaign_id, date, external_product_id, client_id, organization_id,
                                          views, clicks, expenses, quantity_add_cart, quantity_orders,
                                          quantity_product_orders, orders_amount)
      select c.id, ${FIRST_DAY}::date + d, c.external_product_ids[p], c.client_id, c.organization_id,
             1000 + (c.id * 7 + d * 13 + p) % 900, (c.id + d + p) % 60, ((c.id * 31 + d * 17 + p) % 50000) / 100.0,
             (c.id + d) % 12, (c.id + d * 3 + p) % 7, (c.id + d * 3 + p) % 9,
             ((c.id * 13 + d * 29 + p) % 900000) / 100.0
      from campaign as c
      cross join generate_series(0, ${DAYS - 1}::int) as d
      cross join generate_series(1, ${PRODUCTS_PER_DAY}::int) as p
      where c.client_id = ${clientId}
        and c.external_id between ${externalIdBase + 1} and ${externalIdBase + campaigns}`.execute(db);
    await sql`vacuum analyze campaign, campaign_statistic_day`.execute(db);
    return performance.now() - started;
  } finally {
    await database.close();
  }
}

interface Task {
  id: number;
  status: string;
  url?: string | null;
  processedQuantity?: number;
  message?: string | null;
}

/** One export's figures: time to FINISHED, the service's RSS before and at its peak (KiB), the download. */
export interface ExportFigures {
  exportMs: number;
  rows: number;
  baselineKiB: number;
  peakKiB: number;
  downloadMs: number;
  bytes: number;
}

/**
 * Exports the demo organization's campaigns whose name contains `query` (from `FIRST_DAY`) to XLSX, polls the task
 * until FINISHED while sampling the service's RSS every 50 ms, and downloads the file.
 * @throws Error when the task ends otherwise, writes other than `expectedRows` rows or takes over 5 minutes
 */
export async function exportStatistics(
  context: BenchContext,
  query: string,
  expectedRows: number,
): Promise<ExportFigures> {
  const baselineKiB = rssKiB(context.servicePid);
  let peakKiB = baselineKiB;
  const started = performance.now();
  let task = await callApi<Task>(context.serviceUrl, context.writeToken, 'POST', '/api/campaign/stats/xlsx', {
    service: 'SERVICE_01',
    organizationId: context.organizationId,
    filter: { dateFrom: FIRST_DAY, query },
  });
  for (let polls = 0; !['FINISHED', 'ERROR', 'INTERRUPTED'].includes(task.status); polls += 1) {
    if (polls % 4 === 0)
      task = await callApi<Task>(
        context.serviceUrl,
        context.readToken,
        'GET',
        `/api/task/getTask?id=${task.id}`,
      );
    peakKiB = Math.max(peakKiB, rssKiB(context.servicePid));
    await sleep(50);
    if (performance.now() - started > 300_000) throw new Error('the export did not finish within 5 minutes');
  }
  const exportMs = performance.now() - started;
  if (task.status !== 'FINISHED' || !task.url)
    throw new Error(`export ended ${task.status}: ${task.message}`);
  if (task.processedQuantity !== expectedRows)
    throw new Error(`the export wrote ${task.processedQuantity} rows, not ${expectedRows}`);

  const downloadStarted = performance.now();
  const response = await fetch(context.serviceUrl + task.url, {
    headers: { authorization: context.readToken },
  });
  const bytes = (await response.arrayBuffer()).byteLength;
  return {
    exportMs,
    rows: expectedRows,
    baselineKiB,
    peakKiB,
    downloadMs: performance.now() - downloadStarted,
    bytes,
  };
}

/** Runs the export and downloads its file; the figures of the part. */
export async function benchCampaignExport(
  context: BenchContext,
  log: (line: string) => void,
): Promise<BenchPartResult> {
  log(`campaign export: seeding ${formatNumber(ROWS)} campaign days…`);
  const seedMs = await seedCampaignDays(context, {
    campaigns: CAMPAIGNS,
    namePrefix: 'Export campaign',
    externalIdBase: 7_000_000,
  });
  log('campaign export: exporting…');
  // only this part's campaigns: the statistics part seeded the same organization
  const { exportMs, baselineKiB, peakKiB, downloadMs, bytes } = await exportStatistics(
    context,
    'Export campaign',
    ROWS,
  );
  const growthMiB = (peakKiB - baselineKiB) / 1024;
  const mib = (value: number) => `${formatNumber(value, 1)} MiB`;
  const seconds = (ms: number) => `${formatNumber(ms / 1000, 1)} s`;

  return {
    title: 'Campaign statistics export (XLSX)',
    rows: [
      {
        name: `seed: ${formatNumber(CAMPAIGNS)} campaigns × ${DAYS} days × ${PRODUCTS_PER_DAY} products`,
        value: seconds(seedMs),
      },
      {
        name: `POST /api/campaign/stats/xlsx, ${formatNumber(ROWS)} rows, until FINISHED`,
        value: seconds(exportMs),
        detail: `${formatNumber((ROWS / exportMs) * 1000)} rows/s`,
      },
      {
        name: 'service RSS growth while exporting (peak − before)',
        value: mib(growthMiB),
        detail: `before ${mib(baselineKiB / 1024)}, peak ${mib(peakKiB / 1024)}`,
      },
      { name: 'download of the file', value: formatMs(downloadMs), detail: `${mib(bytes / 2 ** 20)}` },
    ],
    targets: [
      check(`export of ${formatNumber(ROWS)} rows < 15 s`, exportMs, TIME_TARGET_MS, seconds),
      check(`service RSS growth < ${RSS_TARGET_MIB} MiB`, growthMiB, RSS_TARGET_MIB, mib),
    ],
  };
}
