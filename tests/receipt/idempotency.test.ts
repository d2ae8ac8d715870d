/**
 * Fiscal receipts with an `Idempotency-Key` (D3.2, P122, D8.3): the receipt row is committed before the provider
 * is asked even in a keyed request (its answer is stored later, with the recorded outcome), a replay answers the
 * stored receipt without a second receipt or fiscalisation, and a repeat of a request interrupted between the
 * commit and the provider's answer resumes that receipt instead of creating another one.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { expectError, send } from '../helpers/http.ts';
import { createDocument, receiptAccount, useReceiptApp, waitFor, type Receipt } from './kit.ts';

// The held registration outlives the 1 s claim lease (the repeat takes over) but not the client's time limit.
const context = useReceiptApp(
  { IDEMPOTENCY_LOCK_SECONDS: '1', CASH_REGISTER_TIMEOUT_MS: '5000' },
  { workers: false },
);
const app = () => context.t.app;

const createWithKey = (token: string, orderId: number, key: string) =>
  send(app(), token, {
    method: 'POST',
    url: `/api/receipt/order/${orderId}`,
    headers: { 'Idempotency-Key': key },
  });

/** The receipts of a document as stored. */
const storedReceipts = (clientId: number, orderId: number) =>
  context.t.runtime.database.db
    .selectFrom('receipt')
    .select(['id', 'status'])
    .where('client_id', '=', clientId)
    .where('order_id', '=', orderId)
    .execute();

describe('a receipt created with an idempotency key', () => {
  it('is committed before the provider answers, and a replay creates and fiscalises nothing more', async () => {
    const account = await receiptAccount(context, 'CASH_REGISTER_B');
    const order = await createDocument(app(), account);
    const sandbox = context.sandboxes.CASH_REGISTER_B;
    await sandbox.fault({ mode: 'delay', operations: ['register'], count: 1, delayMs: 1_500 });
    const key = `receipt ${randomUUID()}`;
    const answer = createWithKey(account.writeToken, order.id, key);
    // Visible to another connection while the provider still holds its answer: committed first (P75).
    await waitFor(
      'the receipt row is committed',
      async () => (await storedReceipts(account.clientId, order.id)).length === 1,
    );
    const first = await answer;
    expect(first.statusCode, first.body).toBe(200);
    const receipt = first.json<Receipt>();
    expect(receipt.status).toBe('PENDING');

    const replay = await createWithKey(account.writeToken, order.id, key);
    expect(replay.statusCode).toBe(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toBe(first.body);
    expect(await storedReceipts(account.clientId, order.id)).toHaveLength(1);
    expect(await sandbox.documents(receipt.id)).toMatchObject([{ registrations: 1 }]);
  });

  it('is resumed by a repeat of a request interrupted before the provider answered', async () => {
    const account = await receiptAccount(context, 'CASH_REGISTER_A');
    const order = await createDocument(app(), account);
    const sandbox = context.sandboxes.CASH_REGISTER_A;
    await sandbox.fault({ mode: 'delay', operations: ['register'], count: 1, delayMs: 3_000 });
    const key = `receipt ${randomUUID()}`;
    const interrupted = createWithKey(account.writeToken, order.id, key);
    await waitFor(
      'the receipt row is committed',
      async () => (await storedReceipts(account.clientId, order.id)).length === 1,
    );
    expectError(await createWithKey(account.writeToken, order.id, key), 409, 'error_idempotency_in_progress');

    await sleep(1_100); // the first attempt's claim lease has passed, as if its process had died
    const resumed = await createWithKey(account.writeToken, order.id, key);
    expect(resumed.statusCode, resumed.body).toBe(200);
    const receipt = resumed.json<Receipt>();
    // The resend finds the registration of the first attempt (same external id), possibly fiscalised already.
    expect(['PENDING', 'COMPLETED']).toContain(receipt.status);
    const [stored] = await storedReceipts(account.clientId, order.id);
    expect(stored?.id).toBe(receipt.id);

    // The stale attempt gets its answer, is refused at its next change, and stores nothing.
    expectError(await interrupted, 409, 'error_idempotency_in_progress');
    expect(await storedReceipts(account.clientId, order.id)).toHaveLength(1);
    const replay = await createWithKey(account.writeToken, order.id, key);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toBe(resumed.body);
    // Registered twice with one external id: one document at the provider.
    expect(await sandbox.documents(receipt.id)).toMatchObject([{ registrations: 2 }]);
  });
});
