/**
 * Background delivery of webhook events (D9.3) on pg-boss workers.
 *
 * Each worker fetches a batch of due delivery jobs (`FOR UPDATE SKIP LOCKED`: processes sharing the database
 * never take the same job), sends the batch concurrently, then records every outcome and schedules the retries in
 * one transaction. Latency: the outbox sends a `pg_notify` with the change, and every process wakes its workers
 * on it instead of waiting for the next poll.
 *
 * A slow receiver delays only itself (P29): sends still in flight after `config.webhookSlowAfterMs` are covered
 * by a watchdog job each (`{d, a}` of the attempt, due after the send timeout plus `WATCHDOG_MARGIN_MS`), the
 * finished ones are recorded in the same transaction, and the worker returns for the next batch. Each unfinished
 * send then records its own outcome when it ends, which bumps `attempts` and makes its watchdog stale; if the
 * process dies first, the watchdog makes the attempt again (at-least-once, never a loss).
 *
 * Outcomes: 2xx → DELIVERED; 410 → the subscription is disabled and its pending deliveries cancelled; anything
 * else (other status, 3xx, timeout, network error, refused target) → retried after the next delay of
 * `config.webhookRetrySchedule` with ±20 % jitter, FAILED after the last one.
 *
 * Throttling (P168, after the Standard Webhooks recommendations): a 429, 502, 503 or 504 throttles the endpoint
 * (the subscription) for its `Retry-After` (on 429 and 503, at most `MAX_RETRY_AFTER_MS`) or else for a backoff
 * doubling with each such answer in a row (`endpointBackoffMs`). Deliveries to a throttled endpoint are not sent:
 * their next attempt moves to the end of the throttle without counting an attempt. A delivered attempt ends it.
 *
 * Signatures (P167): during a rotation's grace period every attempt carries the signatures of the current and
 * the previous secret, space-separated in `webhook-signature`.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type PgBoss from 'pg-boss';
import type { Counter } from 'prom-client';
import type { Kysely } from 'kysely';
import type { Config } from '../../config.ts';
import type { SecretBox } from '../../security/secret-box.ts';
import type { WebhookAttemptOutcome } from '../../metrics/service-metrics.ts';
import type { DB } from '../../db/schema.ts';
import type { ChangeNotifier } from '../../db/notifications.ts';
import {
  DELIVERY_QUEUE,
  DeliveryQueue,
  type DeliveryJobData,
  type DeliveryJobSpec,
} from './delivery-queue.ts';
import { deliveryRepository, webhookRepository, type AttemptRecord, type DispatchRow } from './repository.ts';
import { WebhookSender, type AttemptOutcome } from './sender.ts';
import { withUrlPassword } from './url-password.ts';

/** Key of the `webhook` change notification that wakes the dispatchers. */
export const WAKE_KEY = 'dispatch';

/**
 * How long after the send timeout a watchdog job becomes due, in ms. Every send ends within the timeout (its
 * abort signal cuts the whole exchange), so by then the attempt it covers is off the wire in any live process and
 * the margin leaves time to record its outcome: a watchdog never races a running attempt.
 */
export const WATCHDOG_MARGIN_MS = 5_000;

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

/** Why a subscription stopped after a 410 (its `disabledReason` and its cancelled deliveries' `lastError`). */
const GONE_REASON = 'the receiver answered 410 Gone: subscription disabled';

/** Statuses that throttle the endpoint (Standard Webhooks: rate limited, or a gateway in front of it overloaded). */
const THROTTLE_STATUSES = new Set([429, 502, 503, 504]);

/** The longest `Retry-After` honoured: 1 h (a longer one throttles for 1 h; the endpoint may answer 429 again). */
export const MAX_RETRY_AFTER_MS = 3_600_000;

/** The longest throttle without `Retry-After`: 10 min. */
const MAX_ENDPOINT_BACKOFF_MS = 600_000;

/**
 * How long an endpoint is throttled after its `level`-th throttling answer in a row without `Retry-After`: 1 s
 * doubling per level up to 10 min, with ±20 % jitter.
 */
export function endpointBackoffMs(level: number, random = Math.random): number {
  return Math.round(Math.min(MAX_ENDPOINT_BACKOFF_MS, 1000 * 2 ** (level - 1)) * (0.8 + 0.4 * random()));
}

/** Delivers webhook jobs with `config.webhookWorkers` pg-boss workers. */
export class WebhookDispatcher {
  private readonly sender: WebhookSender;
  private readonly workerIds: string[] = [];
  private readonly timers = new Set<NodeJS.Timeout>();
  /** Sends that outlived their batch, by delivery id: settle once the outcome is recorded (or could not be). */
  private readonly background = new Map<number, Promise<void>>();
  private stopped = false;

  constructor(
    private readonly boss: PgBoss,
    private readonly db: Kysely<DB>,
    private readonly queue: DeliveryQueue,
    private readonly config: Config,
    /** Opens the sealed signing secrets and URL passwords (P160, P221). */
    private readonly secrets: SecretBox,
    /** Counts every recorded attempt by outcome (`/metrics`, P131). */
    private readonly attemptsCounter: Counter<'outcome'>,
  ) {
    this.sender = new WebhookSender({
      timeoutMs: config.webhookTimeoutMs,
      allowPrivate: config.webhookAllowPrivate,
    });
  }

  /** Starts the workers (the group's set-up created the queue) and wakes them on every committed event. */
  async start(notifier: ChangeNotifier): Promise<void> {
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

  /**
   * Stops waking workers, waits for the sends that outlived their batch to end and be recorded (at most the send
   * timeout plus `WATCHDOG_MARGIN_MS`; what is cut off is redelivered by its watchdog job), then closes idle
   * connections. Call after pg-boss stopped the workers and before the database closes.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    if (this.background.size > 0) {
      const bound = new AbortController();
      await Promise.race([
        Promise.all(this.background.values()),
        sleep(this.config.webhookTimeoutMs + WATCHDOG_MARGIN_MS, undefined, { signal: bound.signal }).catch(
          () => undefined,
        ),
      ]);
      bound.abort();
    }
    this.sender.close();
  }

  /** Number of sends of this process that outlived their batch and are not recorded yet. */
  get backgroundSends(): number {
    return this.background.size;
  }

  /**
   * Delivers one batch of jobs: sends every live, current delivery concurrently, then records the outcomes and
   * schedules retries in one transaction. When sends are still in flight after `config.webhookSlowAfterMs`, it
   * records the finished ones and a watchdog job for each unfinished one in one transaction and returns; the
   * unfinished ones are recorded one by one as they end. Throwing makes pg-boss retry the whole batch
   * (at-least-once); it throws only after every send of the batch has ended.
   */
  async deliverBatch(jobs: PgBoss.Job<DeliveryJobData>[]): Promise<void> {
    if (jobs.length === 0) return;
    // A full batch means more may be waiting: fetch again right after this one.
    if (jobs.length >= this.config.webhookBatchSize) this.wake();
    // A job for a delivery whose attempt is still running here (a watchdog due early, say after the event loop
    // stalled) waits for that attempt's outcome, then finds itself stale: never two attempts at once.
    const running = jobs.flatMap((job) => this.background.get(job.data.d) ?? []);
    if (running.length > 0) await Promise.all(running);
    const expected = new Map(jobs.map((job) => [job.data.d, job.data.a]));
    const rows: DispatchRow[] = [];
    for (const [clientId, ids] of await this.idsByClient(jobs))
      rows.push(...(await deliveryRepository.loadForDispatch(this.db, clientId, ids)));
    const current = rows.filter(
      (row) => row.status === 'PENDING' && row.webhook_live && row.attempts === expected.get(row.id),
    );
    const throttled = current.filter((row) => row.throttled_until !== null);
    if (throttled.length > 0) await this.defer(throttled);
    const due = current.filter((row) => row.throttled_until === null);
    if (due.length === 0) return;
    const outcomes: Array<AttemptOutcome | undefined> = due.map(() => undefined);
    const sends = due.map((row, index) =>
      this.sender
        .send({
          url: withUrlPassword(
            row.url,
            row.url_password === null ? null : this.secrets.open(row.url_password),
          ),
          secrets: [row.secret, ...(row.previous_secret === null ? [] : [row.previous_secret])].map(
            (sealed) => this.secrets.open(sealed),
          ),
          eventId: row.event_id,
          type: row.type,
          payload: row.payload,
        })
        .then((outcome) => {
          outcomes[index] = outcome;
          return outcome;
        }),
    );
    const all = Promise.all(sends);
    if (this.config.webhookSlowAfterMs === 0 || !(await this.slowerThanThreshold(all))) {
      await this.recordOutcomes(due, await all);
      return;
    }

    // A snapshot: a send that ends from here on is recorded in the background like the others still running.
    const attempts = due.map((row, index) => ({ row, outcome: outcomes[index], send: sends[index] }));
    const finished = attempts.filter((attempt) => attempt.outcome !== undefined);
    const unfinished = attempts.filter((attempt) => attempt.outcome === undefined);
    const watchdogAt = new Date(Date.now() + this.config.webhookTimeoutMs + WATCHDOG_MARGIN_MS);
    try {
      await this.recordOutcomes(
        finished.map((attempt) => attempt.row),
        finished.map((attempt) => attempt.outcome as AttemptOutcome),
        unfinished.map(({ row }) => ({
          clientId: row.client_id,
          deliveryId: row.id,
          attempts: row.attempts,
          startAfter: watchdogAt,
        })),
      );
    } catch {
      // Nothing committed, so no watchdog covers the unfinished sends: fall back to recording the whole batch
      // once every send has ended (if that fails too, pg-boss retries the batch after the attempts are over).
      await this.recordOutcomes(due, await all);
      return;
    }
    for (const { row, send } of unfinished) {
      const recorded = (send as Promise<AttemptOutcome>)
        .then((outcome) => this.recordOutcomes([row], [outcome]))
        // Unrecorded (database unreachable): the watchdog job makes the attempt again.
        .catch(() => undefined)
        .finally(() => this.background.delete(row.id));
      this.background.set(row.id, recorded);
    }
  }

  /** Moves the next attempt of deliveries to throttled endpoints to the end of the throttle (no attempt counted). */
  private async defer(rows: DispatchRow[]): Promise<void> {
    const jobs = await this.db.transaction().execute(async (trx) => {
      const moved = [];
      for (const clientId of new Set(rows.map((row) => row.client_id)))
        moved.push(
          ...(await deliveryRepository.defer(
            trx,
            clientId,
            rows
              .filter((row) => row.client_id === clientId)
              .map((row) => ({
                id: row.id,
                expectedAttempts: row.attempts,
                until: row.throttled_until as Date,
              })),
          )),
        );
      const specs = moved.map((row) => ({
        clientId: row.client_id,
        deliveryId: row.id,
        attempts: row.attempts,
        startAfter: row.next_attempt_at,
      }));
      await this.queue.enqueue(trx, specs);
      return specs;
    });
    this.wakeAtDueTimes(jobs);
  }

  /** The jobs' delivery ids by client (a job queued before jobs carried their client has its client looked up). */
  private async idsByClient(jobs: PgBoss.Job<DeliveryJobData>[]): Promise<Map<number, number[]>> {
    const byClient = new Map<number, number[]>();
    const add = (clientId: number, id: number) =>
      byClient.set(clientId, [...(byClient.get(clientId) ?? []), id]);
    const withoutClient: number[] = [];
    for (const job of jobs) {
      if (job.data.c === undefined) withoutClient.push(job.data.d);
      else add(job.data.c, job.data.d);
    }
    if (withoutClient.length > 0)
      for (const row of await deliveryRepository.clientsOf(this.db, withoutClient))
        add(row.client_id, row.id);
    return byClient;
  }

  /** True when `all` is still pending after `config.webhookSlowAfterMs`. */
  private async slowerThanThreshold(all: Promise<unknown>): Promise<boolean> {
    const timer = new AbortController();
    try {
      return await Promise.race([
        all.then(() => false),
        sleep(this.config.webhookSlowAfterMs, true, { signal: timer.signal }),
      ]);
    } finally {
      timer.abort();
    }
  }

  /**
   * Records attempt outcomes, disables subscriptions that answered 410, and schedules the retries plus
   * `watchdogs`, all in one transaction.
   */
  private async recordOutcomes(
    rows: DispatchRow[],
    outcomes: AttemptOutcome[],
    watchdogs: DeliveryJobSpec[] = [],
  ): Promise<void> {
    const now = Date.now();
    const records: AttemptRecord[] = [];
    const retries = new Map<number, Date>();
    const gone = new Map<number, number>();
    const clientOf = new Map(rows.map((row) => [row.id, row.client_id]));
    const clientOfWebhook = new Map(rows.map((row) => [row.webhook_id, row.client_id]));
    const outcomeOf = new Map<number, WebhookAttemptOutcome>();
    const throttles = new Map<number, { until: Date; level: number }>();
    const accepted = new Set<number>();
    /** Throttles the row's endpoint for this answer; returns the end of the throttle. */
    const throttle = (row: DispatchRow, outcome: AttemptOutcome): Date => {
      const level = row.throttle_level + 1;
      const until = new Date(
        now +
          (outcome.retryAfterMs === undefined
            ? endpointBackoffMs(level)
            : Math.min(outcome.retryAfterMs, MAX_RETRY_AFTER_MS)),
      );
      const known = throttles.get(row.webhook_id);
      if (!known || known.until < until) throttles.set(row.webhook_id, { until, level });
      return until;
    };
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
        if (row.throttle_level > 0) accepted.add(row.webhook_id);
        outcomeOf.set(row.id, 'delivered');
        records.push({ ...base, status: 'DELIVERED', nextAttemptAt: null, deliveredAt: new Date(now) });
      } else if (outcome.statusCode === 410) {
        outcomeOf.set(row.id, 'gone');
        gone.set(row.webhook_id, row.client_id);
        records.push({ ...base, status: 'FAILED', nextAttemptAt: null, deliveredAt: null });
      } else {
        const delay = retryDelayMs(this.config.webhookRetrySchedule, attempt);
        const throttledUntil =
          outcome.statusCode !== null && THROTTLE_STATUSES.has(outcome.statusCode)
            ? throttle(row, outcome).getTime()
            : 0;
        const nextAttemptAt = delay === undefined ? null : new Date(Math.max(now + delay, throttledUntil));
        outcomeOf.set(row.id, nextAttemptAt ? 'retry' : 'failed');
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
      // Subscription rows first, in id order, then deliveries: the order of a deletion and of other batches.
      const endpoints = [...new Set([...throttles.keys(), ...accepted, ...gone.keys()])].sort(
        (a, b) => a - b,
      );
      for (const webhookId of endpoints) {
        const clientId = clientOfWebhook.get(webhookId) as number;
        const throttled = throttles.get(webhookId);
        if (gone.has(webhookId)) await webhookRepository.disable(trx, clientId, webhookId, GONE_REASON);
        else if (throttled)
          await webhookRepository.throttle(trx, clientId, webhookId, throttled.until, throttled.level);
        else await webhookRepository.endThrottle(trx, clientId, webhookId);
      }
      const updated = [];
      for (const clientId of new Set(clientOf.values()))
        updated.push(
          ...(await deliveryRepository.recordAttempts(
            trx,
            clientId,
            records.filter((record) => clientOf.get(record.id) === clientId),
          )),
        );
      const jobs: DeliveryJobSpec[] = updated
        .filter((row) => row.status === 'PENDING' && retries.has(row.id))
        .map((row) => ({
          clientId: clientOf.get(row.id) as number,
          deliveryId: row.id,
          attempts: row.attempts,
          startAfter: retries.get(row.id),
        }));
      for (const [webhookId, clientId] of gone)
        await deliveryRepository.cancelPending(trx, clientId, webhookId, GONE_REASON);
      await this.queue.enqueue(trx, [...jobs, ...watchdogs]);
      return { jobs, recorded: updated.map((row) => row.id) };
    });
    // Counted once committed, and only the attempts recorded (a stale one changed nothing).
    for (const id of scheduled.recorded) {
      const outcome = outcomeOf.get(id);
      if (outcome) this.attemptsCounter.inc({ outcome });
    }
    this.wakeAtDueTimes(scheduled.jobs);
  }

  /** Retries due before the next poll wake this process's workers on time (the poll catches the rest). */
  private wakeAtDueTimes(jobs: DeliveryJobSpec[]): void {
    if (this.stopped) return;
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
