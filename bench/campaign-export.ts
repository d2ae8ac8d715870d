/**
 * Campaign statistics export figures (issue 9 point 5, P115): `POST /api/campaign/stats/xlsx` of 100,000 rows
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
const DAYS = 200;
const PRODUCTS_PER_DAY = 2;
const ROWS = CAMPAIGNS * DAYS;
const TIME_TARGET_MS = 15_000;
const RSS_TARGET_MIB = 100;
const FIRST_DAY = '2025-06-01';

/** Seeds `CAMPAIGNS` campaigns of the demo organization with `DAYS` days of `PRODUCTS_PER_DAY` products each. */
async function seed(context: BenchContext): Promise<number> {
  const database = createDatabase(context.databaseUrl, 1);
  const { db } = database;
  const { clientId, organizationId } = context;
  const started = performance.now();
  try {
    await sql`
      insert into campaign (client_id, organization_id, service, external_id, name, type, status,
                            external_product_ids)
      select ${clientId}, ${organizationId}, 'SERVICE_01', 7000000 + i, 'Export campaign ' || i,
             (array['AUTO','IN_SEARCH','IN_CARD','IN_CATALOG'])[1 + i % 4],
             (array['ACTIVE','PAUSED','FINISHED'])[1 + i % 3],
             array[8000000 + i * 2, 8000001 + i * 2]::bigint[]
      from generate_series(1, ${CAMPAIGNS}::int) as i`.execute(db);
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
      where c.client_id = ${clientId} and c.external_id between 7000001 and ${7_000_000 + CAMPAIGNS}`.execute(
      db,
    );
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

/** Runs the export and downloads its file; the figures of the part. */
export async function benchCampaignExport(
  context: BenchContext,
  log: (line: string) => void,
): Promise<BenchPartResult> {
  log(`campaign export: seeding ${formatNumber(ROWS)} campaign days…`);
  const seedMs = await seed(context);
  const baselineKiB = rssKiB(context.servicePid);
  let peakKiB = baselineKiB;

  log('campaign export: exporting…');
  const started = performance.now();
  const created = await callApi<Task>(
    context.serviceUrl,
    context.writeToken,
    'POST',
    '/api/campaign/stats/xlsx',
    {
      service: 'SERVICE_01',
      organizationId: context.organizationId,
      // only this part's campaigns: the statistics part seeded the same organization
      filter: { dateFrom: FIRST_DAY, query: 'Export campaign' },
    },
  );
  let task = created;
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
  if (task.processedQuantity !== ROWS)
    throw new Error(`the export wrote ${task.processedQuantity} rows, not ${ROWS}`);

  const downloadStarted = performance.now();
  const response = await fetch(context.serviceUrl + task.url, {
    headers: { authorization: context.readToken },
  });
  const bytes = (await response.arrayBuffer()).byteLength;
  const downloadMs = performance.now() - downloadStarted;
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
        name: `POST /api/campaign/stats/xlsx, ${formatNumber(task.processedQuantity ?? 0)} rows, until FINISHED`,
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
