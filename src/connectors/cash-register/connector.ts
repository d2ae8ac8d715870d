/**
 * The cash-register connector (spec §4.3, D8): one interface over the fiscal-data operators an organization can
 * use (`CASH_REGISTER_A`, `CASH_REGISTER_B`), what we send them, and what they answer, mapped onto our receipt
 * life cycle. The two HTTP implementations speak genuinely different protocols (`provider-a/`, `provider-b/`;
 * described in docs/receipts.md) and each has a sandbox server in this project.
 *
 * Money is in kopecks (integer minor units) everywhere in this interface; each client converts to its
 * provider's representation. The receipt id is the provider's idempotency key (D8.3): registering the same
 * `externalId` again never fiscalises twice.
 */

/** The receipt types of spec §2 (`receiptType`). */
export const RECEIPT_TYPES = ['INCOME', 'EXPENSE', 'REFUND', 'EXPENSE_REFUND'] as const;
export type ReceiptType = (typeof RECEIPT_TYPES)[number];

/** The providers an organization can be configured with (D1.4, D8.1). */
export const CASH_REGISTER_SERVICES = ['CASH_REGISTER_A', 'CASH_REGISTER_B'] as const;
export type CashRegisterService = (typeof CASH_REGISTER_SERVICES)[number];

/**
 * The taxation systems a receipt can be registered under (FFD tag 1055), in our words; each client maps them onto
 * its protocol (A: `sno`, B: `TaxationSystem`). The imputed-income system, abolished in 2021, is not offered.
 */
export const TAXATION_SYSTEMS = [
  'GENERAL',
  'SIMPLIFIED_INCOME',
  'SIMPLIFIED_INCOME_MINUS_EXPENSES',
  'UNIFIED_AGRICULTURAL',
  'PATENT',
] as const;
export type TaxationSystem = (typeof TAXATION_SYSTEMS)[number];

/**
 * What a receipt says about the organization that issues it, from its cash-register settings (docs/receipts.md):
 * the taxpayer number (FFD tag 1018), the sender's email (1117, also the buyer's contact 1008 we send), the place
 * of settlement (1187) and the taxation system (1055).
 */
export interface CompanyDetails {
  /** 10 or 12 digits. */
  inn: string | null;
  email: string | null;
  paymentAddress: string | null;
  taxationSystem: TaxationSystem | null;
}

/** The company details each provider's receipts cannot go without (A: its document §6.3; B: `Inn`). */
export const REQUIRED_COMPANY_DETAILS: Readonly<
  Record<CashRegisterService, readonly (keyof CompanyDetails)[]>
> = {
  CASH_REGISTER_A: ['inn', 'email', 'paymentAddress', 'taxationSystem'],
  CASH_REGISTER_B: ['inn', 'taxationSystem'],
};

/** The first company detail `service` requires that `company` lacks, or undefined when it has them all. */
export function missingCompanyDetail(
  service: CashRegisterService,
  company: CompanyDetails,
): keyof CompanyDetails | undefined {
  return REQUIRED_COMPANY_DETAILS[service].find((field) => company[field] === null || company[field] === '');
}

/** The organization's account at its provider (credentials opened from the sealed settings, P160). */
export interface ProviderAccount {
  /** Base URL of the provider's API, without a trailing slash. */
  baseUrl: string;
  login: string;
  /** Plain password: never log or return it. */
  password: string;
  /** CASH_REGISTER_A's group of cash registers (P72). */
  groupCode: string;
  /** The organization as its receipts name it; complete for the provider (`missingCompanyDetail`). */
  company: CompanyDetails;
}

/**
 * One line of a receipt (P71): one position of the receiving document. Sent with VAT "none", payment method
 * "full payment" and payment object "commodity".
 */
export interface ReceiptLine {
  name: string;
  /** Unit price in kopecks. */
  price: number;
  quantity: number;
  /** price × quantity in kopecks, exact. */
  sum: number;
}

/** A receipt to register, as our service describes it. */
export interface ReceiptToRegister {
  /** Our receipt id: the provider's external id and idempotency key (D8.3). */
  externalId: string;
  type: ReceiptType;
  lines: ReceiptLine[];
  /** Sum of the lines in kopecks. */
  total: number;
  /** When our receipt was created (sent as the operation's timestamp). */
  createdAt: Date;
}

/** What the provider needs to report on a receipt it acknowledged. */
export interface ReceiptReference {
  externalId: string;
  /** The provider's id of the receipt (`external_receipt_id`). */
  providerReceiptId: string;
}

/** The fiscal attributes of a completed receipt. */
export interface FiscalData {
  /** Fiscal document number (ФД). */
  fiscalNumber: string;
  /** Fiscal document attribute (ФПД), the receipt's signature. */
  fiscalDocumentAttribute: string;
  /** Serial number of the fiscal storage (ФН) that registered it. */
  fiscalStorageNumber: string;
  /** Where the receipt can be checked (the tax service or the operator's receipt page). */
  fnsUrl: string | null;
  /** When the provider registered it. */
  completedAt: Date;
}

/**
 * The answer of one exchange, mapped onto our life cycle (D8.2):
 * `pending` = accepted, not fiscalised yet (PENDING); `completed` (COMPLETED); `failed` = the provider refused or
 * could not fiscalise it (FAILED); `cancelled` (CANCELLED); `unavailable` = no usable answer (time-out, network
 * error, 5xx, refused credentials, unexpected body): the receipt stays as it is and is asked about again, never
 * failed by guess (P75).
 */
export type ProviderOutcome =
  | { kind: 'pending'; providerReceiptId: string; providerStatus: string }
  | { kind: 'completed'; providerReceiptId: string; providerStatus: string; fiscal: FiscalData }
  | { kind: 'failed'; providerReceiptId: string | null; providerStatus: string; message: string }
  | { kind: 'cancelled'; providerReceiptId: string; providerStatus: string; message: string | null }
  | { kind: 'unavailable'; message: string; credentialsRefused?: boolean };

/** A fiscal-data operator. Both methods never throw: every failure is an outcome. */
export interface CashRegisterConnector {
  /** Registers a receipt; registering the same `externalId` again reports on the first one (D8.3). */
  register(account: ProviderAccount, receipt: ReceiptToRegister): Promise<ProviderOutcome>;
  /** Asks for the state of a receipt the provider acknowledged. */
  status(account: ProviderAccount, reference: ReceiptReference): Promise<ProviderOutcome>;
  /** Closes idle connections. */
  close(): void;
}

/** `{kind: 'unavailable'}` with `message`. */
export const unavailable = (message: string): ProviderOutcome => ({ kind: 'unavailable', message });

/**
 * `unavailable` because the provider refused the organization's login and password: nothing is wrong with the
 * receipt, which is kept and sent again; the operator must correct the settings (P78).
 */
export const credentialsRefused = (message: string): ProviderOutcome => ({
  kind: 'unavailable',
  message,
  credentialsRefused: true,
});

/** Kopecks → rubles as a JSON number with at most 2 decimals (exact for amounts below 2^53 kopecks). */
export const rubles = (kopecks: number): number => Number((kopecks / 100).toFixed(2));

/** The user agent of every request to a provider. */
export const USER_AGENT = 'seller-ops-receipts/1';
