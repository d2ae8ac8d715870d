/**
 * The background refresh (D8.2, P76) with workers running: a PENDING receipt completes without anyone calling
 * update, a receipt whose registration got no answer is sent again by the job with the same external id and
 * fiscalised once, provider outages are retried with backoff until the receipt settles, one job at a time per
 * receipt, and a stale job does nothing.
 */
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import {
  createDocument,
  newReceipt,
  receiptAccount,
  storedUntil,
  useReceiptApp,
  waitFor,
  type Receipt,
} from './kit.ts';
import { CASH_REGISTER_SERVICES } from '../../src/connectors/cash-register/connector.ts';
import { refreshDelayMs, type ReceiptRefreshPayload } from '../../src/modules/receipt/jobs.ts';
import type { JobDefinition } from '../../src/jobs/job.ts';

const context = useReceiptApp();
const app = () => context.t.app;
const completed = (receipt: Receipt) => receipt.status === 'COMPLETED';

/** The refresh jobs of a receipt that are still to run (created, retry or active). */
async function openJobs(
  receiptId: number,
  states: readonly string[] = ['created', 'retry', 'active'],
): Promise<number> {
  const result = await sql<{ count: number }>`
    select count(*)::int as count from pgboss.job
    where name = 'receipt-refresh' and (data->>'receiptId')::bigint = ${receiptId}
      and state::text in (${sql.join(states)})`.execute(context.t.runtime.database.db);
  return result.rows[0]?.count ?? 0;
}

describe.each(CASH_REGISTER_SERVICES)('refresh job with %s', (service) => {
  const sandbox = () => context.sandboxes[service];

  it('completes a PENDING receipt in the background, then stops', async () => {
    const account = await receiptAccount(context, service);
    const order = await createDocument(app(), account);
    const pending = await newReceipt(app(), account.writeToken, order.id);
    expect(pending.status).toBe('PENDING');
    const done = await storedUntil(app(), account.readToken, pending.id, completed);
    expect(done.fiscalNumber).toMatch(/^\d+$/);
    await waitFor('no refresh job left', async () => (await openJobs(pending.id)) === 0);
  });

  it('sends a receipt whose registration got no answer again, fiscalising it once', async () => {
    const account = await receiptAccount(context, service);
    const order = await createDocument(app(), account);
    await sandbox().fault({ mode: 'timeout', operations: ['register'], count: 1 });
    // The job's resend (due after 0.2 s) usually overtakes the request, which waits for its answer until the time
    // limit; on a loaded machine the request may answer first, with the receipt CREATED and the timeout as its error.
    const created = await newReceipt(app(), account.writeToken, order.id);
    if (created.errorMessage !== null) {
      expect(created.status).toBe('CREATED');
      expect(created.errorMessage).toMatch(/timeout/);
    }
    const done = await storedUntil(app(), account.readToken, created.id, completed);
    expect(done.errorMessage).toBeNull();
    expect(await sandbox().documents(created.id)).toMatchObject([
      { registrations: 2, fiscalisations: 1, id: done.externalReceiptId },
    ]);
  });

  it('retries through an outage with backoff, one job at a time, until the receipt settles', async () => {
    const account = await receiptAccount(context, service);
    const order = await createDocument(app(), account);
    await sandbox().fault({ mode: 'error5xx', count: 4 });
    const created = await newReceipt(app(), account.writeToken, order.id);
    expect(created.status).toBe('CREATED');
    await waitFor('a refresh during the outage', async () => {
      const row = await context.t.runtime.database.db
        .selectFrom('receipt')
        .select(['refresh_attempts', 'error_message'])
        .where('client_id', '=', account.clientId)
        .where('id', '=', created.id)
        .executeTakeFirstOrThrow();
      // A run enqueues its successor in its own transaction, so for a moment the active run and the next one
      // are both open: one job at a time means at most one waiting and at most one running.
      expect(await openJobs(created.id, ['created', 'retry'])).toBeLessThanOrEqual(1);
      expect(await openJobs(created.id, ['active'])).toBeLessThanOrEqual(1);
      return row.refresh_attempts >= 1 && row.error_message === 'the provider answered HTTP 503';
    });
    const done = await storedUntil(app(), account.readToken, created.id, completed);
    expect(done.errorMessage).toBeNull();
    expect(await sandbox().documents(created.id)).toMatchObject([{ fiscalisations: 1 }]);
  });
});

describe('refresh job details', () => {
  it('does nothing when its attempt is stale', async () => {
    const account = await receiptAccount(context, 'CASH_REGISTER_A');
    const order = await createDocument(app(), account);
    await context.sandboxes.CASH_REGISTER_A.fault({ mode: 'error5xx', operations: ['register'], count: 1 });
    const created = await newReceipt(app(), account.writeToken, order.id);
    const job = context.t.groups.find((group) => group.name === 'receipt')?.jobs?.[0] as unknown as
      JobDefinition<ReceiptRefreshPayload> | undefined;
    expect(job?.name).toBe('receipt-refresh');
    await context.t.runtime.database.db
      .updateTable('receipt')
      .set({ refresh_attempts: 5 })
      .where('client_id', '=', account.clientId)
      .where('id', '=', created.id)
      .execute();
    await job?.perform({ receiptId: created.id, attempt: 0 }, { id: 'test', retryCount: 0 });
    // Stale: nothing was sent, the receipt is unchanged.
    expect(await context.sandboxes.CASH_REGISTER_A.documents(created.id)).toEqual([]);
    await job?.perform({ receiptId: created.id, attempt: 5 }, { id: 'test', retryCount: 0 });
    const stored = await context.t.runtime.database.db
      .selectFrom('receipt')
      .select(['status', 'refresh_attempts'])
      .where('client_id', '=', account.clientId)
      .where('id', '=', created.id)
      .executeTakeFirstOrThrow();
    expect(stored).toEqual({ status: 'PENDING', refresh_attempts: 6 });
  });

  it('waits the schedule’s delays, repeating the last one', () => {
    expect([0, 1, 2, 3, 9].map((attempt) => refreshDelayMs([1, 2.5, 60], attempt))).toEqual([
      1000, 2500, 60_000, 60_000, 60_000,
    ]);
  });
});
