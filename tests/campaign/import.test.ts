/**
 * The campaign import and the statistics reload (spec §4.6, D10.3; P101–P104, P106) through HTTP against the
 * Market1 sandbox: the import task reaches FINISHED with the sandbox's campaigns and statistics stored, a rerun
 * leaves the same rows, a reload replaces a range (or only its expenses), a running import is cancelled, and the
 * marketplace's refusals, throttling and outages end the task as P104 says.
 */
import { describe, expect, it } from 'vitest';
import { expectEmpty, expectValidation, send } from '../helpers/http.ts';
import { waitForTask } from '../helpers/tasks.ts';
import { addDays } from '../../src/modules/campaign/import.task.ts';
import { marketplaceDay } from '../../src/connectors/market1/protocol.ts';
import {
  campaignAccount,
  campaignRequest,
  importCampaigns,
  propertiesOf,
  sandboxStatistics,
  startImport,
  storedStatistics,
  useCampaignApp,
  type TmsTask,
} from './kit.ts';

const context = useCampaignApp();
/** The import's window ends on the marketplace's calendar day (Moscow), not the UTC one. */
const today = () => marketplaceDay(Date.now());

describe('GET /api/campaign/updateCampaigns', () => {
  it('imports every campaign and the last 30 days of statistics, as the sandbox has them', async () => {
    const { t, sandbox } = context;
    const account = await campaignAccount(context);
    const task = await startImport(t.app, account);
    expect(task).toMatchObject({
      type: 'CAMPAIGN_IMPORT_TASK',
      status: 'CREATED',
      organizationId: account.organizationId,
    });
    const done = await waitForTask(t.app, account.readToken, task.id, ['FINISHED', 'ERROR']);
    expect(done).toMatchObject({ status: 'FINISHED', progress: 100 });
    const window = propertiesOf(done);
    expect(window).toEqual({ dateFrom: addDays(today(), -29), dateTo: today(), expensesOnly: false });

    const market1 = sandbox.connector(account.apiKey);
    const expectedCampaigns = await market1.listCampaigns();
    const campaigns = await t.runtime.database.db
      .selectFrom('campaign')
      .selectAll()
      .where('client_id', '=', account.clientId)
      .where('organization_id', '=', account.organizationId)
      .orderBy('external_id')
      .execute();
    expect(campaigns.map((row) => row.external_id)).toEqual(
      expectedCampaigns.map((campaign) => campaign.externalId).sort((a, b) => a - b),
    );
    for (const row of campaigns) {
      const campaign = expectedCampaigns.find((candidate) => candidate.externalId === row.external_id)!;
      expect(row).toMatchObject({
        client_id: account.clientId,
        name: campaign.name,
        type: campaign.type,
        status: campaign.status,
        daily_budget: campaign.dailyBudget,
        external_product_ids: campaign.externalProductIds,
        category_id: campaign.subject?.id ?? null,
      });
    }
    const stored = await storedStatistics(t, account);
    expect(stored.length).toBeGreaterThan(0);
    expect(stored).toEqual(await sandboxStatistics(sandbox, account.apiKey, window.dateFrom, window.dateTo));
    // The running totals the statistics read were rebuilt with the daily rows (P112): the sums agree.
    const statRows: { expenses?: number; clicks?: number }[] = [];
    for (let page = 1; ; page += 1) {
      const response = await send(t.app, account.readToken, {
        method: 'GET',
        url: '/api/campaign/getStatCampaigns',
        query: {
          organizationId: account.organizationId,
          service: 'SERVICE_01',
          dateFrom: window.dateFrom,
          dateTo: window.dateTo,
          limit: 500,
          page,
        },
      });
      expect(response.statusCode, response.body).toBe(200);
      const { rows } = response.json<{ rows: { expenses?: number; clicks?: number }[] }>();
      if (rows.length === 0) break;
      statRows.push(...rows);
    }
    const kopecks = (values: number[]) => values.reduce((sum, value) => sum + Math.round(value * 100), 0);
    expect(kopecks(statRows.map((row) => row.expenses ?? 0))).toBe(
      kopecks(stored.map((row) => Number(row.expenses))),
    );
    expect(statRows.reduce((sum, row) => sum + (row.clicks ?? 0), 0)).toBe(
      stored.reduce((sum, row) => sum + row.clicks, 0),
    );
    expect(done.processedQuantity).toBe(campaigns.length + stored.length);
    const withStatistics = new Set(stored.map((row) => row.externalId));
    for (const row of campaigns.filter((campaign) => withStatistics.has(campaign.external_id)))
      expect(row.date_stat_import).not.toBeNull();

    // Through the API: getCampaigns is another part's; the stored campaign answers through presentCampaign.
    const again = await importCampaigns(t.app, account);
    expect(again.status).toBe('FINISHED');
    // Nothing changed on the marketplace: no details re-read, the same rows; the window starts 3 days back.
    expect(propertiesOf(again).dateFrom).toBe(addDays(today(), -3));
    expect(await storedStatistics(t, account)).toEqual(stored);
    const after = await t.runtime.database.db
      .selectFrom('campaign')
      .select(['id', 'external_id', 'updated_at'])
      .where('client_id', '=', account.clientId)
      .where('organization_id', '=', account.organizationId)
      .orderBy('external_id')
      .execute();
    expect(after.map((row) => row.id)).toEqual(campaigns.map((row) => row.id));
    expect(after.map((row) => row.updated_at)).toEqual(campaigns.map((row) => row.updated_at));
  });

  it('re-reads the details of a campaign changed on the marketplace', async () => {
    const { t, sandbox } = context;
    const account = await campaignAccount(context);
    await importCampaigns(t.app, account);
    const market1 = sandbox.connector(account.apiKey);
    const active = (await market1.listCampaignRefs()).find((ref) => ref.status === 'ACTIVE')!;
    await market1.pauseCampaign(active.externalId);
    expect((await importCampaigns(t.app, account)).status).toBe('FINISHED');
    const row = await t.runtime.database.db
      .selectFrom('campaign')
      .select(['status', 'on_pause'])
      .where('client_id', '=', account.clientId)
      .where('organization_id', '=', account.organizationId)
      .where('external_id', '=', active.externalId)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ status: 'PAUSED', on_pause: true });
  });
});

describe('GET /api/campaign/reloadCampaignStats', () => {
  /** Reloads and returns the task, found through /api/task/findTask (the reload answers an empty body). */
  async function reload(
    account: Awaited<ReturnType<typeof campaignAccount>>,
    query: Record<string, string | boolean>,
  ): Promise<TmsTask> {
    const { t } = context;
    const response = await campaignRequest(t.app, account.readToken, 'GET', 'reloadCampaignStats', {
      organizationId: account.organizationId,
      service: 'SERVICE_01',
      ...query,
    });
    expectEmpty(response);
    const found = await send(t.app, account.readToken, {
      method: 'GET',
      url: '/api/task/findTask',
      query: { type: 'CAMPAIGN_STATS_RELOAD_TASK', organizationId: account.organizationId },
    });
    expect(found.statusCode, found.body).toBe(200);
    const [task] = found.json<{ rows: TmsTask[] }>().rows;
    return waitForTask(t.app, account.readToken, task!.id, ['FINISHED', 'ERROR']);
  }

  it('reloads every counter of a range, restoring rows changed or deleted meanwhile', async () => {
    const { t, sandbox } = context;
    const account = await campaignAccount(context);
    await importCampaigns(t.app, account);
    const db = t.runtime.database.db;
    const dateFrom = addDays(today(), -10);
    const dateTo = addDays(today(), -5);
    await db
      .updateTable('campaign_statistic_day')
      .set({ views: 0, expenses: '0' })
      .where('client_id', '=', account.clientId)
      .where('organization_id', '=', account.organizationId)
      .execute();
    await db
      .deleteFrom('campaign_statistic_day')
      .where('client_id', '=', account.clientId)
      .where('organization_id', '=', account.organizationId)
      .where('date', '=', dateFrom)
      .execute();
    const task = await reload(account, { dateFrom, dateTo });
    expect(task).toMatchObject({ status: 'FINISHED', type: 'CAMPAIGN_STATS_RELOAD_TASK' });
    expect(propertiesOf(task)).toEqual({ dateFrom, dateTo, expensesOnly: false });
    const stored = await storedStatistics(t, account);
    const inRange = stored.filter((row) => row.date >= dateFrom && row.date <= dateTo);
    expect(inRange).toEqual(await sandboxStatistics(sandbox, account.apiKey, dateFrom, dateTo));
    // Outside the range nothing was reloaded.
    const outside = stored.filter((row) => row.date > dateTo);
    expect(outside.length).toBeGreaterThan(0);
    expect(outside.every((row) => row.views === 0 && row.expenses === '0.00')).toBe(true);
  });

  it('with isExpensesOnly replaces only the expenses, and inserts missing rows with expenses only', async () => {
    const { t, sandbox } = context;
    const account = await campaignAccount(context);
    const db = t.runtime.database.db;
    await importCampaigns(t.app, account);
    const day = addDays(today(), -2);
    await db
      .updateTable('campaign_statistic_day')
      .set({ views: 7, expenses: '0' })
      .where('client_id', '=', account.clientId)
      .where('organization_id', '=', account.organizationId)
      .where('date', '=', day)
      .execute();
    const missing = await db
      .deleteFrom('campaign_statistic_day')
      .where('client_id', '=', account.clientId)
      .where('organization_id', '=', account.organizationId)
      .where('date', '=', addDays(day, -1))
      .executeTakeFirst();
    expect(Number(missing.numDeletedRows)).toBeGreaterThan(0);
    const task = await reload(account, { dateFrom: addDays(day, -1), dateTo: day, isExpensesOnly: true });
    expect(task.status).toBe('FINISHED');
    const expected = await sandboxStatistics(sandbox, account.apiKey, addDays(day, -1), day);
    const stored = (await storedStatistics(t, account)).filter(
      (row) => row.date >= addDays(day, -1) && row.date <= day,
    );
    expect(stored.map((row) => [row.externalId, row.date, row.externalProductId, row.expenses])).toEqual(
      expected.map((row) => [row.externalId, row.date, row.externalProductId, row.expenses]),
    );
    for (const row of stored)
      if (row.date === day) expect(row.views).toBe(7);
      else expect(row).toMatchObject({ views: 0, clicks: 0, orders: 0, ordersAmount: '0.00' });
  });

  it('refuses malformed, reversed and too long ranges', async () => {
    const { t } = context;
    const account = await campaignAccount(context);
    const query = { organizationId: account.organizationId, service: 'SERVICE_01' };
    const request = (range: Record<string, string>) =>
      campaignRequest(t.app, account.readToken, 'GET', 'reloadCampaignStats', { ...query, ...range });
    expectValidation(await request({ dateTo: '2024-01-01' }), 'dateFrom');
    expectValidation(await request({ dateFrom: '2024-02-30', dateTo: '2024-03-01' }), 'dateFrom');
    expectValidation(await request({ dateFrom: '2024-01-01', dateTo: '2024/01/02' }), 'dateTo');
    expectValidation(await request({ dateFrom: '2024-01-02', dateTo: '2024-01-01' }), 'dateTo');
    expectValidation(await request({ dateFrom: '2024-01-01', dateTo: '2025-01-01' }), 'dateTo');
    // 366 days (a leap year) is the longest range.
    expectEmpty(await request({ dateFrom: '2024-01-01', dateTo: '2024-12-31' }));
  });
});
