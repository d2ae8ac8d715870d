/**
 * The task runner through HTTP (D10.3, P80–P86) with task kinds defined here, run by this file's workers:
 * progress and processedQuantity moving, FINISHED with a file downloaded (several chunks, an XLSX streamed by
 * exceljs), ERROR with a message for an AppError, retries with retryNumber/retryDate then ERROR, cancel of a
 * queued and of a running task, and the tenancy of downloads.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import ExcelJS from 'exceljs';
import { useTestApp, type TestApp } from '../helpers/test-app.ts';
import { createAccount, type TestAccount } from '../helpers/factories.ts';
import { expectError, expectNotFound, send } from '../helpers/http.ts';
import { createTask, getTask, taskKindsGroup, Turnstile, waitForTask } from '../helpers/tasks.ts';
import { defineTask } from '../../src/modules/task/definition.ts';
import { AppError } from '../../src/http/errors.ts';
import type { TmsTask } from '../../src/modules/task/schemas.ts';

const turnstile = new Turnstile();
/** Steps each task's runs did: `${taskId}` → list of `run:step`. */
const steps = new Map<number, string[]>();
const record = (taskId: number, entry: string) => steps.set(taskId, [...(steps.get(taskId) ?? []), entry]);

/** Counts `items` in steps of `step`, stopping at the turnstile before each step. */
const CountTask = defineTask<{ items: number; step: number }>({
  type: 'RUNNER_COUNT_TASK',
  attempts: 1,
  backoffSeconds: 1,
  async perform({ task, properties, progress, checkCancelled }) {
    for (let done = 0; done < properties.items;) {
      await turnstile.enter(task.id);
      await checkCancelled();
      done = Math.min(properties.items, done + properties.step);
      record(task.id, `${task.retryNumber}:${done}`);
      await progress((done / properties.items) * 100, done);
    }
  },
});

/** The bytes of a deterministic pseudo-random file: SHA-256 in counter mode over `seed`. */
function fileBytes(seed: string, size: number): Buffer {
  const blocks: Buffer[] = [];
  for (let counter = 0; blocks.length * 32 < size; counter++)
    blocks.push(createHash('sha256').update(`${seed}:${counter}`).digest());
  return Buffer.concat(blocks).subarray(0, size);
}

/** Writes `size` pseudo-random bytes in 64 KiB writes, respecting backpressure. */
const BinaryFileTask = defineTask<{ seed: string; size: number; fileName: string }>({
  type: 'RUNNER_BINARY_FILE_TASK',
  attempts: 1,
  backoffSeconds: 1,
  async perform({ properties, writeFile, progress }) {
    const bytes = fileBytes(properties.seed, properties.size);
    await writeFile(
      { fileName: properties.fileName, contentType: 'application/octet-stream' },
      async (stream) => {
        for (let offset = 0; offset < bytes.length; offset += 64 * 1024) {
          if (!stream.write(bytes.subarray(offset, offset + 64 * 1024)))
            await new Promise((resolve) => stream.once('drain', resolve));
          await progress((offset / bytes.length) * 100, offset);
        }
        stream.end();
      },
    );
  },
});

const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

/** Streams a workbook of `rows` rows with exceljs's streaming writer into the task's file. */
const WorkbookTask = defineTask<{ rows: number }>({
  type: 'RUNNER_WORKBOOK_TASK',
  attempts: 1,
  backoffSeconds: 1,
  async perform({ properties, writeFile, progress }) {
    await writeFile({ fileName: 'Статистика кампаний 2024-09.xlsx', contentType: XLSX }, async (stream) => {
      const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({
        stream,
        useStyles: false,
        useSharedStrings: false,
      });
      const sheet = workbook.addWorksheet('Statistics');
      sheet.addRow(['campaignId', 'name', 'views', 'clicks']).commit();
      for (let row = 1; row <= properties.rows; row++) {
        sheet.addRow([row, `Campaign ${row}`, row * 100, row * 3]).commit();
        if (row % 1000 === 0) await progress((row / properties.rows) * 100, row);
      }
      sheet.commit();
      await workbook.commit();
    });
  },
});

/** Reports half the work, then meets an expected failure (the marketplace refused). */
const RefusedTask = defineTask<{ reason: string }>({
  type: 'RUNNER_REFUSED_TASK',
  attempts: 3,
  backoffSeconds: 0.2,
  async perform({ task, properties, progress }) {
    record(task.id, `${task.retryNumber}`);
    await progress(50, 5);
    throw new AppError('error_market1_api', { message: properties.reason });
  },
});

/** Fails unexpectedly on its first `failRuns` runs, then counts to 3. */
const FlakyTask = defineTask<{ failRuns: number }>({
  type: 'RUNNER_FLAKY_TASK',
  attempts: 3,
  backoffSeconds: 0.2,
  async perform({ task, properties, progress }) {
    record(task.id, `${task.retryNumber}`);
    if (task.retryNumber < properties.failRuns)
      throw new Error(`connection reset on run ${task.retryNumber}`);
    await progress(100, 3);
  },
});

/** Like FlakyTask, with a 2 s backoff so that the test sees it waiting in RESTARTING. */
const SlowRetryTask = defineTask<Record<string, never>>({
  type: 'RUNNER_SLOW_RETRY_TASK',
  attempts: 2,
  backoffSeconds: 2,
  async perform({ task }) {
    record(task.id, `${task.retryNumber}`);
    if (task.retryNumber === 0) throw new Error('socket hang up');
  },
});

/** Never returns: a hung run, ended by its kind's one-second time limit. */
const HungTask = defineTask<Record<string, never>>({
  type: 'RUNNER_HUNG_TASK',
  attempts: 1,
  backoffSeconds: 1,
  timeoutSeconds: 1,
  async perform({ task }) {
    record(task.id, `${task.retryNumber}`);
    await new Promise(() => undefined);
  },
});

let t: TestApp;
let account: TestAccount;
let stranger: TestAccount;
useTestApp(
  async (app) => {
    t = app;
    account = await createAccount(app.runtime);
    stranger = await createAccount(app.runtime);
  },
  {
    TASK_PROGRESS_WRITE_MS: '20',
    TASK_HEARTBEAT_SECONDS: '1',
    TASK_SWEEP_SECONDS: '1',
    WEBHOOK_POLL_SECONDS: '1',
  },
  {
    groups: [
      taskKindsGroup([
        CountTask,
        BinaryFileTask,
        WorkbookTask,
        RefusedTask,
        FlakyTask,
        SlowRetryTask,
        HungTask,
      ]),
    ],
  },
);

const wait = (task: TmsTask, until: Parameters<typeof waitForTask>[3]) =>
  waitForTask(t.app, account.readToken, task.id, until);
const cancel = (id: number, token = account.writeToken) =>
  send(t.app, token, { method: 'POST', url: '/api/task/cancelTask', query: { taskId: id } });
const download = (id: number, token = account.readToken) =>
  send(t.app, token, { method: 'GET', url: `/api/task/${id}/file` });

describe('a task run', () => {
  it('moves progress and processedQuantity step by step, then FINISHES at 100', async () => {
    const created = await createTask(t.app, account.writeToken, CountTask.type, {
      organizationId: account.organizationId,
      name: 'Count 30',
      entityId: 77,
      properties: { items: 30, step: 10 },
    });
    expect(created).toMatchObject({
      status: 'CREATED',
      type: 'RUNNER_COUNT_TASK',
      name: 'Count 30',
      clientId: account.clientId,
      organizationId: account.organizationId,
      entityId: 77,
      userId: account.userId,
      progress: 0,
      processedQuantity: 0,
      retryNumber: 0,
      properties: JSON.stringify({ items: 30, step: 10 }),
      lang: 'en',
      url: null,
      message: null,
      startDate: null,
      finishDate: null,
    });
    await turnstile.reached(created.id, 1);
    expect((await getTask(t.app, account.readToken, created.id)).status).toBe('RUNNING');
    turnstile.allow(created.id, 1);
    await turnstile.reached(created.id, 2);
    expect(await wait(created, (task) => task.processedQuantity === 10)).toMatchObject({ progress: 33 });
    turnstile.allow(created.id, 1);
    await turnstile.reached(created.id, 3);
    expect(await wait(created, (task) => task.processedQuantity === 20)).toMatchObject({ progress: 67 });
    turnstile.allow(created.id);
    const finished = await wait(created, ['FINISHED', 'ERROR']);
    expect(finished).toMatchObject({ status: 'FINISHED', progress: 100, processedQuantity: 30, url: null });
    expect(Date.parse(finished.finishDate ?? '')).toBeGreaterThanOrEqual(
      Date.parse(finished.startDate ?? ''),
    );
    expect(steps.get(created.id)).toEqual(['0:10', '0:20', '0:30']);
  });

  it('stores a file of several chunks that the same client downloads byte for byte', async () => {
    const size = 2 * 1024 * 1024 + 123_457;
    const fileName = 'отчёт "май" 2024.bin';
    const created = await createTask(t.app, account.writeToken, BinaryFileTask.type, {
      properties: { seed: 'chunks', size, fileName },
    });
    const finished = await wait(created, ['FINISHED', 'ERROR']);
    expect(finished).toMatchObject({
      status: 'FINISHED',
      url: `/api/task/${created.id}/file`,
      organizationId: null,
    });
    const { rows } = await t.runtime.database.pool.query<{ chunks: string }>(
      'SELECT count(*) AS chunks FROM task_file_chunk WHERE client_id = $1 AND task_id = $2',
      [account.clientId, created.id],
    );
    expect(Number(rows[0]?.chunks)).toBe(3);

    const response = await download(created.id);
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('application/octet-stream');
    expect(response.headers['content-length']).toBe(String(size));
    expect(response.headers['content-disposition']).toBe(
      `attachment; filename="_____ _____ 2024.bin"; filename*=UTF-8''${encodeURIComponent(fileName)
        .replace(/'/g, '%27')
        .replace(/[()*]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`)}`,
    );
    expect(response.rawPayload.equals(fileBytes('chunks', size))).toBe(true);

    // The same client's WRITE token too; another client, an unknown id and no token never get it.
    expect((await download(created.id, account.writeToken)).rawPayload.length).toBe(size);
    expectNotFound(await download(created.id, stranger.readToken), created.id);
    expectNotFound(await download(8_000_000_000_000_001), '8000000000000001');
    expectError(
      await send(t.app, undefined, { method: 'GET', url: `/api/task/${created.id}/file` }),
      401,
      'auth_required',
    );
  });

  it('streams an XLSX workbook written by exceljs into the file, with its content type and name', async () => {
    const created = await createTask(t.app, account.writeToken, WorkbookTask.type, {
      properties: { rows: 5000 },
    });
    const finished = await wait(created, ['FINISHED', 'ERROR']);
    expect(finished.status).toBe('FINISHED');
    const response = await download(created.id);
    expect(response.headers['content-type']).toBe(XLSX);
    expect(response.headers['content-disposition']).toContain(
      `filename*=UTF-8''${encodeURIComponent('Статистика кампаний 2024-09.xlsx')}`,
    );
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load(new Uint8Array(response.rawPayload).buffer);
    const sheet = workbook.getWorksheet('Statistics');
    expect(sheet?.rowCount).toBe(5001);
    expect(sheet?.getRow(5001).values).toEqual([undefined, 5000, 'Campaign 5000', 500000, 15000]);
  });

  it('answers a task without a file, and a file before the task finished, with 404 taskFile', async () => {
    const created = await createTask(t.app, account.writeToken, CountTask.type, {
      properties: { items: 1, step: 1 },
    });
    await turnstile.reached(created.id, 1);
    expectError(await download(created.id), 404, 'error_not_found', {
      entity: 'taskFile',
      id: String(created.id),
    });
    turnstile.allow(created.id);
    await wait(created, ['FINISHED']);
    expectError(await download(created.id), 404, 'error_not_found', { entity: 'taskFile' });
  });
});

describe('failures', () => {
  it('ends in ERROR with the message of an AppError in the user’s language, without a retry', async () => {
    const created = await createTask(t.app, account.writeToken, RefusedTask.type, {
      properties: { reason: 'campaign 7 is archived' },
    });
    const failed = await wait(created, ['ERROR', 'FINISHED']);
    expect(failed).toMatchObject({
      status: 'ERROR',
      message: 'Marketplace error: campaign 7 is archived',
      retryNumber: 0,
      progress: 50,
      processedQuantity: 5,
    });
    expect(JSON.parse(failed.messageParams ?? '')).toEqual({
      error: 'error_market1_api',
      params: { message: 'campaign 7 is archived' },
    });
    expect(failed.finishDate).not.toBeNull();
    expect(steps.get(created.id)).toEqual(['0']);

    const russian = await createAccount(t.runtime, { lang: null });
    const other = await createTask(t.app, russian.writeToken, RefusedTask.type, {
      properties: { reason: 'нет' },
    });
    expect(await waitForTask(t.app, russian.readToken, other.id, ['ERROR'])).toMatchObject({
      lang: 'ru',
      message: 'Ошибка маркетплейса: нет',
    });
  });

  it('retries an unexpected failure with retryNumber and retryDate, waiting in RESTARTING', async () => {
    const created = await createTask(t.app, account.writeToken, SlowRetryTask.type);
    const restarting = await wait(created, (task) => task.status !== 'CREATED' && task.status !== 'RUNNING');
    expect(restarting).toMatchObject({
      status: 'RESTARTING',
      retryNumber: 0,
      message: null,
      finishDate: null,
    });
    expect(Date.parse(restarting.retryDate ?? '')).toBeGreaterThan(Date.parse(restarting.startDate ?? ''));
    const finished = await wait(created, ['FINISHED', 'ERROR']);
    expect(finished).toMatchObject({ status: 'FINISHED', retryNumber: 1, retryDate: restarting.retryDate });
    expect(steps.get(created.id)).toEqual(['0', '1']);

    const once = await createTask(t.app, account.writeToken, FlakyTask.type, { properties: { failRuns: 2 } });
    expect(await wait(once, ['FINISHED', 'ERROR'])).toMatchObject({
      status: 'FINISHED',
      retryNumber: 2,
      processedQuantity: 3,
    });
  });

  it('ends in ERROR once every attempt failed unexpectedly', async () => {
    const created = await createTask(t.app, account.writeToken, FlakyTask.type, {
      properties: { failRuns: 99 },
    });
    const failed = await wait(created, ['ERROR', 'FINISHED']);
    expect(failed).toMatchObject({
      status: 'ERROR',
      retryNumber: 2,
      message: 'The task failed: an internal failure on every attempt (3)',
    });
    expect(JSON.parse(failed.messageParams ?? '')).toEqual({
      error: 'error_task_failed',
      params: { attempts: 3 },
    });
    expect(steps.get(created.id)).toEqual(['0', '1', '2']);
    // The internal error is kept for operators only.
    const { rows } = await t.runtime.database.pool.query<{ failure: string }>(
      'SELECT failure FROM task WHERE client_id = $1 AND id = $2',
      [account.clientId, created.id],
    );
    expect(rows[0]?.failure).toContain('connection reset on run 2');
    expect(JSON.stringify(failed)).not.toContain('connection reset');
  });

  it('ends a run that outlives its time limit as an unexpected failure', async () => {
    const created = await createTask(t.app, account.writeToken, HungTask.type);
    expect(await wait(created, ['ERROR', 'FINISHED'])).toMatchObject({
      status: 'ERROR',
      message: 'The task failed: an internal failure on every attempt (1)',
    });
    const { rows } = await t.runtime.database.pool.query<{ failure: string }>(
      'SELECT failure FROM task WHERE client_id = $1 AND id = $2',
      [account.clientId, created.id],
    );
    expect(rows[0]?.failure).toContain('the run took longer than 1 s');
  });
});

describe('cancelTask', () => {
  it('interrupts a queued task at once: it never runs', async () => {
    const running = await createTask(t.app, account.writeToken, CountTask.type, {
      properties: { items: 2, step: 1 },
    });
    await turnstile.reached(running.id, 1);
    // One worker per kind in this process: the second task waits in the queue behind the first.
    const queued = await createTask(t.app, account.writeToken, CountTask.type, {
      properties: { items: 2, step: 1 },
    });
    const cancelled = await cancel(queued.id);
    expect(cancelled.statusCode, cancelled.body).toBe(200);
    expect(cancelled.json<TmsTask>()).toMatchObject({ status: 'INTERRUPTED', startDate: null });
    expect(cancelled.json<TmsTask>().finishDate).not.toBeNull();
    expectError(await cancel(queued.id), 400, 'error_task_not_cancellable', {
      id: String(queued.id),
      status: 'INTERRUPTED',
    });

    turnstile.allow(running.id);
    await wait(running, ['FINISHED']);
    // A task created after the cancelled one runs: the worker went past it without running it.
    const later = await createTask(t.app, account.writeToken, CountTask.type, {
      properties: { items: 1, step: 1 },
    });
    turnstile.allow(later.id);
    await wait(later, ['FINISHED']);
    expect(steps.get(queued.id)).toBeUndefined();
    expect(await getTask(t.app, account.readToken, queued.id)).toMatchObject({
      status: 'INTERRUPTED',
      startDate: null,
    });
  });

  it('stops a running task at its next step (INTERRUPTING → INTERRUPTED)', async () => {
    const created = await createTask(t.app, account.writeToken, CountTask.type, {
      properties: { items: 50, step: 10 },
    });
    turnstile.allow(created.id, 1);
    await turnstile.reached(created.id, 2);
    const cancelled = await cancel(created.id);
    expect(cancelled.json<TmsTask>()).toMatchObject({ status: 'INTERRUPTING' });
    // Asking again changes nothing.
    expect((await cancel(created.id)).json<TmsTask>()).toMatchObject({ status: 'INTERRUPTING' });
    turnstile.allow(created.id);
    const interrupted = await wait(created, ['INTERRUPTED', 'FINISHED']);
    expect(interrupted).toMatchObject({
      status: 'INTERRUPTED',
      processedQuantity: 10,
      progress: 20,
      url: null,
    });
    expect(steps.get(created.id)).toEqual(['0:10']);
    expectError(await cancel(created.id), 400, 'error_task_not_cancellable', { status: 'INTERRUPTED' });
  });

  it('refuses a finished task, a READ token, another client’s task and an unknown one', async () => {
    const created = await createTask(t.app, account.writeToken, CountTask.type, {
      properties: { items: 1, step: 1 },
    });
    expectError(await cancel(created.id, account.readToken), 400, 'error_access_denied');
    expectNotFound(await cancel(created.id, stranger.writeToken), created.id);
    expectNotFound(await cancel(8_000_000_000_000_001), '8000000000000001');
    turnstile.allow(created.id);
    await wait(created, ['FINISHED']);
    expectError(await cancel(created.id), 400, 'error_task_not_cancellable', {
      id: String(created.id),
      status: 'FINISHED',
    });
    expect(await getTask(t.app, account.readToken, created.id)).toMatchObject({ status: 'FINISHED' });
  });
});
