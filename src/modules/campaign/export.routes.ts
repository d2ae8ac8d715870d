/**
 * The XLSX export of the campaign group (spec §4.6, D10.3, P115): `POST /api/campaign/stats/xlsx` (write access)
 * answers the `CAMPAIGN_STATS_FILE_TASK` at once; its file is downloaded from the finished task's `url`.
 */
import type { FastifyPluginCallbackTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { errorResponses } from '../../http/schemas.ts';
import type { CampaignExportService } from './export.service.ts';
import { CampaignStatExportRequest } from './export.schemas.ts';

/** The export route over its service. */
export const exportRoutes =
  (exports: CampaignExportService): FastifyPluginCallbackTypebox =>
  (app, _options, done) => {
    app.post(
      '/stats/xlsx',
      {
        schema: {
          tags: ['campaign'],
          summary:
            'Export campaign statistics to XLSX in the background; answers the task (download: its url)',
          body: CampaignStatExportRequest,
          response: { 200: Type.Ref('TmsTask'), ...errorResponses },
        },
      },
      (request) => exports.export(request.principal, request.body as CampaignStatExportRequest),
    );
    done();
  };
