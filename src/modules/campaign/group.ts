/**
 * Factory of the campaign group (spec §4.6, D10): Market1 access (its HTTP client closed with the runtime) and
 * the routes under `/api/campaign`. The group's plugin registers the shared schemas (`Campaign`, `CampaignFilter`,
 * and `TmsTask` for the operations that answer a task) once, then each part of the group as a child plugin:
 * campaign operations (with the import and reload tasks), statistics, the XLSX export (with its task).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Runtime } from '../../runtime.ts';
import type { ResourceGroup } from '../group.ts';
import type { TaskDefinition } from '../task/definition.ts';
import type { TaskService } from '../task/service.ts';
import { TmsTask } from '../task/schemas.ts';
import { campaignImportKinds } from './import.task.ts';
import { Market1Access } from './market1-access.ts';
import { CampaignFilter } from './filter.ts';
import { strictSchema } from '../../http/strict-input.ts';
import { CampaignOperations } from './operations.service.ts';
import { campaignOperationsRoutes } from './operations.routes.ts';
import { exportRoutes } from './export.routes.ts';
import { CampaignExportService } from './export.service.ts';
import { campaignStatsFileTask } from './export-task.ts';
import { Campaign } from './schemas.ts';
import { statisticsRoutes } from './statistics.routes.ts';
import { CampaignStatisticsService } from './statistics.service.ts';

/** Builds the campaign group over `runtime`; `tasks` creates the import, reload and export tasks. */
export function createCampaignGroup(runtime: Runtime, tasks: TaskService): ResourceGroup {
  const db = runtime.database.db;
  const access = new Market1Access(db, runtime.secrets, runtime.config);
  runtime.onClose(async () => access.close());
  const importKinds = campaignImportKinds(db, access);
  const operations = new CampaignOperations(db, runtime.changes, access, tasks, importKinds);
  const statistics = new CampaignStatisticsService(
    db,
    access,
    runtime.config.statisticsConcurrency,
    runtime.cursors,
  );
  const exportKind = campaignStatsFileTask(db);
  const exports = new CampaignExportService(runtime.changes, access, tasks, exportKind);
  const kinds = [importKinds.importKind, importKinds.reloadKind, exportKind] as TaskDefinition<never>[];
  const routes: FastifyPluginAsyncTypebox = async (app) => {
    app.addSchema(TmsTask);
    app.addSchema(Campaign);
    // The export's body references it: strict like the bodies themselves (P32).
    app.addSchema(strictSchema(CampaignFilter));
    await app.register(campaignOperationsRoutes(operations));
    await app.register(statisticsRoutes(statistics));
    await app.register(exportRoutes(exports));
  };
  return { name: 'campaign', scope: 'api', prefix: '/campaign', routes, tasks: kinds };
}
