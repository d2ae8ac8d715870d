/**
 * Operator (admin) API, decision D1.4: enabled only when `ADMIN_TOKEN` is set; every call needs
 * `Authorization: Bearer <ADMIN_TOKEN>` (compared in constant time), otherwise 401 `auth_required`.
 * Not for integrators: it is hidden from the OpenAPI document.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Runtime } from '../../runtime.ts';
import { bearerToken, secretsEqual } from '../../http/auth.ts';
import { AppError } from '../../http/errors.ts';
import { EmptyResponse, parseId, sendEmpty } from '../../http/schemas.ts';
import { AccountService } from './service.ts';
import { DictionaryFile, loadDictionary } from '../catalog/dictionary.ts';
import {
  CashRegister,
  CashRegisterBody,
  Client,
  ClientCreateBody,
  ClientPatchBody,
  CreatedToken,
  IdParams,
  Integration,
  IntegrationCreateBody,
  Organization,
  OrganizationCreateBody,
  TokenCreateBody,
  User,
  UserCreateBody,
} from './schemas.ts';

/** The admin routes over `runtime` (its database, notifier and `ADMIN_TOKEN`). */
export const adminRoutes =
  (runtime: Runtime): FastifyPluginAsyncTypebox =>
  async (app) => {
    const accounts = new AccountService(runtime.database.db, runtime.secrets, runtime.notifier);
    const adminToken = runtime.config.adminToken;

    app.addHook('onRequest', async (request) => {
      const given = bearerToken(request.headers.authorization);
      if (adminToken === undefined || given === undefined || !secretsEqual(given, adminToken)) {
        throw new AppError('auth_required');
      }
    });

    const hide = { hide: true };

    app.post(
      '/clients',
      { schema: { ...hide, body: ClientCreateBody, response: { 200: Client } } },
      (request) => accounts.createClient(request.body),
    );

    app.patch(
      '/clients/:clientId',
      { schema: { ...hide, params: IdParams('clientId'), body: ClientPatchBody, response: { 200: Client } } },
      (request) => accounts.updateClient(parseId('client', request.params.clientId), request.body),
    );

    app.post(
      '/clients/:clientId/organizations',
      {
        schema: {
          ...hide,
          params: IdParams('clientId'),
          body: OrganizationCreateBody,
          response: { 200: Organization },
        },
      },
      (request) => accounts.createOrganization(parseId('client', request.params.clientId), request.body),
    );

    app.post(
      '/clients/:clientId/users',
      { schema: { ...hide, params: IdParams('clientId'), body: UserCreateBody, response: { 200: User } } },
      (request) => accounts.createUser(parseId('client', request.params.clientId), request.body),
    );

    app.post(
      '/users/:userId/tokens',
      {
        schema: {
          ...hide,
          params: IdParams('userId'),
          body: TokenCreateBody,
          response: { 200: CreatedToken },
        },
      },
      (request) => accounts.createToken(parseId('user', request.params.userId), request.body),
    );

    app.delete(
      '/tokens/:tokenId',
      { schema: { ...hide, params: IdParams('tokenId'), response: { 200: EmptyResponse } } },
      async (request, reply) => {
        await accounts.revokeToken(parseId('token', request.params.tokenId));
        return sendEmpty(reply);
      },
    );

    app.post(
      '/dictionaries',
      {
        // Dictionary files are large (every option of every parameter): up to 64 MiB here.
        bodyLimit: 64 * 1024 * 1024,
        schema: {
          ...hide,
          body: DictionaryFile,
          response: {
            200: Type.Object({
              categories: Type.Integer(),
              parameters: Type.Integer(),
              options: Type.Integer(),
            }),
          },
        },
      },
      (request) => runtime.changes.run((trx) => loadDictionary(trx, request.body)),
    );

    app.post(
      '/organizations/:organizationId/integrations',
      {
        schema: {
          ...hide,
          params: IdParams('organizationId'),
          body: IntegrationCreateBody,
          response: { 200: Integration },
        },
      },
      (request) =>
        accounts.setIntegration(parseId('organization', request.params.organizationId), request.body),
    );

    app.post(
      '/organizations/:organizationId/cash-register',
      {
        schema: {
          ...hide,
          params: IdParams('organizationId'),
          body: CashRegisterBody,
          response: { 200: CashRegister },
        },
      },
      (request) =>
        accounts.setCashRegister(parseId('organization', request.params.organizationId), request.body),
    );
  };
