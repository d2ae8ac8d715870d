/**
 * The HTTP client of provider B (CASH_REGISTER_B, CloudKassir; protocol in `protocol.ts` and docs/receipts.md).
 * Credentials go with every request (HTTP Basic); the registration carries our receipt id as `X-Request-ID`, so
 * a resend is answered with the first registration and never fiscalises twice (D8.3). `Success: false` on
 * registration and the status `Error` mean FAILED, `Cancelled` CANCELLED, `Processed` COMPLETED with the fiscal
 * data of `/kkt/receipt/get`'s `Model.AdditionalData`; a processed receipt whose fiscal data we cannot read, and
 * anything else without a usable answer, is `unavailable`: the receipt stays pending and is asked about again (P75).
 */
import { HttpClient, HttpTransportError } from '../../http-client.ts';
import {
  rubles,
  unavailable,
  credentialsRefused,
  USER_AGENT,
  type CashRegisterConnector,
  type FiscalData,
  type ProviderAccount,
  type ProviderOutcome,
  type ReceiptReference,
  type ReceiptToRegister,
  type TaxationSystem,
} from '../connector.ts';
import {
  parseReceiptTime,
  PATHS,
  TYPES,
  type Envelope,
  type ReceiptDetails,
  type ReceiptStatus,
  type RegistrationBody,
  type RegistrationModel,
} from './protocol.ts';

/** The operator's `TaxationSystem` of each taxation system (the `cloudpayments` package's `TaxationSystem`). */
const TAXATION_SYSTEM: Record<TaxationSystem, number> = {
  GENERAL: 0,
  SIMPLIFIED_INCOME: 1,
  SIMPLIFIED_INCOME_MINUS_EXPENSES: 2,
  UNIFIED_AGRICULTURAL: 4,
  PATENT: 5,
};

/**
 * The body of a registration of `receipt` (P71: no VAT, full payment, commodity, paid electronically) with the
 * company details of the account; the buyer's email is the company's, when set (docs/decisions.md).
 * @throws Error when the account lacks the INN or taxation system (the settings are checked before)
 */
export function registrationBody(account: ProviderAccount, receipt: ReceiptToRegister): RegistrationBody {
  const { inn, email, paymentAddress, taxationSystem } = account.company;
  if (inn === null || taxationSystem === null)
    throw new Error('provider B needs the company INN and taxation system');
  return {
    Inn: inn,
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
      TaxationSystem: TAXATION_SYSTEM[taxationSystem],
      ...(email !== null && { Email: email }),
      ...(paymentAddress !== null && { CalculationPlace: paymentAddress }),
      Amounts: { Electronic: rubles(receipt.total), AdvancePayment: 0, Credit: 0, Provision: 0 },
    },
  };
}

/** A whole number written as a number or a digit string, as text; undefined otherwise. */
function digits(value: unknown): string | undefined {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return String(value);
  return typeof value === 'string' && /^[0-9]+$/.test(value) ? value : undefined;
}

/**
 * The fiscal data of `/kkt/receipt/get`'s model (`AdditionalData`), or the name of what is missing: a fiscal
 * document number, sign, storage number and a time are required.
 */
export function fiscalDataOf(model: ReceiptDetails | undefined): FiscalData | string {
  const data = model?.AdditionalData;
  if (!data || typeof data !== 'object') return 'Model.AdditionalData';
  const fiscalNumber = digits(data.DocumentNumber);
  const fiscalDocumentAttribute = digits(data.FiscalSign);
  const fiscalStorageNumber = digits(data.FiscalNumber);
  const completedAt = parseReceiptTime(data.DateTime);
  if (fiscalNumber === undefined) return 'AdditionalData.DocumentNumber';
  if (fiscalDocumentAttribute === undefined) return 'AdditionalData.FiscalSign';
  if (fiscalStorageNumber === undefined) return 'AdditionalData.FiscalNumber';
  if (completedAt === undefined) return 'AdditionalData.DateTime';
  const url = [data.OfdReceiptUrl, data.Url].find(
    (candidate) => typeof candidate === 'string' && candidate !== '',
  );
  return { fiscalNumber, fiscalDocumentAttribute, fiscalStorageNumber, fnsUrl: url ?? null, completedAt };
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

  /** The fiscal data of a processed receipt; `unavailable` (asked again) when it cannot be read. */
  private async details(account: ProviderAccount, id: string): Promise<ProviderOutcome> {
    const answer = await this.post<ReceiptDetails>(account, PATHS.details, { Id: id });
    if ('kind' in answer) return answer;
    if (!answer.Success) return unavailable(`details: ${answer.Message ?? 'no receipt'}`);
    const fiscal = fiscalDataOf(answer.Model);
    if (typeof fiscal === 'string') return unavailable(`details: a processed receipt without ${fiscal}`);
    return { kind: 'completed', providerReceiptId: id, providerStatus: 'Processed', fiscal };
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
