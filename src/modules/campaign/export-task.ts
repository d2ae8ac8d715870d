/**
 * The task kind `CAMPAIGN_STATS_FILE_TASK` (spec §2 TmsTask, D10.3, P115–P117): writes the statistics workbook of
 * a filter into the task's file, `campaign-stats-<first day>-<last day>.xlsx`. The rows are read in one
 * repeatable-read, read-only transaction, so the count behind the progress, the rows and the totals agree even
 * while an import writes; the workbook streams into storage as the pages come (`stats-workbook.ts`). Progress and
 * `processedQuantity` move once per page, and each page starts with the cancellation check. Rerunning rewrites
 * the file (idempotent).
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { defineTask, type TaskDefinition } from '../task/definition.ts';
import { exportExtent, pagesOfExportRows } from './export-rows.ts';
import { resolveCampaignFilter, type CampaignFilter } from './filter.ts';
import type { FilterSetting } from './stats-workbook.ts';

/** The TmsTask `type` of the export (spec §2). */
export const EXPORT_TASK_TYPE = 'CAMPAIGN_STATS_FILE_TASK';

/** `properties` of an export task: the filter as the request gave it (service set) and the checked organizations. */
export interface ExportProperties {
  filter: CampaignFilter;
  organizationIds: number[];
}

/** Filter fields that shape a page, not the rows: an export has every row, in its own order (P117). */
const PAGING_FIELDS = new Set(['limit', 'page', 'count', 'offset', 'sortBy', 'ascending', 'organizationIds']);

/** The "Filter" sheet: organizations, service, the day range, every other criterion given, rows, time. */
function filterSettings(
  filter: CampaignFilter,
  organizationNames: string[],
  days: { from: string | null; to: string | null },
  rows: number,
): FilterSetting[] {
  const settings: FilterSetting[] = [
    { name: 'organizations', value: organizationNames.join('; ') },
    { name: 'service', value: filter.service ?? '' },
    { name: 'dateFrom', value: days.from ?? '' },
    { name: 'dateTo', value: days.to ?? '' },
  ];
  for (const [name, value] of Object.entries(filter))
    if (!PAGING_FIELDS.has(name) && !['service', 'dateFrom', 'dateTo'].includes(name) && value !== undefined)
      settings.push({ name, value: typeof value === 'number' ? value : String(value) });
  settings.push({ name: 'rows', value: rows }, { name: 'exportedAt (UTC)', value: new Date() });
  return settings;
}

/** Defines the export kind over the service's database. */
export function campaignStatsFileTask(db: Kysely<DB>): TaskDefinition<ExportProperties> {
  return defineTask<ExportProperties>({
    type: EXPORT_TASK_TYPE,
    attempts: 3,
    backoffSeconds: 10,
    timeoutSeconds: 1800,
    async perform({ task, properties, progress, checkCancelled, writeFile }) {
      const filter = resolveCampaignFilter(properties.filter, {
        clientId: task.clientId,
        organizationIds: properties.organizationIds,
      });
      await db
        .transaction()
        .setIsolationLevel('repeatable read')
        .setAccessMode('read only')
        .execute(async (trx) => {
          const organizations = await trx
            .selectFrom('organization')
            .select(['id', 'name'])
            .where('client_id', '=', task.clientId)
            .where('id', 'in', filter.organizationIds)
            .orderBy('id')
            .execute();
          const names = new Map(organizations.map((organization) => [organization.id, organization.name]));
          const extent = await exportExtent(trx, filter);
          const from = filter.days.from ?? extent.firstDay;
          const to = filter.days.to ?? extent.lastDay;
          const fileName = from && to ? `campaign-stats-${from}-${to}.xlsx` : 'campaign-stats.xlsx';
          // The XLSX writer (exceljs) is loaded by the first export, not by every process at start.
          const { StatsWorkbookWriter, XLSX_CONTENT_TYPE } = await import('./stats-workbook.ts');
          await writeFile({ fileName, contentType: XLSX_CONTENT_TYPE }, async (stream) => {
            const workbook = new StatsWorkbookWriter(stream, task.lang);
            for await (const page of pagesOfExportRows(trx, filter, names)) {
              await checkCancelled();
              for (const row of page) workbook.addRow(row);
              await workbook.drained();
              // At most 99 until the file is stored: FINISHED sets 100.
              await progress((workbook.rowCount / Math.max(extent.rows, 1)) * 99, workbook.rowCount);
            }
            await workbook.finish(
              filterSettings(properties.filter, [...names.values()], { from, to }, workbook.rowCount),
            );
          });
        });
    },
  });
}
