/**
 * The HTTP client of provider A (CASH_REGISTER_A, ATOL Online; `protocol.ts`, `document.ts`, docs/receipts.md).
 * Tokens are cached per account in memory and exchanged for a new one once when the provider answers that the
 * token is missing or expired (error 10 or 11). A repeated `external_id` is answered with the first receipt's
 * uuid (200 once processed, error 33 before), so a resend never fiscalises twice (D8.3). The receipt's own
 * errors (13, 31, 32) and a `fail` report mean FAILED; refused credentials or group (12, 14, 20, 21) are for the
 * operator to correct (P78); error 34 and a report without a state are pending; anything else without a usable
 * answer — error 30 (uuid unknown), a `done` report missing fiscal attributes, 5xx, time-out — is `unavailable`
 * and the receipt is asked about again (P75).
 */
import { createHash } from 'node:crypto';
import { HttpClient, HttpTransportError, type HttpRequest } from '../../http-client.ts';
import {
  rubles,
  unavailable,
  credentialsRefused,
  USER_AGENT,
  type CashRegisterConnector,
  type ProviderAccount,
  type ProviderOutcome,
  type ReceiptReference,
  type ReceiptToRegister,
  type TaxationSystem,
} from '../connector.ts';
import { ReportPayload } from './document.ts';
import { Value } from 'typebox/value';
import {
  API_PREFIX,
  ERROR_CODES,
  formatTimestamp,
  OPERATIONS,
  parseTimestamp,
  type RegistrationBody,
  type ReportAnswer,
  type TokenAnswer,
} from './protocol.ts';

/** The document's `sno` of each taxation system (§8.1). */
const SNO: Record<TaxationSystem, string> = {
  GENERAL: 'osn',
  SIMPLIFIED_INCOME: 'usn_income',
  SIMPLIFIED_INCOME_MINUS_EXPENSES: 'usn_income_outcome',
  UNIFIED_AGRICULTURAL: 'esn',
  PATENT: 'patent',
};

/** Errors that mean the account or its group is refused: the operator must correct the settings (P78). */
const ACCOUNT_REFUSED: ReadonlySet<number> = new Set([
  ERROR_CODES.wrongCredentials,
  ERROR_CODES.userBlocked,
  ERROR_CODES.groupCodeMismatch,
  ERROR_CODES.groupCodeProtocol,
]);

/** Errors that refuse the receipt itself: FAILED. */
const RECEIPT_REFUSED: ReadonlySet<number> = new Set([
  ERROR_CODES.validation,
  ERROR_CODES.operationNotSupported,
  ERROR_CODES.receiptValidation,
]);

/**
 * The body of a registration of `receipt` (P71: VAT none, full payment, commodity, electronic payment), with the
 * company details of the account's settings; the buyer's contact is the company's email (there is no buyer in a
 * receiving document: the receipt is sent to the seller itself, docs/decisions.md).
 * @throws Error when the account lacks a company detail provider A requires (the settings are checked before)
 */
export function registrationBody(account: ProviderAccount, receipt: ReceiptToRegister): RegistrationBody {
  const { inn, email, paymentAddress, taxationSystem } = account.company;
  if (inn === null || email === null || paymentAddress === null || taxationSystem === null)
    throw new Error('provider A needs the company INN, email, payment address and taxation system');
  return {
    external_id: receipt.externalId,
    timestamp: formatTimestamp(receipt.createdAt),
    receipt: {
      client: { email },
      company: { email, sno: SNO[taxationSystem], inn, payment_address: paymentAddress },
      items: receipt.lines.map((line) => ({
        name: line.name,
        price: rubles(line.price),
        quantity: line.quantity,
        sum: rubles(line.sum),
        measure: 0,
        payment_method: 'full_payment',
        payment_object: 1,
        vat: { type: 'none' },
      })),
      payments: [{ type: 1, sum: rubles(receipt.total) }],
      total: rubles(receipt.total),
    },
  };
}

/**
 * Maps a report (or a registration answer) about the receipt `uuid` onto our life cycle. A `done` report must
 * carry the fiscal attributes the document requires (§10.5), else it is `unavailable` (asked again), never a
 * COMPLETED with holes.
 */
function outcomeOf(answer: ReportAnswer, uuid: string): ProviderOutcome {
  switch (answer.status) {
    case 'wait':
      return { kind: 'pending', providerReceiptId: uuid, providerStatus: 'wait' };
    case 'fail':
      return {
        kind: 'failed',
        providerReceiptId: uuid,
        providerStatus: 'fail',
        message: answer.error?.text ?? 'the provider could not fiscalise the receipt',
      };
    case 'done': {
      const payload = answer.payload;
      const completedAt = payload ? parseTimestamp(payload.receipt_datetime) : undefined;
      if (!payload || !Value.Check(ReportPayload, payload) || !completedAt)
        return unavailable('a done report without the fiscal attributes of the document (§10.5)');
      return {
        kind: 'completed',
        providerReceiptId: uuid,
        providerStatus: 'done',
        fiscal: {
          fiscalNumber: String(payload.fiscal_document_number),
          fiscalDocumentAttribute: String(payload.fiscal_document_attribute),
          fiscalStorageNumber: payload.fn_number,
          fnsUrl: payload.ofd_receipt_url || `https://${payload.fns_site}`,
          completedAt,
        },
      };
    }
    case null:
    case undefined:
      return unavailable('the answer has no status');
  }
  // A status outside the protocol (the type above is what the protocol promises, not what arrives).
  return unavailable(`unexpected status ${String(answer.status)}`);
}

/** A parsed answer. */
interface Answer<T> {
  status: number;
  body: T;
}

/** Provider A's connector. */
export class ProviderAClient implements CashRegisterConnector {
  private readonly http: HttpClient;
  /** Tokens by account (base URL, login and a hash of the password, so changed credentials get a new one). */
  private readonly tokens = new Map<string, string>();

  constructor(options: { timeoutMs: number }) {
    // Provider URLs are configured by the operator (settings or CASH_REGISTER_A_URL): private targets allowed.
    this.http = new HttpClient({ timeoutMs: options.timeoutMs, allowPrivate: true, userAgent: USER_AGENT });
  }

  async register(account: ProviderAccount, receipt: ReceiptToRegister): Promise<ProviderOutcome> {
    const path = `/${encodeURIComponent(account.groupCode)}/${OPERATIONS[receipt.type]}`;
    const answer = await this.authorized<ReportAnswer>(account, {
      method: 'POST',
      path,
      body: registrationBody(account, receipt),
    });
    if ('kind' in answer) return answer;
    const { status, body } = answer;
    const uuid = typeof body.uuid === 'string' && body.uuid !== '' ? body.uuid : undefined;
    if (status === 200) return uuid ? outcomeOf(body, uuid) : unavailable('the answer has no uuid');
    const code = body.error?.code;
    if (code === ERROR_CODES.existingExternalId)
      return uuid
        ? this.status(account, { externalId: receipt.externalId, providerReceiptId: uuid })
        : unavailable('registered before and not processed yet (error 33): sent again later');
    if (code !== undefined && RECEIPT_REFUSED.has(code))
      return {
        kind: 'failed',
        providerReceiptId: null,
        providerStatus: `error ${code}`,
        message: body.error?.text ?? 'the receipt was refused',
      };
    if (code !== undefined && ACCOUNT_REFUSED.has(code)) return credentialsRefused(describe(status, body));
    return unavailable(describe(status, body));
  }

  async status(account: ProviderAccount, reference: ReceiptReference): Promise<ProviderOutcome> {
    const uuid = reference.providerReceiptId;
    const path = `/${encodeURIComponent(account.groupCode)}/report/${encodeURIComponent(uuid)}`;
    const answer = await this.authorized<ReportAnswer>(account, { method: 'GET', path });
    if ('kind' in answer) return answer;
    const { status, body } = answer;
    const code = body.error?.code;
    if (status === 200 && code === ERROR_CODES.notReady)
      return { kind: 'pending', providerReceiptId: uuid, providerStatus: 'wait' };
    if (status === 200) return outcomeOf(body, uuid);
    if (code !== undefined && ACCOUNT_REFUSED.has(code)) return credentialsRefused(describe(status, body));
    // Error 30 (the uuid is unknown to the group) included: the receipt stays PENDING and is asked about again.
    return unavailable(describe(status, body));
  }

  close(): void {
    this.http.close();
  }

  /** Sends a request with the account's token; a missing or expired token is renewed and the request sent once more. */
  private async authorized<T extends { error?: { code: number } | null }>(
    account: ProviderAccount,
    request: { method: 'GET' | 'POST'; path: string; body?: object },
  ): Promise<Answer<T> | ProviderOutcome> {
    for (const renew of [false, true]) {
      const token = await this.token(account, renew);
      if (typeof token !== 'string') return token;
      const answer = await this.send<T>(account, { ...request, headers: { token } });
      if ('kind' in answer) return answer;
      const code = answer.body.error?.code;
      const tokenRefused =
        answer.status === 401 && (code === ERROR_CODES.expiredToken || code === ERROR_CODES.missingToken);
      if (!tokenRefused) return answer;
      this.tokens.delete(tokenKey(account));
    }
    return unavailable('the provider refused a freshly issued token');
  }

  /** The cached token of the account, or a new one (`renew`, or none cached); an outcome when none was issued. */
  private async token(account: ProviderAccount, renew: boolean): Promise<string | ProviderOutcome> {
    const key = tokenKey(account);
    const cached = this.tokens.get(key);
    if (cached !== undefined && !renew) return cached;
    const answer = await this.send<TokenAnswer>(account, {
      method: 'POST',
      path: '/getToken',
      body: { login: account.login, pass: account.password },
    });
    if ('kind' in answer) return answer;
    const token = answer.body.token;
    if (answer.status !== 200 || typeof token !== 'string' || token === '') {
      const message = `getToken: ${describe(answer.status, answer.body)}`;
      const code = answer.body.error?.code;
      return code !== undefined && ACCOUNT_REFUSED.has(code)
        ? credentialsRefused(message)
        : unavailable(message);
    }
    if (this.tokens.size > 10_000) this.tokens.clear();
    this.tokens.set(key, token);
    return token;
  }

  /** One exchange; `unavailable` when no JSON answer arrived. */
  private async send<T>(
    account: ProviderAccount,
    request: { method: HttpRequest['method']; path: string; body?: object; headers?: Record<string, string> },
  ): Promise<Answer<T> | ProviderOutcome> {
    try {
      const response = await this.http.request({
        method: request.method,
        url: `${account.baseUrl}${API_PREFIX}${request.path}`,
        headers: { accept: 'application/json', ...request.headers },
        ...(request.body && { body: request.body }),
      });
      if (response.status >= 500) return unavailable(`the provider answered HTTP ${response.status}`);
      try {
        return { status: response.status, body: response.json<T>() };
      } catch {
        return unavailable(`the provider answered HTTP ${response.status} without JSON`);
      }
    } catch (error) {
      if (error instanceof HttpTransportError) return unavailable(error.message);
      throw error;
    }
  }
}

function tokenKey(account: ProviderAccount): string {
  const password = createHash('sha256').update(account.password).digest('base64');
  return `${account.baseUrl}\n${account.login}\n${password}`;
}

function describe(status: number, body: { error?: { code: number; text?: string } | null }): string {
  const error = body.error;
  return error ? `HTTP ${status}, error ${error.code}: ${error.text ?? ''}` : `HTTP ${status}`;
}
