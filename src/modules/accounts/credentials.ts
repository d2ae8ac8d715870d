/**
 * The one way other groups read an organization's external credentials (D1.4, P160): the prepared integration
 * of a marketplace (campaigns, D10.1) and the cash-register settings (receipts, D8.1), with the sealed secret
 * opened. Scoped by client: another client's organization has none.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import type { SecretBox } from '../../security/secret-box.ts';
import type { CompanyDetails } from '../../connectors/cash-register/connector.ts';

/** A marketplace integration with its API key in plain text (never log or return it). */
export interface PreparedIntegrationCredentials {
  organizationId: number;
  service: string;
  apiKey: string;
  /** The operator's base URL of the marketplace API; null = the service default (e.g. MARKET1_API_URL). */
  baseUrl: string | null;
}

/** Cash-register settings with the password in plain text (never log or return it). */
export interface CashRegisterCredentials {
  organizationId: number;
  service: 'CASH_REGISTER_A' | 'CASH_REGISTER_B';
  login: string;
  password: string;
  /** The provider's base URL; null = the service default (CASH_REGISTER_A_URL / _B_URL or the sandbox). */
  baseUrl: string | null;
  /** CASH_REGISTER_A's group of cash registers; null = the login (P72). */
  groupCode: string | null;
  /** What receipts say about the organization, as saved (rows saved before migration 0020 have nulls). */
  company: CompanyDetails;
}

/**
 * The prepared integration of `organizationId` (of `clientId`) for `service`, or undefined.
 * @throws SecretOpenError when the stored key cannot be opened (operator key changed)
 */
export async function findPreparedIntegration(
  db: Kysely<DB>,
  secrets: SecretBox,
  clientId: number,
  organizationId: number,
  service: string,
): Promise<PreparedIntegrationCredentials | undefined> {
  const row = await db
    .selectFrom('prepared_integration')
    .select(['organization_id', 'service', 'api_key', 'base_url'])
    .where('client_id', '=', clientId)
    .where('organization_id', '=', organizationId)
    .where('service', '=', service)
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    organizationId: row.organization_id,
    service: row.service,
    apiKey: secrets.open(row.api_key),
    baseUrl: row.base_url,
  };
}

/**
 * The cash-register settings of `organizationId` (of `clientId`), or undefined.
 * @throws SecretOpenError when the stored password cannot be opened (operator key changed)
 */
export async function findCashRegister(
  db: Kysely<DB>,
  secrets: SecretBox,
  clientId: number,
  organizationId: number,
): Promise<CashRegisterCredentials | undefined> {
  const row = await db
    .selectFrom('cash_register_setting')
    .select([
      'organization_id',
      'service',
      'login',
      'password',
      'base_url',
      'group_code',
      'inn',
      'company_email',
      'payment_address',
      'taxation_system',
    ])
    .where('client_id', '=', clientId)
    .where('organization_id', '=', organizationId)
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    organizationId: row.organization_id,
    service: row.service,
    login: row.login,
    password: secrets.open(row.password),
    baseUrl: row.base_url,
    groupCode: row.group_code,
    company: {
      inn: row.inn,
      email: row.company_email,
      paymentAddress: row.payment_address,
      taxationSystem: row.taxation_system,
    },
  };
}
