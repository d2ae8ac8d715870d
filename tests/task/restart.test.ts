/**
 * Tasks survive the loss of their process (P83): a runtime whose job queue stops ungracefully while its tasks
 * run (what a killed process leaves behind: RUNNING rows whose heartbeat stops), then another runtime with
 * workers finishes what has runs left, ends in ERROR what has none, and ends in INTERRUPTED what was being
 * cancelled. Nothing stays RUNNING; the run that lost its task writes nothing more.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/test-app.ts';
import { createAccount } from '../helpers/factories.ts';
import { send } from '../helpers/http.ts';
import { createTask, taskKindsGroup, Turnstile, waitForTask } from '../helpers/tasks.ts';
import { defineTask, TaskStoppedError } from '../../src/modules/task/definition.ts';

const turnstile = new Turnstile();
/** How each run ended, by task: `${retryNumber}:${outcome}`. */
const outcomes = new Map<number, string[]>();

/** Counts to `items`, one step at a time behind the turnstile. */
const countingKind = (type: string, attempts: number) =>
  defineTask<{ items: number }>({
    type,
    attempts,
    backoffSeconds: 0,
    async perform({ task, properties, progress, checkCancelled }) {
      const ended = (outcome: string) =>
        outcomes.set(task.id, [...(outcomes.get(task.id) ?? []), `${task.retryNumber}:${outcome}`]);
      try {
        for (let done = 1; done <= properties.items; done++) {
          await turnstile.enter(task.id);
          await checkCancelled();
          await progress((done / properties.items) * 100, done);
        }
      } catch (error) {
        ended(error instanceof TaskStoppedError ? error.reason : 'failed');
        throw error;
      }
      ended('done');
    },
  });

const Resumable = countingKind('RESTART_RESUMABLE_TASK', 2);
const SingleShot = countingKind('RESTART_SINGLE_SHOT_TASK', 1);
const Cancelled = countingKind('RESTART_CANCELLED_TASK', 2);

const env = {
  TASK_PROGRESS_WRITE_MS: '20',
  TASK_HEARTBEAT_SECONDS: '1',
  TASK_SWEEP_SECONDS: '1',
  WEBHOOK_POLL_SECONDS: '1',
};
const options = { groups: [taskKindsGroup([Resumable, SingleShot, Cancelled])] };
const opened: TestApp[] = [];

afterAll(async () => {
  for (const app of opened) await app.close();
});

describe('a task whose process stopped', () => {
  it('is retried by another process, or ends in ERROR or INTERRUPTED; never left RUNNING', async () => {
    const first = await buildTestApp(env, undefined, options);
    opened.push(first);
    const account = await createAccount(first.runtime);
    const tasks = [];
    for (const kind of [Resumable, SingleShot, Cancelled]) {
      const task = await createTask(first.app, account.writeToken, kind.type, { properties: { items: 3 } });
      turnstile.allow(task.id, 1);
      tasks.push(task);
    }
    for (const task of tasks) {
      await turnstile.reached(task.id, 2);
      await waitForTask(first.app, account.readToken, task.id, (seen) => seen.processedQuantity === 1);
    }
    const [resumable, singleShot, cancelled] = tasks as [
      (typeof tasks)[0],
      (typeof tasks)[0],
      (typeof tasks)[0],
    ];
    const cancel = await send(first.app, account.writeToken, {
      method: 'POST',
      url: '/api/task/cancelTask',
      query: { taskId: cancelled.id },
    });
    expect(cancel.json()).toMatchObject({ status: 'INTERRUPTING' });

    // The queue dies with the three runs in flight, as in a killed process: no outcome is recorded.
    await first.runtime.jobs.boss.stop({ graceful: false, close: false });
    const second = await buildTestApp(env, undefined, options);
    opened.push(second);
    for (const task of tasks) turnstile.allow(task.id);

    const read = (id: number) =>
      waitForTask(second.app, account.readToken, id, ['FINISHED', 'ERROR', 'INTERRUPTED']);
    expect(await read(resumable.id)).toMatchObject({
      status: 'FINISHED',
      retryNumber: 1,
      processedQuantity: 3,
      progress: 100,
    });
    const failed = await read(singleShot.id);
    expect(failed).toMatchObject({
      status: 'ERROR',
      retryNumber: 0,
      message: 'The task failed: an internal failure on every attempt (1)',
    });
    expect(await read(cancelled.id)).toMatchObject({ status: 'INTERRUPTED', retryNumber: 0 });
    // The first runs stopped at their next step without writing; only the resumable task ran again.
    expect(outcomes.get(resumable.id)).toEqual(['0:lost', '1:done']);
    expect(outcomes.get(singleShot.id)).toEqual(['0:lost']);
    expect(outcomes.get(cancelled.id)).toEqual(['0:lost']);
  });
});
