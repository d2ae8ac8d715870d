/**
 * Stopping the job queue while a job still runs (src/jobs/queue.ts): pg-boss completes a job without awaiting
 * it, so a job that ends after the queue stopped and the service's pool ended must not send SQL to that pool
 * (an unhandled "Cannot use a pool after calling end on the pool" in CI); the job stays active and is retried
 * after expiry.
 */
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { ensureQueue, startJobQueue } from '../../src/jobs/queue.ts';
import { testDatabaseUrl } from '../helpers/test-app.ts';

const unhandled: unknown[] = [];
const record = (reason: unknown) => void unhandled.push(reason);
afterEach(() => {
  process.off('unhandledRejection', record);
});

describe('job queue stop', () => {
  it('sends no SQL once stopped: a job finishing after the pool ended completes as a no-op', async () => {
    process.on('unhandledRejection', record);
    const pool = new pg.Pool({ connectionString: testDatabaseUrl(), max: 3 });
    const boss = await startJobQueue(pool, { maintenanceIntervalSeconds: 60 });
    const queue = `test-stop-${Date.now()}`;
    await ensureQueue(boss, queue);
    let finish: () => void = () => undefined;
    const running = new Promise<void>((resolve) => {
      boss
        .work(queue, { pollingIntervalSeconds: 0.5 }, async () => {
          resolve();
          await new Promise<void>((done) => (finish = done));
        })
        .catch(() => undefined);
    });
    await boss.send(queue, {});
    await running;

    // what the runtime does on close: stop the queue (here without waiting for the job), then end the pool
    await boss.stop({ graceful: false });
    await pool.end();
    finish();
    await new Promise((resolve) => setTimeout(resolve, 200));

    expect(unhandled.map(String)).toEqual([]);
  });
});
