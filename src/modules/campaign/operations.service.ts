/**
 * The campaign operations of spec §4.6 (D10; P100–P109): the import and the statistics reload (background tasks,
 * `import.task.ts`), a status change, a create, the subject lookup and the advertising balance. Every operation
 * first makes the access checks of spec §7 (`Market1Access.check`); changes on the marketplace come first and
 * are stored only once the marketplace accepted them, in one transaction (P105). Marketplace failures become the
 * error model through `toAppError` (D10.1): 401/403 → `error_token_expired_or_revoked`, another 4xx →
 * `error_market1_api` `{message}`, throttling and outages → 503 `error_market1_unavailable`.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import type { ChangeRunner } from '../../changes/change-runner.ts';
import type { Principal } from '../../http/auth.ts';
import { notFound, validationError } from '../../http/errors.ts';
import type { Market1RetryPolicy } from '../../connectors/market1/client.ts';
import type {
  CampaignStatus,
  Market1CampaignCreate,
  Market1Connector,
  Market1Subject,
} from '../../connectors/market1/connector.ts';
import { Market1Error, toAppError } from '../../connectors/market1/errors.ts';
import { MARKET1_LIMITS, marketplaceDay } from '../../connectors/market1/protocol.ts';
import type { TaskService } from '../task/service.ts';
import type { TmsTask } from '../task/schemas.ts';
import { addDays, type CampaignImportKinds, type StatisticsImportProperties } from './import.task.ts';
import { MARKET1_SERVICE, type CheckedOrganization, type Market1Access } from './market1-access.ts';
import type {
  CampaignBalance,
  CampaignBalanceQuery,
  CampaignCreateBody,
  Market1SubjectsQuery,
  Market1Type,
  ReloadCampaignStatsQuery,
  UpdateCampaignsQuery,
  UpdateStatusCampaignQuery,
} from './operations.schemas.ts';
import { presentCampaign } from './presenter.ts';
import { campaignRepository } from './repository.ts';
import type { Campaign } from './schemas.ts';
import { trimText } from '../../domain/text.ts';

/** Days of statistics the first import reads, today included (P102). */
export const FIRST_IMPORT_DAYS = 30;
/** Days before the last import that a later import reads again: the marketplace revises recent days (P102). */
export const REVISED_DAYS = 3;
/** Longest reload range, in days (P106). */
export const MAX_RELOAD_DAYS = 366;

/** Retries of a request being served: short, so the integrator gets an answer within seconds (P105). */
const INTERACTIVE_RETRY: Partial<Market1RetryPolicy> = {
  rateLimitRetries: 2,
  maxRetryAfterSeconds: 5,
  maxTotalMs: 10_000,
};

/** What a status change asks of the marketplace, and the status the campaign then has there (P105). */
const STATUS_CHANGES: Partial<
  Record<
    CampaignStatus,
    { change: 'startCampaign' | 'pauseCampaign' | 'stopCampaign'; result: CampaignStatus }
  >
> = {
  ACTIVE: { change: 'startCampaign', result: 'ACTIVE' },
  PAUSED: { change: 'pauseCampaign', result: 'PAUSED' },
  FINISHED: { change: 'stopCampaign', result: 'FINISHED' },
  CANCELLED: { change: 'stopCampaign', result: 'FINISHED' },
};

/** Products per created campaign (the marketplace's limit). */
const MAX_PRODUCTS = MARKET1_LIMITS.productsPerCampaign;

/** Runs a marketplace call, turning connector errors into the error model. */
async function onMarket1<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof Market1Error) throw toAppError(error);
    throw error;
  }
}

/** Today as the marketplace's calendar day (Moscow), `YYYY-MM-DD`: its statistics days (P102). */
const today = () => marketplaceDay(Date.now());

/** Whether `day` (`YYYY-MM-DD`) is a real calendar day. */
const isDay = (day: string) => {
  const time = Date.parse(`${day}T00:00:00Z`);
  return Number.isFinite(time) && new Date(time).toISOString().slice(0, 10) === day;
};

/** Spec §2 `Market1Type` of a marketplace subject; commissions the tariff report lacks are left out. */
function presentSubject(subject: Market1Subject): Market1Type {
  const commissions = {
    commission: subject.fbwCommission,
    fbwCommission: subject.fbwCommission,
    fbsCommission: subject.fbsCommission,
    dbsCommission: subject.dbsCommission,
    edbsCommission: subject.edbsCommission,
    cAndCCommission: subject.cAndCCommission,
    candCCommission: subject.cAndCCommission,
    bookingCommission: subject.bookingCommission,
  };
  const result: Market1Type = {
    id: subject.id,
    market1Id: subject.id,
    parentId: subject.parentId,
    name: subject.name,
    hasParent: true,
  };
  for (const [name, value] of Object.entries(commissions))
    if (value !== null) Object.assign(result, { [name]: value });
  return result;
}

/**
 * The marketplace request of a create body (P107, P177).
 * @throws 400 `error_validation` on `type`, `name`, `nms` or `categoryId`
 */
function createRequest(body: CampaignCreateBody): Market1CampaignCreate {
  if (body.type === undefined) throw validationError('type', 'required');
  if (body.type !== 'AUTO' && body.type !== 'IN_SEARCH_AND_CATALOG')
    throw validationError(
      'type',
      'the marketplace creates only AUTO (unified bid) and IN_SEARCH_AND_CATALOG (manual bid) campaigns',
    );
  const name = trimText(body.name ?? body.campaignName ?? '');
  if (name === '') throw validationError('name', 'required');
  const products =
    body.nms !== undefined
      ? [...new Set(body.nms.split(',').map(Number))]
      : body.externalProductId !== undefined
        ? [body.externalProductId]
        : [];
  if (products.length === 0) throw validationError('nms', 'required');
  if (products.some((id) => !Number.isSafeInteger(id) || id === 0))
    throw validationError('nms', 'not a product id');
  if (products.length > MAX_PRODUCTS) throw validationError('nms', `at most ${MAX_PRODUCTS} products`);
  if (body.type === 'IN_SEARCH_AND_CATALOG')
    return { type: 'IN_SEARCH_AND_CATALOG', name, externalProductIds: products };
  if (body.categoryId === undefined) throw validationError('categoryId', 'required for AUTO');
  // `sum`, `writeOffType` and `onPause` are not applied: a new campaign stays READY without a budget (P177).
  return { type: 'AUTO', name, subjectId: body.categoryId, externalProductIds: products };
}

/** Operations of the campaign group (operations part). */
export class CampaignOperations {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly changes: ChangeRunner,
    private readonly access: Market1Access,
    private readonly tasks: TaskService,
    private readonly kinds: CampaignImportKinds,
  ) {}

  /**
   * Starts the import of the organization's campaigns and recent statistics (P101, P102).
   * @returns the CREATED task (`CAMPAIGN_IMPORT_TASK`)
   * @throws 400 the codes of `Market1Access.check` (analytics: SUPPORT refused), `error_prepared_integration_not_found`
   */
  async updateCampaigns(principal: Principal, query: UpdateCampaignsQuery): Promise<TmsTask> {
    const organization = await this.checkWithIntegration(principal, query.organizationId, query.service);
    const last = await campaignRepository.lastStatisticsImport(this.db, {
      ...organization,
      service: MARKET1_SERVICE,
    });
    const dateTo = today();
    const earliest = addDays(dateTo, 1 - FIRST_IMPORT_DAYS);
    const revised = last === null ? earliest : addDays(marketplaceDay(last.getTime()), -REVISED_DAYS);
    const properties = { dateFrom: revised > earliest ? revised : earliest, dateTo, expensesOnly: false };
    return this.startTask(principal, organization, this.kinds.importKind, 'Campaign import', properties);
  }

  /**
   * Starts the reload of the statistics of `dateFrom..dateTo` (P106); the task is found with
   * `/api/task/findTask?type=CAMPAIGN_STATS_RELOAD_TASK`.
   * @throws 400 `error_validation` on `dateFrom` (not a day) or `dateTo` (not a day, before `dateFrom`, more
   *   than 366 days after it); the codes of `updateCampaigns`
   */
  async reloadCampaignStats(principal: Principal, query: ReloadCampaignStatsQuery): Promise<void> {
    if (!isDay(query.dateFrom)) throw validationError('dateFrom', 'not a calendar day');
    if (!isDay(query.dateTo)) throw validationError('dateTo', 'not a calendar day');
    if (query.dateTo < query.dateFrom) throw validationError('dateTo', 'before dateFrom');
    if (addDays(query.dateFrom, MAX_RELOAD_DAYS - 1) < query.dateTo)
      throw validationError('dateTo', `at most ${MAX_RELOAD_DAYS} days from dateFrom`);
    const organization = await this.checkWithIntegration(principal, query.organizationId, query.service);
    const properties = {
      dateFrom: query.dateFrom,
      dateTo: query.dateTo,
      expensesOnly: query.isExpensesOnly ?? false,
    };
    const name = `Campaign statistics reload ${query.dateFrom}..${query.dateTo}${properties.expensesOnly ? ' (expenses)' : ''}`;
    await this.startTask(principal, organization, this.kinds.reloadKind, name, properties);
  }

  /**
   * Starts, pauses or stops a campaign on the marketplace, then stores its new status (P105).
   * @throws 400 `error_validation` on `status` other than ACTIVE, PAUSED, FINISHED, CANCELLED; the codes of
   *   `Market1Access.check`; 404 `error_not_found` `{entity: 'campaign'}` for a campaign of another organization
   *   or client; `error_prepared_integration_not_found`; the marketplace's errors
   */
  async updateStatus(principal: Principal, query: UpdateStatusCampaignQuery): Promise<void> {
    const change = STATUS_CHANGES[query.status];
    if (!change) throw validationError('status', 'only ACTIVE, PAUSED, FINISHED or CANCELLED can be set');
    const organization = await this.access.check(principal, {
      organizationId: query.organizationId,
      service: MARKET1_SERVICE,
      paid: true,
    });
    const campaign = await campaignRepository.findOfClient(this.db, principal.clientId, query.campaignId);
    if (!campaign || campaign.organization_id !== organization.organizationId)
      throw notFound('campaign', query.campaignId);
    const market1 = await this.market1(organization);
    await onMarket1(() => market1[change.change](campaign.external_id));
    await this.changes.run((trx) => campaignRepository.setStatus(trx, campaign, change.result));
  }

  /**
   * Creates a campaign on the marketplace, then stores it (P107).
   * @returns the stored campaign
   * @throws 400 `error_service_not_supported` for a `service` other than Market1; `error_validation` (see
   *   `createRequest`); the codes of `Market1Access.check`; the marketplace's errors (503
   *   `error_market1_unavailable` after a 5xx: the campaign may exist, import before creating it again)
   */
  async create(
    principal: Principal,
    organizationId: number | undefined,
    body: CampaignCreateBody,
  ): Promise<Campaign> {
    const organization = await this.access.check(principal, {
      organizationId,
      service: body.service ?? MARKET1_SERVICE,
      unsupportedServiceCode: 'error_service_not_supported',
      paid: true,
    });
    const request = createRequest(body);
    const market1 = await this.market1(organization);
    const created = await onMarket1(() => market1.createCampaign(request));
    const [row] = await this.changes.run((trx) =>
      campaignRepository.upsert(trx, { ...organization, service: MARKET1_SERVICE }, [created]),
    );
    return presentCampaign(row!);
  }

  /**
   * The marketplace's subjects whose name contains `query`, at most `limit` (spec §2 Market1Type).
   * @throws the codes of `Market1Access.check`; `error_prepared_integration_not_found`; the marketplace's errors
   */
  async subjects(principal: Principal, query: Market1SubjectsQuery): Promise<Market1Type[]> {
    const organization = await this.access.check(principal, {
      organizationId: query.organizationId,
      service: MARKET1_SERVICE,
      paid: true,
    });
    const market1 = await this.market1(organization);
    const subjects = await onMarket1(() => market1.searchSubjects(query.query, query.limit));
    return subjects.map(presentSubject);
  }

  /**
   * The advertising account's money (D10.2), whole roubles.
   * @throws the codes of `Market1Access.check`; `error_prepared_integration_not_found`; the marketplace's errors
   */
  async balance(principal: Principal, query: CampaignBalanceQuery): Promise<CampaignBalance> {
    const organization = await this.access.check(principal, {
      organizationId: query.organizationId,
      service: query.service,
    });
    const market1 = await this.market1(organization);
    return onMarket1(() => market1.getBalance());
  }

  /** The organization's connector with the retries of a request being served. */
  private market1(organization: CheckedOrganization): Promise<Market1Connector> {
    return this.access.connector(organization, INTERACTIVE_RETRY);
  }

  /** The checks of an import (analytics), and that the organization has its Market1 integration (P101). */
  private async checkWithIntegration(
    principal: Principal,
    organizationId: number | undefined,
    service: string | undefined,
  ): Promise<CheckedOrganization> {
    const organization = await this.access.check(principal, { organizationId, service, analytics: true });
    await this.market1(organization);
    return organization;
  }

  /** Creates a task of `kind` for the organization in its own transaction. */
  private startTask(
    principal: Principal,
    organization: CheckedOrganization,
    kind: CampaignImportKinds['importKind'],
    name: string,
    properties: StatisticsImportProperties,
  ): Promise<TmsTask> {
    return this.changes.run((trx) =>
      this.tasks.create(trx, principal, kind, {
        organizationId: organization.organizationId,
        service: MARKET1_SERVICE,
        name,
        properties,
      }),
    );
  }
}
