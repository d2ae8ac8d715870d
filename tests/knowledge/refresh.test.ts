/**
 * The dictionary refresh (D11.3, P118–P119) through HTTP against the Market1 sandbox: `POST
 * /api/knowledge/refresh` answers a `MARKET1_DICTIONARY_TASK`, which refreshes what `GET /knowledge/getParams`
 * and `GET /option/fetchOption` serve; the access checks answer before any task exists; a cancelled refresh
 * leaves the stored dictionaries as they were; a refused key ends the task in ERROR.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMarket1Sandbox } from '../../src/connectors/market1/sandbox.ts';
import {
  SANDBOX_DIRECTORIES,
  SANDBOX_SUBJECTS,
  type SandboxSubject,
} from '../../src/connectors/market1/sandbox-data.ts';
import { optionIdOf } from '../../src/connectors/market1/client.ts';
import { MARKET1_PATHS } from '../../src/connectors/market1/protocol.ts';
import type { SandboxServer } from '../../src/connectors/sandboxes.ts';
import type { TmsTask } from '../../src/modules/task/schemas.ts';
import { useTestApp, TEST_ADMIN_TOKEN, type TestApp } from '../helpers/test-app.ts';
import { createAccount, type TestAccount } from '../helpers/factories.ts';
import { expectError, send } from '../helpers/http.ts';
import { getTask, waitForTask } from '../helpers/tasks.ts';

let sandbox: SandboxServer;
beforeAll(async () => {
  sandbox = await startMarket1Sandbox({ host: '127.0.0.1', port: 0, rateLimits: 'off' });
});
afterAll(async () => {
  await sandbox.close();
});

let t: TestApp;
useTestApp((app) => void (t = app), {
  TASK_PROGRESS_WRITE_MS: '20',
  TASK_HEARTBEAT_SECONDS: '1',
  TASK_SWEEP_SECONDS: '1',
});

/** Sandbox subjects this file refreshes (generated ones: no other test file stores them). */
const subject = (name: string): SandboxSubject =>
  SANDBOX_SUBJECTS.find((candidate) => candidate.name === name)!;
const clocks = subject('Wall clocks');
const figurines = subject('Figurines');
const masks = subject('Sleep masks');

/** What `getParams` must answer for a sandbox subject once refreshed (Market1's characteristics, mapped). */
const parametersOf = (source: SandboxSubject) =>
  source.characteristics.map((charc) => ({
    id: charc.id,
    name: charc.name,
    valueType: charc.charcType === 4 ? 'NUMBER' : 'STRING',
    multiValueAllowed: charc.maxCount !== 1,
    displayType: charc.directory ? 'SUGGEST' : 'INPUT',
    required: charc.required,
    unit: charc.unitName || null,
  }));

/** An account whose organization has a Market1 integration at the sandbox with a fresh key. */
async function market1Account(role?: 'SUPPORT'): Promise<TestAccount & { apiKey: string }> {
  const account = await createAccount(t.runtime, role ? { role } : {});
  const apiKey = `key-${randomUUID()}`;
  const saved = await t.app.inject({
    method: 'POST',
    url: `/admin/organizations/${account.organizationId}/integrations`,
    headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
    payload: { service: 'SERVICE_01', apiKey, baseUrl: sandbox.url },
  });
  expect(saved.statusCode, saved.body).toBe(200);
  return { ...account, apiKey };
}

const refresh = (token: string | undefined, query: Record<string, unknown>) =>
  send(t.app, token, { method: 'POST', url: '/api/knowledge/refresh', query: query as never });

async function startRefresh(account: TestAccount, subjectIds?: number[]): Promise<TmsTask> {
  const response = await refresh(account.writeToken, {
    organizationId: account.organizationId,
    service: 'SERVICE_01',
    ...(subjectIds && { subjectIds }),
  });
  expect(response.statusCode, response.body).toBe(200);
  const task = response.json<TmsTask>();
  expect(task).toMatchObject({
    type: 'MARKET1_DICTIONARY_TASK',
    status: 'CREATED',
    organizationId: account.organizationId,
  });
  return task;
}

const getParams = async (token: string, categoryId: number) => {
  const response = await send(t.app, token, {
    method: 'GET',
    url: '/knowledge/getParams',
    query: { market2CategoryId: categoryId },
  });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<unknown[]>();
};

const fetchOption = async (token: string, paramId: number, query = '') => {
  const response = await send(t.app, token, {
    method: 'GET',
    url: '/option/fetchOption',
    query: { paramId, query, limit: 100 },
  });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<{ id: number; value: string }[]>();
};

/** Stores a stale version of a category: a renamed category, a parameter Market1 no longer has, old options. */
async function storeStale(source: SandboxSubject): Promise<{ staleParameterId: number }> {
  const db = t.runtime.database.db;
  const staleParameterId = 90_000_000 + source.id;
  const suggest = source.characteristics.find((charc) => charc.directory)!;
  await db.transaction().execute(async (trx) => {
    await trx
      .insertInto('market_category')
      .values({ id: source.id, name: `${source.name} (old)`, parent_id: null })
      .onConflict((conflict) => conflict.column('id').doUpdateSet({ name: `${source.name} (old)` }))
      .execute();
    await trx.deleteFrom('market_parameter').where('category_id', '=', source.id).execute();
    await trx
      .insertInto('market_parameter')
      .values([
        { ...staleRow(source.id), id: staleParameterId, name: 'Discontinued' },
        { ...staleRow(source.id), id: suggest.id, name: 'Old name', display_type: 'SUGGEST' },
      ])
      .execute();
    await trx
      .insertInto('market_parameter_option')
      .values({ parameter_id: suggest.id, id: 1, value: 'withdrawn colour' })
      .execute();
  });
  return { staleParameterId };
}

const staleRow = (categoryId: number) => ({
  category_id: categoryId,
  value_type: 'STRING' as const,
  multi_value_allowed: false,
  display_type: 'INPUT' as const,
  required: false,
  unit: null,
  position: 0,
});

describe('POST /api/knowledge/refresh', () => {
  it("replaces the named subjects' parameters and options with Market1's, one subject at a time", async () => {
    const account = await market1Account();
    const { staleParameterId } = await storeStale(clocks);
    expect((await getParams(account.readToken, clocks.id)).length).toBe(2);

    const task = await startRefresh(account, [figurines.id, clocks.id, 999_999_999, clocks.id]);
    const finished = await waitForTask(t.app, account.readToken, task.id, ['FINISHED', 'ERROR']);
    expect(finished).toMatchObject({ status: 'FINISHED', progress: 100, processedQuantity: 3 });

    for (const source of [clocks, figurines]) {
      expect(await getParams(account.readToken, source.id)).toEqual(parametersOf(source));
      const color = source.characteristics.find((charc) => charc.directory === 'colors')!;
      expect(await fetchOption(account.readToken, color.id)).toEqual(
        SANDBOX_DIRECTORIES.colors
          .map(({ name }) => ({ id: optionIdOf(name), value: name }))
          .sort((a, b) => a.id - b.id),
      );
      expect(await fetchOption(account.readToken, color.id, 'GRE')).toEqual(
        ['grey', 'green'].map((value) => ({ id: optionIdOf(value), value })).sort((a, b) => a.id - b.id),
      );
    }
    const category = await t.runtime.database.db
      .selectFrom('market_category')
      .selectAll()
      .where('id', '=', clocks.id)
      .executeTakeFirstOrThrow();
    expect(category).toMatchObject({ name: clocks.name, parent_id: clocks.parentId });
    expect(await fetchOption(account.readToken, staleParameterId)).toEqual([]);
    // A subject Market1 does not know is counted as handled and stores nothing.
    expect(await getParams(account.readToken, 999_999_999)).toEqual([]);

    // Rerunning changes nothing (idempotent).
    const again = await startRefresh(account, [clocks.id]);
    expect(await waitForTask(t.app, account.readToken, again.id, ['FINISHED', 'ERROR'])).toMatchObject({
      status: 'FINISHED',
      processedQuantity: 1,
    });
    expect(await getParams(account.readToken, clocks.id)).toEqual(parametersOf(clocks));
  });

  it('without subjectIds refreshes every category already stored', async () => {
    const account = await market1Account();
    await storeStale(masks);
    const task = await startRefresh(account);
    const finished = await waitForTask(t.app, account.readToken, task.id, ['FINISHED', 'ERROR']);
    expect(finished.status, finished.message ?? '').toBe('FINISHED');
    expect(finished.processedQuantity).toBeGreaterThanOrEqual(1);
    expect(await getParams(account.readToken, masks.id)).toEqual(parametersOf(masks));
  });

  it('a cancelled refresh stops at its next step and leaves the stored dictionaries as they were', async () => {
    const account = await market1Account();
    await storeStale(figurines);
    const before = await getParams(account.readToken, figurines.id);
    // The subjects list answers after 1.5 s: the cancel lands while the task waits for it.
    const fault = await fetch(`${sandbox.url}/__sandbox/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        mode: 'slow',
        delayMs: 1500,
        apiKey: account.apiKey,
        path: MARKET1_PATHS.subjects,
      }),
    });
    expect(fault.status).toBeLessThan(300);
    const task = await startRefresh(account, [figurines.id]);
    await waitForTask(t.app, account.readToken, task.id, ['RUNNING']);
    const cancelled = await send(t.app, account.writeToken, {
      method: 'POST',
      url: '/api/task/cancelTask',
      query: { taskId: task.id },
    });
    expect(cancelled.statusCode, cancelled.body).toBe(200);
    const stopped = await waitForTask(t.app, account.readToken, task.id, [
      'INTERRUPTED',
      'FINISHED',
      'ERROR',
    ]);
    expect(stopped.status).toBe('INTERRUPTED');
    expect(await getParams(account.readToken, figurines.id)).toEqual(before);
  });

  it('ends in ERROR error_token_expired_or_revoked when Market1 refuses the key', async () => {
    const account = await market1Account();
    await fetch(`${sandbox.url}/__sandbox/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ apiKey: account.apiKey }),
    });
    const task = await startRefresh(account, [clocks.id]);
    const failed = await waitForTask(t.app, account.readToken, task.id, ['FINISHED', 'ERROR']);
    expect(failed.status).toBe('ERROR');
    expect(JSON.parse(failed.messageParams ?? '')).toMatchObject({ error: 'error_token_expired_or_revoked' });
  });

  it('answers the access errors before any task exists; a SUPPORT user may refresh', async () => {
    const account = await market1Account();
    const other = await market1Account();
    const withoutIntegration = await createAccount(t.runtime);
    const organizationId = account.organizationId;
    expectError(await refresh(account.writeToken, { organizationId }), 400, 'error_no_marketplace');
    expectError(
      await refresh(account.writeToken, { organizationId, service: 'SERVICE_02' }),
      400,
      'error_unsupported_service',
    );
    expectError(await refresh(account.writeToken, { service: 'SERVICE_01' }), 400, 'error_no_organization');
    expectError(
      await refresh(account.writeToken, { organizationId: other.organizationId, service: 'SERVICE_01' }),
      400,
      'error_organization_not_found',
    );
    expectError(
      await refresh(withoutIntegration.writeToken, {
        organizationId: withoutIntegration.organizationId,
        service: 'SERVICE_01',
      }),
      400,
      'error_prepared_integration_not_found',
    );
    expectError(
      await refresh(account.readToken, { organizationId, service: 'SERVICE_01' }),
      400,
      'error_access_denied',
    );
    expectError(await refresh(undefined, { organizationId, service: 'SERVICE_01' }), 401, 'auth_required');
    const tasks = await send(t.app, account.readToken, {
      method: 'GET',
      url: '/api/task/findTask',
      query: { type: 'MARKET1_DICTIONARY_TASK' },
    });
    expect(tasks.json<{ rows: unknown[] }>().rows).toEqual([]);

    const support = await market1Account('SUPPORT');
    const task = await startRefresh(support, [clocks.id]);
    expect((await getTask(t.app, support.readToken, task.id)).type).toBe('MARKET1_DICTIONARY_TASK');
    await waitForTask(t.app, support.readToken, task.id, ['FINISHED', 'ERROR']);
  });
});
