/**
 * The statistics export operation (spec §4.6 `POST /api/campaign/stats/xlsx`, §7, D10.3, P115): checks every
 * organization the request names, validates the filter, and creates the `CAMPAIGN_STATS_FILE_TASK` in one
 * transaction. The file is written in the background (`export-task.ts`).
 */
import type { ChangeRunner } from '../../changes/change-runner.ts';
import type { Principal } from '../../http/auth.ts';
import type { TaskDefinition } from '../task/definition.ts';
import type { TaskService } from '../task/service.ts';
import type { TmsTask } from '../task/schemas.ts';
import type { ExportProperties } from './export-task.ts';
import type { CampaignStatExportRequest } from './export.schemas.ts';
import { resolveCampaignFilter, type DayRange } from './filter.ts';
import type { CheckedOrganization, Market1Access } from './market1-access.ts';

/** Starts statistics exports. */
export class CampaignExportService {
  constructor(
    private readonly changes: ChangeRunner,
    private readonly access: Market1Access,
    private readonly tasks: TaskService,
    private readonly kind: TaskDefinition<ExportProperties>,
  ) {}

  /**
   * Creates the export task of `request`. The organizations are `organizationId`, `organizationIds` and
   * `filter.organizationIds` together (the first one named is the task's organization); the service is `service`
   * or `filter.service`. Checks run in the order of spec §7 for each organization (analytics: SUPPORT refused).
   * @throws AppError `error_no_marketplace`, `error_unsupported_service`, `error_no_organization`,
   *   `error_user_does_not_have_this_organization`, `error_analytics_access_denied`, `error_subscription_expired`;
   *   `error_validation` for a malformed filter (dates, `status` values, `dateFrom` after `dateTo`)
   */
  async export(principal: Principal, request: CampaignStatExportRequest): Promise<TmsTask> {
    const filter = request.filter ?? {};
    const service = request.service ?? filter.service;
    const named = [
      ...(request.organizationId === undefined ? [] : [request.organizationId]),
      ...(request.organizationIds ?? []),
      ...(filter.organizationIds ?? []),
    ];
    const organizationIds = [...new Set(named)];
    const checked: CheckedOrganization[] = [];
    for (const organizationId of organizationIds.length > 0 ? organizationIds : [undefined])
      checked.push(
        await this.access.check(principal, {
          organizationId,
          service,
          analytics: true,
          paid: true,
          organizationMissingCode: 'error_user_does_not_have_this_organization',
        }),
      );
    const properties: ExportProperties = {
      filter: { ...filter, service: checked[0]!.service },
      organizationIds,
    };
    const resolved = resolveCampaignFilter(
      properties.filter,
      { clientId: principal.clientId, organizationIds },
      'filter.',
    );
    return this.changes.run((trx) =>
      this.tasks.create(trx, principal, this.kind, {
        organizationId: checked[0]!.organizationId,
        service: checked[0]!.service,
        name: `Campaign statistics, ${daysOf(resolved.days)}`,
        properties,
      }),
    );
  }
}

/** The days of a task's name: `2026-01-01..2026-01-31`, `from 2026-01-01`, `to 2026-01-31` or `all days`. */
function daysOf({ from, to }: DayRange): string {
  if (from !== undefined && to !== undefined) return `${from}..${to}`;
  if (from !== undefined) return `from ${from}`;
  return to === undefined ? 'all days' : `to ${to}`;
}
