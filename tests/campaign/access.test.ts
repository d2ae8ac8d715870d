/**
 * The access errors of every campaign operation of this part (spec §7, D1.3, D2.2–D2.5, D10.1; P108) through
 * HTTP: no token, READ tokens on writes, a missing organization or marketplace, an unsupported service, another
 * client's organization, no prepared integration, an expired subscription (on the paid operations), SUPPORT users
 * on the import (and not on the lookups), and a revoked marketplace key.
 */
import { describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { expectError, send } from '../helpers/http.ts';
import { waitForTask } from '../helpers/tasks.ts';
import {
  campaignAccount,
  campaignRequest,
  setSubscription,
  useCampaignApp,
  type CampaignAccount,
} from './kit.ts';
import type { TmsTask } from '../../src/modules/task/schemas.ts';

const context = useCampaignApp();

/** One operation and how to call it for an organization. */
interface Operation {
  name: string;
  method: 'GET' | 'POST';
  write: boolean;
  /** Takes `service` as a query parameter. */
  service: boolean;
  /** Listed by spec §7 with `error_subscription_expired`, so refused once the subscription ended (D1.3). */
  paid: boolean;
  query: (organizationId: number | undefined, campaignId: number) => Record<string, string | number>;
  body?: object;
}

const organization = (organizationId: number | undefined): Record<string, number> =>
  organizationId === undefined ? {} : { organizationId };

const OPERATIONS: Operation[] = [
  {
    name: 'updateCampaigns',
    method: 'GET',
    write: false,
    service: true,
    paid: false,
    query: (id) => ({ ...organization(id), service: 'SERVICE_01' }),
  },
  {
    name: 'reloadCampaignStats',
    method: 'GET',
    write: false,
    service: true,
    paid: false,
    query: (id) => ({
      ...organization(id),
      service: 'SERVICE_01',
      dateFrom: '2024-01-01',
      dateTo: '2024-01-02',
    }),
  },
  {
    name: 'updateStatusCampaign',
    method: 'POST',
    write: true,
    service: false,
    paid: true,
    query: (id, campaignId) => ({ ...organization(id), campaignId, status: 'PAUSED' }),
  },
  {
    name: 'createCampaign',
    method: 'POST',
    write: true,
    service: false,
    paid: true,
    query: (id) => organization(id),
    body: { type: 'IN_SEARCH_AND_CATALOG', name: 'x', nms: '1' },
  },
  {
    name: 'getMarket1Subjects',
    method: 'GET',
    write: false,
    service: false,
    paid: true,
    query: (id) => ({ ...organization(id), query: 'a', limit: 3 }),
  },
  {
    name: 'getCampaignBalance',
    method: 'GET',
    write: false,
    service: true,
    paid: false,
    query: (id) => ({ ...organization(id), service: 'SERVICE_01' }),
  },
];

const campaignOf = new Map<number, number>();

/** A campaign row of the account's organization, written directly once (the status change needs one). */
async function storedCampaign(account: CampaignAccount): Promise<number> {
  const known = campaignOf.get(account.organizationId);
  if (known !== undefined) return known;
  const row = await context.t.runtime.database.db
    .insertInto('campaign')
    .values({
      client_id: account.clientId,
      organization_id: account.organizationId,
      service: 'SERVICE_01',
      external_id: 1,
      name: 'Stored',
      type: 'AUTO',
      status: 'ACTIVE',
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  campaignOf.set(account.organizationId, row.id);
  return row.id;
}

/** Calls `operation` for the account (its own organization unless told), with the token its access needs. */
async function call(
  operation: Operation,
  account: CampaignAccount,
  options: {
    organizationId?: number | null;
    query?: Record<string, string | number | undefined>;
    token?: string;
  } = {},
): Promise<LightMyRequestResponse> {
  const organizationId =
    options.organizationId === null ? undefined : (options.organizationId ?? account.organizationId);
  const query = { ...operation.query(organizationId, await storedCampaign(account)), ...options.query };
  return campaignRequest(
    context.t.app,
    options.token ?? (operation.write ? account.writeToken : account.readToken),
    operation.method,
    operation.name,
    Object.fromEntries(
      Object.entries(query).filter((entry): entry is [string, string | number] => entry[1] !== undefined),
    ),
    operation.body,
  );
}

describe.each(OPERATIONS)('$method /api/campaign/$name', (operation) => {
  it('answers 401 auth_required without a token', async () => {
    const response = await send(context.t.app, undefined, {
      method: operation.method,
      url: `/api/campaign/${operation.name}`,
      query: operation.query(1, 1),
    });
    expectError(response, 401, 'auth_required');
  });

  it('refuses a missing organization, another client’s organization and, if paid, an expired subscription', async () => {
    const account = await campaignAccount(context);
    expectError(await call(operation, account, { organizationId: null }), 400, 'error_no_organization');
    const other = await campaignAccount(context);
    expectError(
      await call(operation, account, { organizationId: other.organizationId }),
      400,
      'error_organization_not_found',
      { organizationId: other.organizationId },
    );
    await setSubscription(context.t.app, account.clientId, '2020-01-01T00:00:00.000Z');
    if (operation.paid) expectError(await call(operation, account), 400, 'error_subscription_expired');
    else expect((await call(operation, account)).body).not.toContain('error_subscription_expired');
    await setSubscription(context.t.app, account.clientId, '2999-01-01T00:00:00.000Z');
    expect((await call(operation, account)).body).not.toContain('error_subscription_expired');
  });

  it('refuses an organization without a prepared Market1 integration', async () => {
    const account = await campaignAccount(context, { integration: false });
    expectError(await call(operation, account), 400, 'error_prepared_integration_not_found', {
      organizationId: account.organizationId,
    });
  });

  it.runIf(operation.service)('refuses a missing marketplace and a service other than Market1', async () => {
    const account = await campaignAccount(context);
    const missing = await call(operation, account, { query: { service: undefined } });
    expectError(missing, 400, 'error_no_marketplace');
    const other = await call(operation, account, { query: { service: 'SERVICE_02' } });
    expectError(other, 400, 'error_unsupported_service', { service: 'SERVICE_02' });
  });

  it.runIf(operation.write)('refuses a READ token (error_access_denied)', async () => {
    const account = await campaignAccount(context);
    expectError(await call(operation, account, { token: account.readToken }), 400, 'error_access_denied');
  });
});

describe('roles and revoked keys', () => {
  it('refuses the import and the reload to SUPPORT users (analytics), not the lookups', async () => {
    const account = await campaignAccount(context, { role: 'SUPPORT' });
    for (const operation of OPERATIONS) {
      const response = await call(operation, account);
      if (operation.name === 'updateCampaigns' || operation.name === 'reloadCampaignStats')
        expectError(response, 400, 'error_analytics_access_denied');
      else expect(response.json<{ error?: string }>().error).not.toBe('error_analytics_access_denied');
    }
    const balance = await call(
      OPERATIONS.find((operation) => operation.name === 'getCampaignBalance')!,
      account,
    );
    expect(balance.statusCode, balance.body).toBe(200);
  });

  it('answers error_token_expired_or_revoked when the marketplace refuses the key, and ends the import in ERROR', async () => {
    const account = await campaignAccount(context);
    await context.sandbox.revoke(account.apiKey);
    for (const operation of OPERATIONS.filter((candidate) =>
      ['updateStatusCampaign', 'createCampaign', 'getMarket1Subjects', 'getCampaignBalance'].includes(
        candidate.name,
      ),
    ))
      expectError(await call(operation, account), 400, 'error_token_expired_or_revoked');
    const started = await call(OPERATIONS[0]!, account);
    expect(started.statusCode, started.body).toBe(200);
    const task = await waitForTask(context.t.app, account.readToken, started.json<TmsTask>().id, [
      'FINISHED',
      'ERROR',
    ]);
    expect(task).toMatchObject({ status: 'ERROR', retryNumber: 0 });
    expect(JSON.parse(task.messageParams ?? '{}')).toMatchObject({ error: 'error_token_expired_or_revoked' });
    expect(task.message).toBeTruthy();
  });
});
