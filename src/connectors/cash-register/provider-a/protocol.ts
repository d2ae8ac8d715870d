/**
 * Provider A's protocol (CASH_REGISTER_A), modelled on ATOL Online API v5 (docs/receipts.md): a login and
 * password exchanged for a short-lived token (`POST /possystem/v5/getToken`), the token in a `Token` header,
 * `POST /possystem/v5/{group_code}/{sell|sell_refund|buy|buy_refund}` with our `external_id`, and
 * `GET /possystem/v5/{group_code}/report/{uuid}` with statuses `wait`, `done`, `fail`. Shared by the client and
 * the sandbox so both read the same field names.
 */
import type { ReceiptType } from '../connector.ts';

/** Path prefix of every operation. */
export const API_PREFIX = '/possystem/v5';

/** The operation of each receipt type. */
export const OPERATIONS: Record<ReceiptType, string> = {
  INCOME: 'sell',
  REFUND: 'sell_refund',
  EXPENSE: 'buy',
  EXPENSE_REFUND: 'buy_refund',
};

/** Error codes of the protocol (ATOL v5 "service errors"). */
export const ERROR_CODES = {
  /** No `Token` header. */
  missingToken: 10,
  /** The token is unknown or expired: get a new one. */
  expiredToken: 11,
  /** getToken: wrong login or password. */
  wrongCredentials: 12,
  /** getToken: login or password missing. */
  badTokenRequest: 13,
  /** The receipt is invalid (fields, sums). */
  validation: 32,
  /** A receipt with this external_id exists in the group; the answer carries its uuid. */
  existingExternalId: 33,
  /** No receipt with this uuid. */
  notFound: 34,
} as const;

/** The `error` object of an answer. */
export interface ProtocolError {
  error_id: string;
  code: number;
  text: string;
  /** `system` (request), `agent` or `driver` (fiscalisation). */
  type: string;
}

/** One receipt line (v5: numeric `measure` and `payment_object`). */
export interface ProtocolItem {
  name: string;
  price: number;
  quantity: number;
  sum: number;
  /** 0 = pieces. */
  measure: number;
  payment_method: string;
  /** 1 = commodity. */
  payment_object: number;
  vat: { type: string };
}

/** Body of a registration. */
export interface RegistrationBody {
  external_id: string;
  timestamp: string;
  receipt: {
    client?: { email?: string };
    company: { sno: string; inn?: string; email?: string; payment_address?: string };
    items: ProtocolItem[];
    /** type 1 = electronic payment. */
    payments: Array<{ type: number; sum: number }>;
    total: number;
  };
}

/** The fiscal attributes of a `done` report. */
export interface ReportPayload {
  total: number;
  fns_site: string;
  fn_number: string;
  shift_number: number;
  receipt_datetime: string;
  fiscal_receipt_number: number;
  fiscal_document_number: number;
  ecr_registration_number: string;
  fiscal_document_attribute: number;
  ofd_receipt_url: string;
}

/** Answer of a registration or a report. */
export interface ReportAnswer {
  uuid: string | null;
  status: 'wait' | 'done' | 'fail' | null;
  error: ProtocolError | null;
  payload?: ReportPayload | null;
  timestamp: string;
  external_id?: string;
  group_code?: string;
}

/** Answer of getToken. */
export interface TokenAnswer {
  token: string | null;
  error: ProtocolError | null;
  timestamp: string;
}

/** Moscow time, in which the protocol writes its times (UTC+3 all year). */
const OFFSET_MS = 3 * 60 * 60 * 1000;

/** `dd.MM.yyyy HH:mm:ss` in Moscow time. */
export function formatTimestamp(date: Date): string {
  const moscow = new Date(date.getTime() + OFFSET_MS).toISOString();
  return `${moscow.slice(8, 10)}.${moscow.slice(5, 7)}.${moscow.slice(0, 4)} ${moscow.slice(11, 19)}`;
}

/** Parses `dd.MM.yyyy HH:mm:ss` (Moscow time); undefined when malformed. */
export function parseTimestamp(text: string): Date | undefined {
  const match = /^(\d{2})\.(\d{2})\.(\d{4}) (\d{2}):(\d{2}):(\d{2})$/.exec(text);
  if (!match) return undefined;
  const [, day, month, year, hours, minutes, seconds] = match;
  const date = new Date(`${year}-${month}-${day}T${hours}:${minutes}:${seconds}+03:00`);
  return Number.isNaN(date.getTime()) ? undefined : date;
}
