/**
 * Routes of the knowledge group under `/api/knowledge` (D11.3, P118): `POST /api/knowledge/refresh` (write
 * access) starts a `MARKET1_DICTIONARY_TASK` and answers its TmsTask at once.
 */
import type { FastifyPluginCallbackTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { errorResponses } from '../../http/schemas.ts';
import { TmsTask } from '../task/schemas.ts';
import type { KnowledgeService } from './service.ts';
import { DictionaryRefreshQuery } from './schemas.ts';

/** The refresh operation over the group's service. */
export const knowledgeRoutes =
  (knowledge: KnowledgeService): FastifyPluginCallbackTypebox =>
  (app, _options, done) => {
    app.addSchema(TmsTask);
    app.post(
      '/refresh',
      {
        schema: {
          tags: ['catalog dictionaries'],
          summary:
            'Refresh the catalog dictionaries (getParams, fetchOption) from Market1 in the background; answers the task',
          querystring: DictionaryRefreshQuery,
          response: { 200: Type.Ref('TmsTask'), ...errorResponses },
        },
      },
      (request) => knowledge.refresh(request.principal, request.query),
    );
    done();
  };
