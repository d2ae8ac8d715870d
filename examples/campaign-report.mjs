/**
 * An advertising report from Market1 campaigns, as spec §4.6 and decision D10 describe it (plain Node ≥ 20,
 * global fetch, no dependencies):
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
 * Run:  node examples/campaign-report.mjs      (exit status 0 when the file was saved)
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';

const baseUrl = (process.env.SELLER_OPS_URL ?? 'http://127.0.0.1:8080').replace(/\/+$/, '');
const reportFile = path.resolve(process.env.REPORT_FILE ?? 'campaign-stats.xlsx');
const service = 'SERVICE_01';
const money = (value) =>
  value.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
const percent = (value) => `${value.toFixed(2)} %`;

await waitUntilReady();
const { token, organizationId } = await loadCredentials();
console.log(`Campaign report at ${baseUrl}`);

// 1. The import runs as a task: poll it until it ends.
const imported = await runTask(
  'import',
  await api('GET', `/api/campaign/updateCampaigns?organizationId=${organizationId}&service=${service}`),
);
const stored = await api(
  'GET',
  `/api/campaign/getCampaigns?organizationId=${organizationId}&service=${service}&count=true&limit=1`,
);
console.log(
  `1. imported ${stored.total} campaigns (task #${imported.id}: ${imported.processedQuantity} campaigns and statistics rows)`,
);

// 2. The five campaigns that spent the most over the last 30 days (whole UTC days).
const dateTo = new Date();
const dateFrom = new Date(dateTo.getTime() - 29 * 86_400_000);
const period = { dateFrom: `${day(dateFrom)}T00:00:00Z`, dateTo: `${day(dateTo)}T23:59:59Z` };
const top = await api(
  'GET',
  `/api/campaign/getStatCampaigns?${new URLSearchParams({
    organizationId: String(organizationId),
    service,
    ...period,
    sortBy: 'EXPENSES',
    ascending: 'false',
    limit: '5',
  })}`,
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
  await api('POST', '/api/campaign/stats/xlsx', { service, organizationId, filter: period }),
);
const download = await fetch(new URL(exported.url, baseUrl), { headers: { authorization: token } });
if (!download.ok) fail(`GET ${exported.url} → ${download.status} ${await download.text()}`);
const bytes = Buffer.from(await download.arrayBuffer());
await writeFile(reportFile, bytes);
console.log(
  `3. saved ${reportFile} (${bytes.length} bytes, ${download.headers.get('content-type')}, ${exported.processedQuantity ?? 0} rows)`,
);

/** Polls a task every 300 ms, printing its progress when it moves, until FINISHED; exits on ERROR/INTERRUPTED. */
async function runTask(label, task) {
  let shown = -1;
  const deadline = Date.now() + 300_000;
  while (task.status === 'CREATED' || task.status === 'RUNNING' || task.status === 'RESTARTING') {
    if (Date.now() > deadline) fail(`${label} task #${task.id} is still ${task.status} after 5 minutes`);
    if (task.progress !== shown) {
      shown = task.progress ?? 0;
      console.log(`   ${label} task #${task.id}: ${task.status} ${shown} %`);
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    task = await api('GET', `/api/task/getTask?id=${task.id}`);
  }
  if (task.status !== 'FINISHED')
    fail(`${label} task #${task.id} ended ${task.status}: ${task.message ?? ''}`);
  return task;
}

/** `YYYY-MM-DD` of a time, in UTC. */
function day(time) {
  return time.toISOString().slice(0, 10);
}

/** Waits up to 60 s for `GET /ready`. */
async function waitUntilReady() {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(`${baseUrl}/ready`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  fail(`the service at ${baseUrl} did not become ready within 60 s`);
}

/** Calls the API; returns the parsed JSON body; exits on any error. */
async function api(method, pathAndQuery, body) {
  let response;
  try {
    response = await fetch(baseUrl + pathAndQuery, {
      method,
      headers: {
        authorization: token,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (error) {
    fail(`${method} ${pathAndQuery}: cannot reach the service (${error.cause?.code ?? error.message})`);
  }
  const text = await response.text();
  const parsed = text === '' ? undefined : JSON.parse(text);
  if (!response.ok)
    fail(
      `${method} ${pathAndQuery} → ${response.status} ${parsed?.error ?? ''}: ${parsed?.localMessage ?? text} ${JSON.stringify(parsed?.params ?? {})}`,
    );
  return parsed;
}

/** Token and organization from the environment, else from a local service's demo credentials. */
async function loadCredentials() {
  if (process.env.SELLER_OPS_TOKEN) {
    const id = Number(process.env.SELLER_OPS_ORGANIZATION_ID);
    if (!Number.isSafeInteger(id) || id <= 0) fail('set SELLER_OPS_ORGANIZATION_ID with SELLER_OPS_TOKEN');
    return { token: process.env.SELLER_OPS_TOKEN, organizationId: id };
  }
  const file = path.resolve(process.env.DATA_DIR ?? './data', 'demo-credentials.json');
  try {
    const demo = JSON.parse(await readFile(file, 'utf8'));
    return { token: demo.writeToken, organizationId: demo.organizationId };
  } catch {
    fail(`set SELLER_OPS_TOKEN and SELLER_OPS_ORGANIZATION_ID (no demo credentials at ${file})`);
  }
}

function fail(message) {
  console.error(`campaign report failed: ${message}`);
  process.exit(1);
}
