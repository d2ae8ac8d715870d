/**
 * The task API through HTTP (D10.3, D4, D2): `findTask` paging, filters, sorting and `count`; `getTask`; roles,
 * tokens and tenancy on every operation; input errors; task creation refusing a foreign organization. No
 * workers run here, so created tasks stay queued (CREATED) unless cancelled.
 */
import { describe, expect, it } from 'vitest';
import { useTestApp, type TestApp } from '../helpers/test-app.ts';
import { createAccount, type TestAccount } from '../helpers/factories.ts';
import {
  expectError,
  expectNotFound,
  expectValidation,
  send,
  MISSING_ID,
  type ApiRequest,
} from '../helpers/http.ts';
import { createTask, getTask, taskGroupOf, taskKindsGroup } from '../helpers/tasks.ts';
import { defineTask } from '../../src/modules/task/definition.ts';
import { AccountService } from '../../src/modules/accounts/service.ts';
import type { FindResponseTmsTask, TmsTask } from '../../src/modules/task/schemas.ts';

/** A kind that does nothing but finish: tasks here are never run (no workers). */
const idleKind = (type: string) =>
  defineTask({ type, attempts: 1, backoffSeconds: 1, perform: async ({ progress }) => progress(100) });
const Import = idleKind('API_IMPORT_TASK');
const Export = idleKind('API_EXPORT_FILE_TASK');

let t: TestApp;
let stranger: TestAccount;
useTestApp(
  async (app) => {
    t = app;
    stranger = await createAccount(app.runtime);
  },
  {},
  { workers: false, groups: [taskKindsGroup([Import, Export])] },
);

const find = async (token: string, query: Record<string, string | number | boolean | string[]> = {}) => {
  const response = await send(t.app, token, { method: 'GET', url: '/api/task/findTask', query });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<FindResponseTmsTask>();
};
const ids = (page: FindResponseTmsTask) => page.rows.map((row) => row.id);
const cancel = (token: string, taskId: number | string) =>
  send(t.app, token, { method: 'POST', url: '/api/task/cancelTask', query: { taskId } });

/** An account with five tasks: three imports (one per entity 1, 2, 2), two exports, one export cancelled. */
async function accountWithTasks() {
  const account = await createAccount(t.runtime);
  const second = await account.addOrganization();
  const create = (type: string, body: object) => createTask(t.app, account.writeToken, type, body);
  const tasks = [
    await create(Import.type, { organizationId: account.organizationId, entityId: 1 }),
    await create(Import.type, { organizationId: second, entityId: 2 }),
    await create(Export.type, { organizationId: account.organizationId, name: 'September' }),
    await create(Import.type, { organizationId: account.organizationId, entityId: 2 }),
    await create(Export.type, {}),
  ] as [TmsTask, TmsTask, TmsTask, TmsTask, TmsTask];
  expect((await cancel(account.writeToken, tasks[4].id)).statusCode).toBe(200);
  return { account, second, tasks };
}

describe('findTask', () => {
  it('pages newest first by default, with total only when count=true', async () => {
    const { account, tasks } = await accountWithTasks();
    const all = tasks.map((task) => task.id).reverse();
    const first = await find(account.readToken, { limit: 2 });
    expect(Object.keys(first).sort()).toEqual(['nextCursor', 'page', 'rows']);
    expect(ids(first)).toEqual(all.slice(0, 2));
    expect(await find(account.readToken, { limit: 2, page: 3, count: true })).toMatchObject({
      page: 3,
      total: 5,
      rows: [expect.objectContaining({ id: all[4] })],
    });
    expect(ids(await find(account.readToken, { ascending: true }))).toEqual([...all].reverse());
    expect(await find(account.readToken, { page: 4, limit: 2 })).toEqual({ rows: [], page: 4 });
  });

  it('filters by type, types, status, organization, entity, own user and id', async () => {
    const { account, second, tasks } = await accountWithTasks();
    const [import1, import2, export1, import3, export2] = tasks;
    const query = (filter: Record<string, string | number | boolean | string[]>) =>
      find(account.readToken, filter).then(ids);
    expect(await query({ type: Import.type })).toEqual([import3.id, import2.id, import1.id]);
    expect(await query({ types: [Export.type] })).toEqual([export2.id, export1.id]);
    expect(await query({ types: [Export.type, Import.type], count: true })).toHaveLength(5);
    expect(await query({ type: Export.type, types: ['API_UNKNOWN_TASK'] })).toEqual([export2.id, export1.id]);
    expect(await query({ status: 'INTERRUPTED' })).toEqual([export2.id]);
    expect(await query({ status: 'CREATED', type: Export.type })).toEqual([export1.id]);
    expect(await query({ status: 'FINISHED' })).toEqual([]);
    expect(await query({ organizationId: second })).toEqual([import2.id]);
    expect(await query({ organizationId: account.organizationId, entityId: 2 })).toEqual([import3.id]);
    expect(await query({ id: export1.id })).toEqual([export1.id]);
    expect(await query({ own: true })).toHaveLength(5);

    // Another user of the same client sees the client's tasks, and only their own with own=true.
    const accounts = new AccountService(t.runtime.database.db, t.runtime.secrets);
    const colleague = await accounts.createUser(account.clientId, { name: 'Colleague', lang: 'en' });
    const token = (await accounts.createToken(colleague.id, { access: 'WRITE' })).token;
    const theirs = await createTask(t.app, token, Import.type, {});
    expect(theirs.userId).toBe(colleague.id);
    expect(ids(await find(token, { own: true }))).toEqual([theirs.id]);
    expect(ids(await find(token, { own: false }))).toHaveLength(6);
  });

  it('filters by creation date: date-only bounds cover whole days, date-times are exact', async () => {
    const { account, tasks } = await accountWithTasks();
    const today = tasks[0].createdDate.slice(0, 10);
    const day = (offset: number) =>
      new Date(Date.parse(today) + offset * 86_400_000).toISOString().slice(0, 10);
    const query = (filter: Record<string, string>) => find(account.readToken, { ...filter, count: true });
    expect((await query({ createdDateFrom: today, createdDateTo: today })).total).toBe(5);
    expect((await query({ createdDateFrom: day(1) })).total).toBe(0);
    expect((await query({ createdDateTo: day(-1) })).total).toBe(0);
    // The exact instant of the third task: from it, the last three; up to it, the first three.
    const third = tasks[2].createdDate;
    expect(ids(await query({ createdDateFrom: third }))).toEqual([tasks[4].id, tasks[3].id, tasks[2].id]);
    expect(ids(await query({ createdDateTo: third }))).toEqual([tasks[2].id, tasks[1].id, tasks[0].id]);
  });

  it('sorts by TYPE, STATUS and CREATED_DATE with ties broken by id', async () => {
    const { account, tasks } = await accountWithTasks();
    const [import1, import2, export1, import3, export2] = tasks;
    const sorted = (sortBy: string, ascending: boolean) =>
      find(account.readToken, { sortBy, ascending }).then(ids);
    expect(await sorted('TYPE', true)).toEqual([export1.id, export2.id, import1.id, import2.id, import3.id]);
    expect(await sorted('TYPE', false)).toEqual([import3.id, import2.id, import1.id, export2.id, export1.id]);
    expect(await sorted('STATUS', true)).toEqual([
      import1.id,
      import2.id,
      export1.id,
      import3.id,
      export2.id,
    ]);
    expect(await sorted('CREATED_DATE', true)).toEqual(tasks.map((task) => task.id));
    expect(await sorted('FINISH_DATE', false)).toEqual([
      export2.id,
      import3.id,
      export1.id,
      import2.id,
      import1.id,
    ]);
  });

  it('refuses malformed input naming the parameter', async () => {
    const { account } = await accountWithTasks();
    const bad = (query: Record<string, string>) =>
      send(t.app, account.readToken, { method: 'GET', url: '/api/task/findTask', query });
    expectValidation(await bad({ status: 'DONE' }), 'status');
    expectValidation(await bad({ type: 'lower_case' }), 'type');
    expectValidation(await bad({ createdDateFrom: '23.11.2026' }), 'createdDateFrom');
    expectValidation(await bad({ createdDateTo: '2026-13-01' }), 'createdDateTo');
    expectValidation(await bad({ limit: '501' }), 'limit');
    expectValidation(await bad({ sortBy: 'NAME' }), 'sortBy');
    expectValidation(await bad({ statuses: 'CREATED' }), 'statuses');
    expectValidation(await send(t.app, account.readToken, { method: 'GET', url: '/api/task/getTask' }), 'id');
    expectValidation(await cancel(account.writeToken, 'x'), 'taskId');
  });
});

describe('getTask and tenancy', () => {
  it('returns every TmsTask field of the spec, for the owner only', async () => {
    const { account, tasks } = await accountWithTasks();
    const task = await getTask(t.app, account.readToken, tasks[2].id);
    expect(Object.keys(task).sort()).toEqual(
      [
        'id',
        'status',
        'type',
        'name',
        'clientId',
        'entityId',
        'organizationId',
        'progress',
        'processedQuantity',
        'priority',
        'retryNumber',
        'userId',
        'properties',
        'message',
        'messageParams',
        'url',
        'inputFileUrl',
        'lang',
        'createdDate',
        'startDate',
        'finishDate',
        'retryDate',
        'debug',
        'forcedStart',
        'service',
      ].sort(),
    );
    expect(task).toMatchObject({
      status: 'CREATED',
      name: 'September',
      priority: 0,
      debug: false,
      forcedStart: false,
    });

    // Another client: every operation answers like an unknown id, and its lists never show the task.
    const get = (token: string, id: number) =>
      send(t.app, token, { method: 'GET', url: '/api/task/getTask', query: { id } });
    expectNotFound(await get(stranger.readToken, task.id), task.id);
    expectNotFound(await get(account.readToken, MISSING_ID), MISSING_ID);
    expectNotFound(await cancel(stranger.writeToken, task.id), task.id);
    expectNotFound(
      await send(t.app, stranger.readToken, { method: 'GET', url: `/api/task/${task.id}/file` }),
      task.id,
    );
    expect(await find(stranger.readToken, { id: task.id, count: true })).toEqual({
      rows: [],
      page: 1,
      total: 0,
    });
    expect((await getTask(t.app, account.readToken, task.id)).status).toBe('CREATED');
  });

  it('needs a token everywhere and a WRITE token to cancel', async () => {
    const { account, tasks } = await accountWithTasks();
    const id = tasks[0].id;
    const requests: ApiRequest[] = [
      { method: 'GET', url: '/api/task/getTask', query: { id } },
      { method: 'GET', url: '/api/task/findTask' },
      { method: 'POST', url: '/api/task/cancelTask', query: { taskId: id } },
      { method: 'GET', url: `/api/task/${id}/file` },
    ];
    for (const request of requests) expectError(await send(t.app, undefined, request), 401, 'auth_required');
    expectError(await cancel(account.readToken, id), 400, 'error_access_denied');
    expect((await getTask(t.app, account.readToken, id)).status).toBe('CREATED');
    expect((await cancel(account.writeToken, id)).json<TmsTask>().status).toBe('INTERRUPTED');
  });
});

describe('creating a task', () => {
  it('refuses an organization of another client and stores nothing', async () => {
    const account = await createAccount(t.runtime);
    const response = await send(t.app, account.writeToken, {
      method: 'POST',
      url: `/api/test-task/${Import.type}`,
      payload: { organizationId: stranger.organizationId },
    });
    expectError(response, 400, 'error_organization_not_found', { organizationId: stranger.organizationId });
    expect(await find(account.readToken, { count: true })).toMatchObject({ total: 0 });
  });

  it('refuses a kind no group lists (a wiring bug), inside the caller’s transaction', async () => {
    const account = await createAccount(t.runtime);
    const unlisted = idleKind('API_UNLISTED_TASK');
    const principal = {
      tokenId: 0,
      userId: account.userId,
      userName: 'User',
      clientId: account.clientId,
      access: 'WRITE',
      role: 'OWNER',
      lang: 'en',
      subscriptionExpiresAt: null,
    } as const;
    const { service } = taskGroupOf(t.groups);
    await expect(t.runtime.changes.run((trx) => service.create(trx, principal, unlisted))).rejects.toThrow(
      'task type API_UNLISTED_TASK is not listed by any group',
    );
    // The same type as a listed kind, but another definition, is refused too.
    await expect(
      t.runtime.changes.run((trx) => service.create(trx, principal, idleKind(Import.type))),
    ).rejects.toThrow(/not listed/);
  });
});
