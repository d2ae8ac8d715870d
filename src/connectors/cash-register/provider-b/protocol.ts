/**
 * Provider B's protocol (CASH_REGISTER_B): CloudKassir, whose documented client library is the `cloudpayments` npm
 * package (docs/receipts.md): static credentials on every request (HTTP Basic: login = public id, password = API
 * secret), our receipt id in the `X-Request-ID` header as the idempotency key, JSON envelopes
 * `{Success, Message, Model}` answered with HTTP 200 (refusals included), and its own status vocabulary `Queued`,
 * `Processed`, `Error`, `Cancelled`. Property names are matched without regard to case (the package writes
 * `CustomerReceipt` with camelCase fields, `{taxationSystem, Items: [{label, price, …}]}`). Shared by the client
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
  /** The organization's taxpayer number, required (sent as a string: a number would lose a leading zero). */
  Inn: string;
  Type: string;
  InvoiceId: string;
  CustomerReceipt: {
    Items: ProtocolItem[];
    /** 0 general, 1 simplified (income), 2 simplified (income minus expenses), 4 agricultural, 5 patent. */
    TaxationSystem: number;
    /** The buyer's email (FFD tag 1008). */
    Email?: string;
    /** The place of settlement (FFD tag 1187). */
    CalculationPlace?: string;
    Amounts: { Electronic: number; AdvancePayment: number; Credit: number; Provision: number };
  };
}

/** The registration answer's model. */
export interface RegistrationModel {
  Id?: string;
  ErrorCode: number;
}

/**
 * The fiscal data of a processed receipt, `Model.AdditionalData` of `/kkt/receipt/get`. `DateTime` carries no
 * offset: it is the fiscal register's time, Moscow time (UTC+3).
 */
export interface ReceiptAdditionalData {
  Id: string;
  Amount: number;
  Type: string;
  InvoiceId?: string;
  /** Fiscal document number (ФД). */
  DocumentNumber: number;
  SessionNumber: number;
  /** Fiscal document attribute (ФПД). */
  FiscalSign: string;
  /** Serial number of the fiscal storage (ФН). */
  FiscalNumber: string;
  RegNumber: string;
  /** `yyyy-MM-ddTHH:mm:ss`, Moscow time, no offset. */
  DateTime: string;
  /** The operator's receipt page. */
  Url: string;
  /** The fiscal data operator's receipt page, when it has one. */
  OfdReceiptUrl: string | null;
  QrCodeUrl?: string;
}

/** The model of `/kkt/receipt/get`: the receipt as sent, and its fiscal data once processed. */
export interface ReceiptDetails {
  Items: ProtocolItem[];
  TaxationSystem: number;
  Email?: string | null;
  AdditionalData: ReceiptAdditionalData | null;
}

/** Moscow time, in which the operator writes receipt times without an offset (UTC+3 all year). */
const MOSCOW_OFFSET = '+03:00';

/** Parses a receipt time `yyyy-MM-ddTHH:mm:ss` (Moscow time; an explicit offset or `Z` is honoured); undefined when malformed. */
export function parseReceiptTime(text: unknown): Date | undefined {
  if (typeof text !== 'string') return undefined;
  const match = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?)(Z|[+-]\d{2}:\d{2})?$/.exec(text);
  if (!match) return undefined;
  const date = new Date(`${match[1]}${match[2] ?? MOSCOW_OFFSET}`);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

/** A receipt time as the operator writes it: Moscow time without an offset. */
export function formatReceiptTime(date: Date): string {
  return new Date(date.getTime() + 3 * 3_600_000).toISOString().slice(0, 19);
}
