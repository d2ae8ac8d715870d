/**
 * A campaign import survives the loss of its process (D10.3; P83, P103): a runtime whose job queue stops
 * ungracefully while the import runs (what a killed process leaves behind), then another runtime takes the task
 * over as its next attempt and finishes it with every row the sandbox has — the statistics written by the lost
 * run are replaced, never doubled.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/test-app.ts';
import { waitForTask } from '../helpers/tasks.ts';
import { createOwnDatabase, type OwnDatabase } from '../fixtures/webhook-kit.ts';
import {
  CAMPAIGN_TEST_ENV,
  campaignAccount,
  propertiesOf,
  sandboxStatistics,
  startCampaignSandbox,
  startImport,
  storedStatistics,
  type CampaignContext,
} from './kit.ts';

const opened: TestApp[] = [];
let database: OwnDatabase | undefined;
let sandbox: Awaited<ReturnType<typeof startCampaignSandbox>> | undefined;

afterAll(async () => {
  for (const app of opened) await app.close();
  await sandbox?.close();
  await database?.drop();
});

describe('an import whose process stopped', () => {
  // Its own database and two runtimes are set up inside the test (on Citus each distributes every table): 180 s.
  it('is finished by another process as its next attempt, with the same rows as a clean import', async () => {
    database = await createOwnDatabase('campaign_restart');
    sandbox = await startCampaignSandbox();
    const first = await buildTestApp(CAMPAIGN_TEST_ENV, database.url);
    opened.push(first);
    const context: CampaignContext = { t: first, database, sandbox };
    const account = await campaignAccount(context);
    // Each statistics request takes a second: the import is caught between its steps.
    await sandbox.fault({
      mode: 'slow',
      delayMs: 1000,
      count: 2,
      path: '/adv/v3/fullstats',
      apiKey: account.apiKey,
    });
    const task = await startImport(first.app, account);
    await waitForTask(first.app, account.readToken, task.id, (seen) => seen.progress > 30);

    await first.runtime.jobs.boss.stop({ graceful: false, close: false });
    const second = await buildTestApp(CAMPAIGN_TEST_ENV, database.url);
    opened.push(second);
    const done = await waitForTask(second.app, account.readToken, task.id, [
      'FINISHED',
      'ERROR',
      'INTERRUPTED',
    ]);
    expect(done).toMatchObject({ status: 'FINISHED', retryNumber: 1, progress: 100 });
    const window = propertiesOf(done);
    expect(await storedStatistics(second, account)).toEqual(
      await sandboxStatistics(sandbox, account.apiKey, window.dateFrom, window.dateTo),
    );
  }, 180_000);
});
