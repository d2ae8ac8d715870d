/**
 * The HTTP client of provider A (CASH_REGISTER_A, ATOL Online v5 style; protocol in `protocol.ts` and
 * docs/receipts.md). Tokens are cached per account in memory and exchanged for a new one once when the provider
 * answers that the token is missing or expired (error 10 or 11); a repeat of an `external_id` (error 33) is read
 * back through its report, so a resend never fiscalises twice (D8.3). Validation errors (13, 32) and a `fail`
 * report mean FAILED; anything else without a usable answer is `unavailable` (P75).
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
} from '../connector.ts';
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

/** The body of a registration of `receipt` (P71: VAT none, full payment, commodity, electronic payment). */
export function registrationBody(account: ProviderAccount, receipt: ReceiptToRegister): RegistrationBody {
  return {
    external_id: receipt.externalId,
    timestamp: formatTimestamp(receipt.createdAt),
    receipt: {
      company: { sno: 'usn_income', ...(account.inn !== null && { inn: account.inn }) },
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

/** Maps a report (or a registration answer) onto our life cycle. */
function outcomeOf(answer: ReportAnswer): ProviderOutcome {
  const uuid = answer.uuid;
  if (typeof uuid !== 'string' || uuid === '') return unavailable('the answer has no uuid');
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
      if (!payload) return unavailable('a done report without payload');
      return {
        kind: 'completed',
        providerReceiptId: uuid,
        providerStatus: 'done',
        fiscal: {
          fiscalNumber: String(payload.fiscal_document_number),
          fiscalDocumentAttribute: String(payload.fiscal_document_attribute),
          fiscalStorageNumber: String(payload.fn_number),
          fnsUrl: payload.ofd_receipt_url || (payload.fns_site ? `https://${payload.fns_site}` : null),
          completedAt: parseTimestamp(payload.receipt_datetime) ?? new Date(),
        },
      };
    }
    case null:
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
    if (status === 200) return outcomeOf(body);
    const code = body.error?.code;
    if (code === ERROR_CODES.existingExternalId && typeof body.uuid === 'string')
      return this.status(account, { externalId: receipt.externalId, providerReceiptId: body.uuid });
    if (code === ERROR_CODES.validation || code === ERROR_CODES.badTokenRequest)
      return {
        kind: 'failed',
        providerReceiptId: null,
        providerStatus: `error ${code}`,
        message: body.error?.text ?? 'the receipt was refused',
      };
    return unavailable(describe(status, body));
  }

  async status(account: ProviderAccount, reference: ReceiptReference): Promise<ProviderOutcome> {
    const path = `/${encodeURIComponent(account.groupCode)}/report/${encodeURIComponent(reference.providerReceiptId)}`;
    const answer = await this.authorized<ReportAnswer>(account, { method: 'GET', path });
    if ('kind' in answer) return answer;
    return answer.status === 200 ? outcomeOf(answer.body) : unavailable(describe(answer.status, answer.body));
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
      return answer.status === 401 ? credentialsRefused(message) : unavailable(message);
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
