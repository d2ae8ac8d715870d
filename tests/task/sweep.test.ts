/**
 * The sweep of background tasks (P83, P87), one pass at a time: a queued task whose pg-boss job failed before
 * our code ran, or vanished, gets a new job; a queued task with a live job is left alone; a cancelled RESTARTING
 * task's job is cancelled; finished tasks are deleted with their files after the retention. No workers run here.
 */
import { describe, expect, it } from 'vitest';
import { useTestApp, type TestApp } from '../helpers/test-app.ts';
import { createAccount } from '../helpers/factories.ts';
import { expectNotFound, send } from '../helpers/http.ts';
import { createTask, getTask, taskGroupOf, taskKindsGroup } from '../helpers/tasks.ts';
import { defineTask } from '../../src/modules/task/definition.ts';
import { taskQueueName } from '../../src/modules/task/jobs.ts';
import { taskFileRepository } from '../../src/modules/task/repository.ts';

const Queued = defineTask({
  type: 'SWEEP_QUEUED_TASK',
  attempts: 2,
  backoffSeconds: 60,
  perform: async ({ progress }) => progress(100),
});
const queue = taskQueueName(Queued.type);

let t: TestApp;
useTestApp(
  (app) => {
    t = app;
  },
  {},
  { workers: false, groups: [taskKindsGroup([Queued])] },
);

const sweep = () => taskGroupOf(t.groups).sweeper.sweep();
const jobOf = async (clientId: number, taskId: number) => {
  const { rows } = await t.runtime.database.pool.query<{ job_id: string }>(
    'SELECT job_id FROM task WHERE client_id = $1 AND id = $2',
    [clientId, taskId],
  );
  const jobId = rows[0]?.job_id as string;
  return { jobId, job: await t.runtime.jobs.boss.getJobById(queue, jobId, { includeArchive: true }) };
};

describe('the sweep', () => {
  it('gives a queued task whose job failed or vanished a new job, and leaves a live one alone', async () => {
    const account = await createAccount(t.runtime);
    const task = await createTask(t.app, account.writeToken, Queued.type);
    await sweep();
    const first = await jobOf(account.clientId, task.id);
    expect(first.job?.state).toBe('created');
    expect(await getTask(t.app, account.readToken, task.id)).toMatchObject({
      status: 'CREATED',
      retryDate: null,
    });

    // pg-boss gives the job up before our code ran (say the claim met a database outage).
    await t.runtime.jobs.boss.fail(queue, first.jobId);
    await sweep();
    const second = await jobOf(account.clientId, task.id);
    expect(second.jobId).not.toBe(first.jobId);
    expect(second.job?.state).toBe('created');
    const restarting = await getTask(t.app, account.readToken, task.id);
    expect(restarting).toMatchObject({ status: 'RESTARTING', retryNumber: 0, startDate: null });
    expect(restarting.retryDate).not.toBeNull();

    // The job is deleted (retention of pg-boss): a new one again.
    await t.runtime.jobs.boss.deleteJob(queue, second.jobId);
    await sweep();
    const third = await jobOf(account.clientId, task.id);
    expect(third.jobId).not.toBe(second.jobId);
    expect(third.job?.state).toBe('created');

    // Cancelling the waiting task cancels its job: nothing will run it.
    const cancelled = await send(t.app, account.writeToken, {
      method: 'POST',
      url: '/api/task/cancelTask',
      query: { taskId: task.id },
    });
    expect(cancelled.json()).toMatchObject({ status: 'INTERRUPTED' });
    expect((await jobOf(account.clientId, task.id)).job?.state).toBe('cancelled');
    await sweep();
    expect(await getTask(t.app, account.readToken, task.id)).toMatchObject({ status: 'INTERRUPTED' });
  });

  it('deletes finished tasks with their files once the retention passed', async () => {
    const account = await createAccount(t.runtime);
    const old = await createTask(t.app, account.writeToken, Queued.type);
    const recent = await createTask(t.app, account.writeToken, Queued.type);
    for (const task of [old, recent])
      await send(t.app, account.writeToken, {
        method: 'POST',
        url: '/api/task/cancelTask',
        query: { taskId: task.id },
      });
    const { pool } = t.runtime.database;
    await taskFileRepository.insertChunk(
      t.runtime.database.db,
      account.clientId,
      old.id,
      1,
      0,
      Buffer.from('old bytes'),
    );
    // Finished eight days ago: beyond the default retention of seven days.
    await pool.query(
      `UPDATE task SET finish_date = now() - interval '8 days' WHERE client_id = $1 AND id = $2`,
      [account.clientId, old.id],
    );
    expect((await sweep()).deleted).toBeGreaterThanOrEqual(1);
    expectNotFound(
      await send(t.app, account.readToken, {
        method: 'GET',
        url: '/api/task/getTask',
        query: { id: old.id },
      }),
      old.id,
    );
    const { rows } = await pool.query('SELECT 1 FROM task_file_chunk WHERE client_id = $1 AND task_id = $2', [
      account.clientId,
      old.id,
    ]);
    expect(rows).toEqual([]);
    expect((await getTask(t.app, account.readToken, recent.id)).status).toBe('INTERRUPTED');
  });
});
