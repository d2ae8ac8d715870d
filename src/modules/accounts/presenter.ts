/** Maps account rows to their API shapes (D1.4); secrets (token hashes, API keys, passwords) never leave. */
import type { Selectable } from 'kysely';
import type {
  AppUserTable,
  CashRegisterSettingTable,
  ClientTable,
  OrganizationTable,
  PreparedIntegrationTable,
} from '../../db/schema.ts';
import type { CashRegister, Client, Integration, Organization, User } from './schemas.ts';

export const presentClient = (row: Selectable<ClientTable>): Client => ({
  id: row.id,
  name: row.name,
  subscriptionExpiresAt: row.subscription_expires_at?.toISOString() ?? null,
});

export const presentOrganization = (row: Selectable<OrganizationTable>): Organization => ({
  id: row.id,
  clientId: row.client_id,
  name: row.name,
  inn: row.inn,
});

export const presentUser = (row: Selectable<AppUserTable>): User => ({
  id: row.id,
  clientId: row.client_id,
  name: row.name,
  lang: row.lang,
  role: row.role,
});

export const presentIntegration = (row: Selectable<PreparedIntegrationTable>): Integration => ({
  id: row.id,
  organizationId: row.organization_id,
  service: row.service,
  baseUrl: row.base_url,
});

export const presentCashRegister = (row: Selectable<CashRegisterSettingTable>): CashRegister => ({
  organizationId: row.organization_id,
  service: row.service,
  login: row.login,
  baseUrl: row.base_url,
  groupCode: row.group_code,
  inn: row.inn,
  email: row.company_email,
  paymentAddress: row.payment_address,
  taxationSystem: row.taxation_system,
});
