/** Kysely table type of fiscal receipts (migration 0008, spec §4.3, D8), added to `DB` by augmentation. */
import type { ColumnType, Generated } from 'kysely';
import type { CreatedAt, Json, Money, Timestamp } from '../../db/schema.ts';
import type {
  CashRegisterService,
  ReceiptLine,
  ReceiptType,
} from '../../connectors/cash-register/connector.ts';

/** The life cycle of D8.2: CREATED → PENDING → COMPLETED | FAILED | CANCELLED. */
export const RECEIPT_STATUSES = ['CREATED', 'PENDING', 'COMPLETED', 'FAILED', 'CANCELLED'] as const;
export type ReceiptStatus = (typeof RECEIPT_STATUSES)[number];

/** A fiscal receipt of a receiving document (money numeric(16,2), times UTC). */
export interface ReceiptTable {
  id: Generated<number>;
  client_id: number;
  organization_id: number;
  order_id: number;
  receipt_type: ReceiptType;
  status: ColumnType<ReceiptStatus, ReceiptStatus | undefined, ReceiptStatus>;
  cash_register_service: CashRegisterService;
  /** numeric(16,2): exact decimal text. */
  total_amount: Money;
  /** The lines as sent to the provider (kopecks). */
  lines: Json<ReceiptLine[]>;
  external_receipt_id: string | null;
  provider_status: string | null;
  fiscal_number: string | null;
  fiscal_document_attribute: string | null;
  fiscal_storage_number: string | null;
  fns_url: string | null;
  error_message: string | null;
  refresh_attempts: Generated<number>;
  created_date: CreatedAt;
  completed_date: Timestamp;
}

declare module '../../db/schema.ts' {
  interface DB {
    receipt: ReceiptTable;
  }
}
