/**
 * Test kit of the campaign group: an app on a database of the file's own (every runtime with workers runs the
 * campaign tasks it finds; a database per file keeps other files' workers off these tasks), the Market1 sandbox
 * on loopback with its control API and no rate limits, accounts whose organization has a prepared Market1
 * integration (a fresh sandbox account each), a connector reading the sandbox directly (the expected data), and
 * the stored campaigns and statistics of an organization.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect } from 'vitest';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { buildTestApp, TEST_ADMIN_TOKEN, type TestApp, type TestAppOptions } from '../helpers/test-app.ts';
import { createAccount, type TestAccount } from '../helpers/factories.ts';
import { send, type ApiRequest } from '../helpers/http.ts';
import { waitForTask, type TaskCondition } from '../helpers/tasks.ts';
import { createOwnDatabase, type OwnDatabase } from '../fixtures/webhook-kit.ts';
import { startMarket1Sandbox, type SandboxFault } from '../../src/connectors/market1/sandbox.ts';
import { Market1Client } from '../../src/connectors/market1/client.ts';
import type { Market1Connector } from '../../src/connectors/market1/connector.ts';
import type { SandboxServer } from '../../src/connectors/sandboxes.ts';
import type { TmsTask } from '../../src/modules/task/schemas.ts';
import { useConformanceCheck } from '../market1/openapi-conformance.ts';

export type { TmsTask };

/** Settings of every campaign test app: progress written at once, quick heartbeats and sweeps. */
export const CAMPAIGN_TEST_ENV: Record<string, string> = {
  TASK_PROGRESS_WRITE_MS: '20',
  TASK_HEARTBEAT_SECONDS: '1',
  TASK_SWEEP_SECONDS: '1',
  WEBHOOK_POLL_SECONDS: '1',
};

/** The Market1 sandbox of a test file with its control API (docs/market1.md). */
export interface Market1Sandbox {
  url: string;
  server: SandboxServer;
  /** `POST /__sandbox/faults`: the next `count` matching requests fail (or are slow). */
  fault(fault: Partial<SandboxFault> & { mode: SandboxFault['mode'] }): Promise<void>;
  /** `DELETE /__sandbox/faults`. */
  clearFaults(): Promise<void>;
  /** `POST /__sandbox/revoke`: the key gets 401 from now on. */
  revoke(apiKey: string): Promise<void>;
  /** `POST /__sandbox/budget`: what the seller does in the cabinet before a new campaign can start (P177). */
  setBudget(apiKey: string, externalId: number, sum: number): Promise<void>;
  /** A connector reading the sandbox account of `apiKey` directly (what the service should have stored). */
  connector(apiKey: string): Market1Connector;
}

/** What `useCampaignApp` provides once its `beforeAll` ran. */
export interface CampaignContext {
  t: TestApp;
  database: OwnDatabase;
  sandbox: Market1Sandbox;
}

async function control(url: string, method: 'POST' | 'DELETE', path: string, body?: object): Promise<void> {
  const response = await fetch(`${url}/__sandbox/${path}`, {
    method,
    ...(body && { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  expect(response.status, await response.clone().text()).toBe(204);
}

/**
 * Starts the Market1 sandbox on a free loopback port without rate limits; `onExchange` sees its traffic (the
 * conformance check of `useCampaignApp`).
 */
export async function startCampaignSandbox(
  onExchange?: Parameters<typeof startMarket1Sandbox>[0]['onExchange'],
): Promise<Market1Sandbox & { close(): Promise<void> }> {
  const server = await startMarket1Sandbox({ host: '127.0.0.1', port: 0, rateLimits: 'off', onExchange });
  const client = new Market1Client({ retry: { backoffMs: 10 } });
  return {
    url: server.url,
    server,
    fault: (fault) => control(server.url, 'POST', 'faults', fault),
    clearFaults: () => control(server.url, 'DELETE', 'faults'),
    revoke: (apiKey) => control(server.url, 'POST', 'revoke', { apiKey }),
    setBudget: (apiKey, id, sum) => control(server.url, 'POST', 'budget', { apiKey, id, sum }),
    connector: (apiKey) => client.forAccount({ apiKey, baseUrl: server.url }),
    async close() {
      client.close();
      await server.close();
    },
  };
}

/**
 * Builds this file's app on a database of its own with the Market1 sandbox, and closes everything after the
 * file. After each test, every exchange with the sandbox (faults aside) is checked against the marketplace's
 * published documents (`tests/market1/openapi-conformance.ts`).
 * @returns the context, filled in `beforeAll`
 */
export function useCampaignApp(
  env: Record<string, string> = {},
  options: TestAppOptions = {},
): CampaignContext {
  const context = {} as CampaignContext;
  let sandbox: Awaited<ReturnType<typeof startCampaignSandbox>> | undefined;
  // What the service sends to Market1 and what the sandbox answers must follow the published documents.
  const conformance = useConformanceCheck();
  beforeAll(async () => {
    context.database = await createOwnDatabase('campaign');
    sandbox = await startCampaignSandbox(conformance.onExchange);
    context.sandbox = sandbox;
    context.t = await buildTestApp({ ...CAMPAIGN_TEST_ENV, ...env }, context.database.url, options);
  });
  afterAll(async () => {
    await context.t?.close();
    await sandbox?.close();
    await context.database?.drop();
  });
  return context;
}

/** Saves a prepared Market1 integration of an organization through the admin API (D1.4). */
export async function prepareIntegration(
  app: FastifyInstance,
  organizationId: number,
  integration: { apiKey: string; baseUrl?: string; service?: string },
): Promise<void> {
  const response = await app.inject({
    method: 'POST',
    url: `/admin/organizations/${organizationId}/integrations`,
    headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
    payload: { service: 'SERVICE_01', ...integration },
  });
  expect(response.statusCode, response.body).toBe(200);
}

/** A test account whose organization reaches its own sandbox account with `apiKey`. */
export interface CampaignAccount extends TestAccount {
  apiKey: string;
}

/**
 * A fresh account (own client) whose organization has a Market1 integration with a fresh sandbox key.
 * @param options.role the user's role (default OWNER); `integration: false` leaves the integration out
 */
export async function campaignAccount(
  context: CampaignContext,
  options: {
    role?: 'OWNER' | 'ADMIN' | 'MANAGER' | 'SUPPORT';
    integration?: boolean;
    lang?: 'ru' | 'en';
  } = {},
): Promise<CampaignAccount> {
  const account = await createAccount(context.t.runtime, { role: options.role, lang: options.lang });
  const apiKey = `campaign-key-${randomUUID()}`;
  if (options.integration !== false)
    await prepareIntegration(context.t.app, account.organizationId, { apiKey, baseUrl: context.sandbox.url });
  return { ...account, apiKey };
}

/** Sets a client's subscription end through the admin API (D1.3); a past date expires it. */
export async function setSubscription(
  app: FastifyInstance,
  clientId: number,
  expiresAt: string | null,
): Promise<void> {
  const response = await app.inject({
    method: 'PATCH',
    url: `/admin/clients/${clientId}`,
    headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
    payload: { subscriptionExpiresAt: expiresAt },
  });
  expect(response.statusCode, response.body).toBe(200);
}

/** A request to `/api/campaign/{operation}`. */
export const campaignRequest = (
  app: FastifyInstance,
  token: string,
  method: ApiRequest['method'],
  operation: string,
  query: ApiRequest['query'] = {},
  payload?: unknown,
): Promise<LightMyRequestResponse> =>
  send(app, token, {
    method,
    url: `/api/campaign/${operation}`,
    query,
    ...(payload !== undefined && { payload }),
  });

/** `GET /api/campaign/updateCampaigns` for the account's organization; answers the task (status 200 checked). */
export async function startImport(app: FastifyInstance, account: TestAccount): Promise<TmsTask> {
  const response = await campaignRequest(app, account.readToken, 'GET', 'updateCampaigns', {
    organizationId: account.organizationId,
    service: 'SERVICE_01',
  });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<TmsTask>();
}

/** Imports the account's campaigns and waits for the task to end (FINISHED unless `until` says otherwise). */
export async function importCampaigns(
  app: FastifyInstance,
  account: TestAccount,
  until: TaskCondition = ['FINISHED', 'ERROR', 'INTERRUPTED'],
): Promise<TmsTask> {
  const task = await startImport(app, account);
  return waitForTask(app, account.readToken, task.id, until);
}

/** The task properties of an import or reload (`TmsTask.properties` is JSON text). */
export const propertiesOf = (task: TmsTask) =>
  JSON.parse(task.properties ?? '{}') as { dateFrom: string; dateTo: string; expensesOnly: boolean };

/** A stored statistics row as the tests compare it with the sandbox's. */
export interface StoredStatistic {
  externalId: number;
  date: string;
  externalProductId: number;
  views: number;
  clicks: number;
  expenses: string;
  addToCart: number;
  orders: number;
  orderedItems: number;
  ordersAmount: string;
}

/** The statistics rows stored for an account's organization, by campaign, day and product. */
export async function storedStatistics(
  t: TestApp,
  { clientId, organizationId }: { clientId: number; organizationId: number },
): Promise<StoredStatistic[]> {
  return t.runtime.database.db
    .selectFrom('campaign_statistic_day as s')
    .innerJoin('campaign as c', (join) =>
      join.onRef('c.client_id', '=', 's.client_id').onRef('c.id', '=', 's.campaign_id'),
    )
    .where('s.client_id', '=', clientId)
    .select([
      'c.external_id as externalId',
      's.date',
      's.external_product_id as externalProductId',
      's.views',
      's.clicks',
      's.expenses',
      's.quantity_add_cart as addToCart',
      's.quantity_orders as orders',
      's.quantity_product_orders as orderedItems',
      's.orders_amount as ordersAmount',
    ])
    .where('s.organization_id', '=', organizationId)
    .orderBy('c.external_id')
    .orderBy('s.date')
    .orderBy('s.external_product_id')
    .execute();
}

/** The sandbox's statistics of every campaign of `apiKey` over a range, in the stored rows' shape and order. */
export async function sandboxStatistics(
  sandbox: Market1Sandbox,
  apiKey: string,
  dateFrom: string,
  dateTo: string,
): Promise<StoredStatistic[]> {
  const market1 = sandbox.connector(apiKey);
  const refs = await market1.listCampaignRefs();
  const rows = await market1.getDailyStatistics({
    externalIds: refs.map((ref) => ref.externalId),
    dateFrom,
    dateTo,
  });
  return rows
    .map((row) => ({
      externalId: row.campaignExternalId,
      date: row.date,
      externalProductId: row.externalProductId,
      views: row.views,
      clicks: row.clicks,
      expenses: row.expenses.toFixed(2),
      addToCart: row.addToCart,
      orders: row.orders,
      orderedItems: row.orderedItems,
      ordersAmount: row.ordersAmount.toFixed(2),
    }))
    .sort(
      (a, b) =>
        a.externalId - b.externalId ||
        a.date.localeCompare(b.date) ||
        a.externalProductId - b.externalProductId,
    );
}
