/**
 * Campaign statistics figures (P112): `GET /api/campaign/getStatCampaigns` over 1,000 campaigns
 * × 365 days at 10 connections, first page and with `count=true`, against the target p99 < 50 ms.
 *
 * Data: 1,000 Market1 campaigns of the demo organization with one product row per day for a year and an
 * unattributed (product 0) row every 7th day, seeded with `INSERT … SELECT generate_series`; the running totals
 * are then built by `refreshCampaignTotals`, the function the import calls (its time is reported too), and the
 * tables analyzed. Each request asks for a different day range, so no two consecutive requests are alike.
 */
import { sql } from 'kysely';
import { createDatabase } from '../src/db/database.ts';
import { refreshCampaignTotals } from '../src/modules/campaign/statistic-totals.ts';
import {
  callApi,
  check,
  cpuMs,
  formatMs,
  formatNumber,
  postgresPids,
  runLoad,
  type BenchContext,
  type BenchPartResult,
  type BenchRow,
  type TargetCheck,
} from './lib.ts';

const CAMPAIGNS = 1_000;
const DAYS = 365;
const FIRST_DAY = '2025-01-01';
const CONNECTIONS = 10;
const WARMUP_SECONDS = 1;
const TARGET_P99_MS = 50;

/** Seeds campaigns and daily rows, then the running totals; returns the seconds of each step. */
async function seed(context: BenchContext): Promise<{ rows: number; seedMs: number; totalsMs: number }> {
  const database = createDatabase(context.databaseUrl, 1);
  const { db } = database;
  const { clientId, organizationId } = context;
  try {
    const started = performance.now();
    const campaigns = await sql<{ id: number }>`
      insert into campaign (client_id, organization_id, service, external_id, name, type, type_code, status,
                            external_product_ids, category_name, create_date, start_date)
      select ${clientId}, ${organizationId}, 'SERVICE_01', 9000000 + i, 'Bench campaign ' || i,
             (array['AUTO', 'IN_SEARCH', 'IN_CARD'])[1 + i % 3], 8, (array['ACTIVE', 'PAUSED'])[1 + i % 2],
             array[5000000 + i]::bigint[], 'Category ' || (i % 20), ${FIRST_DAY}::timestamptz, ${FIRST_DAY}::timestamptz
      from generate_series(1, ${CAMPAIGNS}::int) as i
      returning id`.execute(db);
    const ids = campaigns.rows.map((row) => row.id);
    const inserted = await sql`
      insert into campaign_statistic_day (campaign_id, date, external_product_id, client_id, organization_id,
        views, clicks, expenses, quantity_add_cart, quantity_orders, quantity_product_orders, orders_amount)
      select c.id, ${FIRST_DAY}::date + d, case when p = 0 then 0 else 5000000 + c.id end, ${clientId},
             ${organizationId}, 100 + (c.id * 31 + d * 17) % 900, (c.id + d * 7) % 40,
             ((c.id * 13 + d * 11) % 5000) / 10.0, (c.id + d) % 9, (c.id + d) % 5, (c.id + d) % 7,
             ((c.id * 7 + d * 3) % 20000) / 4.0
      from unnest(${ids}::bigint[]) as c(id)
      cross join generate_series(0, ${DAYS - 1}::int) as d
      cross join generate_series(0, 1) as p
      where p = 1 or d % 7 = 0`.execute(db);
    const seedMs = performance.now() - started;
    const totalsStarted = performance.now();
    await db.transaction().execute((trx) => refreshCampaignTotals(trx, clientId, ids));
    const totalsMs = performance.now() - totalsStarted;
    await sql`vacuum analyze campaign, campaign_statistic_day, campaign_statistic_total, campaign_statistic_days`.execute(
      db,
    );
    // write the seeded pages out now, not during the first measured run
    await sql`checkpoint`.execute(db);
    return { rows: Number(inserted.numAffectedRows ?? 0), seedMs, totalsMs };
  } finally {
    await database.close();
  }
}

/** The `index`-th day range: 30 days sliding over the year. */
function range(index: number): string {
  const from = new Date(`${FIRST_DAY}T00:00:00Z`);
  from.setUTCDate(from.getUTCDate() + (index % (DAYS - 30)));
  const to = new Date(from);
  to.setUTCDate(to.getUTCDate() + 29);
  return `dateFrom=${from.toISOString().slice(0, 10)}&dateTo=${to.toISOString().slice(0, 10)}`;
}

interface Scenario {
  name: string;
  query: string;
}

/** Runs the statistics part on the running service. */
export async function benchCampaignStatistics(
  context: BenchContext,
  log: (line: string) => void,
): Promise<BenchPartResult> {
  log(`campaign statistics: seeding ${formatNumber(CAMPAIGNS)} campaigns × ${DAYS} days…`);
  const seeded = await seed(context);
  const base = `/api/campaign/getStatCampaigns?service=SERVICE_01&organizationId=${context.organizationId}`;
  const scenarios: Scenario[] = [
    { name: 'first page (100 rows, default order)', query: '' },
    { name: 'first page, count=true', query: '&count=true' },
    { name: 'first page by expenses, count=true', query: '&count=true&sortBy=EXPENSES' },
    { name: 'product filter (daily rows)', query: '&productExternalId=5000500' },
  ];
  const first = await callApi<{ rows: unknown[]; total?: number }>(
    context.serviceUrl,
    context.readToken,
    'GET',
    `${base}&${range(0)}&count=true`,
  );
  if (first.rows.length !== 100 || first.total === undefined || first.total < CAMPAIGNS)
    throw new Error(`unexpected first page: ${first.rows.length} rows, total ${first.total}`);
  const rows: BenchRow[] = [
    {
      name: `seed: ${formatNumber(CAMPAIGNS)} campaigns, ${formatNumber(seeded.rows)} daily rows`,
      value: formatMs(seeded.seedMs),
      detail: `running totals (refreshCampaignTotals, all campaigns) ${formatMs(seeded.totalsMs)}`,
    },
  ];
  const targets: TargetCheck[] = [];
  for (const scenario of scenarios) {
    log(`campaign statistics: ${scenario.name}…`);
    const load = {
      url: `${context.serviceUrl}${base}&${range(0)}${scenario.query}`,
      headers: { authorization: context.readToken },
      pathFor: (index: number) => `${base}&${range(index)}${scenario.query}`,
      connections: CONNECTIONS,
    };
    await runLoad({ ...load, seconds: WARMUP_SECONDS });
    const pids = postgresPids(context.dataDir);
    const before = { node: cpuMs([context.servicePid]), postgres: cpuMs(pids) };
    const measured = await runLoad({ ...load, seconds: context.loadSeconds });
    const nodeCpu = (cpuMs([context.servicePid]) - before.node) / measured.requests;
    const postgresCpu = (cpuMs(pids) - before.postgres) / measured.requests;
    if (measured.failures > 0) throw new Error(`${scenario.name}: ${measured.failures} failed requests`);
    rows.push({
      name: `getStatCampaigns ${scenario.name}, 30-day ranges, ${CONNECTIONS} connections`,
      value: `p99 ${formatMs(measured.p99)}`,
      detail:
        `p50 ${formatMs(measured.p50)}, ${formatNumber(measured.rps)} req/s; CPU per request: ` +
        `Node ${formatMs(nodeCpu)}, PostgreSQL ${formatMs(postgresCpu)}`,
    });
    if (scenario.query === '' || scenario.query === '&count=true')
      targets.push(
        check(
          `getStatCampaigns ${scenario.name}: p99 < ${TARGET_P99_MS} ms at ${CONNECTIONS} connections`,
          measured.p99,
          TARGET_P99_MS,
          formatMs,
        ),
      );
  }
  return { title: 'Campaign statistics', rows, targets };
}
