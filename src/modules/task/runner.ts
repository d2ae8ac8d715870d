/**
 * Runs tasks (D10.3, P80–P86): keeps the registered kinds and their jobs, claims a queued task when its job runs,
 * calls `perform` with a `TaskContext`, and records the outcome in one transaction:
 *
 * - `perform` returns → FINISHED (progress 100), the file of this run kept, any other run's chunks deleted;
 * - `TaskStoppedError('cancelled')`, any throw once a cancel was asked, or a return after the context reported
 *   the cancel → INTERRUPTED (a run that finishes without having been told of the cancel is FINISHED);
 * - `AppError` → ERROR with `message` in the task's language and `messageParams` `{error, params}`, no retry;
 * - any other throw → RESTARTING with a new job due after the backoff while runs remain, else ERROR
 *   `error_task_failed` (the error itself is kept in the internal `failure` column for operators);
 * - a run past its kind's time limit is abandoned and counts as an unexpected failure;
 * - a run that lost its task (`TaskStoppedError('lost')`) records nothing: the run that took over decides.
 *
 * The same "retry or fail" rule ends runs whose process died and tasks whose job vanished (the sweep, P83).
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Kysely, Transaction, Updateable } from 'kysely';
import type { DB } from '../../db/schema.ts';
import type { JobDefinition, JobQueue } from '../../jobs/job.ts';
import { AppError } from '../../http/errors.ts';
import { renderMessage, type ErrorCode } from '../../http/error-catalog.ts';
import { TaskStoppedError, type TaskDefinition } from './definition.ts';
import { TaskRun, type RunTiming } from './context.ts';
import { DEFAULT_TASK_TIMEOUT_SECONDS, taskJob, taskQueueName, type TaskJobPayload } from './jobs.ts';
import { taskFileRepository, taskRepository } from './repository.ts';
import type { TaskRow } from './presenter.ts';
import type { TaskStatus, TaskTable } from './tables.ts';

/** A kind and the job that runs it. */
interface RegisteredKind {
  kind: TaskDefinition<never>;
  job: JobDefinition<TaskJobPayload>;
}

/** What the "retry or fail" rule needs to know about a task. */
export interface EndingTask {
  id: number;
  client_id: number;
  type: string;
  status: TaskStatus;
  attempt: number;
  lang: 'ru' | 'en';
}

const TYPE_PATTERN = /^[A-Z][A-Z0-9_]{0,99}$/;
const FAILURE_MAX_CHARS = 4_000;

/** `message` and `messageParams` of an ERROR: the text in `lang` and the error model's `{error, params}` (P85). */
function errorMessage(
  code: ErrorCode,
  params: Record<string, unknown>,
  lang: 'ru' | 'en',
): Pick<Updateable<TaskTable>, 'message' | 'message_params'> {
  return {
    message: renderMessage(code, lang, params),
    message_params: JSON.stringify({ error: code, params }),
  };
}

/** Text of an unexpected error for the `failure` column (stack included, bounded). */
const failureText = (error: unknown) =>
  (error instanceof Error ? (error.stack ?? `${error.name}: ${error.message}`) : String(error)).slice(
    0,
    FAILURE_MAX_CHARS,
  );

/** Registers task kinds and runs their tasks in this process. */
export class TaskRunner {
  private readonly kinds = new Map<string, RegisteredKind>();
  private readonly runs = new Set<TaskRun>();

  constructor(
    private readonly db: Kysely<DB>,
    private readonly jobs: JobQueue,
    private readonly timing: RunTiming,
  ) {}

  /**
   * Registers a kind and returns the job that runs it (to list among the group's jobs).
   * @throws Error when the type is not upper snake case or already registered, `attempts` < 1 or
   *   `timeoutSeconds` ≤ 0
   */
  register(kind: TaskDefinition<never>): JobDefinition<TaskJobPayload> {
    if (!TYPE_PATTERN.test(kind.type)) throw new Error(`task type ${kind.type} is not upper snake case`);
    if (this.kinds.has(kind.type)) throw new Error(`task type ${kind.type} is registered twice`);
    if (!(kind.attempts >= 1)) throw new Error(`task type ${kind.type} needs attempts >= 1`);
    if (kind.timeoutSeconds !== undefined && !(kind.timeoutSeconds > 0))
      throw new Error(`task type ${kind.type} needs timeoutSeconds > 0`);
    const job = taskJob(kind, (payload, jobId) => this.run(kind, payload, jobId));
    this.kinds.set(kind.type, { kind, job });
    return job;
  }

  /** The registered kind of `type`, if any. */
  kindOf(type: string): TaskDefinition<never> | undefined {
    return this.kinds.get(type)?.kind;
  }

  /** The queue of every registered kind (the sweep checks task jobs against them). */
  queues(): Array<{ type: string; queue: string }> {
    return [...this.kinds.values()].map(({ kind, job }) => ({ type: kind.type, queue: job.name }));
  }

  /**
   * Inserts the job that runs `task` inside `trx`, due at `startAfter` (now when omitted).
   * @throws Error when the kind of `type` is not registered (a wiring bug: no worker would ever run it)
   */
  async schedule(
    trx: Transaction<DB>,
    type: string,
    task: { clientId: number; id: number },
    jobId: string,
    startAfter?: Date,
  ): Promise<void> {
    const registered = this.kinds.get(type);
    if (!registered) throw new Error(`task type ${type} is not listed by any group`);
    await this.jobs.enqueue(trx, registered.job, [{ taskId: task.id, clientId: task.clientId }], {
      id: jobId,
      startAfter,
    });
  }

  /** Cancels the waiting job of a task inside `trx` (cancel of a queued task, P81). */
  async cancelJob(trx: Transaction<DB>, type: string, jobId: string): Promise<void> {
    await this.jobs.cancel(trx, taskQueueName(type), jobId);
  }

  /** Marks every run of this process lost (its job queue stopped): they stop at their next step (P83). */
  abandonAll(): void {
    for (const run of this.runs) run.abandon();
  }

  /**
   * Ends a task whose run failed unexpectedly or was lost (P84): INTERRUPTED when a cancel was asked, a retry
   * (RESTARTING, a new job due after the backoff) while runs remain, otherwise ERROR `error_task_failed`.
   * `write` applies the values with the caller's fence; the job is inserted only if it wrote.
   */
  async retryOrFail(
    trx: Transaction<DB>,
    task: EndingTask,
    failure: string,
    write: (values: Updateable<TaskTable>) => Promise<TaskRow | undefined>,
  ): Promise<TaskRow | undefined> {
    const now = new Date();
    if (task.status === 'INTERRUPTING')
      return this.end(trx, write, { status: 'INTERRUPTED', finish_date: now });
    const kind = this.kindOf(task.type);
    if (kind && task.attempt < kind.attempts) {
      const delayMs = task.attempt === 0 ? 0 : kind.backoffSeconds * 1000 * 2 ** (task.attempt - 1);
      const retryDate = new Date(now.getTime() + delayMs);
      const jobId = randomUUID();
      const row = await write({ status: 'RESTARTING', retry_date: retryDate, job_id: jobId, failure });
      if (row)
        await this.schedule(trx, task.type, { clientId: task.client_id, id: task.id }, jobId, retryDate);
      return row;
    }
    return this.end(trx, write, {
      status: 'ERROR',
      finish_date: now,
      failure,
      ...errorMessage('error_task_failed', { attempts: kind?.attempts ?? task.attempt }, task.lang),
    });
  }

  /** Writes a final status and deletes the chunks no download will read (all but a FINISHED run's file). */
  private async end(
    trx: Transaction<DB>,
    write: (values: Updateable<TaskTable>) => Promise<TaskRow | undefined>,
    values: Updateable<TaskTable>,
  ): Promise<TaskRow | undefined> {
    const row = await write(values);
    const keep = row?.status === 'FINISHED' ? (row.file_attempt ?? undefined) : undefined;
    if (row) await taskFileRepository.deleteChunks(trx, row.client_id, row.id, keep);
    return row;
  }

  /**
   * Runs the job's task for its job `jobId` (a stale job, or a task cancelled meanwhile, does nothing). A run past
   * the kind's time limit is abandoned and recorded as an unexpected failure.
   */
  private async run(kind: TaskDefinition<never>, payload: TaskJobPayload, jobId: string): Promise<void> {
    const clientId = payload.clientId ?? (await taskRepository.clientOf(this.db, payload.taskId));
    if (clientId === undefined) return;
    const row = await taskRepository.claim(this.db, clientId, payload.taskId, jobId);
    if (!row) return;
    const run = new TaskRun<never>(this.db, row, this.timing);
    this.runs.add(run);
    const limitSeconds = kind.timeoutSeconds ?? DEFAULT_TASK_TIMEOUT_SECONDS;
    const limit = new AbortController();
    let outcome: { error: unknown } | undefined;
    try {
      outcome = await Promise.race([
        kind.perform(run.context).then(
          () => undefined,
          (error: unknown) => ({ error }),
        ),
        sleep(limitSeconds * 1000, undefined, { signal: limit.signal }).then(
          () => {
            run.abandon();
            return { error: new Error(`the run took longer than ${limitSeconds} s`), timedOut: true };
          },
          () => undefined,
        ),
      ]);
    } finally {
      limit.abort();
      this.runs.delete(run);
      await run.settle();
    }
    if (run.stopped === 'lost' && !(outcome && 'timedOut' in outcome)) return;
    await this.record(row, run, outcome);
  }

  /** Records the outcome of a run in one transaction, fenced by its attempt (see the module comment). */
  private async record(row: TaskRow, run: TaskRun, outcome: { error: unknown } | undefined): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const status = await taskRepository.statusOfRun(trx, run, true);
      if (status === undefined) return;
      const write = (values: Updateable<TaskTable>) => taskRepository.endRun(trx, run, values);
      const now = new Date();
      const error = outcome?.error;
      // A run told of the cancel was interrupted, even if `perform` swallowed it; a failure after a cancel too.
      const interrupted =
        run.stopped === 'cancelled' ||
        (outcome !== undefined && (status === 'INTERRUPTING' || error instanceof TaskStoppedError));
      if (!outcome && !interrupted) {
        await this.end(trx, write, {
          status: 'FINISHED',
          progress: 100,
          processed_quantity: run.processedQuantity,
          finish_date: now,
        });
      } else if (interrupted) {
        await this.end(trx, write, {
          status: 'INTERRUPTED',
          processed_quantity: run.processedQuantity,
          progress: run.progressValue,
          finish_date: now,
        });
      } else if (error instanceof AppError) {
        await this.end(trx, write, {
          status: 'ERROR',
          processed_quantity: run.processedQuantity,
          progress: run.progressValue,
          finish_date: now,
          ...errorMessage(error.code, error.params, row.lang),
        });
      } else {
        await this.retryOrFail(trx, { ...row, status, attempt: run.attempt }, failureText(error), (values) =>
          write({ ...values, processed_quantity: run.processedQuantity, progress: run.progressValue }),
        );
      }
    });
  }
}
