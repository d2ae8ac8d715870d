/**
 * Campaign statistics through HTTP (spec §4.6 getStatCampaigns, getTotalStatCampaigns, getCampaigns; D4, D10.4;
 * P110–P114): the formulas against hand-computed values (zero denominators, rounding), day ranges read from the
 * running totals, UNALLOCATED rows, every sortBy, paging and count, the filters, top N, the access errors of
 * spec §7 and tenancy. Data is written with the statistics fixture (our real database).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { Value } from 'typebox/value';
import { useTestApp, type TestApp } from '../helpers/test-app.ts';
import { createAccount, type TestAccount } from '../helpers/factories.ts';
import { expectError, expectValidation, send, MISSING_ID } from '../helpers/http.ts';
import {
  FindResponseStatCampaign,
  type CampaignTotalStats,
  type StatCampaign,
} from '../../src/modules/campaign/statistics.schemas.ts';
import type { Campaign } from '../../src/modules/campaign/schemas.ts';
import { CAMPAIGN_SORT_FIELDS } from '../../src/modules/campaign/filter.ts';
import { refreshCampaignTotals } from '../../src/modules/campaign/statistic-totals.ts';
import { insertCampaign, insertDays } from './statistics-kit.ts';

let t: TestApp;
let account: TestAccount;
let stranger: TestAccount;
let secondOrganization: number;
const ids: Record<'alpha' | 'beta' | 'gamma' | 'delta' | 'other', number> = {
  alpha: 0,
  beta: 0,
  gamma: 0,
  delta: 0,
  other: 0,
};
const statuses = new Map<number, string>();

useTestApp(
  async (app) => {
    t = app;
    account = await createAccount(app.runtime);
    stranger = await createAccount(app.runtime);
    secondOrganization = await account.addOrganization();
  },
  {},
  { workers: false },
);

type Page<T> = { rows: T[]; page: number; total?: number };
const MARCH = { service: 'SERVICE_01', dateFrom: '2026-03-01', dateTo: '2026-03-31' };

const get = (url: string, query: Record<string, string | number | boolean | number[]>, token?: string) =>
  send(t.app, token ?? account.readToken, {
    method: 'GET',
    url: `/api/campaign/${url}`,
    query: { organizationId: account.organizationId, ...query },
  });

async function stats(
  query: Record<string, string | number | boolean | number[]>,
): Promise<Page<StatCampaign>> {
  const response = await get('getStatCampaigns', query);
  expect(response.statusCode, response.body).toBe(200);
  return response.json<Page<StatCampaign>>();
}

const rowOf = (page: Page<StatCampaign>, campaignId: number, rowType = 'CAMPAIGN') =>
  page.rows.find((row) => row.campaignId === campaignId && row.rowType === rowType);

beforeAll(async () => {
  const db = t.runtime.database.db;
  const owner = { clientId: account.clientId, organizationId: account.organizationId };
  ids.alpha = await insertCampaign(db, owner, {
    name: 'Alpha shoes',
    category_name: 'Shoes',
    external_product_ids: [111, 222],
    type: 'IN_SEARCH',
    type_code: 6,
    create_date: '2026-01-05T10:00:00Z',
    start_date: '2026-02-01T10:00:00Z',
  });
  ids.beta = await insertCampaign(db, owner, {
    // Lower case: name sorts ignore case (P222), so it comes before `Delta` and `Hats`.
    name: 'beta bags',
    status: 'PAUSED',
    category_name: 'bags',
    external_product_ids: [333],
    create_date: '2026-01-03T10:00:00Z',
  });
  ids.gamma = await insertCampaign(db, owner, {
    name: 'Gamma',
    external_product_ids: [444],
    type: 'IN_CARD',
    type_code: 5,
    create_date: '2026-01-07T10:00:00.25Z',
  });
  ids.delta = await insertCampaign(db, owner, {
    name: 'Delta',
    status: 'FINISHED',
    category_name: 'Hats',
    create_date: '2026-01-02T10:00:00Z',
  });
  ids.other = await insertCampaign(
    db,
    { clientId: account.clientId, organizationId: secondOrganization },
    { name: 'Other organization' },
  );
  for (const [name, id] of Object.entries(ids))
    statuses.set(id, { beta: 'PAUSED', delta: 'FINISHED' }[name] ?? 'ACTIVE');
  await insertDays(db, owner, ids.alpha, [
    {
      date: '2026-03-01',
      product: 111,
      views: 1000,
      clicks: 30,
      expenses: '150.50',
      addCart: 5,
      orders: 3,
      productOrders: 4,
      ordersAmount: '4500.00',
    },
    { date: '2026-03-02', product: 111, views: 500, clicks: 20, expenses: '100.00' },
    { date: '2026-03-02', views: 200, clicks: 10, expenses: '50.00', orders: 1, ordersAmount: '1000.00' },
    { date: '2026-02-27', product: 111, views: 9999, clicks: 999, expenses: '999.99' },
  ]);
  // Written later and out of order: the running totals are rebuilt from that day on.
  await insertDays(db, owner, ids.alpha, [
    { date: '2026-03-05', product: 222, views: 300, clicks: 5, expenses: '20.00' },
  ]);
  await insertDays(db, owner, ids.beta, [
    { date: '2026-02-28', product: 333, views: 100, clicks: 7, expenses: '10.00' },
  ]);
  await insertDays(db, owner, ids.gamma, [{ date: '2026-03-01', product: 444, expenses: '5.00' }]);
  await insertDays(db, owner, ids.delta, [
    { date: '2026-03-10', product: 555, views: 800, clicks: 1, expenses: '0.01' },
  ]);
  await insertDays(db, { clientId: account.clientId, organizationId: secondOrganization }, ids.other, [
    { date: '2026-03-03', product: 666, views: 50, clicks: 2, expenses: '3.00' },
  ]);
});

describe('getStatCampaigns: values', () => {
  it('sums a range from the running totals and derives D10.4 values rounded to 2 decimals', async () => {
    const page = await stats(MARCH);
    expect(rowOf(page, ids.alpha)).toMatchObject({
      rowType: 'CAMPAIGN',
      uniqueId: `CAMPAIGN:${ids.alpha}`,
      campaignName: 'Alpha shoes',
      campaignType: 'IN_SEARCH',
      categoryName: 'Shoes',
      service: 'SERVICE_01',
      organizationId: account.organizationId,
      clientId: account.clientId,
      currency: 'RUB',
      views: 1800,
      clicks: 55,
      expenses: 270.5,
      quantityAddCart: 5,
      quantityOrders: 3,
      quantityProductOrders: 4,
      ordersAmount: 4500,
      ratioClicksViews: 3.06, // 55 / 1800 × 100 = 3.0555…
      averageCost: 4.92, // 270.50 / 55 = 4.918…
      ratioOrdersOfVisits: 5.45, // 3 / 55 × 100 = 5.4545…
      drr: 6.01, // 270.50 / 4500 × 100 = 6.0111…
      cps: 90.17, // 270.50 / 3 = 90.1666…
    });
    expect(rowOf(page, ids.alpha, 'UNALLOCATED')).toMatchObject({
      uniqueId: `UNALLOCATED:${ids.alpha}`,
      views: 200,
      clicks: 10,
      expenses: 50,
      quantityOrders: 1,
      ordersAmount: 1000,
      ratioClicksViews: 5,
      averageCost: 5,
      ratioOrdersOfVisits: 10,
      drr: 5,
      cps: 50,
    });
  });

  it("shows each campaign's own fields as getCampaigns does (times ISO 8601 UTC with milliseconds)", async () => {
    const page = await stats(MARCH);
    const response = await get('getCampaigns', { ...MARCH, organizationIds: [secondOrganization] });
    expect(response.statusCode, response.body).toBe(200);
    const campaigns = new Map(
      response.json<Page<Campaign>>().rows.map((campaign) => [campaign.id, campaign]),
    );
    expect(page.rows.length).toBeGreaterThan(0);
    for (const row of page.rows) {
      const campaign = campaigns.get(row.campaignId);
      expect(campaign).toBeDefined();
      expect(row).toMatchObject({
        externalId: campaign?.externalId,
        campaignName: campaign?.name,
        campaignType: campaign?.type,
        categoryName: campaign?.categoryName,
        service: campaign?.service,
        createDate: campaign?.createDate,
        startDate: campaign?.startDate,
        endDate: campaign?.endDate,
        clientId: account.clientId,
        organizationId: campaign?.organizationId,
      });
    }
    expect(rowOf(page, ids.alpha)).toMatchObject({
      createDate: '2026-01-05T10:00:00.000Z',
      startDate: '2026-02-01T10:00:00.000Z',
      endDate: null,
      categoryName: 'Shoes',
    });
    expect(rowOf(page, ids.gamma)).toMatchObject({
      createDate: '2026-01-07T10:00:00.250Z',
      categoryName: null,
    });
  });

  it('answers JSON of its response schema, decimals written as a JavaScript client writes them (P155)', async () => {
    for (const query of [
      { ...MARCH, count: true },
      { ...MARCH, sortBy: 'EXPENSES' },
      { ...MARCH, productExternalId: 111 },
      { ...MARCH, page: 9, count: true },
    ]) {
      const response = await get('getStatCampaigns', query);
      expect(response.statusCode, response.body).toBe(200);
      expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
      const body: unknown = response.json();
      expect([...Value.Errors(FindResponseStatCampaign, body)], JSON.stringify(query)).toEqual([]);
    }
    const text = (await get('getStatCampaigns', MARCH)).body;
    const alpha = text.slice(text.indexOf(`"uniqueId":"CAMPAIGN:${ids.alpha}"`));
    expect(alpha).toMatch(/^[^}]*"expenses":270\.5,[^}]*"ordersAmount":4500,[^}]*"cps":90\.17}/);
    expect(text).not.toMatch(/":-?\d+\.(\d0|0)[,}]/);
  });

  it('answers 0 for a zero denominator and rounds half away from zero', async () => {
    const page = await stats(MARCH);
    expect(rowOf(page, ids.gamma)).toMatchObject({
      views: 0,
      clicks: 0,
      expenses: 5,
      ratioClicksViews: 0,
      averageCost: 0,
      ratioOrdersOfVisits: 0,
      drr: 0,
      cps: 0,
    });
    // 1 / 800 × 100 = 0.125 → 0.13
    expect(rowOf(page, ids.delta)).toMatchObject({
      views: 800,
      clicks: 1,
      ratioClicksViews: 0.13,
      averageCost: 0.01,
    });
    // A campaign without statistics in the range: a CAMPAIGN row of zeros, no UNALLOCATED row.
    expect(rowOf(page, ids.beta)).toMatchObject({ views: 0, clicks: 0, expenses: 0 });
    expect(rowOf(page, ids.beta, 'UNALLOCATED')).toBeUndefined();
    expect(rowOf(page, ids.gamma, 'UNALLOCATED')).toBeUndefined();
  });

  it('reads any day range: one day, open bounds, date-times as Moscow days', async () => {
    const oneDay = await stats({ service: 'SERVICE_01', dateFrom: '2026-03-02', dateTo: '2026-03-02' });
    expect(rowOf(oneDay, ids.alpha)).toMatchObject({ views: 500, clicks: 20, expenses: 100 });
    expect(rowOf(oneDay, ids.alpha, 'UNALLOCATED')).toMatchObject({ views: 200 });
    const all = await stats({ service: 'SERVICE_01' });
    expect(rowOf(all, ids.alpha)).toMatchObject({ views: 1800 + 9999, clicks: 55 + 999 });
    expect(rowOf(all, ids.beta)).toMatchObject({ views: 100, clicks: 7 });
    const untilFirst = await stats({ service: 'SERVICE_01', dateTo: '2026-03-01' });
    expect(rowOf(untilFirst, ids.alpha)).toMatchObject({ views: 1000 + 9999 });
    // 2026-03-01T22:30:00Z is 01:30 on 2 March in Moscow.
    const moscow = await stats({
      service: 'SERVICE_01',
      dateFrom: '2026-03-01T22:30:00Z',
      dateTo: '2026-03-02T20:00:00.000+00:00',
    });
    expect(rowOf(moscow, ids.alpha)).toMatchObject({ views: 500 });
  });

  it('sums only the product’s daily rows with productExternalId', async () => {
    const page = await stats({ ...MARCH, productExternalId: 111 });
    expect(page.rows.map((row) => row.campaignId)).toEqual([ids.alpha]);
    expect(page.rows[0]).toMatchObject({
      rowType: 'CAMPAIGN',
      views: 1500,
      clicks: 50,
      expenses: 250.5,
      cps: 83.5,
    });
  });
});

describe('getStatCampaigns: sorting and paging', () => {
  const key = (row: StatCampaign, sortBy: (typeof CAMPAIGN_SORT_FIELDS)[number]): string | number | null => {
    const values: Record<string, string | number | null> = {
      EXTERNALID: row.externalId,
      SERVICE: row.service,
      CAMPAIGNNAME: row.campaignName.toLowerCase(),
      CAMPAIGNTYPE: row.campaignType,
      CATEGORYNAME: row.categoryName?.toLowerCase() ?? null,
      VIEWS: row.views,
      CLICKS: row.clicks,
      RATIOCLICKSVIEWS: row.ratioClicksViews,
      AVERAGECOST: row.averageCost,
      EXPENSES: row.expenses,
      QUANTITYADDCART: row.quantityAddCart,
      QUANTITYORDERS: row.quantityOrders,
      RATIOORDERSOFVISITS: row.ratioOrdersOfVisits,
      QUANTITYPRODUCTORDERS: row.quantityProductOrders,
      ORDERSAMOUNT: row.ordersAmount,
      CREATEDATE: row.createDate,
      STATUS: statuses.get(row.campaignId) ?? null,
    };
    return values[sortBy] ?? null;
  };

  /** PostgreSQL's order: nulls last ascending, first descending; ties by campaign id in the same direction. */
  function compare(sortBy: (typeof CAMPAIGN_SORT_FIELDS)[number], ascending: boolean) {
    return (a: StatCampaign, b: StatCampaign) => {
      const sign = ascending ? 1 : -1;
      const [x, y] = [key(a, sortBy), key(b, sortBy)];
      if (x !== y) {
        if (x === null) return sign;
        if (y === null) return -sign;
        return (x < y ? -1 : 1) * sign;
      }
      if (a.campaignId !== b.campaignId) return (a.campaignId - b.campaignId) * sign;
      return a.rowType < b.rowType ? -1 : a.rowType > b.rowType ? 1 : 0;
    };
  }

  it.each(
    CAMPAIGN_SORT_FIELDS.flatMap((sortBy) => [true, false].map((ascending) => ({ sortBy, ascending }))),
  )('sorts by $sortBy (ascending $ascending), ties by campaign id', async ({ sortBy, ascending }) => {
    const page = await stats({ ...MARCH, sortBy, ascending });
    expect(page.rows).toHaveLength(5);
    expect(page.rows).toEqual([...page.rows].sort(compare(sortBy, ascending)));
  });

  it('defaults to campaign id descending, the UNALLOCATED row after its campaign', async () => {
    const page = await stats(MARCH);
    expect(page.rows.map((row) => `${row.rowType}:${row.campaignId}`)).toEqual([
      `CAMPAIGN:${ids.delta}`,
      `CAMPAIGN:${ids.gamma}`,
      `CAMPAIGN:${ids.beta}`,
      `CAMPAIGN:${ids.alpha}`,
      `UNALLOCATED:${ids.alpha}`,
    ]);
    expect(page.total).toBeUndefined();
    expect(page.page).toBe(1);
  });

  it.each<Record<string, string>>([{ sortBy: 'VIEWS' }, { sortBy: 'CAMPAIGNNAME' }, {}])(
    'pages without overlap or gap and counts only when asked (%o)',
    async (order) => {
      const whole = await stats({ ...MARCH, ...order });
      const seen: string[] = [];
      for (let page = 1; page <= 3; page++) {
        const part = await stats({ ...MARCH, ...order, limit: 2, page, count: true });
        expect(part.page).toBe(page);
        expect(part.total).toBe(5);
        seen.push(...part.rows.map((row) => row.uniqueId));
      }
      expect(seen).toEqual(whole.rows.map((row) => row.uniqueId));
      const beyond = await stats({ ...MARCH, ...order, limit: 2, page: 9, count: true });
      expect(beyond).toEqual({ rows: [], page: 9, total: 5 });
      const byOffset = await stats({ ...MARCH, ...order, limit: 2, offset: 1 });
      expect(byOffset.page).toBe(1);
      expect(byOffset.rows.map((row) => row.uniqueId)).toEqual(seen.slice(1, 3));
      const statOnly = await stats({ ...MARCH, ...order, isStatCampaign: true, count: true, limit: 1 });
      expect(statOnly.total).toBe(4);
    },
  );

  it('refuses out-of-range paging', async () => {
    expectValidation(await get('getStatCampaigns', { ...MARCH, limit: 501 }), 'limit');
    expectValidation(await get('getStatCampaigns', { ...MARCH, page: 0 }), 'page');
    expectValidation(await get('getStatCampaigns', { ...MARCH, sortBy: 'PRICE' }), 'sortBy');
  });
});

describe('getStatCampaigns: filters', () => {
  const campaignIds = async (query: Record<string, string | number | boolean | number[]>) => [
    ...new Set((await stats({ ...MARCH, ...query })).rows.map((row) => row.campaignId)),
  ];

  it('filters by name part, external id, statuses, type code, start and statistics presence', async () => {
    expect(await campaignIds({ query: 'shoe' })).toEqual([ids.alpha]);
    expect(await campaignIds({ query: '100%' })).toEqual([]);
    const alpha = (await stats(MARCH)).rows.find((row) => row.campaignId === ids.alpha) as StatCampaign;
    expect(await campaignIds({ query: String(alpha.externalId) })).toEqual([ids.alpha]);
    expect(await campaignIds({ status: 'PAUSED,finished' })).toEqual([ids.delta, ids.beta]);
    expect(await campaignIds({ campaignStatus: 'PAUSED' })).toEqual([ids.beta]);
    expect(await campaignIds({ status: 'PAUSED', campaignStatus: 'ACTIVE' })).toEqual([]);
    expect(await campaignIds({ type: 5 })).toEqual([ids.gamma]);
    expect(await campaignIds({ dateStart: '2026-01-15' })).toEqual([ids.alpha]);
    expect(await campaignIds({ isStatCampaign: true })).toEqual([ids.delta, ids.gamma, ids.alpha]);
  });

  it('adds the client’s other organizations with organizationIds', async () => {
    expect(await campaignIds({ organizationIds: [secondOrganization], isStatCampaign: true })).toEqual([
      ids.other,
      ids.delta,
      ids.gamma,
      ids.alpha,
    ]);
    const page = await stats({ ...MARCH, organizationIds: [secondOrganization], query: 'Other' });
    expect(page.rows[0]).toMatchObject({ organizationId: secondOrganization, views: 50 });
  });

  it('refuses malformed filter values naming the field', async () => {
    expectValidation(await get('getStatCampaigns', { ...MARCH, dateFrom: '2026-02-30' }), 'dateFrom');
    expectValidation(await get('getStatCampaigns', { ...MARCH, dateTo: 'yesterday' }), 'dateTo');
    // Year 0000 is not one of PostgreSQL's years: refused by name, not by the database.
    expectValidation(await get('getStatCampaigns', { ...MARCH, dateFrom: '0000-01-01' }), 'dateFrom');
    expectValidation(
      await get('getStatCampaigns', { ...MARCH, dateFrom: '0000-12-31T23:00:00Z' }),
      'dateFrom',
    );
    expectValidation(await get('getStatCampaigns', { ...MARCH, dateStart: '0000-06-01' }), 'dateStart');
    const earliest = await get('getStatCampaigns', {
      ...MARCH,
      dateFrom: '0001-01-01',
      dateStart: '0001-01-01',
    });
    expect(earliest.statusCode, earliest.body).toBe(200);
    expectValidation(
      await get('getStatCampaigns', { service: 'SERVICE_01', dateFrom: '2026-03-02', dateTo: '2026-03-01' }),
      'dateFrom',
    );
    expectValidation(await get('getStatCampaigns', { ...MARCH, status: 'RUNNING' }), 'status');
    for (const field of ['productExternalId', 'organizationIds', 'type', 'offset']) {
      const response = await get('getStatCampaigns', { ...MARCH, [field]: '99999999999999999999' });
      expect(response.statusCode, `${field}: ${response.body}`).toBe(400);
    }
    expectValidation(await get('getStatCampaigns', { ...MARCH, query: 'x'.repeat(201) }), 'query');
  });
});

describe('getTotalStatCampaigns', () => {
  it('answers the top N campaigns by clicks, views, expenses and average cost over the range', async () => {
    const response = await get('getTotalStatCampaigns', { ...MARCH, topN: 2 });
    expect(response.statusCode, response.body).toBe(200);
    const organizationName = (await stats(MARCH)).rows[0]?.organizationName;
    const stat = (campaign: string, value: number) => ({
      campaign,
      value,
      organizationId: account.organizationId,
      organizationName,
    });
    expect(response.json<CampaignTotalStats>()).toEqual({
      clicks: [stat('Alpha shoes', 65), stat('Delta', 1)],
      views: [stat('Alpha shoes', 2000), stat('Delta', 800)],
      expenses: [stat('Alpha shoes', 320.5), stat('Gamma', 5)],
      averageCost: [stat('Alpha shoes', 4.93), stat('Delta', 0.01)], // 320.50 / 65 = 4.9307…
    });
  });

  it('requires topN', async () => {
    expectValidation(await get('getTotalStatCampaigns', MARCH), 'topN');
    expectValidation(await get('getTotalStatCampaigns', { ...MARCH, topN: 0 }), 'topN');
  });
});

describe('getCampaigns', () => {
  it('pages the organization’s campaigns with the filter, sorted and counted', async () => {
    const response = await get('getCampaigns', {
      sortBy: 'CAMPAIGNNAME',
      ascending: true,
      count: true,
      limit: 3,
    });
    expect(response.statusCode, response.body).toBe(200);
    const page = response.json<Page<Campaign>>();
    expect(page.total).toBe(4);
    expect(page.rows.map((row) => row.name)).toEqual(['Alpha shoes', 'beta bags', 'Delta']);
    expect(page.rows[0]).toMatchObject({
      id: ids.alpha,
      statusType: 'ACTIVE',
      nms: '111,222',
      externalProductId: 111,
    });
    // The rows carry the count (P154); a page past the end has none, and is counted all the same.
    const beyond = (await get('getCampaigns', { count: true, limit: 3, page: 5 })).json<Page<Campaign>>();
    expect(beyond).toEqual({ rows: [], page: 5, total: 4 });
    const byExpenses = (
      await get('getCampaigns', { ...MARCH, sortBy: 'EXPENSES', isStatCampaign: true, count: true })
    ).json<Page<Campaign>>();
    expect(byExpenses.rows.map((row) => row.id)).toEqual([ids.alpha, ids.gamma, ids.delta]);
    expect(byExpenses.total).toBe(3);
    const paused = (await get('getCampaigns', { campaignStatus: 'PAUSED' })).json<Page<Campaign>>();
    expect(paused.rows.map((row) => row.id)).toEqual([ids.beta]);
  });

  it('requires the organization', async () => {
    expectError(
      await send(t.app, account.readToken, { method: 'GET', url: '/api/campaign/getCampaigns' }),
      400,
      'error_no_organization',
    );
  });
});

describe('access and tenancy', () => {
  it('answers the access errors of spec §7', async () => {
    expectError(await get('getStatCampaigns', { dateFrom: '2026-03-01' }), 400, 'error_no_marketplace');
    expectError(await get('getStatCampaigns', { service: 'SERVICE_02' }), 400, 'error_unsupported_service');
    expectError(
      await get('getTotalStatCampaigns', { service: 'SERVICE_02', topN: 1 }),
      400,
      'error_unsupported_service',
    );
    expectError(
      await send(t.app, account.readToken, {
        method: 'GET',
        url: '/api/campaign/getStatCampaigns',
        query: { service: 'SERVICE_01' },
      }),
      400,
      'error_no_organization',
    );
    expectError(
      await get('getStatCampaigns', { service: 'SERVICE_01', organizationId: MISSING_ID }),
      400,
      'error_organization_not_found',
    );
    expectError(
      await send(t.app, undefined, { method: 'GET', url: '/api/campaign/getStatCampaigns' }),
      401,
      'auth_required',
    );
  });

  it('never shows another client’s campaigns', async () => {
    for (const url of ['getStatCampaigns', 'getCampaigns'])
      expectError(await get(url, MARCH, stranger.readToken), 400, 'error_organization_not_found', {
        organizationId: account.organizationId,
      });
    expectError(
      await get('getTotalStatCampaigns', { ...MARCH, topN: 5 }, stranger.readToken),
      400,
      'error_organization_not_found',
    );
    const own = await send(t.app, stranger.readToken, {
      method: 'GET',
      url: '/api/campaign/getStatCampaigns',
      query: { ...MARCH, organizationId: stranger.organizationId, count: true },
    });
    expect(own.json()).toEqual({ rows: [], page: 1, total: 0 });
    const mixed = await send(t.app, stranger.readToken, {
      method: 'GET',
      url: '/api/campaign/getStatCampaigns',
      query: { ...MARCH, organizationId: stranger.organizationId, organizationIds: [account.organizationId] },
    });
    expectError(mixed, 400, 'error_organization_not_found', { organizationId: account.organizationId });
  });

  it('still answers a client whose subscription expired: reading stored statistics is not paid (D1.3)', async () => {
    const expired = await createAccount(t.runtime);
    await t.runtime.database.db
      .updateTable('client')
      .set({ subscription_expires_at: new Date(Date.now() - 60_000) })
      .where('id', '=', expired.clientId)
      .execute();
    const response = await send(t.app, expired.readToken, {
      method: 'GET',
      url: '/api/campaign/getStatCampaigns',
      query: { ...MARCH, organizationId: expired.organizationId },
    });
    expect(response.statusCode, response.body).toBe(200);
  });
});

describe('running totals', () => {
  it('follow rewritten and deleted days after refreshCampaignTotals, whatever day the rewrite starts at', async () => {
    const own = await createAccount(t.runtime);
    const owner = { clientId: own.clientId, organizationId: own.organizationId };
    const db = t.runtime.database.db;
    const campaignId = await insertCampaign(db, owner, { name: 'Rewritten' });
    const columns = { client_id: own.clientId, organization_id: own.organizationId };
    const days = ['2026-04-01', '2026-04-02', '2026-04-03', '2026-04-04'];
    await insertDays(
      db,
      owner,
      campaignId,
      days.map((date) => ({ date, product: 1, views: 10, clicks: 1, expenses: '1.10' })),
    );
    const read = async (dateFrom: string, dateTo: string) => {
      const response = await send(t.app, own.readToken, {
        method: 'GET',
        url: '/api/campaign/getStatCampaigns',
        query: { service: 'SERVICE_01', organizationId: own.organizationId, dateFrom, dateTo },
      });
      expect(response.statusCode, response.body).toBe(200);
      return response.json<Page<StatCampaign>>().rows;
    };
    // With count and isStatCampaign: the days with statistics (P151) follow the daily rows too.
    const counted = async (dateFrom: string, dateTo: string) => {
      const response = await send(t.app, own.readToken, {
        method: 'GET',
        url: '/api/campaign/getStatCampaigns',
        query: {
          service: 'SERVICE_01',
          organizationId: own.organizationId,
          dateFrom,
          dateTo,
          count: true,
          isStatCampaign: true,
        },
      });
      expect(response.statusCode, response.body).toBe(200);
      const page = response.json<Page<StatCampaign>>();
      expect(page.rows).toHaveLength(page.total ?? -1);
      return page.total;
    };
    const storedDays = () =>
      db
        .selectFrom('campaign_statistic_days')
        .select(['days', 'unallocated_days'])
        .where('client_id', '=', own.clientId)
        .where('campaign_id', '=', campaignId)
        .executeTakeFirst();
    expect((await read('2026-04-02', '2026-04-03'))[0]).toMatchObject({ views: 20, expenses: 2.2 });
    expect(await counted('2026-04-03', '2026-04-03')).toBe(1);
    expect(await storedDays()).toEqual({ days: '{[2026-04-01,2026-04-05)}', unallocated_days: '{}' });
    // The import reloads 2 April with other numbers and a new unattributed row, and 3 April disappears.
    await db.transaction().execute(async (trx) => {
      await trx
        .deleteFrom('campaign_statistic_day')
        .where('client_id', '=', own.clientId)
        .where('campaign_id', '=', campaignId)
        .where('date', 'in', ['2026-04-02', '2026-04-03'])
        .execute();
      await trx
        .insertInto('campaign_statistic_day')
        .values([
          { campaign_id: campaignId, date: '2026-04-02', external_product_id: 1, ...columns, views: 7 },
          { campaign_id: campaignId, date: '2026-04-02', external_product_id: 0, ...columns, views: 3 },
        ])
        .execute();
      await refreshCampaignTotals(trx, own.clientId, [campaignId], '2026-04-02');
    });
    const rows = await read('2026-04-02', '2026-04-04');
    expect(rows.map((row) => [row.rowType, row.views, row.expenses])).toEqual([
      ['CAMPAIGN', 17, 1.1],
      ['UNALLOCATED', 3, 0],
    ]);
    expect((await read('2026-04-01', '2026-04-04'))[0]).toMatchObject({ views: 27, expenses: 2.2 });
    expect(await storedDays()).toEqual({
      days: '{[2026-04-01,2026-04-03),[2026-04-04,2026-04-05)}',
      unallocated_days: '{[2026-04-02,2026-04-03)}',
    });
    expect(await counted('2026-04-02', '2026-04-02')).toBe(2);
    expect(await counted('2026-04-03', '2026-04-03')).toBe(0);
    expect(await counted('2026-04-04', '2026-04-05')).toBe(1);
    expect(await counted('2026-04-01', '2026-04-04')).toBe(2);
    // Every day deleted: no statistics anywhere.
    await db.transaction().execute(async (trx) => {
      await trx
        .deleteFrom('campaign_statistic_day')
        .where('client_id', '=', own.clientId)
        .where('campaign_id', '=', campaignId)
        .execute();
      await refreshCampaignTotals(trx, own.clientId, [campaignId]);
    });
    expect(await storedDays()).toEqual({ days: '{}', unallocated_days: '{}' });
    expect(await counted('2026-03-01', '2026-04-30')).toBe(0);
  });
});

describe('running totals under concurrent writers', () => {
  it('two transactions refreshing the same campaign run one after the other', async () => {
    const own = await createAccount(t.runtime);
    const owner = { clientId: own.clientId, organizationId: own.organizationId };
    const db = t.runtime.database.db;
    const campaignId = await insertCampaign(db, owner, { name: 'Concurrent' });
    await insertDays(db, owner, campaignId, [{ date: '2026-05-01', product: 1, views: 5 }]);
    const refresh = (pauseMs: number) =>
      db.transaction().execute(async (trx) => {
        await refreshCampaignTotals(trx, owner.clientId, [campaignId], '2026-05-01');
        await new Promise((resolve) => setTimeout(resolve, pauseMs));
      });
    const first = refresh(300);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await Promise.all([first, refresh(0)]);
    const totals = await db
      .selectFrom('campaign_statistic_total')
      .select(['date', 'allocated_views'])
      .where('client_id', '=', owner.clientId)
      .where('campaign_id', '=', campaignId)
      .execute();
    expect(totals).toEqual([{ date: '2026-05-01', allocated_views: 5 }]);
  });
});
