/**
 * The dictionary lookups of spec §4.7 served by the service itself (D11.3), outside `/api` at the paths the
 * spec gives but behind the same token authentication (spec §5: every endpoint needs `Authorization`):
 * `GET /knowledge/getParams?market2CategoryId=` and `GET /option/fetchOption?paramId&query&limit`.
 */
import type { FastifyPluginCallbackTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { installAuthentication, type TokenAuthenticator } from '../../http/auth.ts';
import { errorResponses, Int64 } from '../../http/schemas.ts';
import { optionsOf, ParameterDefinition, parametersOfCategory } from './dictionary.ts';

const tags = ['catalog dictionaries'];

/** The two lookups over the service's database. */
export const dictionaryRoutes =
  (db: Kysely<DB>, authenticator: TokenAuthenticator): FastifyPluginCallbackTypebox =>
  (app, _options, done) => {
    installAuthentication(app, authenticator);
    app.addSchema(ParameterDefinition);
    app.get(
      '/knowledge/getParams',
      {
        schema: {
          tags,
          summary: 'Parameter definitions of a marketplace category (empty for an unknown category)',
          querystring: Type.Object({ market2CategoryId: Int64({ description: 'Marketplace category id' }) }),
          response: { 200: Type.Array(Type.Ref('ParameterDefinition')), ...errorResponses },
        },
      },
      (request) => parametersOfCategory(db, request.query.market2CategoryId),
    );
    app.get(
      '/option/fetchOption',
      {
        schema: {
          tags,
          summary: 'Options of a SUGGEST parameter whose value contains the query (case-insensitive)',
          querystring: Type.Object({
            paramId: Int64(),
            query: Type.String({ maxLength: 200 }),
            limit: Type.Integer({ minimum: 1, maximum: 500 }),
          }),
          response: {
            200: Type.Array(Type.Object({ id: Int64(), value: Type.String() }), { title: 'ParameterOption' }),
            ...errorResponses,
          },
        },
      },
      (request) => optionsOf(db, request.query.paramId, request.query.query, request.query.limit),
    );
    done();
  };
