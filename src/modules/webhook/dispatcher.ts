/**
 * Background delivery of webhook events (D9.3) on pg-boss workers.
 *
 * Each worker fetches a batch of due delivery jobs (`FOR UPDATE SKIP LOCKED`: processes sharing the database
 * never take the same job), sends the batch concurrently, then records every outcome and schedules the retries in
 * one transaction. Latency: the outbox sends a `pg_notify` with the change, and every process wakes its workers
 * on it instead of waiting for the next poll.
 *
 * Outcomes: 2xx → DELIVERED; 410 → the subscription is disabled and its pending deliveries cancelled; anything
 * else (other status, 3xx, timeout, network error, refused target) → retried after the next delay of
 * `config.webhookRetrySchedule` with ±20 % jitter, FAILED after the last one.
 */
import type PgBoss from 'pg-boss';
import type { Kysely } from 'kysely';
import type { Config } from '../../config.ts';
import type { DB } from '../../db/schema.ts';
import type { ChangeNotifier } from '../../db/notifications.ts';
import { ensureQueue } from '../../jobs/queue.ts';
import {
  DELIVERY_QUEUE,
  DeliveryQueue,
  type DeliveryJobData,
  type DeliveryJobSpec,
} from './delivery-queue.ts';
import { deliveryRepository, webhookRepository, type AttemptRecord, type DispatchRow } from './repository.ts';
import { WebhookSender, type AttemptOutcome } from './sender.ts';

/** Key of the `webhook` change notification that wakes the dispatchers. */
export const WAKE_KEY = 'dispatch';

/** Delay before the retry that follows attempt number `attempt` (1-based), with ±20 % jitter; undefined = give up. */
export function retryDelayMs(
  schedule: readonly number[],
  attempt: number,
  random = Math.random,
): number | undefined {
  const base = schedule[attempt - 1];
  if (base === undefined) return undefined;
  return Math.round(base * 1000 * (0.8 + 0.4 * random()));
}

/** Delivers webhook jobs with `config.webhookWorkers` pg-boss workers. */
export class WebhookDispatcher {
  private readonly sender: WebhookSender;
  private readonly workerIds: string[] = [];
  private readonly timers = new Set<NodeJS.Timeout>();
  private stopped = false;

  constructor(
    private readonly boss: PgBoss,
    private readonly db: Kysely<DB>,
    private readonly queue: DeliveryQueue,
    private readonly config: Config,
  ) {
    this.sender = new WebhookSender({
      timeoutMs: config.webhookTimeoutMs,
      allowPrivate: config.webhookAllowPrivate,
    });
  }

  /** Creates the queue if needed, starts the workers and wakes them on every committed event. */
  async start(notifier: ChangeNotifier): Promise<void> {
    await ensureQueue(this.boss, DELIVERY_QUEUE);
    notifier.on('webhook', (key) => {
      if (key === WAKE_KEY) this.wake();
    });
    // Notifications may have been missed while the listener reconnected: look for work at once.
    notifier.onReset(() => this.wake());
    for (let index = 0; index < this.config.webhookWorkers; index++) {
      this.workerIds.push(
        await this.boss.work<DeliveryJobData>(
          DELIVERY_QUEUE,
          { batchSize: this.config.webhookBatchSize, pollingIntervalSeconds: this.config.webhookPollSeconds },
          (jobs) => this.deliverBatch(jobs),
        ),
      );
    }
  }

  /** Makes every worker of this process fetch now instead of at its next poll. */
  wake(): void {
    if (this.stopped) return;
    for (const id of this.workerIds) this.boss.notifyWorker(id);
  }

  /** Stops waking workers and closes idle connections (pg-boss stops the workers themselves). */
  stop(): void {
    this.stopped = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.sender.close();
  }

  /**
   * Delivers one batch of jobs: sends every live, current delivery concurrently, then records the outcomes and
   * schedules retries in one transaction. Throwing makes pg-boss retry the whole batch (at-least-once).
   */
  async deliverBatch(jobs: PgBoss.Job<DeliveryJobData>[]): Promise<void> {
    if (jobs.length === 0) return;
    // A full batch means more may be waiting: fetch again right after this one.
    if (jobs.length >= this.config.webhookBatchSize) this.wake();
    const expected = new Map(jobs.map((job) => [job.data.d, job.data.a]));
    const rows = await deliveryRepository.loadForDispatch(this.db, [...expected.keys()]);
    const due = rows.filter(
      (row) => row.status === 'PENDING' && row.webhook_live && row.attempts === expected.get(row.id),
    );
    if (due.length === 0) return;
    const outcomes = await Promise.all(
      due.map((row) =>
        this.sender.send({
          url: row.url,
          secret: row.secret,
          eventId: row.event_id,
          type: row.type,
          payload: row.payload,
        }),
      ),
    );
    await this.recordOutcomes(due, outcomes);
  }

  private async recordOutcomes(rows: DispatchRow[], outcomes: AttemptOutcome[]): Promise<void> {
    const now = Date.now();
    const records: AttemptRecord[] = [];
    const retries = new Map<number, Date>();
    const gone = new Set<number>();
    rows.forEach((row, index) => {
      const outcome = outcomes[index] as AttemptOutcome;
      const attempt = row.attempts + 1;
      const base = {
        id: row.id,
        expectedAttempts: row.attempts,
        statusCode: outcome.statusCode,
        error: outcome.error,
      };
      if (outcome.delivered) {
        records.push({ ...base, status: 'DELIVERED', nextAttemptAt: null, deliveredAt: new Date(now) });
      } else if (outcome.statusCode === 410) {
        gone.add(row.webhook_id);
        records.push({ ...base, status: 'FAILED', nextAttemptAt: null, deliveredAt: null });
      } else {
        const delay = retryDelayMs(this.config.webhookRetrySchedule, attempt);
        const nextAttemptAt = delay === undefined ? null : new Date(now + delay);
        if (nextAttemptAt) retries.set(row.id, nextAttemptAt);
        records.push({
          ...base,
          status: nextAttemptAt ? 'PENDING' : 'FAILED',
          nextAttemptAt,
          deliveredAt: null,
        });
      }
    });
    const scheduled = await this.db.transaction().execute(async (trx) => {
      const updated = await deliveryRepository.recordAttempts(trx, records);
      const jobs: DeliveryJobSpec[] = updated
        .filter((row) => row.status === 'PENDING' && retries.has(row.id))
        .map((row) => ({ deliveryId: row.id, attempts: row.attempts, startAfter: retries.get(row.id) }));
      for (const webhookId of gone) {
        const reason = 'the receiver answered 410 Gone: subscription disabled';
        await webhookRepository.disable(trx, webhookId, reason);
        await deliveryRepository.cancelPending(trx, webhookId, reason);
      }
      await this.queue.enqueue(trx, jobs);
      return jobs;
    });
    this.wakeAtDueTimes(scheduled);
  }

  /** Retries due before the next poll wake this process's workers on time (the poll catches the rest). */
  private wakeAtDueTimes(jobs: DeliveryJobSpec[]): void {
    const pollMs = this.config.webhookPollSeconds * 1000;
    const delays = new Set(
      jobs
        .map((job) => (job.startAfter ? job.startAfter.getTime() - Date.now() : 0))
        .filter((delay) => delay < pollMs)
        .map((delay) => Math.max(0, Math.ceil(delay / 50) * 50 + 20)),
    );
    for (const delay of delays) {
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        this.wake();
      }, delay);
      timer.unref();
      this.timers.add(timer);
    }
  }
}
