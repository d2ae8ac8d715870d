/**
 * The shape of a background task kind (D10.3, P80), defined like a job (`src/jobs/job.ts`): a `type` (the TmsTask
 * `type` code), attempts, backoff and `perform(context)`. A group defines its kinds with `defineTask`, lists them
 * in its factory (`ResourceGroup.tasks`) and creates tasks with `TaskService.create` inside its change's
 * transaction; the task group runs them on the job queue and reports their state through `/api/task`.
 */
import type { Writable } from 'node:stream';

/** What a running task knows about itself (TmsTask fields, P80). */
export interface TaskInfo {
  id: number;
  type: string;
  clientId: number;
  /** The user whose token created the task. */
  userId: number;
  organizationId: number | null;
  entityId: number | null;
  service: string | null;
  name: string | null;
  /** The creating user's language: the language of `message` (P85). */
  lang: 'ru' | 'en';
  /** Earlier runs of this task (0 on the first run). */
  retryNumber: number;
}

/** Name and media type of a task's file (the download's `Content-Disposition` and `Content-Type`, P86). */
export interface TaskFileInfo {
  /** File name shown to the downloader, e.g. `campaign-stats-2024-09.xlsx` (no path; 1..255 characters). */
  fileName: string;
  /** e.g. `application/vnd.openxmlformats-officedocument.spreadsheetml.sheet`. */
  contentType: string;
}

/** What `perform` gets (P82–P86). */
export interface TaskContext<P extends object = object> {
  task: TaskInfo;
  /** The `properties` the task was created with. */
  properties: P;
  /**
   * Reports progress: `percent` 0..100 (rounded, clamped) and, when given, `processedQuantity` (items done so far).
   * Writes are throttled (at most one per `TASK_PROGRESS_WRITE_MS`; the last value is always written).
   * @throws TaskStoppedError when the task was cancelled or this run lost the task (let it propagate)
   */
  progress: (percent: number, processedQuantity?: number) => Promise<void>;
  /**
   * The cancellation check: call it once per step (a page of rows, a request to a marketplace); one primary-key
   * read each time.
   * @throws TaskStoppedError when the task was cancelled (it becomes INTERRUPTED) or this run lost the task
   */
  checkCancelled: () => Promise<void>;
  /**
   * Streams the task's file into storage: `write` gets a Writable and resolves once it has written everything
   * (ending the stream is optional). Bytes are stored in ~1 MiB chunks as they come, never buffered whole; the
   * file is downloadable once the task is FINISHED. One file per task; a retry writes it anew.
   * @throws Error when called twice in one run; TaskStoppedError as `checkCancelled`
   */
  writeFile: (file: TaskFileInfo, write: (stream: Writable) => Promise<void>) => Promise<void>;
}

/** A task kind. `P` is the JSON `properties` object (small values; the database holds the rest). */
export interface TaskDefinition<P extends object = object> {
  /** The TmsTask `type` code, upper snake case and unique in the service (e.g. `CAMPAIGN_STATS_FILE_TASK`). */
  type: string;
  /** Runs in all (the first one included) before an unexpected failure makes the task ERROR; ≥ 1. */
  attempts: number;
  /** Delay before the first retry in seconds; each later retry doubles it. */
  backoffSeconds: number;
  /**
   * Longest a run may take, in seconds (default 3600): a run still going then is abandoned (its next context
   * call throws) and counts as an unexpected failure, so a hung `perform` cannot hold its task forever (P84).
   */
  timeoutSeconds?: number;
  /**
   * Does the work. Returning finishes the task (FINISHED, progress 100). An `AppError` is an expected failure:
   * ERROR with its message, no retry. Any other throw is retried while attempts remain (P84). A run may be
   * repeated after a crash at any point, so `perform` must be idempotent.
   */
  perform(context: TaskContext<P>): Promise<void>;
}

/** Keeps a task definition's `properties` type for `TaskService.create`. */
export const defineTask = <P extends object>(definition: TaskDefinition<P>): TaskDefinition<P> => definition;

/**
 * Thrown by the context when the run must stop: the task was cancelled (`cancelled`), or this run no longer owns
 * the task (`lost`: the process was deemed dead and another run took over, or the queue stopped). `perform` lets
 * it propagate; the runner records INTERRUPTED for a cancel and nothing for a lost run.
 */
export class TaskStoppedError extends Error {
  constructor(readonly reason: 'cancelled' | 'lost') {
    super(reason === 'cancelled' ? 'the task was cancelled' : 'this run no longer owns the task');
  }
}
