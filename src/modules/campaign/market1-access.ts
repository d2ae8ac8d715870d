/**
 * The checks every campaign operation makes before it reads or changes anything (spec §7, D1.3, D2.4, D10.1), and
 * the Market1 connector of an organization. One place, so each operation answers the same code in the same
 * situation:
 *
 * - `service` missing → `error_no_marketplace`; a service other than Market1 (`SERVICE_01`) →
 *   `error_unsupported_service` (or the code the operation names, e.g. `error_service_not_supported` on create);
 * - `organizationId` missing → `error_no_organization`; an organization that does not exist or belongs to another
 *   client → `error_organization_not_found` (or `error_user_does_not_have_this_organization` where the spec names
 *   it: the statistics export);
 * - the client's subscription in the past → `error_subscription_expired`, on the paid operations only: those the
 *   spec lists with that code (campaign status, statistics export, campaign create, subjects lookup; D1.3);
 * - a SUPPORT user on analytics (statistics export, campaign import) → `error_analytics_access_denied` (D2.4);
 * - no prepared integration of the organization for Market1 → `error_prepared_integration_not_found`.
 */
import type { Kysely } from 'kysely';
import type { Config } from '../../config.ts';
import type { DB } from '../../db/schema.ts';
import type { Principal } from '../../http/auth.ts';
import { AppError } from '../../http/errors.ts';
import type { ErrorCode } from '../../http/error-catalog.ts';
import type { SecretBox } from '../../security/secret-box.ts';
import { findPreparedIntegration } from '../accounts/credentials.ts';
import { Market1Client, market1AccountOf, type Market1RetryPolicy } from '../../connectors/market1/client.ts';
import type { Market1Connector } from '../../connectors/market1/connector.ts';

/** Market1's service code (D10.1). */
export const MARKET1_SERVICE = 'SERVICE_01';

/** What an operation asks for; absent values are checked in the order of the module comment. */
export interface Market1AccessRequest {
  organizationId: number | undefined;
  service: string | undefined;
  /** The operation is analytics (statistics export, campaign import): refused to SUPPORT users (D2.4). */
  analytics?: boolean;
  /**
   * The operation is paid (spec §7 lists it with `error_subscription_expired`): refused once the client's
   * subscription has ended.
   */
  paid?: boolean;
  /** Code for an organization the client does not have (default `error_organization_not_found`). */
  organizationMissingCode?: ErrorCode;
  /** Code for a service other than Market1 (default `error_unsupported_service`). */
  unsupportedServiceCode?: ErrorCode;
}

/** An organization of the caller's client that passed the checks. */
export interface CheckedOrganization {
  clientId: number;
  organizationId: number;
  organizationName: string;
  service: typeof MARKET1_SERVICE;
}

/** How long a found organization is remembered (P152). */
const ORGANIZATION_CACHE_TTL_MS = 60_000;
const ORGANIZATION_CACHE_MAX_ENTRIES = 10_000;

/** Checks access to an organization's Market1 data and opens its connectors (one HTTP pool per process). */
export class Market1Access {
  /** The process's Market1 client; close it on shutdown (`close`). */
  readonly client: Market1Client;
  /** `clientId:organizationId` → the organization's name, for organizations found to be the client's. */
  private readonly organizations = new Map<string, { name: string; expiresAt: number }>();

  constructor(
    private readonly db: Kysely<DB>,
    private readonly secrets: SecretBox,
    private readonly config: Pick<Config, 'market1ApiUrl'>,
    client?: Market1Client,
  ) {
    this.client = client ?? new Market1Client();
  }

  /**
   * Checks that `principal` may use the Market1 data of the organization (no marketplace call). The subscription
   * is the principal's (read with its token, P152); the organization is looked up once a minute at most.
   * @throws AppError with the codes of the module comment
   */
  async check(principal: Principal, request: Market1AccessRequest): Promise<CheckedOrganization> {
    if (request.service === undefined || request.service === '') throw new AppError('error_no_marketplace');
    if (request.service !== MARKET1_SERVICE)
      throw new AppError(request.unsupportedServiceCode ?? 'error_unsupported_service', {
        service: request.service,
      });
    const organizationId = request.organizationId;
    if (organizationId === undefined) throw new AppError('error_no_organization');
    const organizationName = await this.organizationName(principal.clientId, organizationId);
    if (organizationName === undefined)
      throw new AppError(request.organizationMissingCode ?? 'error_organization_not_found', {
        organizationId,
      });
    if (request.analytics && principal.role === 'SUPPORT')
      throw new AppError('error_analytics_access_denied');
    const subscriptionEnd = principal.subscriptionExpiresAt;
    if (request.paid && subscriptionEnd && subscriptionEnd.getTime() < Date.now())
      throw new AppError('error_subscription_expired');
    return { clientId: principal.clientId, organizationId, organizationName, service: MARKET1_SERVICE };
  }

  /**
   * The name of organization `organizationId` when it is client `clientId`'s, else undefined. Found ones are
   * remembered for `ORGANIZATION_CACHE_TTL_MS` (P152): no operation renames, moves or deletes an organization,
   * so an entry cannot go stale; one that is not found is looked up again on every request.
   */
  private async organizationName(clientId: number, organizationId: number): Promise<string | undefined> {
    const key = `${clientId}:${organizationId}`;
    const now = Date.now();
    const cached = this.organizations.get(key);
    if (cached && cached.expiresAt > now) return cached.name;
    const found = await this.db
      .selectFrom('organization')
      .select('name')
      .where('id', '=', organizationId)
      .where('client_id', '=', clientId)
      .executeTakeFirst();
    if (!found) return undefined;
    if (this.organizations.size >= ORGANIZATION_CACHE_MAX_ENTRIES) this.organizations.clear();
    this.organizations.set(key, { name: found.name, expiresAt: now + ORGANIZATION_CACHE_TTL_MS });
    return found.name;
  }

  /**
   * The Market1 connector of a checked organization, acting with its prepared integration's key at its
   * `baseUrl` or `MARKET1_API_URL` (D10.1). `retry` tightens the waits for interactive requests.
   * @throws AppError `error_prepared_integration_not_found`; `error_market1_unavailable` when no URL is known
   */
  async connector(
    organization: Pick<CheckedOrganization, 'clientId' | 'organizationId'>,
    retry: Partial<Market1RetryPolicy> = {},
  ): Promise<Market1Connector> {
    const integration = await findPreparedIntegration(
      this.db,
      this.secrets,
      organization.clientId,
      organization.organizationId,
      MARKET1_SERVICE,
    );
    if (!integration)
      throw new AppError('error_prepared_integration_not_found', {
        organizationId: organization.organizationId,
      });
    if (!integration.baseUrl && !this.config.market1ApiUrl)
      throw new AppError('error_market1_unavailable', { reason: 'not_configured' });
    return this.client.forAccount(market1AccountOf(integration, this.config), retry);
  }

  /** Closes the client's idle connections. */
  close(): void {
    this.client.close();
  }
}
