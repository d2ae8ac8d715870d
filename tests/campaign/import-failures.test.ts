/**
 * How a campaign import ends when the marketplace misbehaves or the integrator cancels it (D10.3; P103, P104),
 * against the Market1 sandbox's faults: a running import cancelled at its next step (INTERRUPTED), 429s waited
 * and retried within the run, 5xx failing a run that the next attempt completes, and 5xx on every attempt
 * ending in ERROR `error_market1_unavailable`.
 */
import { describe, expect, it } from 'vitest';
import { send } from '../helpers/http.ts';
import { waitForTask } from '../helpers/tasks.ts';
import { keyFingerprint, type SandboxRequestLog } from '../../src/connectors/market1/sandbox.ts';
import {
  campaignAccount,
  propertiesOf,
  sandboxStatistics,
  startImport,
  storedStatistics,
  useCampaignApp,
} from './kit.ts';

const context = useCampaignApp();
const STATISTICS_PATH = '/adv/v3/fullstats';

/** The sandbox's log of the statistics requests made with `apiKey`. */
async function statisticsRequests(apiKey: string): Promise<SandboxRequestLog[]> {
  const { requests } = (await (await fetch(`${context.sandbox.url}/__sandbox/requests`)).json()) as {
    requests: SandboxRequestLog[];
  };
  return requests.filter(
    (request) => request.key === keyFingerprint(apiKey) && request.path === STATISTICS_PATH,
  );
}

describe('a running import', () => {
  it('stops at its next step once cancelled (INTERRUPTED)', async () => {
    const { t, sandbox } = context;
    const account = await campaignAccount(context);
    await sandbox.fault({
      mode: 'slow',
      delayMs: 1500,
      count: 10,
      path: STATISTICS_PATH,
      apiKey: account.apiKey,
    });
    const task = await startImport(t.app, account);
    await waitForTask(
      t.app,
      account.readToken,
      task.id,
      (seen) => seen.status === 'RUNNING' && seen.progress >= 30,
    );
    const cancel = await send(t.app, account.writeToken, {
      method: 'POST',
      url: '/api/task/cancelTask',
      query: { taskId: task.id },
    });
    expect(cancel.statusCode, cancel.body).toBe(200);
    const ended = await waitForTask(t.app, account.readToken, task.id, ['FINISHED', 'ERROR', 'INTERRUPTED']);
    expect(ended.status).toBe('INTERRUPTED');
    await sandbox.clearFaults();
    // At most the step in flight was written: fewer statistics requests than a full import makes.
    expect((await statisticsRequests(account.apiKey)).length).toBeLessThan(3);
  });
});

describe('marketplace failures during an import', () => {
  it('waits out 429s and finishes in the same run', async () => {
    const { t, sandbox } = context;
    const account = await campaignAccount(context);
    await sandbox.fault({
      mode: '429',
      count: 2,
      retryAfterSeconds: 1,
      path: STATISTICS_PATH,
      apiKey: account.apiKey,
    });
    const task = await startImport(t.app, account);
    const done = await waitForTask(t.app, account.readToken, task.id, ['FINISHED', 'ERROR']);
    expect(done).toMatchObject({ status: 'FINISHED', retryNumber: 0 });
    const statuses = (await statisticsRequests(account.apiKey)).map((request) => request.status);
    expect(statuses.slice(0, 3)).toEqual([429, 429, 200]);
    const window = propertiesOf(done);
    expect(await storedStatistics(t, account)).toEqual(
      await sandboxStatistics(sandbox, account.apiKey, window.dateFrom, window.dateTo),
    );
  });

  it('retries a run that met 5xx; the next attempt stores everything', async () => {
    const { t, sandbox } = context;
    const account = await campaignAccount(context);
    // The connector tries 3 times: the first run fails, the second runs clean.
    await sandbox.fault({ mode: '5xx', count: 3, path: STATISTICS_PATH, apiKey: account.apiKey });
    const task = await startImport(t.app, account);
    const done = await waitForTask(t.app, account.readToken, task.id, ['FINISHED', 'ERROR']);
    expect(done).toMatchObject({ status: 'FINISHED', retryNumber: 1 });
    const window = propertiesOf(done);
    expect(await storedStatistics(t, account)).toEqual(
      await sandboxStatistics(sandbox, account.apiKey, window.dateFrom, window.dateTo),
    );
  });

  it('ends in ERROR error_market1_unavailable when every attempt meets 5xx', async () => {
    const { t, sandbox } = context;
    const account = await campaignAccount(context);
    await sandbox.fault({ mode: '5xx', count: 1000, path: STATISTICS_PATH, apiKey: account.apiKey });
    const task = await startImport(t.app, account);
    const done = await waitForTask(t.app, account.readToken, task.id, ['FINISHED', 'ERROR']);
    await sandbox.clearFaults();
    expect(done).toMatchObject({ status: 'ERROR', retryNumber: 2 });
    expect(JSON.parse(done.messageParams ?? '{}')).toMatchObject({
      error: 'error_market1_unavailable',
      params: { reason: 'http_5xx' },
    });
    expect(done.message).toBeTruthy();
  });
});
