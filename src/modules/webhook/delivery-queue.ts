/**
 * The webhook delivery jobs in the pg-boss queue (D9.3). A job is `{d: deliveryId, a: attempts, c: clientId}`:
 * "make attempt number a+1 of delivery d of client c" (the client routes its statements to one shard on Citus). Jobs are inserted inside the caller's transaction, so they exist exactly when the
 * change (or the recorded failed attempt) commits. A job whose process dies while it is active expires and is
 * retried by pg-boss; the dispatcher ignores jobs whose attempt number is stale, so retried jobs are harmless.
 * The same rule makes watchdog jobs work (P29): a second job for an attempt still running in the background, due
 * after its timeout, is stale once that attempt is recorded and makes the attempt again only if it never was.
 */
import type PgBoss from 'pg-boss';
import type { Transaction } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { transactionalDb } from '../../jobs/queue.ts';

/** Name of the pg-boss queue of webhook deliveries. */
export const DELIVERY_QUEUE = 'webhook-delivery';

/** Payload of a delivery job (short keys: there is one job per attempt). */
export interface DeliveryJobData {
  /** webhook_delivery.id */
  d: number;
  /** The delivery's `attempts` when the job was scheduled. */
  a: number;
  /** The delivery's client; absent only in jobs queued by versions before jobs carried it. */
  c?: number;
}

/** One job to schedule. */
export interface DeliveryJobSpec {
  clientId: number;
  deliveryId: number;
  attempts: number;
  /** When the attempt is due; now when omitted. */
  startAfter?: Date;
}

// json_to_recordset of ~5k rows per statement keeps each insert well under a second.
const INSERT_CHUNK = 5_000;

/** Schedules delivery jobs in pg-boss. */
export class DeliveryQueue {
  constructor(
    private readonly boss: PgBoss,
    /** Seconds an active job may run before pg-boss treats its process as dead and retries it. */
    private readonly expireInSeconds: number,
  ) {}

  /** Inserts the jobs inside `trx` (one statement per 5,000 jobs). */
  async enqueue(trx: Transaction<DB>, specs: DeliveryJobSpec[]): Promise<void> {
    const db = transactionalDb(trx);
    for (let start = 0; start < specs.length; start += INSERT_CHUNK) {
      const jobs: PgBoss.JobInsert<DeliveryJobData>[] = specs
        .slice(start, start + INSERT_CHUNK)
        .map((spec) => ({
          name: DELIVERY_QUEUE,
          data: { d: spec.deliveryId, a: spec.attempts, c: spec.clientId },
          ...(spec.startAfter && { startAfter: spec.startAfter.toISOString() }),
          expireInSeconds: this.expireInSeconds,
          // Retries of the job itself cover crashes and database outages, not receiver failures (those are
          // rescheduled as new jobs by the dispatcher): up to 30 with exponential backoff from 1 s.
          retryLimit: 30,
          retryDelay: 1,
          retryBackoff: true,
        }));
      await this.boss.insert(jobs, { db });
    }
  }
}
