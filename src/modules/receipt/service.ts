/**
 * Fiscal receipts of receiving documents (spec §4.3, decision D8; P70–P79): list, read, create and refresh.
 * Every query is scoped by the caller's client; another client's document or receipt answers exactly like a
 * missing one (D2.5).
 *
 * Create commits the receipt (CREATED) and its first refresh job in one transaction — at once, also in a request
 * with an idempotency key (P122) — then calls the provider and records its answer (P75): accepted → PENDING,
 * refused → FAILED; no usable answer → it stays CREATED and is answered as it is (200), the refresh job sends it
 * again with the same external id. Update asks the provider about an unsettled receipt and stores what it says.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import type { ChangeRunner } from '../../changes/change-runner.ts';
import type { Principal } from '../../http/auth.ts';
import { AppError, notFound } from '../../http/errors.ts';
import type { ReceiptType } from '../../connectors/cash-register/connector.ts';
import { orderRepository } from '../inbound/repository.ts';
import { isSettled, notConfigured, type ReceiptExchange } from './exchange.ts';
import type { ReceiptRefresh } from './jobs.ts';
import { receiptLines } from './lines.ts';
import { presentReceipt, type ReceiptRow } from './presenter.ts';
import { receiptRepository } from './repository.ts';
import type { Receipt } from './schemas.ts';

/** The completed receipt type a refund needs (D8.2). */
const REFUND_OF: Partial<Record<ReceiptType, ReceiptType>> = { REFUND: 'INCOME', EXPENSE_REFUND: 'EXPENSE' };

/** The unique index that keeps one live receipt of each type per document (migration 0008). */
const LIVE_TYPE_INDEX = 'receipt_live_type_idx';

/** Seconds an integrator is asked to wait after `error_cash_register_unavailable`. */
const RETRY_AFTER_SECONDS = 5;

const alreadyExists = (type: ReceiptType, id?: number) =>
  new AppError('error_receipt_already_exists', {
    receiptType: type,
    ...(id !== undefined && { id: String(id) }),
  });

/**
 * Checks the rules of D8.2 and P73 against the document's receipts.
 * @throws 400 `error_receipt_already_exists` when a live (CREATED, PENDING, COMPLETED) receipt of `type` exists;
 *   400 `error_receipt_refund_not_allowed` when a refund has no completed receipt to refund
 */
function checkRules(receipts: ReceiptRow[], type: ReceiptType): void {
  const live = receipts.find(
    (receipt) => receipt.receipt_type === type && !['FAILED', 'CANCELLED'].includes(receipt.status),
  );
  if (live) throw alreadyExists(type, live.id);
  const required = REFUND_OF[type];
  if (
    required !== undefined &&
    !receipts.some((receipt) => receipt.receipt_type === required && receipt.status === 'COMPLETED')
  )
    throw new AppError('error_receipt_refund_not_allowed', { receiptType: type, requiredType: required });
}

/** Operations of the receipt group. */
export class ReceiptService {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly changes: ChangeRunner,
    private readonly exchange: ReceiptExchange,
    private readonly refresh: ReceiptRefresh,
  ) {}

  /**
   * The receipts of a document, oldest first (also of a deleted one).
   * @throws 404 `error_not_found` `{entity: 'order'}`
   */
  async listOfOrder(principal: Principal, orderId: number): Promise<Receipt[]> {
    if (!(await orderRepository.find(this.db, principal.clientId, orderId))) throw notFound('order', orderId);
    return (await receiptRepository.listOfOrder(this.db, principal.clientId, orderId)).map(presentReceipt);
  }

  /** One receipt as stored. @throws 404 `error_not_found` `{entity: 'receipt'}` */
  async get(principal: Principal, receiptId: number): Promise<Receipt> {
    return presentReceipt(await this.find(principal, receiptId));
  }

  /**
   * Creates a receipt of `type` for a document and sends it to the organization's provider (see the module
   * comment). Amounts come from the document's positions, exact to the kopeck (D8.1, P71).
   * @throws 404 `error_not_found` `{entity: 'order'}`; 400 `error_order_deleted`;
   *   400 `error_cash_register_not_configured` (D8.1; `missing` names a company detail the settings lack); 400 `error_receipt_already_exists`,
   *   `error_receipt_refund_not_allowed` (D8.2, P73); 400 `error_validation` on `orderId` for a document without
   *   lines or with a total of 0 (P71)
   */
  async create(principal: Principal, orderId: number, type: ReceiptType): Promise<Receipt> {
    const resumed = await this.resumedReceipt(principal);
    if (resumed) return resumed;
    const { row, settings } = await this.changes
      .run(
        async (trx) => {
          const order = await orderRepository.lock(trx, principal.clientId, orderId);
          if (!order) throw notFound('order', orderId);
          if (order.deleted) throw new AppError('error_order_deleted', { id: String(orderId) });
          const settings = await this.exchange.settings(trx, principal.clientId, order.organization_id);
          if (!settings || settings.missing !== undefined)
            throw notConfigured(order.organization_id, settings?.missing);
          checkRules(await receiptRepository.listOfOrder(trx, principal.clientId, orderId), type);
          const { lines, totalText } = receiptLines(
            await receiptRepository.positions(trx, principal.clientId, orderId),
          );
          const row = await receiptRepository.insert(trx, {
            client_id: principal.clientId,
            organization_id: order.organization_id,
            order_id: orderId,
            receipt_type: type,
            cash_register_service: settings.service,
            total_amount: totalText,
            lines: JSON.stringify(lines),
          });
          await this.refresh.schedule(trx, row, 0);
          return { row, settings };
        },
        // The row and its refresh job are durable before the provider is asked, also with an idempotency key (P122).
        { commitNow: true, checkpoint: ({ row }) => ({ receiptId: row.id }) },
      )
      .catch((error: unknown) => {
        const violation = error as { code?: string; constraint?: string };
        if (violation.code === '23505' && violation.constraint === LIVE_TYPE_INDEX) throw alreadyExists(type);
        throw error;
      });
    const outcome = await this.exchange.exchange(row, settings.account);
    return presentReceipt(await this.exchange.record(row, outcome));
  }

  /**
   * Asks the provider about an unsettled receipt and stores its answer (D8.2); a settled receipt is returned as
   * it is. Read access (spec §4.3).
   * @throws 404 `error_not_found` `{entity: 'receipt'}`; 400 `error_cash_register_not_configured` when the
   *   organization no longer has settings for the receipt's provider; 503 `error_cash_register_unavailable`
   *   (with `Retry-After`) when the provider gave no usable answer (the receipt is kept and refreshed later)
   */
  async update(principal: Principal, receiptId: number): Promise<Receipt> {
    const row = await this.find(principal, receiptId);
    if (isSettled(row.status)) return presentReceipt(row);
    const settings = await this.exchange.settings(this.db, principal.clientId, row.organization_id);
    if (!settings || settings.service !== row.cash_register_service || settings.missing !== undefined)
      throw notConfigured(row.organization_id, settings?.missing);
    const outcome = await this.exchange.exchange(row, settings.account);
    const stored = await this.exchange.record(row, outcome);
    if (outcome.kind === 'unavailable' && outcome.credentialsRefused && !isSettled(stored.status))
      throw new AppError('error_cash_register_credentials_refused', {
        id: String(receiptId),
        organizationId: row.organization_id,
        cashRegisterService: row.cash_register_service,
      });
    if (outcome.kind === 'unavailable' && !isSettled(stored.status))
      throw new AppError(
        'error_cash_register_unavailable',
        { id: String(receiptId), status: stored.status, reason: outcome.message },
        { 'retry-after': String(RETRY_AFTER_SECONDS) },
      );
    return presentReceipt(stored);
  }

  /**
   * In a repeat of an idempotent create interrupted after its receipt was committed (P122): that receipt, sent
   * again to its provider with the same external id (never fiscalised twice, D8.3) and answered as stored.
   */
  private async resumedReceipt(principal: Principal): Promise<Receipt | undefined> {
    const checkpoint = this.changes.resumedCheckpoint() as { receiptId?: number } | undefined;
    if (checkpoint?.receiptId === undefined) return undefined;
    const row = await this.find(principal, checkpoint.receiptId);
    if (isSettled(row.status)) return presentReceipt(row);
    return presentReceipt(await this.exchange.record(row, await this.exchange.refresh(row)));
  }

  private async find(principal: Principal, receiptId: number): Promise<ReceiptRow> {
    const row = await receiptRepository.findOfClient(this.db, principal.clientId, receiptId);
    if (!row) throw notFound('receipt', receiptId);
    return row;
  }
}
