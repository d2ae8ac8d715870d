/**
 * The shape of a background job (STYLE §10): a name (its pg-boss queue), a payload type, attempts, backoff,
 * expiry and `perform`. Groups define their jobs in their own folder and list them in their group factory
 * (`src/modules/<group>/group.ts`); `JobQueue` enqueues them inside the transaction of the change that causes
 * them (a job exists exactly when that change commits) and starts one worker per job in each process.
 */
import type PgBoss from 'pg-boss';
import type { Transaction } from 'kysely';
import type { DB } from '../db/schema.ts';
import { ensureQueue, transactionalDb } from './queue.ts';

/** What `perform` learns about the job it runs. */
export interface JobRun {
  /** pg-boss job id (UUID). */
  id: string;
  /** 0 on the first try, then 1, 2, … (pg-boss retries after a failure or an expired run). */
  retryCount: number;
}

/** A job kind. `P` is its JSON payload (ids and small values only; the database holds the rest). */
export interface JobDefinition<P extends object = object> {
  /** Queue name, unique in the service (`<group>-<action>`, e.g. `receipt-refresh`). */
  name: string;
  /** Tries in all (the first one included) before pg-boss gives the job up; ≥ 1. */
  attempts: number;
  /** Delay before the first retry in seconds; each later retry doubles it (exponential backoff). */
  backoffSeconds: number;
  /**
   * Seconds a run may take before pg-boss treats its process as dead and retries the job. `perform` must be
   * safe to run again after a crash at any point (idempotent).
   */
  expireSeconds: number;
  /** Jobs fetched per poll by one worker (default 1); a worker runs them one after another. */
  batchSize?: number;
  /** Workers of this job in each process (default 1), each fetching its own batches. */
  workers?: number;
  /**
   * A cron expression (UTC, minute precision) to run the job periodically with an empty payload (pg-boss cron:
   * across processes sharing the database, each due time enqueues one job).
   */
  cron?: string;
  /** Runs the job; a throw (or an expiry) schedules a retry while attempts remain. */
  perform: (payload: P, run: JobRun) => Promise<void>;
}

/** Keeps a job definition's payload type for `enqueue`. */
export const defineJob = <P extends object>(definition: JobDefinition<P>): JobDefinition<P> => definition;

/** Options of one enqueued job. */
export interface EnqueueOptions {
  /** Not before this time (a delayed job). */
  startAfter?: Date;
  /** At most one queued (not yet active) job with this key per queue (pg-boss singleton key). */
  singletonKey?: string;
  /** The job's id (a UUID), when the caller stores it beforehand; only with a single payload. */
  id?: string;
}

/** pg-boss options of every job of `job`'s kind: retries with exponential backoff, expiry. */
const jobOptions = (job: JobDefinition<never>) => ({
  retryLimit: job.attempts - 1,
  retryDelay: job.backoffSeconds,
  retryBackoff: true,
  expireInSeconds: job.expireSeconds,
});

/** Enqueues jobs and runs their workers, on the service's pg-boss. */
export class JobQueue {
  private readonly workerIds: string[] = [];

  constructor(
    /** The pg-boss instance (shared with the webhook dispatcher). */
    readonly boss: PgBoss,
    private readonly pollingIntervalSeconds: number,
  ) {}

  /**
   * Inserts `payloads` as jobs of `job` inside `trx`: they exist exactly when `trx` commits.
   * @throws Error when `options.id` is given with more than one payload
   */
  async enqueue<P extends object>(
    trx: Transaction<DB>,
    job: JobDefinition<P>,
    payloads: P[],
    options: EnqueueOptions = {},
  ): Promise<void> {
    if (payloads.length === 0) return;
    if (options.id !== undefined && payloads.length > 1) throw new Error('a job id names a single job');
    await this.boss.insert(
      payloads.map((data) => ({
        name: job.name,
        data,
        ...jobOptions(job),
        ...(options.startAfter && { startAfter: options.startAfter.toISOString() }),
        ...(options.singletonKey && { singletonKey: options.singletonKey }),
        ...(options.id && { id: options.id }),
      })),
      { db: transactionalDb(trx) },
    );
  }

  /** Cancels job `id` of queue `name` inside `trx` unless it already ended (a waiting job will not run). */
  async cancel(trx: Transaction<DB>, name: string, id: string): Promise<void> {
    await this.boss.cancel(name, id, { db: transactionalDb(trx) });
  }

  /**
   * Creates the queues of `jobs` and the schedules of those with a `cron`, and the further queues `names` (all
   * idempotent); every process does it, under the set-up lock (P166), before it enqueues or works.
   */
  async ensureQueues(jobs: JobDefinition<never>[], names: readonly string[] = []): Promise<void> {
    for (const name of names) await ensureQueue(this.boss, name);
    for (const job of jobs) {
      await ensureQueue(this.boss, job.name);
      if (job.cron !== undefined)
        await this.boss.schedule(job.name, job.cron, {}, { tz: 'UTC', ...jobOptions(job) });
    }
  }

  /**
   * Starts one worker per job in this process. A worker that fetched a full batch fetches again at once (more may
   * be waiting) instead of sleeping until its next poll.
   */
  async startWorkers(jobs: JobDefinition<never>[]): Promise<void> {
    for (const job of jobs) {
      const perform = job.perform as (payload: object, run: JobRun) => Promise<void>;
      const batchSize = job.batchSize ?? 1;
      for (let worker = 0; worker < (job.workers ?? 1); worker++) {
        let workerId = '';
        workerId = await this.boss.work<object>(
          job.name,
          { batchSize, pollingIntervalSeconds: this.pollingIntervalSeconds, includeMetadata: true },
          async (batch) => {
            for (const item of batch) await perform(item.data, { id: item.id, retryCount: item.retryCount });
            if (batch.length >= batchSize) this.boss.notifyWorker(workerId);
          },
        );
        this.workerIds.push(workerId);
      }
    }
  }

  /** Makes this process's workers fetch now instead of at their next poll. */
  wake(): void {
    for (const id of this.workerIds) this.boss.notifyWorker(id);
  }
}
