/**
 * Accounts (decision D1): the operations behind the admin API, the CLI and the demo account.
 * Each mutation is one transaction; token and client changes notify every process's auth cache.
 * @throws AppError `error_not_found` for unknown client, user, organization or token ids
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Kysely } from 'kysely';
import type { SecretBox } from '../../security/secret-box.ts';
import type { DB } from '../../db/schema.ts';
import { notifyChange, type ChangeNotifier } from '../../db/notifications.ts';
import { generateToken, hashToken } from '../../http/auth.ts';
import { notFound, validationError } from '../../http/errors.ts';
import { visibleText } from '../../domain/text.ts';
import { missingCompanyDetail, type CompanyDetails } from '../../connectors/cash-register/connector.ts';
import { assertProviderUrl, UnsafeTargetError } from '../../connectors/url-guard.ts';
import {
  cashRegisterRepository,
  clientRepository,
  integrationRepository,
  organizationRepository,
  tokenRepository,
  userRepository,
} from './repository.ts';
import {
  presentCashRegister,
  presentClient,
  presentIntegration,
  presentOrganization,
  presentUser,
} from './presenter.ts';
import type {
  CashRegister,
  CashRegisterBody,
  Client,
  ClientCreateBody,
  ClientPatchBody,
  CreatedToken,
  Integration,
  IntegrationCreateBody,
  Organization,
  OrganizationCreateBody,
  TokenCreateBody,
  User,
  UserCreateBody,
} from './schemas.ts';

/** A taxpayer number as receipts carry it (FFD tag 1018). */
const INN_PATTERN = /^([0-9]{10}|[0-9]{12})$/;

/** An email as receipts carry it (FFD tag 1117: at most 64 characters). */
const EMAIL_PATTERN = /^(?=.{3,64}$)[^\s@]+@[^\s@]+$/;

/** How a missing company detail is named in its validation error. */
const COMPANY_DETAIL_NAMES: Record<keyof CompanyDetails, string> = {
  inn: 'taxpayer number (10 or 12 digits; the organization has none)',
  email: 'email (the sender of its receipts)',
  paymentAddress: 'place of settlement',
  taxationSystem: 'taxation system',
};

/**
 * A client's, organization's or user's name as stored: without invisible edges (P220).
 * @throws 400 `error_validation` on `name` when nothing visible remains
 */
function accountName(name: string): string {
  const visible = visibleText(name);
  if (visible === undefined) throw validationError('name', 'must not be blank');
  return visible;
}

/** Account operations over one database. */
export class AccountService {
  /**
   * @param notifier when given, this process's caches drop a revoked token or changed client at once, before the
   *   committed notification reaches the other processes
   */
  constructor(
    private readonly db: Kysely<DB>,
    /** Seals API keys and cash-register passwords before they are stored (P160). */
    private readonly secrets: SecretBox,
    private readonly notifier?: ChangeNotifier,
  ) {}

  /** Creates a client (account). */
  async createClient(body: ClientCreateBody): Promise<Client> {
    const row = await clientRepository.insert(this.db, {
      name: accountName(body.name),
      subscription_expires_at: body.subscriptionExpiresAt ?? null,
    });
    return presentClient(row);
  }

  /** Renames a client or changes its subscription end (D1.3). */
  async updateClient(clientId: number, body: ClientPatchBody): Promise<Client> {
    if (body.name === undefined && body.subscriptionExpiresAt === undefined) {
      // Nothing to change (an empty PATCH is a read, not an SQL error).
      const row = await clientRepository.findById(this.db, clientId);
      if (!row) throw notFound('client', clientId);
      return presentClient(row);
    }
    const client = await this.db.transaction().execute(async (trx) => {
      const row = await clientRepository.update(trx, clientId, {
        ...(body.name !== undefined && { name: accountName(body.name) }),
        ...(body.subscriptionExpiresAt !== undefined && {
          subscription_expires_at: body.subscriptionExpiresAt,
        }),
      });
      if (!row) throw notFound('client', clientId);
      await notifyChange(trx, 'client', clientId);
      return presentClient(row);
    });
    this.notifier?.dispatchLocal('client', String(clientId));
    return client;
  }

  /** Adds an organization to a client. */
  async createOrganization(clientId: number, body: OrganizationCreateBody): Promise<Organization> {
    await this.requireClient(clientId);
    const row = await organizationRepository.insert(this.db, {
      client_id: clientId,
      name: accountName(body.name),
      inn: body.inn ?? null,
    });
    return presentOrganization(row);
  }

  /** Adds a user to a client; `lang` null means Russian, `role` defaults to OWNER. */
  async createUser(clientId: number, body: UserCreateBody): Promise<User> {
    await this.requireClient(clientId);
    const row = await userRepository.insert(this.db, {
      client_id: clientId,
      name: accountName(body.name),
      lang: body.lang ?? null,
      role: body.role ?? 'OWNER',
    });
    return presentUser(row);
  }

  /** Issues an API token for a user; the token text is returned only here (D1.2). */
  async createToken(userId: number, body: TokenCreateBody): Promise<CreatedToken> {
    const user = await userRepository.findById(this.db, userId);
    if (!user) throw notFound('user', userId);
    const token = generateToken();
    const row = await this.db.transaction().execute((trx) =>
      tokenRepository.insert(trx, {
        client_id: user.client_id,
        user_id: user.id,
        token_hash: hashToken(token),
        access: body.access,
        name: body.name ?? null,
      }),
    );
    return { id: row.id, token, access: row.access, name: row.name };
  }

  /** Revokes a token; every process refuses it from the commit on. Revoking twice is a no-op. */
  async revokeToken(tokenId: number): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const clientId = await tokenRepository.clientOf(trx, tokenId);
      if (clientId === undefined) throw notFound('token', tokenId);
      await tokenRepository.revoke(trx, clientId, tokenId);
      await notifyChange(trx, 'token', tokenId);
    });
    this.notifier?.dispatchLocal('token', String(tokenId));
  }

  /** Stores the marketplace credentials of an organization for one service (a prepared integration). */
  async setIntegration(organizationId: number, body: IntegrationCreateBody): Promise<Integration> {
    const organization = await this.requireOrganization(organizationId);
    const row = await integrationRepository.upsert(this.db, {
      client_id: organization.client_id,
      organization_id: organization.id,
      service: body.service,
      api_key: this.secrets.seal(body.apiKey),
      base_url: providerBaseUrl(body.baseUrl),
    });
    return presentIntegration(row);
  }

  /**
   * Stores the fiscal provider settings of an organization, with what its receipts say about it: `inn` defaults
   * to the organization's INN.
   * @throws 404 `error_not_found` `{entity: 'organization'}`; 400 `error_validation` naming the first company
   *   detail the provider requires that is missing (`REQUIRED_COMPANY_DETAILS`: A needs `inn`, `email`,
   *   `paymentAddress`, `taxationSystem`; B `inn`, `taxationSystem`)
   */
  async setCashRegister(organizationId: number, body: CashRegisterBody): Promise<CashRegister> {
    const organization = await this.requireOrganization(organizationId);
    const company: CompanyDetails = {
      inn: body.inn ?? (INN_PATTERN.test(organization.inn ?? '') ? organization.inn : null),
      email: body.email ?? null,
      paymentAddress: body.paymentAddress ?? null,
      taxationSystem: body.taxationSystem ?? null,
    };
    // The admin API's schema checks these too; the CLI reaches this method without it.
    if (company.inn !== null && !INN_PATTERN.test(company.inn))
      throw validationError('inn', 'a taxpayer number has 10 or 12 digits');
    if (company.email !== null && !EMAIL_PATTERN.test(company.email))
      throw validationError('email', 'an email address of at most 64 characters');
    if (company.paymentAddress !== null && company.paymentAddress.length > 256)
      throw validationError('paymentAddress', 'at most 256 characters');
    const missing = missingCompanyDetail(body.service, company);
    if (missing !== undefined)
      throw validationError(
        missing,
        `${body.service} receipts need the organization's ${COMPANY_DETAIL_NAMES[missing]}`,
      );
    const row = await cashRegisterRepository.upsert(this.db, {
      organization_id: organization.id,
      client_id: organization.client_id,
      service: body.service,
      login: body.login,
      password: this.secrets.seal(body.password),
      base_url: providerBaseUrl(body.baseUrl),
      group_code: body.groupCode ?? null,
      inn: company.inn,
      company_email: company.email,
      payment_address: company.paymentAddress,
      taxation_system: company.taxationSystem,
    });
    return presentCashRegister(row);
  }

  /**
   * Creates the demo account when the database has no client yet (D1.5): a client, one organization, one user
   * and a READ and a WRITE token, written to `<dataDir>/demo-credentials.json`.
   * @returns the credentials, or undefined when the database already had a client
   */
  async seedDemoAccount(dataDir: string): Promise<DemoCredentials | undefined> {
    if (await clientRepository.any(this.db)) return undefined;
    const client = await this.createClient({ name: 'Demo seller' });
    const organization = await this.createOrganization(client.id, {
      name: 'Demo organization',
      inn: '7700000000',
    });
    const user = await this.createUser(client.id, { name: 'Demo user', lang: 'en', role: 'OWNER' });
    const read = await this.createToken(user.id, { access: 'READ', name: 'demo read' });
    const write = await this.createToken(user.id, { access: 'WRITE', name: 'demo write' });
    const credentials: DemoCredentials = {
      clientId: client.id,
      organizationId: organization.id,
      userId: user.id,
      readToken: read.token,
      writeToken: write.token,
    };
    await mkdir(dataDir, { recursive: true });
    await writeFile(
      path.join(dataDir, 'demo-credentials.json'),
      `${JSON.stringify(credentials, null, 2)}\n`,
      {
        mode: 0o600,
      },
    );
    return credentials;
  }

  private async requireClient(clientId: number) {
    const client = await clientRepository.findById(this.db, clientId);
    if (!client) throw notFound('client', clientId);
    return client;
  }

  private async requireOrganization(organizationId: number) {
    const organization = await organizationRepository.findById(this.db, organizationId);
    if (!organization) throw notFound('organization', organizationId);
    return organization;
  }
}

/**
 * A provider's `baseUrl` as stored: `http(s)` only, never a cloud metadata name, link-local or metadata address;
 * private addresses are allowed (P165). Absent = null (the configured default URL).
 * @throws AppError `error_validation` on field `baseUrl` naming the reason
 */
function providerBaseUrl(baseUrl: string | null | undefined): string | null {
  if (baseUrl === undefined || baseUrl === null) return null;
  try {
    assertProviderUrl(baseUrl);
  } catch (error) {
    if (error instanceof UnsafeTargetError) throw validationError('baseUrl', error.reason);
    throw error;
  }
  return baseUrl;
}

/** What the demo account seed prints once and stores in the data directory. */
export interface DemoCredentials {
  clientId: number;
  organizationId: number;
  userId: number;
  readToken: string;
  writeToken: string;
}
