/**
 * An advertising report from Market1 campaigns, as spec §4.6 and decision D10 describe it (Node ≥ 20, the
 * typed client):
 *
 *   1. import the organization's campaigns and their recent statistics (`GET /api/campaign/updateCampaigns`,
 *      a background task polled with `GET /api/task/getTask`);
 *   2. print the top five campaigns by expenses over the last 30 days with CTR and DRR
 *      (`GET /api/campaign/getStatCampaigns?sortBy=EXPENSES&ascending=false&limit=5`);
 *   3. start the XLSX export of the same period (`POST /api/campaign/stats/xlsx`), show its progress while polling,
 *      and save the file it produced (downloaded from the task's `url` with the same token).
 *
 * Environment: SELLER_OPS_URL (default http://127.0.0.1:8080), SELLER_OPS_TOKEN and SELLER_OPS_ORGANIZATION_ID;
 * without a token, the demo credentials of a local service are read from `${DATA_DIR:-./data}/demo-credentials.json`
 * (the demo organization of `npm start` has a Market1 integration with the sandbox, so this works out of the
 * box). REPORT_FILE names the saved workbook (default ./campaign-stats.xlsx).
 *
 * Run:  npx tsx examples/campaign-report.ts      (exit status 0 when the file was saved)
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { paths } from '@seller-ops/client';
import { connect } from './lib/client.ts';

type Task = paths['/api/task/getTask']['get']['responses'][200]['content']['application/json'];

const { baseUrl, token, organizationId, api, call, fail } = await connect('campaign report');
const reportFile = path.resolve(process.env.REPORT_FILE ?? 'campaign-stats.xlsx');
const service = 'SERVICE_01' as const;
const money = (value: number) =>
  value.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
const percent = (value: number) => `${value.toFixed(2)} %`;

console.log(`Campaign report at ${baseUrl}`);

// 1. The import runs as a task: poll it until it ends.
const imported = await runTask(
  'import',
  await call(api.GET('/api/campaign/updateCampaigns', { params: { query: { organizationId, service } } })),
);
const stored = await call(
  api.GET('/api/campaign/getCampaigns', {
    params: { query: { organizationId, service, count: true, limit: 1 } },
  }),
);
console.log(
  `1. imported ${stored.total} campaigns (task #${imported.id}: ${imported.processedQuantity} campaigns and statistics rows)`,
);

// 2. The five campaigns that spent the most over the last 30 days (whole UTC days).
const dateTo = new Date();
const dateFrom = new Date(dateTo.getTime() - 29 * 86_400_000);
const period = { dateFrom: `${day(dateFrom)}T00:00:00Z`, dateTo: `${day(dateTo)}T23:59:59Z` };
const top = await call(
  api.GET('/api/campaign/getStatCampaigns', {
    params: { query: { organizationId, service, ...period, sortBy: 'EXPENSES', ascending: false, limit: 5 } },
  }),
);
console.log(`2. top five by expenses, ${day(dateFrom)} … ${day(dateTo)}:`);
console.log(
  `   ${'campaign'.padEnd(40)} ${'expenses ₽'.padStart(12)} ${'CTR'.padStart(9)} ${'DRR'.padStart(9)}`,
);
for (const row of top.rows)
  console.log(
    `   ${String(row.campaignName ?? row.externalId)
      .slice(0, 40)
      .padEnd(40)} ${money(row.expenses ?? 0).padStart(12)} ` +
      `${percent(row.ratioClicksViews ?? 0).padStart(9)} ${percent(row.drr ?? 0).padStart(9)}`,
  );

// 3. The export of the same period: a task whose file is downloaded with the same token.
const exported = await runTask(
  'export',
  await call(api.POST('/api/campaign/stats/xlsx', { body: { service, organizationId, filter: period } })),
);
// The file is binary: fetched as it is, with the same token.
const download = await fetch(new URL(exported.url ?? fail('the export task has no file'), baseUrl), {
  headers: { authorization: token },
});
if (!download.ok) fail(`GET ${exported.url} → ${download.status} ${await download.text()}`);
const bytes = Buffer.from(await download.arrayBuffer());
await writeFile(reportFile, bytes);
console.log(
  `3. saved ${reportFile} (${bytes.length} bytes, ${download.headers.get('content-type')}, ${exported.processedQuantity ?? 0} rows)`,
);

/** Polls a task every 300 ms, printing its progress when it moves, until FINISHED; exits on ERROR/INTERRUPTED. */
async function runTask(label: string, task: Task): Promise<Task> {
  let shown = -1;
  const deadline = Date.now() + 300_000;
  while (task.status === 'CREATED' || task.status === 'RUNNING' || task.status === 'RESTARTING') {
    if (Date.now() > deadline) fail(`${label} task #${task.id} is still ${task.status} after 5 minutes`);
    if (task.progress !== shown) {
      shown = task.progress ?? 0;
      console.log(`   ${label} task #${task.id}: ${task.status} ${shown} %`);
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    task = await call(api.GET('/api/task/getTask', { params: { query: { id: String(task.id) } } }));
  }
  if (task.status !== 'FINISHED')
    fail(`${label} task #${task.id} ended ${task.status}: ${task.message ?? ''}`);
  return task;
}

/** `YYYY-MM-DD` of a time, in UTC. */
function day(time: Date): string {
  return time.toISOString().slice(0, 10);
}
