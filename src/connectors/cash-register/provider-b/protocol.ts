/**
 * Provider B's protocol (CASH_REGISTER_B), modelled on CloudKassir (docs/receipts.md): static credentials on
 * every request (HTTP Basic: login = public id, password = API secret), our receipt id in the `X-Request-ID`
 * header as the idempotency key, JSON envelopes `{Success, Message, Model}` answered with HTTP 200 (refusals
 * included), and its own status vocabulary `Queued`, `Processed`, `Error`, `Cancelled`. Shared by the client
 * and the sandbox.
 */
import type { ReceiptType } from '../connector.ts';

/** Registration, status and receipt details. */
export const PATHS = {
  register: '/kkt/receipt',
  status: '/kkt/receipt/status/get',
  details: '/kkt/receipt/get',
} as const;

/** The `Type` of each receipt type. */
export const TYPES: Record<ReceiptType, string> = {
  INCOME: 'Income',
  REFUND: 'IncomeReturn',
  EXPENSE: 'Expense',
  EXPENSE_REFUND: 'ExpenseReturn',
};

/** The statuses of `status/get`. */
export type ReceiptStatus = 'Queued' | 'Processed' | 'Error' | 'Cancelled';

/** Every answer. */
export interface Envelope<T> {
  Success: boolean;
  Message: string | null;
  Model?: T;
}

/** One receipt line (`Method` 4 = full payment, `Object` 1 = commodity, `Vat` null = no VAT). */
export interface ProtocolItem {
  Label: string;
  Price: number;
  Quantity: number;
  Amount: number;
  Vat: number | null;
  Method: number;
  Object: number;
  MeasurementUnit: string;
}

/** Body of a registration. */
export interface RegistrationBody {
  Inn?: string;
  Type: string;
  InvoiceId: string;
  CustomerReceipt: {
    Items: ProtocolItem[];
    /** 1 = simplified tax system, income. */
    TaxationSystem: number;
    Amounts: { Electronic: number; AdvancePayment: number; Credit: number; Provision: number };
  };
}

/** The registration answer's model. */
export interface RegistrationModel {
  Id?: string;
  ErrorCode: number;
}

/** The details of a processed receipt. */
export interface ReceiptDetails {
  Id: string;
  Type: string;
  InvoiceId: string;
  Amount: number;
  /** Fiscal document number (ФД). */
  DocumentNumber: number;
  SessionNumber: number;
  /** Fiscal document attribute (ФПД). */
  FiscalSign: string;
  /** Serial number of the fiscal storage (ФН). */
  FiscalNumber: string;
  RegNumber: string;
  /** ISO 8601 with offset. */
  DateTime: string;
  /** The receipt's check page. */
  Url: string;
}
