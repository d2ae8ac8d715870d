/**
 * Factory of the campaign group (spec §4.6, D10): Market1 access (its HTTP client closed with the runtime) and
 * the routes under `/api/campaign`. The group's plugin registers the shared schemas (`Campaign`, `CampaignFilter`, and `TmsTask`
 * for the operations that answer a task) once, then each part of the group as a child plugin: campaign
 * operations, statistics, the XLSX export. Each part lists its task kinds in `tasks`.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Runtime } from '../../runtime.ts';
import type { ResourceGroup } from '../group.ts';
import type { TaskDefinition } from '../task/definition.ts';
import type { TaskService } from '../task/service.ts';
import { TmsTask } from '../task/schemas.ts';
import { Market1Access } from './market1-access.ts';
import { CampaignFilter } from './filter.ts';
import { exportRoutes } from './export.routes.ts';
import { CampaignExportService } from './export.service.ts';
import { campaignStatsFileTask } from './export-task.ts';
import { Campaign } from './schemas.ts';

/** Builds the campaign group over `runtime`; `tasks` creates the import, reload and export tasks. */
export function createCampaignGroup(runtime: Runtime, tasks: TaskService): ResourceGroup {
  const db = runtime.database.db;
  const access = new Market1Access(db, runtime.secrets, runtime.config);
  runtime.onClose(async () => access.close());
  const exportKind = campaignStatsFileTask(db);
  const exports = new CampaignExportService(runtime.changes, access, tasks, exportKind);
  const kinds: TaskDefinition<never>[] = [exportKind];
  const routes: FastifyPluginAsyncTypebox = async (app) => {
    app.addSchema(TmsTask);
    app.addSchema(Campaign);
    app.addSchema(CampaignFilter);
    await app.register(exportRoutes(exports));
  };
  return { name: 'campaign', scope: 'api', prefix: '/campaign', routes, tasks: kinds };
}
