/**
 * The Prometheus metrics of one service process (decisions P129–P132), on prom-client with a
 * registry of its own per runtime (never the global one: tests run several apps in one process).
 *
 * Counted as things happen: HTTP request durations by route template, method and status (`src/metrics/http.ts`)
 * and webhook delivery attempts by outcome (the webhook dispatcher). Read on each scrape, with cheap queries:
 * connection pool use, job queue depth and age per queue, tasks and receipts by status. Plus prom-client's default
 * process metrics (`process_*`, `nodejs_*`). Names follow Prometheus conventions: base units (seconds), `_total`
 * for counters, `seller_ops_` prefix for ours.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Kysely } from 'kysely';
import type pg from 'pg';
import type { DB } from '../db/schema.ts';
import { jobQueueStats, type QueueStats } from '../jobs/queue-stats.ts';
import { TASK_STATUSES } from '../modules/task/schemas.ts';
import { RECEIPT_STATUSES } from '../modules/receipt/tables.ts';
import { statusCountsRepository, type StatusCount } from './status-counts.repository.ts';

/** Outcomes of a webhook delivery attempt (D9.3): delivered, retry scheduled, failed for good, receiver gone (410). */
export type WebhookAttemptOutcome = 'delivered' | 'retry' | 'failed' | 'gone';

/** Buckets of the request histogram, in seconds: 1 ms to 10 s. */
const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** The metrics of one runtime; `registry.metrics()` renders the Prometheus text format. */
export class ServiceMetrics {
  readonly registry = new Registry();

  /** `seller_ops_http_request_duration_seconds{route, method, status}`: route is the template, never the raw URL. */
  readonly httpRequestDuration = new Histogram({
    name: 'seller_ops_http_request_duration_seconds',
    help: 'Duration of HTTP requests in seconds, by route template, method and status code',
    labelNames: ['route', 'method', 'status'] as const,
    buckets: DURATION_BUCKETS,
    registers: [this.registry],
  });

  /** `seller_ops_webhook_delivery_attempts_total{outcome}`, counted when an attempt's outcome is recorded. */
  readonly webhookDeliveryAttempts = new Counter({
    name: 'seller_ops_webhook_delivery_attempts_total',
    help: 'Webhook delivery attempts recorded by this process, by outcome (delivered, retry, failed, gone)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  /**
   * `seller_ops_http_connections_refused_total{limit}`: connections closed as they were accepted because their
   * source (`per_source`) or the process (`total`) was at its cap (P164).
   */
  readonly httpConnectionsRefused = new Counter({
    name: 'seller_ops_http_connections_refused_total',
    help: 'Connections closed at once because their source (per_source) or the process (total) was at its cap',
    labelNames: ['limit'] as const,
    registers: [this.registry],
  });

  /**
   * `seller_ops_http_incomplete_requests_total{reason}`: requests the client hung up on (`aborted`) or that did
   * not arrive within the headers or request time limit (`timeout`, the connection closed with 408) (P164).
   */
  readonly httpIncompleteRequests = new Counter({
    name: 'seller_ops_http_incomplete_requests_total',
    help: 'Requests the client hung up on (aborted) or that did not arrive in time (timeout)',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  /** `seller_ops_http_connections{state}`: open connections of this process (`open`) and its caps (P164). */
  readonly httpConnections = new Gauge({
    name: 'seller_ops_http_connections',
    help: 'Open HTTP connections of this process (open) and its caps (limit_total, limit_per_source; 0 = none)',
    labelNames: ['state'] as const,
    registers: [this.registry],
  });

  /** `seller_ops_metrics_collect_errors_total`: scrapes that could not read a figure from the database. */
  readonly collectErrors = new Counter({
    name: 'seller_ops_metrics_collect_errors_total',
    help: 'Figures a scrape could not read from the database (the scrape answered without them)',
    registers: [this.registry],
  });

  /**
   * @param db the service's database, for the counts read on scrape
   * @param pool its connection pool, whose use is read on scrape
   */
  constructor(db: Kysely<DB>, pool: pg.Pool) {
    collectDefaultMetrics({ register: this.registry });
    for (const outcome of ['delivered', 'retry', 'failed', 'gone'] as const)
      this.webhookDeliveryAttempts.inc({ outcome }, 0);
    for (const limit of ['per_source', 'total'] as const) this.httpConnectionsRefused.inc({ limit }, 0);
    for (const reason of ['aborted', 'timeout'] as const) this.httpIncompleteRequests.inc({ reason }, 0);
    const collectErrors = this.collectErrors;
    /** Runs `read` on scrape; a failure is counted and leaves the gauge without values for that scrape. */
    const guarded = (read: () => Promise<void>) =>
      async function (this: Gauge) {
        try {
          await read.call(this);
        } catch {
          this.reset();
          collectErrors.inc();
        }
      };

    new Gauge({
      name: 'seller_ops_database_pool_connections',
      help: 'Connections of the PostgreSQL pool of this process: total, idle, and requests waiting for one',
      labelNames: ['state'] as const,
      registers: [this.registry],
      collect() {
        this.set({ state: 'total' }, pool.totalCount);
        this.set({ state: 'idle' }, pool.idleCount);
        this.set({ state: 'waiting' }, pool.waitingCount);
      },
    });

    // Both queue gauges are read in one scrape: they share one query while it runs.
    let pendingStats: Promise<QueueStats[]> | undefined;
    const queueStats = () =>
      (pendingStats ??= jobQueueStats(db).finally(() => {
        pendingStats = undefined;
      }));
    new Gauge({
      name: 'seller_ops_job_queue_jobs',
      help: 'Unfinished jobs per queue: due (waiting for a worker), delayed (due later), active (running)',
      labelNames: ['queue', 'state'] as const,
      registers: [this.registry],
      collect: guarded(async function (this: Gauge<'queue' | 'state'>) {
        const stats = await queueStats();
        this.reset();
        for (const { queue, due, delayed, active } of stats) {
          this.set({ queue, state: 'due' }, due);
          this.set({ queue, state: 'delayed' }, delayed);
          this.set({ queue, state: 'active' }, active);
        }
      }),
    });
    new Gauge({
      name: 'seller_ops_job_queue_oldest_due_seconds',
      help: 'Seconds since the oldest due job of each queue became due (0 when none is due)',
      labelNames: ['queue'] as const,
      registers: [this.registry],
      collect: guarded(async function (this: Gauge<'queue'>) {
        const stats = await queueStats();
        this.reset();
        for (const { queue, oldestDueSeconds } of stats) this.set({ queue }, oldestDueSeconds);
      }),
    });

    const statusGauge = (
      name: string,
      help: string,
      statuses: readonly string[],
      read: (db: Kysely<DB>) => Promise<StatusCount[]>,
    ) =>
      new Gauge({
        name,
        help,
        labelNames: ['status'] as const,
        registers: [this.registry],
        collect: guarded(async function (this: Gauge<'status'>) {
          const counts = new Map((await read(db)).map((row) => [row.status, row.count]));
          for (const status of statuses) this.set({ status }, counts.get(status) ?? 0);
        }),
      });
    statusGauge(
      'seller_ops_tasks',
      'Background tasks (TmsTask) of every client by status',
      TASK_STATUSES,
      (database) => statusCountsRepository.tasks(database),
    );
    statusGauge('seller_ops_receipts', 'Receipts of every client by status', RECEIPT_STATUSES, (database) =>
      statusCountsRepository.receipts(database),
    );
  }
}
