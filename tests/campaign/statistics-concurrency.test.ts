/**
 * `STATISTICS_CONCURRENCY` (P156): with 1, statistics statements of the process run one at a time and the others
 * wait their turn, then all answer. The running statement is held by a table lock taken in another connection;
 * the app's connections carry their own `application_name`, so statements of other test files are not counted.
 */
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildTestApp, testDatabaseUrl, type TestApp } from '../helpers/test-app.ts';
import { createAccount, type TestAccount } from '../helpers/factories.ts';
import { send } from '../helpers/http.ts';
import { insertCampaign, insertDays } from './statistics-kit.ts';

const APPLICATION_NAME = 'statistics-concurrency-test';

let t: TestApp;
let account: TestAccount;
let locker: pg.Client;

beforeAll(async () => {
  const url = new URL(testDatabaseUrl());
  url.searchParams.set('application_name', APPLICATION_NAME);
  t = await buildTestApp({ STATISTICS_CONCURRENCY: '1' }, url.toString(), { workers: false });
  account = await createAccount(t.runtime);
  const db = t.runtime.database.db;
  const owner = { clientId: account.clientId, organizationId: account.organizationId };
  const campaignId = await insertCampaign(db, owner, { name: 'Held' });
  await insertDays(db, owner, campaignId, [{ date: '2026-03-01', product: 1, views: 10, clicks: 1 }]);
  locker = new pg.Client({ connectionString: testDatabaseUrl() });
  await locker.connect();
});

afterAll(async () => {
  await locker?.end();
  await t?.close();
});

/** Statements of the app's connections waiting for a lock. */
async function waitingStatements(): Promise<number> {
  const result = await locker.query<{ count: number }>(
    `select count(*)::int as count from pg_stat_activity
     where application_name = $1 and wait_event_type = 'Lock'`,
    [APPLICATION_NAME],
  );
  return result.rows[0]?.count ?? 0;
}

it('runs one statistics statement at a time with STATISTICS_CONCURRENCY=1; the others wait, then answer', async () => {
  await locker.query('begin');
  await locker.query('lock table campaign_statistic_total in access exclusive mode');
  const query = { service: 'SERVICE_01', organizationId: account.organizationId, dateFrom: '2026-03-01' };
  const requests = [
    { operation: 'getStatCampaigns', query },
    { operation: 'getTotalStatCampaigns', query: { ...query, topN: 5 } },
    { operation: 'getCampaigns', query: { ...query, sortBy: 'VIEWS' } },
  ].map((request) =>
    send(t.app, account.readToken, {
      method: 'GET',
      url: `/api/campaign/${request.operation}`,
      query: request.query,
    }),
  );
  try {
    const deadline = Date.now() + 10_000;
    while ((await waitingStatements()) === 0 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 20));
    // the other two would have reached the lock within this time without the limit
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await waitingStatements()).toBe(1);
  } finally {
    await locker.query('commit');
  }
  const responses = await Promise.all(requests);
  for (const response of responses) expect(response.statusCode, response.body).toBe(200);
  expect(responses[0]?.json<{ rows: Array<{ views: number }> }>().rows[0]?.views).toBe(10);
});
