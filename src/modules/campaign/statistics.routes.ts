/**
 * Routes of the statistics part of the campaign group under `/api/campaign` (spec §4.6): `getStatCampaigns`,
 * `getTotalStatCampaigns` and `getCampaigns`, all read operations (a READ or WRITE token).
 */
import type { FastifyPluginCallbackTypebox } from '@fastify/type-provider-typebox';
import { errorResponses } from '../../http/schemas.ts';
import { CampaignFilterQuery } from './filter.ts';
import {
  CampaignListQuery,
  CampaignTotalStats,
  FindResponseCampaign,
  FindResponseStatCampaign,
  TotalStatCampaignsQuery,
} from './statistics.schemas.ts';
import type { CampaignStatisticsService } from './statistics.service.ts';

/** The three statistics operations over the part's service. */
export const statisticsRoutes =
  (statistics: CampaignStatisticsService): FastifyPluginCallbackTypebox =>
  (app, _options, done) => {
    const tags = ['campaign'];

    app.get(
      '/getStatCampaigns',
      {
        schema: {
          tags,
          summary: 'Statistics of the campaigns over a range of days, a page of rows per campaign',
          querystring: CampaignFilterQuery,
          response: { 200: FindResponseStatCampaign, ...errorResponses },
        },
      },
      // The page is JSON text already (P155): sent as it is, the response schema documents it
      async (request, reply) =>
        reply
          .type('application/json; charset=utf-8')
          .send(await statistics.statCampaigns(request.principal, request.query)),
    );

    app.get(
      '/getTotalStatCampaigns',
      {
        schema: {
          tags,
          summary: 'The top N campaigns by clicks, views, expenses and average cost over a range of days',
          querystring: TotalStatCampaignsQuery,
          response: { 200: CampaignTotalStats, ...errorResponses },
        },
      },
      (request) => statistics.totalStatCampaigns(request.principal, request.query),
    );

    app.get(
      '/getCampaigns',
      {
        schema: {
          tags,
          summary: 'A page of the campaigns of the organization matching the filter',
          querystring: CampaignListQuery,
          response: { 200: FindResponseCampaign, ...errorResponses },
        },
      },
      (request) => statistics.campaigns(request.principal, request.query),
    );

    done();
  };
