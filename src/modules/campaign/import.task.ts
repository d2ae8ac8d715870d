/**
 * The campaign import and the statistics reload as background tasks (spec §4.6, D10.3; P101–P104):
 *
 * - `CAMPAIGN_IMPORT_TASK` (`GET /api/campaign/updateCampaigns`): the organization's campaign list, the details of
 *   the campaigns that are new or changed since the last import, then the daily statistics of the import window
 *   (P102) for the campaigns that can have statistics;
 * - `CAMPAIGN_STATS_RELOAD_TASK` (`GET /api/campaign/reloadCampaignStats`): the same campaign step, then the
 *   statistics of the given days — every counter, or only `expenses` (`isExpensesOnly`).
 *
 * Each step (a campaign list, 50 campaign details, 50 campaigns × 31 days of statistics) is one marketplace
 * request, then one transaction, then the progress and the cancellation check; a rerun writes the same rows
 * (upserts by marketplace id; statistics replaced per range), so a retried or resumed task is safe (P103).
 * Marketplace failures (P104): a refused key and another 4xx end the task in ERROR with the error model's message
 * (`error_token_expired_or_revoked`, `error_market1_api`); 429s are waited by the connector; a 5xx or no answer
 * is retried as the task's next attempt, and the last attempt ends in ERROR `error_market1_unavailable`.
 */
import { sql, type Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import type { CampaignStatus, Market1Connector } from '../../connectors/market1/connector.ts';
import { MARKET1_LIMITS } from '../../connectors/market1/protocol.ts';
import {
  Market1Error,
  Market1RateLimitError,
  Market1UnavailableError,
  toAppError,
} from '../../connectors/market1/errors.ts';
import { defineTask, type TaskContext, type TaskDefinition } from '../task/definition.ts';
import { MARKET1_SERVICE, type Market1Access } from './market1-access.ts';
import { campaignRepository, statisticRepository, type CampaignOwner } from './repository.ts';

/** Task type of the campaign import (TmsTask `type`). */
export const CAMPAIGN_IMPORT_TASK = 'CAMPAIGN_IMPORT_TASK';
/** Task type of the statistics reload (TmsTask `type`). */
export const CAMPAIGN_STATS_RELOAD_TASK = 'CAMPAIGN_STATS_RELOAD_TASK';

/** What an import or reload task reads (its TmsTask `properties`, fixed at creation so a rerun reads the same). */
export interface StatisticsImportProperties {
  /** First day, `YYYY-MM-DD` (the marketplace's calendar day). */
  dateFrom: string;
  /** Last day, inclusive. */
  dateTo: string;
  /** Write only `expenses` (reload with `isExpensesOnly=true`). */
  expensesOnly: boolean;
}

/** Statuses in which a Market1 campaign has statistics (it has shown at least once; docs/market1.md). */
const STATUSES_WITH_STATISTICS: ReadonlySet<CampaignStatus> = new Set(['ACTIVE', 'PAUSED', 'FINISHED']);
/** Campaign details per request (the marketplace's limit). */
const DETAILS_BATCH = MARKET1_LIMITS.campaignIdsPerDetailsRequest;
/** Campaigns per statistics request (the marketplace's limit). */
const STATISTICS_CAMPAIGNS = MARKET1_LIMITS.campaignsPerStatisticsRequest;
/** Days per statistics request (the marketplace's limit). */
const STATISTICS_DAYS = MARKET1_LIMITS.daysPerStatisticsInterval;
const DAY_MS = 86_400_000;

/** Share of the progress bar taken by the campaign step; the statistics take the rest. */
const CAMPAIGN_STEP_PERCENT = 30;

/** Splits `items` into slices of `size`. */
function slices<T>(items: readonly T[], size: number): T[][] {
  const result: T[][] = [];
  for (let start = 0; start < items.length; start += size) result.push(items.slice(start, start + size));
  return result;
}

/** `YYYY-MM-DD` + `days`. */
export const addDays = (day: string, days: number): string =>
  new Date(Date.parse(`${day}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);

/** `dateFrom..dateTo` cut into intervals of at most 31 days. */
function intervals(dateFrom: string, dateTo: string): Array<{ dateFrom: string; dateTo: string }> {
  const result = [];
  for (let start = dateFrom; start <= dateTo; start = addDays(start, STATISTICS_DAYS)) {
    const end = addDays(start, STATISTICS_DAYS - 1);
    result.push({ dateFrom: start, dateTo: end < dateTo ? end : dateTo });
  }
  return result;
}

/** Serializes statistics writes of one organization (two imports at once must not interleave their ranges). */
const lockOrganization = (trx: Kysely<DB>, organizationId: number) =>
  sql`select pg_advisory_xact_lock(hashtext('campaign_statistic_day'), ${organizationId}::int)`.execute(trx);

/** One run of an import or reload: the steps of the module comment. */
class StatisticsImport {
  private processed = 0;

  constructor(
    private readonly db: Kysely<DB>,
    private readonly market1: Market1Connector,
    private readonly owner: CampaignOwner,
    private readonly context: TaskContext<StatisticsImportProperties>,
  ) {}

  async run(): Promise<void> {
    const { properties } = this.context;
    const campaigns = await this.importCampaigns();
    const withStatistics = campaigns.filter((campaign) => STATUSES_WITH_STATISTICS.has(campaign.status));
    const steps = slices(withStatistics, STATISTICS_CAMPAIGNS).flatMap((group) =>
      intervals(properties.dateFrom, properties.dateTo).map((interval) => ({ group, ...interval })),
    );
    for (const [index, step] of steps.entries()) {
      await this.context.checkCancelled();
      const rows = await this.market1.getDailyStatistics({
        externalIds: step.group.map((campaign) => campaign.externalId),
        dateFrom: step.dateFrom,
        dateTo: step.dateTo,
      });
      const target = {
        clientId: this.owner.clientId,
        organizationId: this.owner.organizationId,
        campaignIdOf: new Map(step.group.map((campaign) => [campaign.externalId, campaign.id])),
      };
      const ids = step.group.map((campaign) => campaign.id);
      this.processed += await this.db.transaction().execute(async (trx) => {
        await lockOrganization(trx, this.owner.organizationId);
        const written = properties.expensesOnly
          ? await statisticRepository.upsertExpenses(trx, target, rows)
          : await statisticRepository.replaceRange(trx, target, ids, step.dateFrom, step.dateTo, rows);
        await campaignRepository.markStatisticsImported(trx, this.owner.clientId, ids, new Date());
        return written;
      });
      await this.context.progress(
        CAMPAIGN_STEP_PERCENT + ((index + 1) / steps.length) * (100 - CAMPAIGN_STEP_PERCENT),
        this.processed,
      );
    }
  }

  /**
   * The campaign step: the list, then the details of new and changed campaigns (by `changeDate`).
   * @returns every campaign of the list with our id and its current status
   */
  private async importCampaigns(): Promise<
    Array<{ id: number; externalId: number; status: CampaignStatus }>
  > {
    await this.context.checkCancelled();
    const refs = await this.market1.listCampaignRefs();
    const stored = new Map(
      (await campaignRepository.refsOf(this.db, this.owner)).map((row) => [row.external_id, row]),
    );
    const changed = refs.filter((ref) => {
      const row = stored.get(ref.externalId);
      return row === undefined || row.change_date?.getTime() !== Date.parse(ref.changeDate);
    });
    const batches = slices(
      changed.map((ref) => ref.externalId),
      DETAILS_BATCH,
    );
    await this.context.progress(batches.length === 0 ? CAMPAIGN_STEP_PERCENT : 5);
    for (const [index, batch] of batches.entries()) {
      await this.context.checkCancelled();
      const details = await this.market1.getCampaigns(batch);
      const rows = await this.db
        .transaction()
        .execute((trx) => campaignRepository.upsert(trx, this.owner, details));
      for (const row of rows) stored.set(row.external_id, row);
      this.processed += rows.length;
      await this.context.progress(
        5 + ((index + 1) / batches.length) * (CAMPAIGN_STEP_PERCENT - 5),
        this.processed,
      );
    }
    return refs.flatMap((ref) => {
      const row = stored.get(ref.externalId);
      return row ? [{ id: row.id, externalId: ref.externalId, status: ref.status }] : [];
    });
  }
}

/** The two task kinds over the group's Market1 access. */
export interface CampaignImportKinds {
  importKind: TaskDefinition<StatisticsImportProperties>;
  reloadKind: TaskDefinition<StatisticsImportProperties>;
}

/** Runs of a task: 3 in all, 5 s then 10 s apart (a marketplace outage is usually short). */
const ATTEMPTS = 3;

/**
 * Builds the import and reload kinds (see the module comment).
 * @param db the runtime's database
 * @param access opens the task organization's connector (its prepared integration, D10.1)
 */
export function campaignImportKinds(db: Kysely<DB>, access: Market1Access): CampaignImportKinds {
  const perform = async (context: TaskContext<StatisticsImportProperties>): Promise<void> => {
    const { task } = context;
    if (task.organizationId === null) throw new Error(`task ${task.id} has no organization`);
    const owner = { clientId: task.clientId, organizationId: task.organizationId, service: MARKET1_SERVICE };
    const market1 = await access.connector(owner);
    try {
      await new StatisticsImport(db, market1, owner, context).run();
    } catch (error) {
      if (!(error instanceof Market1Error)) throw error;
      const transient = error instanceof Market1UnavailableError || error instanceof Market1RateLimitError;
      // A transient failure is retried while runs remain; the last one, and any other refusal, ends in ERROR.
      if (transient && task.retryNumber + 1 < ATTEMPTS) throw error;
      throw toAppError(error);
    }
  };
  return {
    importKind: defineTask<StatisticsImportProperties>({
      type: CAMPAIGN_IMPORT_TASK,
      attempts: ATTEMPTS,
      backoffSeconds: 5,
      perform,
    }),
    reloadKind: defineTask<StatisticsImportProperties>({
      type: CAMPAIGN_STATS_RELOAD_TASK,
      attempts: ATTEMPTS,
      backoffSeconds: 5,
      perform,
    }),
  };
}
