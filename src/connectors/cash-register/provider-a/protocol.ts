/**
 * Provider A's protocol (CASH_REGISTER_A): ATOL Online, paths and answers per its document (version 5.23, §4–§11),
 * on protocol version v5 with v5's item fields (`document.ts` encodes the document; docs/receipts.md says what we
 * use of it): a login and password exchanged for a 24 h token (`POST /possystem/v5/getToken`), the token in a
 * `Token` header, `POST /possystem/v5/{group_code}/{sell|sell_refund|buy|buy_refund}` with our `external_id`,
 * and `GET /possystem/v5/{group_code}/report/{uuid}` with statuses `wait`, `done`, `fail`. The types below are
 * what the client and the sandbox read and write.
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

/** The service error codes we act on (document §11.2; their HTTP statuses are in `document.ts`). */
export const ERROR_CODES = {
  /** The token is missing or unknown (HTTP 401): get a new one. */
  missingToken: 10,
  /** The token expired (HTTP 401): get a new one. */
  expiredToken: 11,
  /** getToken: wrong login or password (HTTP 401). */
  wrongCredentials: 12,
  /** The request is invalid (HTTP 400). */
  validation: 13,
  /** The user is blocked (HTTP 403). */
  userBlocked: 14,
  /** The group code does not belong to the token's user (HTTP 401). */
  groupCodeMismatch: 20,
  /** The group's cash registers do not support this protocol version (HTTP 401). */
  groupCodeProtocol: 21,
  /** Report: no receipt with this uuid (HTTP 400, status fail). */
  unknownUuid: 30,
  /** The operation in the path is not one of the protocol's (HTTP 400). */
  operationNotSupported: 31,
  /** The receipt is invalid (HTTP 400, status fail): the text names the fields. */
  receiptValidation: 32,
  /** A receipt with this external_id exists and is not processed yet (HTTP 400, status wait). */
  existingExternalId: 33,
  /** Report: the receipt's state is not known yet, ask again later (HTTP 200, status wait). */
  notReady: 34,
  /** The request is malformed (HTTP 400). */
  badRequest: 40,
  /** The Content-Type is not `application/json; charset=utf-8` (HTTP 415). */
  unsupportedMediaType: 41,
} as const;

/** The `error` object of an answer. */
export interface ProtocolError {
  error_id: string;
  code: number;
  text: string;
  /** `system` (request), `agent` or `driver` (fiscalisation). */
  type: string;
}

/** One receipt line (v5 `Item`: numeric `measure` and `payment_object`). */
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

/** Body of a registration (document §6). */
export interface RegistrationBody {
  external_id: string;
  timestamp: string;
  receipt: {
    /** The buyer's contact (FFD tag 1008): email or phone. */
    client: { email?: string; phone?: string };
    company: { email: string; sno: string; inn: string; payment_address: string };
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
  ofd_receipt_url?: string;
}

/** Answer of a registration or a report (an error answer has only `error`, `timestamp` and perhaps `status`). */
export interface ReportAnswer {
  uuid?: string | null;
  status?: 'wait' | 'done' | 'fail' | null;
  error: ProtocolError | null;
  payload?: ReportPayload | null;
  timestamp: string;
  external_id?: string;
  group_code?: string;
  daemon_code?: string;
  device_code?: string;
  callback_url?: string;
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
