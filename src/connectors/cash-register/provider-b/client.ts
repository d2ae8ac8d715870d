/**
 * The HTTP client of provider B (CASH_REGISTER_B, CloudKassir style; protocol in `protocol.ts` and
 * docs/receipts.md). Credentials go with every request (HTTP Basic); the registration carries our receipt id as
 * `X-Request-ID`, so a resend is answered with the first registration and never fiscalises twice (D8.3).
 * `Success: false` on registration and the status `Error` mean FAILED, `Cancelled` CANCELLED, `Processed`
 * COMPLETED (its fiscal attributes read from the receipt details); anything else is `unavailable` (P75).
 */
import { HttpClient, HttpTransportError } from '../../http-client.ts';
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
  PATHS,
  TYPES,
  type Envelope,
  type ReceiptDetails,
  type ReceiptStatus,
  type RegistrationBody,
  type RegistrationModel,
} from './protocol.ts';

/** The body of a registration of `receipt` (P71: no VAT, full payment, commodity, paid electronically). */
export function registrationBody(account: ProviderAccount, receipt: ReceiptToRegister): RegistrationBody {
  return {
    ...(account.inn !== null && { Inn: account.inn }),
    Type: TYPES[receipt.type],
    InvoiceId: receipt.externalId,
    CustomerReceipt: {
      Items: receipt.lines.map((line) => ({
        Label: line.name,
        Price: rubles(line.price),
        Quantity: line.quantity,
        Amount: rubles(line.sum),
        Vat: null,
        Method: 4,
        Object: 1,
        MeasurementUnit: 'шт',
      })),
      TaxationSystem: 1,
      Amounts: { Electronic: rubles(receipt.total), AdvancePayment: 0, Credit: 0, Provision: 0 },
    },
  };
}

/** Provider B's connector. */
export class ProviderBClient implements CashRegisterConnector {
  private readonly http: HttpClient;

  constructor(options: { timeoutMs: number }) {
    // Provider URLs are configured by the operator (settings or CASH_REGISTER_B_URL): private targets allowed.
    this.http = new HttpClient({ timeoutMs: options.timeoutMs, allowPrivate: true, userAgent: USER_AGENT });
  }

  async register(account: ProviderAccount, receipt: ReceiptToRegister): Promise<ProviderOutcome> {
    const answer = await this.post<RegistrationModel>(
      account,
      PATHS.register,
      registrationBody(account, receipt),
      {
        'x-request-id': receipt.externalId,
      },
    );
    if ('kind' in answer) return answer;
    const id = answer.Model?.Id;
    if (!answer.Success)
      return {
        kind: 'failed',
        providerReceiptId: null,
        providerStatus: `ErrorCode ${answer.Model?.ErrorCode ?? 'unknown'}`,
        message: answer.Message ?? 'the receipt was refused',
      };
    if (typeof id !== 'string' || id === '') return unavailable('the registration answer has no Id');
    return { kind: 'pending', providerReceiptId: id, providerStatus: answer.Message ?? 'Queued' };
  }

  async status(account: ProviderAccount, reference: ReceiptReference): Promise<ProviderOutcome> {
    const id = reference.providerReceiptId;
    const answer = await this.post<ReceiptStatus>(account, PATHS.status, { Id: id });
    if ('kind' in answer) return answer;
    if (!answer.Success) return unavailable(`status: ${answer.Message ?? 'refused'}`);
    switch (answer.Model) {
      case 'Queued':
        return { kind: 'pending', providerReceiptId: id, providerStatus: 'Queued' };
      case 'Error':
        return {
          kind: 'failed',
          providerReceiptId: id,
          providerStatus: 'Error',
          message: answer.Message ?? 'the provider could not fiscalise the receipt',
        };
      case 'Cancelled':
        return {
          kind: 'cancelled',
          providerReceiptId: id,
          providerStatus: 'Cancelled',
          message: answer.Message,
        };
      case 'Processed':
        return this.details(account, id);
      case undefined:
        return unavailable('the status answer has no Model');
    }
    // A status outside the protocol (the type above is what the protocol promises, not what arrives).
    return unavailable(`unexpected status ${String(answer.Model)}`);
  }

  close(): void {
    this.http.close();
  }

  /** The fiscal attributes of a processed receipt. */
  private async details(account: ProviderAccount, id: string): Promise<ProviderOutcome> {
    const answer = await this.post<ReceiptDetails>(account, PATHS.details, { Id: id });
    if ('kind' in answer) return answer;
    const model = answer.Model;
    if (!answer.Success || !model) return unavailable(`details: ${answer.Message ?? 'no receipt'}`);
    const completedAt = new Date(model.DateTime);
    return {
      kind: 'completed',
      providerReceiptId: id,
      providerStatus: 'Processed',
      fiscal: {
        fiscalNumber: String(model.DocumentNumber),
        fiscalDocumentAttribute: String(model.FiscalSign),
        fiscalStorageNumber: String(model.FiscalNumber),
        fnsUrl: model.Url || null,
        completedAt: Number.isNaN(completedAt.getTime()) ? new Date() : completedAt,
      },
    };
  }

  /** One exchange with Basic credentials; `unavailable` unless a 200 with a JSON envelope arrived. */
  private async post<T>(
    account: ProviderAccount,
    path: string,
    body: object,
    headers: Record<string, string> = {},
  ): Promise<Envelope<T> | ProviderOutcome> {
    const credentials = Buffer.from(`${account.login}:${account.password}`, 'utf8').toString('base64');
    try {
      const response = await this.http.request({
        method: 'POST',
        url: `${account.baseUrl}${path}`,
        headers: { accept: 'application/json', authorization: `Basic ${credentials}`, ...headers },
        body,
      });
      if (response.status === 401)
        return credentialsRefused('the provider refused the credentials (HTTP 401)');
      if (response.status !== 200) return unavailable(`the provider answered HTTP ${response.status}`);
      try {
        return response.json<Envelope<T>>();
      } catch {
        return unavailable('the provider answered without JSON');
      }
    } catch (error) {
      if (error instanceof HttpTransportError) return unavailable(error.message);
      throw error;
    }
  }
}
