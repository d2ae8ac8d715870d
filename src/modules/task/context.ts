/**
 * One run of a task in this process and the `TaskContext` its `perform` gets (P82): throttled progress writes,
 * the cancellation check, the heartbeat that tells other processes this run is alive (P83), and the file writer
 * (P86). Every write is fenced by the run's `attempt`: once another run took the task over, or the job queue of
 * this process stopped, the run is `lost` and the context throws `TaskStoppedError('lost')` at its next call.
 */
import { finished } from 'node:stream/promises';
import type { Writable } from 'node:stream';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { TaskStoppedError, type TaskContext, type TaskFileInfo, type TaskInfo } from './definition.ts';
import { ChunkSink } from './file-sink.ts';
import { taskFileRepository, taskRepository } from './repository.ts';
import type { TaskRow } from './presenter.ts';
import type { TaskStatus } from './tables.ts';

/** Timing of a run (from the configuration). */
export interface RunTiming {
  /** At most one progress write per this many ms (`TASK_PROGRESS_WRITE_MS`). */
  progressWriteMs: number;
  /** A heartbeat every this many ms (`TASK_HEARTBEAT_SECONDS`). */
  heartbeatMs: number;
}

const INT32_MAX = 2_147_483_647;
/** Control characters and path separators: never part of a download's file name. */
const UNSAFE_FILE_NAME = /[\p{Cc}/\\]/u;

/** The task as `perform` sees it. */
function infoOf(row: TaskRow): TaskInfo {
  return {
    id: row.id,
    type: row.type,
    clientId: row.client_id,
    userId: row.user_id,
    organizationId: row.organization_id,
    entityId: row.entity_id,
    service: row.service,
    name: row.name,
    lang: row.lang,
    retryNumber: row.retry_number,
  };
}

/** A run of a claimed task; `context` is what `perform` gets. */
export class TaskRun<P extends object = object> {
  /** Set once the run must stop: the task was cancelled, or this run lost it. */
  stopped: 'cancelled' | 'lost' | undefined;
  /** The last progress reported (written or not yet). */
  progressValue: number;
  processedQuantity: number;
  readonly clientId: number;
  readonly id: number;
  readonly attempt: number;
  readonly context: TaskContext<P>;
  /** Whether this run stored a file. */
  private fileWritten = false;
  private dirty = false;
  private lastWriteAt = 0;
  private writing: Promise<void> = Promise.resolve();
  private trailingWrite: NodeJS.Timeout | undefined;
  private readonly heartbeat: NodeJS.Timeout;

  constructor(
    private readonly db: Kysely<DB>,
    row: TaskRow,
    private readonly timing: RunTiming,
  ) {
    this.clientId = row.client_id;
    this.id = row.id;
    this.attempt = row.attempt;
    this.progressValue = row.progress;
    this.processedQuantity = row.processed_quantity;
    this.heartbeat = setInterval(() => void this.write(false).catch(() => undefined), timing.heartbeatMs);
    this.heartbeat.unref();
    this.context = {
      task: infoOf(row),
      properties: (row.properties ?? {}) as P,
      progress: (percent, processedQuantity) => this.progress(percent, processedQuantity),
      checkCancelled: () => this.checkCancelled(),
      writeFile: (file, write) => this.writeFile(file, write),
    };
  }

  /** Marks the run lost (its queue stopped): heartbeats end and the next context call throws. */
  abandon(): void {
    this.stopped ??= 'lost';
    this.end();
  }

  /** Stops the heartbeat and the pending progress write; waits for a write in flight. */
  async settle(): Promise<void> {
    this.end();
    await this.writing.catch(() => undefined);
  }

  private end(): void {
    clearInterval(this.heartbeat);
    clearTimeout(this.trailingWrite);
    this.trailingWrite = undefined;
  }

  private throwIfStopped(): void {
    if (this.stopped) throw new TaskStoppedError(this.stopped);
  }

  /** Reads what a fenced write or read answered: lost (undefined) or cancelled (INTERRUPTING). */
  private observe(status: TaskStatus | undefined): void {
    if (status === undefined) this.stopped ??= 'lost';
    else if (status === 'INTERRUPTING') this.stopped ??= 'cancelled';
  }

  private async progress(percent: number, processedQuantity?: number): Promise<void> {
    this.throwIfStopped();
    if (!Number.isFinite(percent)) throw new TypeError(`progress must be a finite number, got ${percent}`);
    this.progressValue = Math.min(100, Math.max(0, Math.round(percent)));
    if (processedQuantity !== undefined) {
      if (!Number.isFinite(processedQuantity))
        throw new TypeError(`processedQuantity must be a finite number, got ${processedQuantity}`);
      this.processedQuantity = Math.min(INT32_MAX, Math.max(0, Math.round(processedQuantity)));
    }
    this.dirty = true;
    const wait = this.lastWriteAt + this.timing.progressWriteMs - Date.now();
    if (wait <= 0) await this.write(true);
    else
      this.trailingWrite ??= setTimeout(() => {
        this.trailingWrite = undefined;
        void this.write(true).catch(() => undefined);
      }, wait);
    this.throwIfStopped();
  }

  /** Writes the heartbeat, with the reported progress when `withProgress` and it changed; one write at a time. */
  private write(withProgress: boolean): Promise<void> {
    const next = this.writing.then(async () => {
      const values =
        withProgress && this.dirty
          ? { progress: this.progressValue, processed_quantity: this.processedQuantity }
          : {};
      if (withProgress) {
        this.dirty = false;
        this.lastWriteAt = Date.now();
      }
      this.observe(await taskRepository.updateRun(this.db, this, values));
    });
    this.writing = next.catch(() => undefined);
    return next;
  }

  private async checkCancelled(): Promise<void> {
    this.throwIfStopped();
    this.observe(await taskRepository.statusOfRun(this.db, this));
    this.throwIfStopped();
  }

  private async writeFile(file: TaskFileInfo, write: (stream: Writable) => Promise<void>): Promise<void> {
    this.throwIfStopped();
    if (this.fileWritten) throw new Error('a task stores one file per run');
    if (file.fileName.length === 0 || file.fileName.length > 255 || UNSAFE_FILE_NAME.test(file.fileName))
      throw new Error(`unusable file name ${JSON.stringify(file.fileName)}`);
    this.fileWritten = true;
    const sink = new ChunkSink(async (number, data) => {
      this.throwIfStopped();
      await taskFileRepository.insertChunk(this.db, this.clientId, this.id, this.attempt, number, data);
    });
    try {
      await write(sink);
      if (!sink.writableEnded) sink.end();
      await finished(sink);
    } catch (error) {
      sink.destroy();
      this.throwIfStopped();
      throw error;
    }
    this.observe(
      await taskRepository.updateRun(this.db, this, {
        file_name: file.fileName,
        file_content_type: file.contentType,
        file_size: sink.bytes,
        file_attempt: this.attempt,
      }),
    );
    this.throwIfStopped();
  }
}
