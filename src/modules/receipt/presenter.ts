/** Maps receipt rows to the API shape (spec §2 Receipt, P79): camelCase, ISO 8601 dates, money as numbers. */
import type { Selectable } from 'kysely';
import type { Receipt } from './schemas.ts';
import type { ReceiptTable } from './tables.ts';

/** A stored receipt. */
export type ReceiptRow = Selectable<ReceiptTable>;

/** The receipt as every operation of the group answers it. */
export function presentReceipt(row: ReceiptRow): Receipt {
  return {
    id: row.id,
    clientId: row.client_id,
    orderId: row.order_id,
    organizationId: row.organization_id,
    externalReceiptId: row.external_receipt_id,
    fiscalNumber: row.fiscal_number,
    cashRegisterService: row.cash_register_service,
    fnsUrl: row.fns_url,
    status: row.status,
    receiptType: row.receipt_type,
    totalAmount: Number(row.total_amount),
    createdDate: row.created_date.toISOString(),
    completedDate: row.completed_date?.toISOString() ?? null,
    errorMessage: row.error_message,
    fiscalDocumentAttribute: row.fiscal_document_attribute,
    fiscalStorageNumber: row.fiscal_storage_number,
    providerStatus: row.provider_status,
  };
}
