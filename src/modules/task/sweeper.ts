/**
 * The watchdog of background tasks (P83, P87), run every `TASK_SWEEP_SECONDS` by each process that runs workers.
 * No path leaves a task of a kind this process knows unfinished forever (a kind it does not know, say one added
 * by a newer version during a rolling deploy, is left to the processes that know it):
 *
 * - a RUNNING or INTERRUPTING task whose heartbeat is older than three heartbeats lost its process (killed,
 *   out of memory, its queue stopped): it is retried, or ends ERROR (no runs left) or INTERRUPTED (cancel asked);
 * - a CREATED or RESTARTING task whose pg-boss job is no longer waiting or running (failed before our code ran,
 *   archived unstarted, deleted) is given a new job, or ends the same way;
 * - finished tasks older than `TASK_RETENTION_DAYS` are deleted with their files.
 *
 * Every change is fenced by what was read (status, run, job, stale heartbeat), so processes sweeping at the same
 * time, or a run that comes back to life, never undo each other's work.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { taskRepository, type SweptTask } from './repository.ts';
import type { TaskRunner } from './runner.ts';

/** Tasks handled per kind of trouble and per sweep (the next sweep takes the rest). */
const SWEEP_BATCH = 100;
/** Finished tasks deleted per sweep. */
const DELETE_BATCH = 1_000;
const DAY_MS = 86_400_000;

/** Settings of the sweep (from the configuration). */
export interface SweepOptions {
  heartbeatMs: number;
  sweepMs: number;
  retentionDays: number;
}

/** What one sweep did. */
export interface SweepReport {
  /** Runs whose process died. */
  lostRuns: number;
  /** Queued tasks whose job was gone. */
  lostJobs: number;
  /** Finished tasks deleted after the retention. */
  deleted: number;
}

/** Sweeps periodically while started; `sweep()` runs one pass (tests call it directly). */
export class TaskSweeper {
  private timer: NodeJS.Timeout | undefined;
  private current: Promise<unknown> | undefined;

  constructor(
    private readonly db: Kysely<DB>,
    private readonly runner: TaskRunner,
    private readonly options: SweepOptions,
  ) {}

  /** Sweeps now and then every `sweepMs`. */
  start(): void {
    const tick = () => {
      // A pass that fails (database unreachable) is simply repeated at the next tick.
      this.current ??= this.sweep()
        .catch(() => undefined)
        .finally(() => (this.current = undefined));
    };
    tick();
    this.timer = setInterval(tick, this.options.sweepMs);
    this.timer.unref();
  }

  /** Stops the timer and waits for a pass in flight. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.current;
  }

  /** One pass: lost runs, lost jobs, expired tasks (see the module comment). */
  async sweep(): Promise<SweepReport> {
    const queues = this.runner.queues();
    const silentMs = 3 * this.options.heartbeatMs;
    const types = queues.map((queue) => queue.type);
    const staleRuns = await taskRepository.staleRuns(this.db, types, silentMs, SWEEP_BATCH);
    let lostRuns = 0;
    const silence = `its process stopped: no heartbeat for ${silentMs / 1000} s`;
    for (const task of staleRuns) if (await this.recover(task, silence, silentMs)) lostRuns += 1;
    const lostQueued = await taskRepository.lostQueued(this.db, queues, SWEEP_BATCH);
    let lostJobs = 0;
    for (const task of lostQueued)
      if (await this.recover(task, 'its job ended before the task ran')) lostJobs += 1;
    const retentionMs = this.options.retentionDays * DAY_MS;
    const deleted = Number(
      await taskRepository.deleteFinished(this.db, new Date(Date.now() - retentionMs), DELETE_BATCH),
    );
    return { lostRuns, lostJobs, deleted };
  }

  /** Retries or ends one task as it was seen; false when it changed meanwhile. */
  private async recover(task: SweptTask, failure: string, silentMs?: number): Promise<boolean> {
    const row = await this.db
      .transaction()
      .execute((trx) =>
        this.runner.retryOrFail(trx, task, failure, (values) =>
          taskRepository.updateIf(trx, task, { ...task, silentMs }, values),
        ),
      );
    return row !== undefined;
  }
}
