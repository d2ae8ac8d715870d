/**
 * The campaign operations answered at once (spec §4.6, D10.1–D10.2; P105, P107, P108) through HTTP against the
 * Market1 sandbox: create (AUTO, IN_SEARCH_AND_CATALOG), the status change (start, pause, stop), the subject
 * lookup and the balance, each checked against what the sandbox then holds; and how they fail: validation, the
 * marketplace's refusals passed through, its outages, READ tokens, another client's or organization's campaign.
 */
import { describe, expect, it } from 'vitest';
import {
  expectEmpty,
  expectError,
  expectNotFound,
  expectValidation,
  MISSING_ID,
  type ErrorBody,
} from '../helpers/http.ts';
import { keyFingerprint, type SandboxRequestLog } from '../../src/connectors/market1/sandbox.ts';
import type { Campaign } from '../../src/modules/campaign/schemas.ts';
import { campaignAccount, campaignRequest, type CampaignAccount, useCampaignApp } from './kit.ts';

const context = useCampaignApp();

/** A subject of the account's sandbox catalog with two of its products. */
async function subjectWithProducts(account: CampaignAccount): Promise<{ subjectId: number; nms: number[] }> {
  const campaigns = await context.sandbox.connector(account.apiKey).listCampaigns();
  const campaign = campaigns.find((candidate) => candidate.type === 'AUTO' && candidate.subject !== null)!;
  return { subjectId: campaign.subject!.id, nms: campaign.externalProductIds.slice(0, 2) };
}

/** `POST createCampaign` with the WRITE token. */
const create = (account: CampaignAccount, body: object, organizationId: number = account.organizationId) =>
  campaignRequest(context.t.app, account.writeToken, 'POST', 'createCampaign', { organizationId }, body);

/** Creates an AUTO campaign without `sum` (READY on the marketplace, no budget) and returns it. */
async function createAuto(account: CampaignAccount, name: string): Promise<Campaign> {
  const { subjectId, nms } = await subjectWithProducts(account);
  const response = await create(account, { type: 'AUTO', name, categoryId: subjectId, nms: nms.join(',') });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<Campaign>();
}

/** Creates an AUTO campaign and sets its budget in the cabinet, so that it can start (P177). */
async function createReady(account: CampaignAccount): Promise<Campaign> {
  const campaign = await createAuto(account, 'Ready');
  await context.sandbox.setBudget(account.apiKey, campaign.externalId, 1000);
  return campaign;
}

/** The sandbox's log of the requests of `account`'s key whose path passes `wanted`. */
async function requestsOf(account: CampaignAccount, wanted: (path: string) => boolean) {
  const { requests } = (await (await fetch(`${context.sandbox.url}/__sandbox/requests`)).json()) as {
    requests: SandboxRequestLog[];
  };
  return requests.filter((request) => request.key === keyFingerprint(account.apiKey) && wanted(request.path));
}

/** `POST updateStatusCampaign` with the WRITE token. */
const setStatus = (
  account: CampaignAccount,
  campaignId: number,
  status: string,
  token = account.writeToken,
) =>
  campaignRequest(context.t.app, token, 'POST', 'updateStatusCampaign', {
    campaignId,
    status,
    organizationId: account.organizationId,
  });

describe('POST /api/campaign/createCampaign', () => {
  it('creates a unified-bid (AUTO) campaign on the marketplace and stores it READY, without a budget (P177)', async () => {
    const account = await campaignAccount(context);
    const market1 = context.sandbox.connector(account.apiKey);
    const before = await market1.getBalance();
    const { subjectId, nms } = await subjectWithProducts(account);
    const response = await create(account, {
      type: 'AUTO',
      name: '  Autumn sale  ',
      categoryId: subjectId,
      nms: nms.join(','),
      sum: 600,
      writeOffType: 'NET',
      onPause: true,
    });
    expect(response.statusCode, response.body).toBe(200);
    const campaign = response.json<Campaign>();
    // `sum`, `writeOffType` and `onPause` are not applied: the answer says what the marketplace holds.
    expect(campaign).toMatchObject({
      name: 'Autumn sale',
      campaignName: 'Autumn sale',
      type: 'AUTO',
      statusType: 'READY',
      startDate: null,
      sum: 0,
      onPause: false,
      writeOffType: null,
      categoryId: subjectId,
      nms: [...nms].sort((a, b) => a - b).join(','),
      clientId: account.clientId,
      organizationId: account.organizationId,
      service: 'SERVICE_01',
    });
    expect(await market1.getBalance()).toEqual(before);
    const [onMarketplace] = await market1.getCampaigns([campaign.externalId]);
    expect(onMarketplace).toMatchObject({
      name: 'Autumn sale',
      status: 'READY',
      externalProductIds: campaign.nms.split(',').map(Number),
    });
    const stored = await context.t.runtime.database.db
      .selectFrom('campaign')
      .select(['id', 'external_id', 'write_off_type'])
      .where('client_id', '=', account.clientId)
      .where('id', '=', campaign.id)
      .executeTakeFirstOrThrow();
    expect(stored).toEqual({ id: campaign.id, external_id: campaign.externalId, write_off_type: null });
    // Only the create reached the marketplace: no budget deposit (status 11 only), no start.
    const changes = await requestsOf(account, (path) =>
      ['/adv/v1/budget/deposit', '/adv/v0/start'].includes(path),
    );
    expect(changes).toEqual([]);
    // Without `sum` the create is the same.
    expect(await createAuto(account, 'Plain')).toMatchObject({ type: 'AUTO', statusType: 'READY' });
  });

  it('creates a search-and-catalog campaign from one product, READY', async () => {
    const account = await campaignAccount(context);
    const { nms } = await subjectWithProducts(account);
    const response = await create(account, {
      type: 'IN_SEARCH_AND_CATALOG',
      campaignName: 'Search',
      externalProductId: nms[0],
    });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toMatchObject({
      name: 'Search',
      type: 'IN_SEARCH_AND_CATALOG',
      statusType: 'READY',
      nms: String(nms[0]),
      externalProductId: nms[0],
    });
  });

  it('refuses what it cannot create before asking the marketplace', async () => {
    const account = await campaignAccount(context);
    const { subjectId, nms } = await subjectWithProducts(account);
    const auto = { type: 'AUTO', name: 'A', categoryId: subjectId, nms: nms.join(','), sum: 600 };
    expectValidation(await create(account, { ...auto, type: 'IN_CARD' }), 'type');
    expectValidation(await create(account, { ...auto, type: 'SOMETHING' }), 'type');
    expectValidation(await create(account, { name: 'A', nms: '1' }), 'type');
    expectValidation(await create(account, { ...auto, name: ' ' }), 'name');
    expectValidation(await create(account, { ...auto, nms: undefined }), 'nms');
    expectValidation(await create(account, { ...auto, nms: '1;2' }), 'nms');
    expectValidation(await create(account, { ...auto, categoryId: undefined }), 'categoryId');
    expectError(
      await create(account, { ...auto, service: 'SERVICE_02' }),
      400,
      'error_service_not_supported',
    );
    expect(await requestsOf(account, (path) => path.endsWith('save-ad'))).toEqual([]);
  });

  it("passes the marketplace's refusal through as error_market1_api with its message", async () => {
    const account = await campaignAccount(context);
    const refused = await create(account, { type: 'IN_SEARCH_AND_CATALOG', name: 'Foreign', nms: '1' });
    expectError(refused, 400, 'error_market1_api', { message: 'Товар 1 не найден у продавца' });
    // A new campaign without a budget set in the cabinet: the marketplace's 422 on its start comes through.
    const campaign = await createAuto(account, 'No budget');
    const start = await setStatus(account, campaign.id, 'ACTIVE');
    expectError(start, 400, 'error_market1_api');
    const { message } = start.json<ErrorBody & { params: { message: string } }>().params;
    expect(message).toMatch(/no budget/);
    expect(start.json<ErrorBody>().localMessage).toContain(message);
    const stored = await context.t.runtime.database.db
      .selectFrom('campaign')
      .select('status')
      .where('client_id', '=', account.clientId)
      .where('id', '=', campaign.id)
      .executeTakeFirstOrThrow();
    expect(stored.status).toBe('READY');
  });

  it('is a write operation: a READ token is refused', async () => {
    const account = await campaignAccount(context);
    const response = await campaignRequest(
      context.t.app,
      account.readToken,
      'POST',
      'createCampaign',
      { organizationId: account.organizationId },
      { type: 'IN_SEARCH_AND_CATALOG', name: 'x', nms: '1' },
    );
    expectError(response, 400, 'error_access_denied');
  });
});

describe('POST /api/campaign/updateStatusCampaign', () => {
  it('starts, pauses and stops a campaign on the marketplace and stores each status', async () => {
    const account = await campaignAccount(context);
    const campaign = await createReady(account);
    const market1 = context.sandbox.connector(account.apiKey);
    const stored = () =>
      context.t.runtime.database.db
        .selectFrom('campaign')
        .select(['status', 'on_pause'])
        .where('client_id', '=', account.clientId)
        .where('id', '=', campaign.id)
        .executeTakeFirstOrThrow();
    for (const [status, expected] of [
      ['ACTIVE', 'ACTIVE'],
      ['PAUSED', 'PAUSED'],
      ['CANCELLED', 'FINISHED'],
    ] as const) {
      expectEmpty(await setStatus(account, campaign.id, status));
      const [onMarketplace] = await market1.getCampaigns([campaign.externalId]);
      expect(onMarketplace!.status).toBe(expected);
      expect(await stored()).toEqual({ status: expected, on_pause: expected === 'PAUSED' });
    }
    // A finished campaign cannot start again: the marketplace's 422 comes through, nothing is stored.
    const refused = await setStatus(account, campaign.id, 'ACTIVE');
    const body = expectError(refused, 400, 'error_market1_api');
    expect(String(body.params.message).length).toBeGreaterThan(0);
    expect((await stored()).status).toBe('FINISHED');
  });

  it('refuses statuses that cannot be set, unknown campaigns and campaigns of others', async () => {
    const account = await campaignAccount(context);
    const campaign = await createReady(account);
    expectValidation(await setStatus(account, campaign.id, 'DELETED'), 'status');
    expectValidation(await setStatus(account, campaign.id, 'READY'), 'status');
    expectValidation(await setStatus(account, campaign.id, 'NOPE'), 'status');
    expectNotFound(await setStatus(account, MISSING_ID, 'PAUSED'), MISSING_ID);

    const other = await campaignAccount(context);
    // Another client's campaign with the other client's own organization: not found, never changed.
    const foreign = await campaignRequest(context.t.app, other.writeToken, 'POST', 'updateStatusCampaign', {
      campaignId: campaign.id,
      status: 'ACTIVE',
      organizationId: other.organizationId,
    });
    expectNotFound(foreign, campaign.id);
    // Another client's campaign with its organization: the organization is not the caller's.
    const foreignOrganization = await campaignRequest(
      context.t.app,
      other.writeToken,
      'POST',
      'updateStatusCampaign',
      {
        campaignId: campaign.id,
        status: 'ACTIVE',
        organizationId: account.organizationId,
      },
    );
    expectError(foreignOrganization, 400, 'error_organization_not_found');
    // The caller's campaign under another organization of the caller.
    const secondOrganization = await account.addOrganization();
    const mismatch = await campaignRequest(
      context.t.app,
      account.writeToken,
      'POST',
      'updateStatusCampaign',
      {
        campaignId: campaign.id,
        status: 'ACTIVE',
        organizationId: secondOrganization,
      },
    );
    expectNotFound(mismatch, campaign.id);
    expectError(
      await setStatus(account, campaign.id, 'ACTIVE', account.readToken),
      400,
      'error_access_denied',
    );
    const [onMarketplace] = await context.sandbox
      .connector(account.apiKey)
      .getCampaigns([campaign.externalId]);
    expect(onMarketplace!.status).toBe('READY');
  });

  it('answers 503 error_market1_unavailable when the marketplace keeps failing, and stores nothing', async () => {
    const account = await campaignAccount(context);
    const campaign = await createReady(account);
    await context.sandbox.fault({ mode: '5xx', count: 1, path: '/adv/v0/start' });
    const response = await setStatus(account, campaign.id, 'ACTIVE');
    expectError(response, 503, 'error_market1_unavailable', { reason: 'http_5xx' });
    const stored = await context.t.runtime.database.db
      .selectFrom('campaign')
      .select('status')
      .where('client_id', '=', account.clientId)
      .where('id', '=', campaign.id)
      .executeTakeFirstOrThrow();
    expect(stored.status).toBe('READY');
  });
});

describe('GET /api/campaign/getMarket1Subjects', () => {
  it("answers the marketplace's subjects with their commissions as Market1Type", async () => {
    const account = await campaignAccount(context);
    const response = await campaignRequest(context.t.app, account.readToken, 'GET', 'getMarket1Subjects', {
      query: 'a',
      limit: 5,
      organizationId: account.organizationId,
    });
    expect(response.statusCode, response.body).toBe(200);
    const subjects = response.json<Array<Record<string, unknown>>>();
    const expected = await context.sandbox.connector(account.apiKey).searchSubjects('a', 5);
    expect(subjects).toHaveLength(expected.length);
    expect(subjects.length).toBeGreaterThan(0);
    expect(subjects.length).toBeLessThanOrEqual(5);
    for (const [index, subject] of expected.entries()) {
      expect(subjects[index]).toMatchObject({
        id: subject.id,
        market1Id: subject.id,
        parentId: subject.parentId,
        name: subject.name,
        hasParent: true,
      });
      if (subject.fbwCommission !== null)
        expect(subjects[index]).toMatchObject({
          commission: subject.fbwCommission,
          fbwCommission: subject.fbwCommission,
          fbsCommission: subject.fbsCommission,
        });
    }
  });

  it('requires query and a limit of 1..1000', async () => {
    const account = await campaignAccount(context);
    const request = (query: Record<string, string | number>) =>
      campaignRequest(context.t.app, account.readToken, 'GET', 'getMarket1Subjects', {
        organizationId: account.organizationId,
        ...query,
      });
    expectValidation(await request({ limit: 5 }), 'query');
    expectValidation(await request({ query: 'a' }), 'limit');
    expectValidation(await request({ query: 'a', limit: 0 }), 'limit');
    expectValidation(await request({ query: 'a', limit: 1001 }), 'limit');
  });
});

describe('GET /api/campaign/getCampaignBalance', () => {
  it("answers the marketplace's balance, net and bonus in whole roubles", async () => {
    const account = await campaignAccount(context);
    const response = await campaignRequest(context.t.app, account.readToken, 'GET', 'getCampaignBalance', {
      service: 'SERVICE_01',
      organizationId: account.organizationId,
    });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toEqual(await context.sandbox.connector(account.apiKey).getBalance());
  });
});
