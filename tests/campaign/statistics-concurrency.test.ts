/**
 * `STATISTICS_CONCURRENCY` (P156): with 1, statistics statements of the process run one at a time and the others
 * wait their turn, then all answer. The running statement is held by a table lock taken in another connection;
 * the app's connections carry their own `application_name`, so statements of other test files are not counted.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildTestApp, testDatabaseUrl, type TestApp } from '../helpers/test-app.ts';
import { createAccount, type TestAccount } from '../helpers/factories.ts';
import { send } from '../helpers/http.ts';
import { lockWaits, namedDatabaseUrl, openBlockingTransaction } from '../helpers/blocking-transaction.ts';
import { waitFor } from '../fixtures/webhook-kit.ts';
import { insertCampaign, insertDays } from './statistics-kit.ts';

const APPLICATION_NAME = 'statistics-concurrency-test';

let t: TestApp;
let account: TestAccount;

beforeAll(async () => {
  t = await buildTestApp(
    { STATISTICS_CONCURRENCY: '1' },
    namedDatabaseUrl(testDatabaseUrl(), APPLICATION_NAME),
    {
      workers: false,
    },
  );
  account = await createAccount(t.runtime);
  const db = t.runtime.database.db;
  const owner = { clientId: account.clientId, organizationId: account.organizationId };
  const campaignId = await insertCampaign(db, owner, { name: 'Held' });
  await insertDays(db, owner, campaignId, [{ date: '2026-03-01', product: 1, views: 10, clicks: 1 }]);
});

afterAll(async () => {
  await t?.close();
});

/** Statements of the app's connections waiting for a lock. */
const waitingStatements = () => lockWaits(t.runtime.database.db, APPLICATION_NAME);

it('runs one statistics statement at a time with STATISTICS_CONCURRENCY=1; the others wait, then answer', async () => {
  const blocker = await openBlockingTransaction(
    testDatabaseUrl(),
    'lock table campaign_statistic_total in access exclusive mode',
    [],
  );
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
    await waitFor('a statistics statement waiting for the lock', async () => (await waitingStatements()) > 0);
    // the other two would have reached the lock within this time without the limit
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await waitingStatements()).toBe(1);
  } finally {
    await blocker.release();
  }
  const responses = await Promise.all(requests);
  for (const response of responses) expect(response.statusCode, response.body).toBe(200);
  expect(responses[0]?.json<{ rows: Array<{ views: number }> }>().rows[0]?.views).toBe(10);
});
