/**
 * The Market1 connector against its sandbox (D10.1, D11.3; P90–P99): every method over real HTTP, the batching
 * of long id lists and date ranges, the determinism and consistency of the sandbox's data, state changes kept per
 * key, and the dictionary round trip (connector → admin dictionary load → getParams/fetchOption). Each test uses
 * its own API key, so tests never see each other's account. Failure handling is in failures.test.ts.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startMarket1Sandbox,
  keyFingerprint,
  type SandboxRequestLog,
} from '../../src/connectors/market1/sandbox.ts';
import { Market1Client, market1AccountOf, optionIdOf } from '../../src/connectors/market1/client.ts';
import { Market1ApiError } from '../../src/connectors/market1/errors.ts';
import { CAMPAIGN_STATUSES, type Market1Connector } from '../../src/connectors/market1/connector.ts';
import type { SandboxServer } from '../../src/connectors/sandboxes.ts';
import { SANDBOX_SUBJECTS } from '../../src/connectors/market1/sandbox-data.ts';
import { CREATABLE_CAMPAIGN_TYPES, marketplaceDay } from '../../src/connectors/market1/protocol.ts';
import { useConformanceCheck } from './openapi-conformance.ts';
import { findPreparedIntegration } from '../../src/modules/accounts/credentials.ts';
import { useTestApp, TEST_ADMIN_TOKEN, type TestApp } from '../helpers/test-app.ts';
import { createAccount } from '../helpers/factories.ts';
import { send } from '../helpers/http.ts';

const DAY_MS = 86_400_000;
/** The marketplace's calendar day (Moscow) `offset` days from today. */
const day = (offset: number) => marketplaceDay(Date.now() + offset * DAY_MS);

let sandbox: SandboxServer;
const client = new Market1Client({ retry: { backoffMs: 10 } });
// Every request the client sends and every answer the sandbox gives must follow the published documents.
const conformance = useConformanceCheck();
beforeAll(async () => {
  sandbox = await startMarket1Sandbox({
    host: '127.0.0.1',
    port: 0,
    rateLimits: 'off',
    onExchange: conformance.onExchange,
  });
});
afterAll(async () => {
  client.close();
  await sandbox.close();
});

let t: TestApp;
useTestApp((app) => void (t = app), {}, { workers: false });

/** A connector for a fresh API key (a fresh sandbox account). */
function connectorFor(apiKey = `key-${randomUUID()}`): Market1Connector & { apiKey: string } {
  return Object.assign(client.forAccount({ apiKey, baseUrl: sandbox.url }), { apiKey });
}

/** The sandbox's log of the requests made with `apiKey`. */
async function requestsOf(apiKey: string, path?: string): Promise<SandboxRequestLog[]> {
  const answer = (await (await fetch(`${sandbox.url}/__sandbox/requests`)).json()) as {
    requests: SandboxRequestLog[];
  };
  return answer.requests.filter(
    (request) => request.key === keyFingerprint(apiKey) && (path === undefined || request.path === path),
  );
}

describe('campaigns', () => {
  it('lists a few hundred campaigns of every kind and documented status, details fetched 50 ids at a time', async () => {
    const market1 = connectorFor();
    const refs = await market1.listCampaignRefs();
    const campaigns = await market1.listCampaigns();
    expect(refs.length).toBeGreaterThanOrEqual(200);
    expect(refs.length).toBeLessThanOrEqual(400);
    expect(campaigns.map((campaign) => campaign.externalId)).toEqual(refs.map((ref) => ref.externalId));
    // Today's kinds: unified bid (AUTO, types 8 and 9) and manual bid (IN_SEARCH_AND_CATALOG, type 9).
    expect(new Set(campaigns.map((campaign) => campaign.type))).toEqual(new Set(CREATABLE_CAMPAIGN_TYPES));
    expect(new Set(campaigns.map((campaign) => campaign.status))).toEqual(
      new Set(CAMPAIGN_STATUSES.filter((status) => status !== 'UNKNOWN' && status !== 'ARCHIVED')),
    );

    for (const campaign of campaigns) {
      const ref = refs.find((candidate) => candidate.externalId === campaign.externalId)!;
      expect(ref).toEqual({
        externalId: campaign.externalId,
        status: campaign.status,
        changeDate: campaign.changeDate,
      });
      expect(campaign.name).not.toBe('');
      expect(campaign.externalProductIds.length).toBeGreaterThan(0);
      expect(campaign.subject).toMatchObject({
        id: expect.any(Number) as number,
        name: expect.any(String) as string,
      });
      expect(['CPM', 'CPC']).toContain(campaign.paymentType);
      expect(campaign.createDate).toMatch(/Z$/);
      if (campaign.startDate) expect(campaign.startDate >= campaign.createDate).toBe(true);
      if (campaign.status === 'ACTIVE' || campaign.status === 'PAUSED') expect(campaign.endDate).toBeNull();
      if (campaign.status === 'FINISHED') expect(campaign.endDate! >= campaign.startDate!).toBe(true);
    }
    const details = await requestsOf(market1.apiKey, '/api/advert/v2/adverts');
    expect(details.map((request) => request.items)).toEqual(
      Array.from({ length: Math.ceil(refs.length / 50) }, (_, index) =>
        Math.min(50, refs.length - index * 50),
      ),
    );
  });

  it('reads the details of given ids in batches of 50 and leaves unknown ids out', async () => {
    const market1 = connectorFor();
    const ids = (await market1.listCampaignRefs()).slice(0, 110).map((ref) => ref.externalId);
    const campaigns = await market1.getCampaigns([...ids, ids[0]!, 1, 2]);
    expect(campaigns.map((campaign) => campaign.externalId)).toEqual(ids);
    const details = await requestsOf(market1.apiKey, '/api/advert/v2/adverts');
    expect(details.map((request) => request.items)).toEqual([50, 50, 12]);
  });

  it('is deterministic per key: another sandbox gives the same account, another key a different one', async () => {
    const apiKey = `key-${randomUUID()}`;
    const second = await startMarket1Sandbox({ host: '127.0.0.1', port: 0, rateLimits: 'off' });
    try {
      const here = client.forAccount({ apiKey, baseUrl: sandbox.url });
      const there = client.forAccount({ apiKey, baseUrl: second.url });
      const campaigns = await here.listCampaigns();
      expect(await there.listCampaigns()).toEqual(campaigns);
      const request = { externalIds: campaigns.map((c) => c.externalId), dateFrom: day(-20), dateTo: day(0) };
      const rows = await here.getDailyStatistics(request);
      expect(rows.length).toBeGreaterThan(0);
      expect(await there.getDailyStatistics(request)).toEqual(rows);
      expect(await there.getBalance()).toEqual(await here.getBalance());

      const other = await connectorFor().listCampaigns();
      expect(other.map((c) => c.externalId)).not.toEqual(campaigns.map((c) => c.externalId));
    } finally {
      await second.close();
    }
  });
});

describe('daily statistics', () => {
  it('has 180 Moscow days ending today, consistent numbers, and splits 150 ids × 70 days into 50-id, 31-day requests', async () => {
    const market1 = connectorFor();
    const campaigns = await market1.listCampaigns();
    // The 20 oldest active campaigns (showing since long before the kept window) and a few of each other
    // status (those that never showed must have no rows).
    const ids = [
      ...campaigns.filter((campaign) => campaign.status === 'ACTIVE').slice(0, 20),
      ...campaigns.filter(
        (campaign, index) => campaigns.findIndex((other) => other.status === campaign.status) + 3 > index,
      ),
    ].map((campaign) => campaign.externalId);
    const rows = await market1.getDailyStatistics({ externalIds: ids, dateFrom: day(-200), dateTo: day(0) });

    const dates = new Set(rows.map((row) => row.date));
    expect(dates.size).toBe(180);
    expect([...dates].sort()).toEqual(Array.from({ length: 180 }, (_, index) => day(index - 179)));
    const showing = new Set(
      campaigns
        .filter((campaign) => ['ACTIVE', 'PAUSED', 'FINISHED'].includes(campaign.status))
        .map((campaign) => campaign.externalId),
    );
    for (const row of rows) {
      expect(showing.has(row.campaignExternalId)).toBe(true);
      const campaign = campaigns.find((candidate) => candidate.externalId === row.campaignExternalId)!;
      expect(campaign.externalProductIds).toContain(row.externalProductId);
      expect(row.views).toBeGreaterThan(0);
      expect(row.clicks).toBeLessThanOrEqual(row.views);
      expect(row.orders).toBeLessThanOrEqual(row.clicks);
      expect(row.orderedItems).toBeGreaterThanOrEqual(row.orders);
      expect(Number(row.expenses.toFixed(2))).toBe(row.expenses);
      if (row.orderedItems === 0) expect(row.ordersAmount).toBe(0);
      else expect(row.ordersAmount).toBeGreaterThan(0);
    }
    const active = rows.filter(
      (row) => campaigns.find((c) => c.externalId === row.campaignExternalId)!.status === 'ACTIVE',
    );
    expect(active.some((row) => row.date === day(0))).toBe(true);
    const sorted = [...rows].sort(
      (a, b) =>
        a.campaignExternalId - b.campaignExternalId ||
        a.date.localeCompare(b.date) ||
        a.externalProductId - b.externalProductId,
    );
    expect(rows).toEqual(sorted);

    const apiKey = market1.apiKey;
    const before = (await requestsOf(apiKey, '/adv/v3/fullstats')).length;
    // Unknown ids are batched like known ones (the marketplace leaves them out of its answer).
    const unknownIds = Array.from({ length: 150 }, (_, index) => index + 1);
    expect(
      await market1.getDailyStatistics({ externalIds: unknownIds, dateFrom: day(-69), dateTo: day(0) }),
    ).toEqual([]);
    const batches = (await requestsOf(apiKey, '/adv/v3/fullstats'))
      .slice(before)
      .map((request) => request.items);
    expect(batches).toEqual([50, 50, 50, 50, 50, 50, 50, 50, 50]);
  });

  it('sums the marketplace platforms per product to the totals the marketplace reports', async () => {
    const market1 = connectorFor();
    const campaign = (await market1.listCampaigns()).find((candidate) => candidate.status === 'ACTIVE')!;
    const rows = await market1.getDailyStatistics({
      externalIds: [campaign.externalId],
      dateFrom: day(-10),
      dateTo: day(0),
    });
    const query = new URLSearchParams({
      ids: String(campaign.externalId),
      beginDate: day(-10),
      endDate: day(0),
    });
    const raw = await fetch(`${sandbox.url}/adv/v3/fullstats?${query}`, {
      headers: { authorization: market1.apiKey },
    });
    const [totals] = (await raw.json()) as {
      views: number;
      clicks: number;
      sum: number;
      sum_price: number;
      shks: number;
    }[];
    const sum = (field: 'views' | 'clicks' | 'orderedItems') =>
      rows.reduce((total, row) => total + row[field], 0);
    const money = (field: 'expenses' | 'ordersAmount') =>
      rows.reduce((total, row) => total + Math.round(row[field] * 100), 0) / 100;
    expect(sum('views')).toBe(totals!.views);
    expect(sum('clicks')).toBe(totals!.clicks);
    expect(sum('orderedItems')).toBe(totals!.shks);
    expect(money('expenses')).toBe(totals!.sum);
    expect(money('ordersAmount')).toBe(totals!.sum_price);
  });

  it('refuses malformed or reversed dates before calling the marketplace', async () => {
    const market1 = connectorFor();
    await expect(
      market1.getDailyStatistics({ externalIds: [1], dateFrom: '2024-02-30', dateTo: '2024-03-01' }),
    ).rejects.toThrow(RangeError);
    await expect(
      market1.getDailyStatistics({ externalIds: [1], dateFrom: '2024-03-02', dateTo: '2024-03-01' }),
    ).rejects.toThrow(/after/);
    expect(await requestsOf(market1.apiKey)).toEqual([]);
  });
});

describe('balance, status changes and creation', () => {
  it('starts, pauses and stops campaigns; an impossible change is the marketplace 422 with its message', async () => {
    const market1 = connectorFor();
    const campaigns = await market1.listCampaigns();
    const ready = campaigns.find((campaign) => campaign.status === 'READY')!;
    await expect(market1.pauseCampaign(ready.externalId)).rejects.toMatchObject({
      kind: 'api',
      status: 422,
      marketplaceMessage: expect.stringMatching(/^Статус кампании не изменен/) as string,
    });
    await market1.startCampaign(ready.externalId);
    expect((await market1.getCampaigns([ready.externalId]))[0]).toMatchObject({ status: 'ACTIVE' });
    await market1.pauseCampaign(ready.externalId);
    expect(
      (await market1.listCampaignRefs()).find((ref) => ref.externalId === ready.externalId),
    ).toMatchObject({
      status: 'PAUSED',
    });
    await market1.stopCampaign(ready.externalId);
    const [stopped] = await market1.getCampaigns([ready.externalId]);
    expect(stopped).toMatchObject({ status: 'FINISHED', endDate: expect.stringMatching(/Z$/) as string });
    await expect(market1.startCampaign(ready.externalId)).rejects.toBeInstanceOf(Market1ApiError);
    await expect(market1.stopCampaign(1)).rejects.toMatchObject({
      status: 400,
      marketplaceMessage: 'AdvertChangeStatus: Not Found: advert not found',
    });

    // Changes are kept per key: another key's account is untouched.
    expect(
      (await connectorFor().listCampaignRefs()).some(
        (ref) => ref.externalId === ready.externalId && ref.status === 'FINISHED',
      ),
    ).toBe(false);
  });

  it('creates unified-bid and manual-bid campaigns READY without a budget, as the document allows (P177)', async () => {
    const market1 = connectorFor();
    const before = await market1.getBalance();
    expect(Object.values(before).every((value) => Number.isInteger(value) && value >= 0)).toBe(true);
    const model = (await market1.listCampaigns()).find((campaign) => campaign.type === 'AUTO')!;
    const auto = await market1.createCampaign({
      type: 'AUTO',
      name: 'Summer linen',
      subjectId: model.subject!.id,
      externalProductIds: model.externalProductIds,
    });
    expect(auto).toMatchObject({
      name: 'Summer linen',
      type: 'AUTO',
      status: 'READY',
      statusCode: 4,
      dailyBudget: 0,
      externalProductIds: model.externalProductIds,
      subject: model.subject,
      startDate: null,
    });
    const auction = await market1.createCampaign({
      type: 'IN_SEARCH_AND_CATALOG',
      name: 'Search push',
      externalProductIds: model.externalProductIds,
    });
    expect(auction).toMatchObject({ type: 'IN_SEARCH_AND_CATALOG', status: 'READY' });
    expect(auction.externalId).toBeGreaterThan(auto.externalId);
    expect((await market1.listCampaignRefs()).map((ref) => ref.externalId)).toEqual(
      expect.arrayContaining([auto.externalId, auction.externalId]),
    );
    // Only the create: no budget deposit, no start; the money stays where it was.
    expect(await requestsOf(market1.apiKey, '/adv/v1/budget/deposit')).toEqual([]);
    expect(await requestsOf(market1.apiKey, '/adv/v0/start')).toEqual([]);
    expect(await market1.getBalance()).toEqual(before);
    await expect(
      market1.createCampaign({ type: 'IN_SEARCH_AND_CATALOG', name: 'Foreign', externalProductIds: [1] }),
    ).rejects.toMatchObject({ status: 400, marketplaceMessage: 'Товар 1 не найден у продавца' });
  });

  it('tops up a budget in status 11 only, as the document says; a new campaign starts once the cabinet set its budget', async () => {
    const market1 = connectorFor();
    const model = (await market1.listCampaigns()).find((campaign) => campaign.type === 'AUTO')!;
    const created = await market1.createCampaign({
      type: 'AUTO',
      name: 'Winter linen',
      subjectId: model.subject!.id,
      externalProductIds: model.externalProductIds,
    });
    const deposit = (sum: number) =>
      fetch(`${sandbox.url}/adv/v1/budget/deposit?id=${created.externalId}`, {
        method: 'POST',
        headers: { authorization: market1.apiKey, 'content-type': 'application/json' },
        body: JSON.stringify({ sum, type: 1, return: true }),
      });
    // Status 4: the documented 400 with an `{error}` body.
    const refused = await deposit(1000);
    expect(refused.status).toBe(400);
    expect(await refused.json()).toEqual({
      error: expect.stringMatching(/only a campaign in status 11/) as string,
    });
    // Without a budget the marketplace does not start it (the start's conditions in the document).
    await expect(market1.startCampaign(created.externalId)).rejects.toMatchObject({
      status: 422,
      marketplaceMessage: expect.stringMatching(/no budget/) as string,
    });
    // The seller sets the budget in the cabinet (the sandbox's control API stands for it).
    const cabinet = await fetch(`${sandbox.url}/__sandbox/budget`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ apiKey: market1.apiKey, id: created.externalId, sum: 1000 }),
    });
    expect(cabinet.status).toBe(204);
    await market1.startCampaign(created.externalId);
    await market1.pauseCampaign(created.externalId);
    // Status 11: topped up from the balance (`type` 1), the new budget answered.
    const before = await market1.getBalance();
    expect(await (await deposit(500)).json()).toEqual({ error: 'Минимальная сумма пополнения 1000 рублей' });
    expect(await (await deposit(1020)).json()).toEqual({
      error: 'Сумма пополнения должна быть кратна 50 руб',
    });
    const accepted = await deposit(1050);
    expect(accepted.status).toBe(200);
    expect(await accepted.json()).toEqual({ total: 2050 });
    expect(await market1.getBalance()).toEqual({ ...before, net: before.net - 1050 });
    await market1.startCampaign(created.externalId);
    expect((await market1.getCampaigns([created.externalId]))[0]).toMatchObject({ status: 'ACTIVE' });
    expect((await deposit(1000)).status).toBe(400);
  });
});

describe('subjects, parameters and options', () => {
  it('searches subjects with their commissions; the tariff report is read once per base URL', async () => {
    const market1 = connectorFor();
    const shirts = await market1.searchSubjects('SHIRT', 5);
    expect(shirts.length).toBeGreaterThan(0);
    expect(shirts.length).toBeLessThanOrEqual(5);
    for (const subject of shirts) {
      expect(subject.name.toLowerCase()).toContain('shirt');
      expect(subject).toMatchObject({ parentId: 100, parentName: 'Apparel' });
      expect(subject.fbwCommission).toBeGreaterThan(0);
      expect(subject.fbsCommission).toBeGreaterThan(subject.fbwCommission!);
    }
    expect(await market1.searchSubjects('', 1000)).toHaveLength(SANDBOX_SUBJECTS.length);
    expect(await market1.searchSubjects('no such subject', 10)).toEqual([]);
    expect(await market1.listParentCategories()).toContainEqual({ id: 2400, name: 'Home decor' });
    const tariffRequests = await fetch(`${sandbox.url}/__sandbox/requests`)
      .then((response) => response.json() as Promise<{ requests: SandboxRequestLog[] }>)
      .then(({ requests }) => requests.filter((request) => request.path === '/api/v1/tariffs/commission'));
    expect(tariffRequests.length).toBe(1);
  });

  it('reads parameters and the options of published directories in the catalog dictionary shapes', async () => {
    const market1 = connectorFor();
    const parameters = await market1.getSubjectParameters(105);
    // A characteristic named as the document names a directory ("Цвет": colors) takes its values (P178).
    expect(parameters[0]).toEqual({
      id: 14177449,
      name: 'Цвет',
      valueType: 'STRING',
      multiValueAllowed: true,
      displayType: 'SUGGEST',
      required: true,
      unit: null,
    });
    expect(parameters.find((parameter) => parameter.id === 14177455)).toMatchObject({
      valueType: 'NUMBER',
      displayType: 'INPUT',
      unit: 'g',
    });
    // The sample's other SUGGEST parameters have no published directory: free input on the marketplace.
    expect(parameters.find((parameter) => parameter.id === 14177452)).toMatchObject({
      name: 'Sleeve length',
      displayType: 'INPUT',
    });
    expect(parameters.find((parameter) => parameter.id === 14177450)).toMatchObject({
      name: 'Пол',
      displayType: 'SUGGEST',
    });
    const color = parameters[0]!;
    expect(await market1.getParameterOptions(color, 'BL')).toEqual([
      { id: optionIdOf('black'), value: 'black' },
      { id: optionIdOf('blue'), value: 'blue' },
    ]);
    expect(await market1.getParameterOptions(color, '', 3)).toHaveLength(3);
    expect(await market1.getParameterOptions({ name: 'Ставка НДС' })).toEqual(
      ['0', '10', '20', 'Без НДС', '13'].map((value) => ({ id: optionIdOf(value), value })),
    );
    expect(await market1.getParameterOptions({ name: 'Sleeve length' })).toEqual([]);
    expect(await market1.getSubjectParameters(999_999)).toEqual([]);
    // Option ids are a function of the value: stable across refreshes, distinct within a directory.
    const countries = await market1.getParameterOptions({ name: 'страна производства ' });
    expect(countries.map((option) => option.value)).toContain('Russia');
    expect(new Set(countries.map((option) => option.id)).size).toBe(countries.length);
    expect(countries.every((option) => Number.isSafeInteger(option.id) && option.id > 0)).toBe(true);
  });

  it('reads a dictionary that the admin API loads and getParams/fetchOption then serve', async () => {
    const market1 = connectorFor();
    const [shirts] = await market1.searchSubjects('Shirts', 1);
    const [vases] = await market1.searchSubjects('Vases', 1);
    const dictionary = await market1.readDictionary([shirts!.id, vases!.id, 999_999]);
    expect(dictionary.categories.map((category) => [category.id, category.parentId])).toEqual(
      [
        [shirts!.id, 100],
        [vases!.id, 2400],
      ].sort((a, b) => a[0]! - b[0]!),
    );
    const loaded = await t.app.inject({
      method: 'POST',
      url: '/admin/dictionaries',
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
      payload: dictionary,
    });
    expect(loaded.statusCode, loaded.body).toBe(200);

    const account = await createAccount(t.runtime);
    const params = await send(t.app, account.readToken, {
      method: 'GET',
      url: '/knowledge/getParams',
      query: { market2CategoryId: shirts!.id },
    });
    expect(params.statusCode, params.body).toBe(200);
    expect(params.json()).toEqual(
      dictionary.categories
        .find((c) => c.id === shirts!.id)!
        .parameters.map(({ options: _options, ...definition }) => definition),
    );
    const color = dictionary.categories[0]!.parameters.find((parameter) => parameter.name === 'Цвет')!;
    const options = await send(t.app, account.readToken, {
      method: 'GET',
      url: '/option/fetchOption',
      query: { paramId: color.id, query: 'gre', limit: 5 },
    });
    // fetchOption answers by id.
    expect(options.json()).toEqual(
      ['grey', 'green'].map((value) => ({ id: optionIdOf(value), value })).sort((a, b) => a.id - b.id),
    );
    // Each directory was read once for both subjects.
    expect(await requestsOf(market1.apiKey, '/content/v2/directory/colors')).toHaveLength(1);
  });
});

describe('prepared integration', () => {
  it("reaches the sandbox with the organization's sealed key at its baseUrl, or at MARKET1_API_URL", async () => {
    const account = await createAccount(t.runtime);
    const apiKey = `key-${randomUUID()}`;
    const saved = await t.app.inject({
      method: 'POST',
      url: `/admin/organizations/${account.organizationId}/integrations`,
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
      payload: { service: 'SERVICE_01', apiKey, baseUrl: sandbox.url },
    });
    expect(saved.statusCode, saved.body).toBe(200);
    expect(saved.body).not.toContain(apiKey);
    const integration = await findPreparedIntegration(
      t.runtime.database.db,
      t.runtime.secrets,
      account.clientId,
      account.organizationId,
      'SERVICE_01',
    );
    const viaIntegration = client.forAccount(market1AccountOf(integration!, { market1ApiUrl: undefined }));
    const viaSetting = client.forAccount(
      market1AccountOf({ ...integration!, baseUrl: null }, { market1ApiUrl: sandbox.url }),
    );
    expect(await viaIntegration.getBalance()).toEqual(await viaSetting.getBalance());
    expect(await viaIntegration.getBalance()).toEqual(await connectorFor(apiKey).getBalance());
  });
});
