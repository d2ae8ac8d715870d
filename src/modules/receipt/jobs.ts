/**
 * The background refresh of receipts (D8.2, P76): every receipt gets a `receipt-refresh` job in the transaction
 * that creates it, so a receipt committed and then forgotten (the provider's answer lost, the process killed) is
 * still sent and followed until it settles. A job makes one exchange (registration again while CREATED, with the
 * same external id, so the provider never fiscalises twice; status while PENDING), records the answer and, unless
 * the receipt settled, enqueues the next refresh after the next delay of `RECEIPT_REFRESH_SCHEDULE` (the last
 * delay repeats) in the same transaction.
 *
 * A job is `{receiptId, clientId, attempt}` (the client routes its statements to one shard on Citus); the receipt's `refresh_attempts` says which attempt is current, so a job that
 * pg-boss runs again after a crash, or a duplicate, finds itself stale and does nothing.
 */
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/schema.ts';
import type { ChangeRunner } from '../../changes/change-runner.ts';
import { defineJob, type JobDefinition, type JobQueue } from '../../jobs/job.ts';
import { isSettled, type ReceiptExchange } from './exchange.ts';
import { receiptRepository } from './repository.ts';

/** Payload of a refresh job. */
export interface ReceiptRefreshPayload {
  receiptId: number;
  /** The receipt's client; absent only in jobs queued by versions before jobs carried it. */
  clientId?: number;
  /** Which refresh of the receipt this is (0 = the first); stale unless it equals `refresh_attempts`. */
  attempt: number;
}

/** Jobs fetched per poll by one worker (run one after another). */
const BATCH_SIZE = 10;
/** Workers per process: most of a refresh is waiting for the provider, so several run at once. */
const WORKERS = 4;

/** Delay before refresh number `attempt` (from 0), in ms: that entry of the schedule, the last one repeating. */
export function refreshDelayMs(schedule: readonly number[], attempt: number): number {
  const seconds = schedule[Math.min(attempt, schedule.length - 1)] ?? 60;
  return Math.round(seconds * 1000);
}

/** The refresh job and how to schedule it. */
export class ReceiptRefresh {
  readonly job: JobDefinition<ReceiptRefreshPayload>;

  constructor(
    private readonly deps: {
      db: Kysely<DB>;
      changes: ChangeRunner;
      jobs: JobQueue;
      exchange: ReceiptExchange;
      /** `RECEIPT_REFRESH_SCHEDULE` in seconds. */
      schedule: readonly number[];
      /** `CASH_REGISTER_TIMEOUT_MS`: an exchange makes at most three requests (token, then twice the call). */
      timeoutMs: number;
    },
  ) {
    this.job = defineJob<ReceiptRefreshPayload>({
      name: 'receipt-refresh',
      // Retries cover crashes and database outages only: provider failures are recorded and rescheduled.
      attempts: 20,
      backoffSeconds: 2,
      expireSeconds: Math.ceil((BATCH_SIZE * 3 * deps.timeoutMs) / 1000) + 30,
      batchSize: BATCH_SIZE,
      workers: WORKERS,
      perform: (payload) => this.perform(payload),
    });
  }

  /** Enqueues refresh number `attempt` of a receipt inside `trx`, due after its delay. */
  schedule(trx: Transaction<DB>, receipt: { client_id: number; id: number }, attempt: number): Promise<void> {
    const startAfter = new Date(Date.now() + refreshDelayMs(this.deps.schedule, attempt));
    return this.deps.jobs.enqueue(
      trx,
      this.job,
      [{ receiptId: receipt.id, clientId: receipt.client_id, attempt }],
      { startAfter },
    );
  }

  /** One refresh; idempotent (a stale or repeated job does nothing). */
  private async perform({ receiptId, clientId, attempt }: ReceiptRefreshPayload): Promise<void> {
    const row =
      clientId === undefined
        ? await receiptRepository.findById(this.deps.db, receiptId)
        : await receiptRepository.findOfClient(this.deps.db, clientId, receiptId);
    if (!row || row.refresh_attempts !== attempt || isSettled(row.status)) return;
    const outcome = await this.deps.exchange.refresh(row);
    await this.deps.changes.run(async (trx) => {
      const locked = await receiptRepository.lock(trx, row.client_id, receiptId);
      if (!locked || locked.refresh_attempts !== attempt) return;
      const stored = await this.deps.exchange.apply(trx, locked, row, outcome, {
        refresh_attempts: attempt + 1,
      });
      if (!isSettled(stored.status)) await this.schedule(trx, locked, attempt + 1);
    });
  }
}
