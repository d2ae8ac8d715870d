/**
 * Routes of the campaign operations (spec §4.6, D10.2), under `/api/campaign`. The spec's Access column decides:
 * the import, the reload, the subject lookup and the balance are read (GET); the status change and the create are
 * write (POST). Answers that are "empty" in the spec are 200 with no body.
 */
import type { FastifyPluginCallbackTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { EmptyResponse, errorResponses, sendEmpty } from '../../http/schemas.ts';
import type { CampaignOperations } from './operations.service.ts';
import {
  CampaignBalance,
  CampaignBalanceQuery,
  CampaignCreateBody,
  CreateCampaignQuery,
  Market1SubjectsQuery,
  Market1Type,
  ReloadCampaignStatsQuery,
  UpdateCampaignsQuery,
  UpdateStatusCampaignQuery,
} from './operations.schemas.ts';

const tags = ['campaign'];
/** Marketplace throttling and outages (503 `error_market1_unavailable`). */
const withUnavailable = { ...errorResponses, 503: Type.Ref('ErrorResponse') };

/** The campaign operations over their service. */
export const campaignOperationsRoutes =
  (operations: CampaignOperations): FastifyPluginCallbackTypebox =>
  (app, _options, done) => {
    app.addSchema(Market1Type);
    app.addSchema(CampaignBalance);

    app.get(
      '/updateCampaigns',
      {
        schema: {
          tags,
          summary: 'Start the import of the organization’s campaigns and recent statistics (a task)',
          description:
            'Answers a TmsTask of type `CAMPAIGN_IMPORT_TASK`; poll it with `/api/task/getTask`. See docs/campaigns.md.',
          querystring: UpdateCampaignsQuery,
          response: { 200: Type.Ref('TmsTask'), ...errorResponses },
        },
      },
      (request) => operations.updateCampaigns(request.principal, request.query),
    );
    app.get(
      '/reloadCampaignStats',
      {
        schema: {
          tags,
          summary: 'Start the reload of the statistics of a range of days (a task; empty answer)',
          description:
            'The task (`CAMPAIGN_STATS_RELOAD_TASK`) is listed by `/api/task/findTask?type=CAMPAIGN_STATS_RELOAD_TASK`.',
          querystring: ReloadCampaignStatsQuery,
          response: { 200: EmptyResponse, ...errorResponses },
        },
      },
      async (request, reply) => {
        await operations.reloadCampaignStats(request.principal, request.query);
        return sendEmpty(reply);
      },
    );
    app.post(
      '/updateStatusCampaign',
      {
        schema: {
          tags,
          summary:
            'Start (ACTIVE), pause (PAUSED) or stop (FINISHED, CANCELLED) a campaign on the marketplace',
          querystring: UpdateStatusCampaignQuery,
          response: { 200: EmptyResponse, ...withUnavailable },
        },
      },
      async (request, reply) => {
        await operations.updateStatus(request.principal, request.query);
        return sendEmpty(reply);
      },
    );
    app.post(
      '/createCampaign',
      {
        schema: {
          tags,
          summary: 'Create an AUTO or IN_SEARCH_AND_CATALOG campaign on the marketplace and store it',
          querystring: CreateCampaignQuery,
          body: CampaignCreateBody,
          response: { 200: Type.Ref('Campaign'), ...withUnavailable },
        },
      },
      (request) => operations.create(request.principal, request.query.organizationId, request.body),
    );
    app.get(
      '/getMarket1Subjects',
      {
        schema: {
          tags,
          summary: 'The marketplace’s subjects (categories) whose name contains `query`, with commissions',
          querystring: Market1SubjectsQuery,
          response: { 200: Type.Array(Type.Ref('Market1Type')), ...withUnavailable },
        },
      },
      (request) => operations.subjects(request.principal, request.query),
    );
    app.get(
      '/getCampaignBalance',
      {
        schema: {
          tags,
          summary: 'The advertising account’s money, whole roubles (D10.2)',
          querystring: CampaignBalanceQuery,
          response: { 200: Type.Ref('CampaignBalance'), ...withUnavailable },
        },
      },
      (request) => operations.balance(request.principal, request.query),
    );
    done();
  };
