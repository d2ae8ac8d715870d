/**
 * Routes of the inbound group (spec §4.1), registered under `/api/inbound`. Thin: validated input → principal →
 * one service call → presenter. Bodies are `application/hal+json` (D5.11); "empty" operations answer 200 with
 * no body. Static paths (`/find`, `/status`, `/getOrderPackage`…) win over `/:orderId` in Fastify's router.
 */
import type { FastifyPluginCallbackTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { CachedRoute } from '../../http/cached-answers.ts';
import { answerNotModified, entityTag, requiredVersion, wantsRevalidation } from '../../http/conditional.ts';
import { EmptyResponse, errorResponses, parseId, sendEmpty } from '../../http/schemas.ts';
import type { InboundServices } from './group.ts';
import type { InboundService } from './service.ts';
import {
  BulkStatusBody,
  DeleteQuery,
  FindResponseOrder,
  MarkingStatusQuery,
  Order,
  OrderCreateBody,
  OrderHistoryQuery,
  OrderFindQuery,
  OrderGetQuery,
  OrderIdParams,
  OrderIdQuery,
  OrderPackage,
  OrderPatchBody,
  OrderProduct,
  OrderProductInput,
  PackagesBody,
  PageFindResponseOrderHistory,
  StatusQuery,
  TotalDivergence,
} from './schemas.ts';

const HAL = 'application/hal+json; charset=utf-8';
const tags = ['inbound'];

/** The sixteen operations of spec §4.1 over the group's services. */
export const inboundRoutes =
  ({ orders, packages, lists }: InboundServices): FastifyPluginCallbackTypebox =>
  (app, _options, done) => {
    app.post(
      '/',
      {
        schema: {
          tags,
          summary: 'Create a document',
          body: OrderCreateBody,
          response: { 200: Order, ...errorResponses },
        },
      },
      async (request, reply) => reply.type(HAL).send(await orders.create(request.principal, request.body)),
    );

    app.patch(
      '/',
      {
        config: { conditional: 'write' },
        schema: {
          tags,
          summary: 'Change a document',
          body: OrderPatchBody,
          response: { 200: Order, ...errorResponses },
        },
      },
      async (request, reply) => {
        const { versionId } = requiredVersion(request, 'order', request.body.id, request.body.versionId);
        return reply.type(HAL).send(await orders.patch(request.principal, { ...request.body, versionId }));
      },
    );

    app.get(
      '/find',
      {
        schema: {
          tags,
          summary: 'Find documents',
          querystring: OrderFindQuery,
          response: { 200: FindResponseOrder, ...errorResponses },
        },
      },
      async (request, reply) =>
        reply.type(HAL).send(await lists.findBody(request.principal, request.query, request.url)),
    );

    app.get(
      '/getOrderPackage',
      {
        schema: {
          tags,
          summary: 'Cargo places of a document',
          querystring: OrderIdQuery,
          response: { 200: Type.Array(OrderPackage), ...errorResponses },
        },
      },
      async (request, reply) =>
        reply.type(HAL).send(await packages.list(request.principal, parseId('order', request.query.orderId))),
    );

    app.post(
      '/updateOrderPackage',
      {
        schema: {
          tags,
          summary: 'Replace the cargo places of a document',
          querystring: OrderIdQuery,
          body: PackagesBody,
          response: { 200: EmptyResponse, ...errorResponses },
        },
      },
      async (request, reply) => {
        await packages.replace(request.principal, parseId('order', request.query.orderId), request.body);
        return sendEmpty(reply);
      },
    );

    app.post(
      '/setOrderMarkingStatus',
      {
        schema: {
          tags,
          summary: 'Set the marking status',
          querystring: MarkingStatusQuery,
          response: { 200: EmptyResponse, ...errorResponses },
        },
      },
      async (request, reply) => {
        await orders.setMarkingStatus(
          request.principal,
          parseId('order', request.query.orderId),
          request.query.status,
        );
        return sendEmpty(reply);
      },
    );

    app.post(
      '/removeIncomeStock',
      {
        schema: {
          tags,
          summary: 'Remove the stock created at receiving',
          querystring: OrderIdQuery,
          response: { 200: EmptyResponse, ...errorResponses },
        },
      },
      async (request, reply) => {
        await orders.removeIncomeStock(request.principal, parseId('order', request.query.orderId));
        return sendEmpty(reply);
      },
    );

    app.post(
      '/status',
      {
        schema: {
          tags,
          summary: 'Set the status of several documents (all or nothing)',
          querystring: StatusQuery,
          body: BulkStatusBody,
          response: { 200: EmptyResponse, ...errorResponses },
        },
      },
      async (request, reply) => {
        await orders.setStatusBulk(request.principal, request.body, request.query.status);
        return sendEmpty(reply);
      },
    );

    app.get(
      '/:orderId',
      {
        config: { conditional: 'read' },
        schema: {
          tags,
          summary: 'A document with its products',
          params: OrderIdParams,
          querystring: OrderGetQuery,
          response: { 200: Order, ...errorResponses },
        },
      },
      async (request, reply) => {
        const id = parseId('order', request.params.orderId);
        const { body, versionId } = await orders.getOrderBody(
          request.principal,
          id,
          request.query,
          wantsRevalidation(request),
        );
        const { limit, page } = request.query;
        const variant =
          limit === undefined && page === undefined ? '' : `limit${limit ?? 100}-page${page ?? 1}`;
        if (answerNotModified(request, reply, entityTag('order', id, versionId, variant))) return reply;
        // Ready JSON bytes: Fastify sends them as they are (no second serialization or encoding).
        return reply.type(HAL).send(body);
      },
    );

    app.delete(
      '/:orderId',
      {
        schema: {
          tags,
          summary: 'Delete a document; deleted=false restores it',
          params: OrderIdParams,
          querystring: DeleteQuery,
          response: { 200: EmptyResponse, ...errorResponses },
        },
      },
      async (request, reply) => {
        await orders.setDeleted(
          request.principal,
          parseId('order', request.params.orderId),
          request.query.deleted !== false,
        );
        return sendEmpty(reply);
      },
    );

    app.post(
      '/:orderId/product',
      {
        config: { conditional: 'write' },
        schema: {
          tags,
          summary: 'Add a product',
          params: OrderIdParams,
          body: OrderProductInput,
          response: { 200: OrderProduct, ...errorResponses },
        },
      },
      async (request, reply) => {
        const orderId = parseId('order', request.params.orderId);
        const { versionId } = requiredVersion(request, 'order', orderId, request.body.versionId);
        return reply
          .type(HAL)
          .send(await orders.addProduct(request.principal, orderId, { ...request.body, versionId }));
      },
    );

    app.put(
      '/:orderId/product',
      {
        config: { conditional: 'write' },
        schema: {
          tags,
          summary: 'Update a product',
          params: OrderIdParams,
          body: OrderProductInput,
          response: { 200: OrderProduct, ...errorResponses },
        },
      },
      async (request, reply) => {
        const orderId = parseId('order', request.params.orderId);
        const { versionId } = requiredVersion(request, 'order', orderId, request.body.versionId);
        return reply
          .type(HAL)
          .send(await orders.updateProduct(request.principal, orderId, { ...request.body, versionId }));
      },
    );

    app.post(
      '/:orderId/status',
      {
        schema: {
          tags,
          summary: 'Set the status of a document',
          params: OrderIdParams,
          querystring: StatusQuery,
          response: { 200: EmptyResponse, ...errorResponses },
        },
      },
      async (request, reply) => {
        await orders.setStatus(
          request.principal,
          parseId('order', request.params.orderId),
          request.query.status,
        );
        return sendEmpty(reply);
      },
    );

    app.post(
      '/:orderId/divergence/fix',
      {
        schema: {
          tags,
          summary: 'Fix divergences',
          params: OrderIdParams,
          response: { 200: EmptyResponse, ...errorResponses },
        },
      },
      async (request, reply) => {
        await packages.fix(request.principal, parseId('order', request.params.orderId));
        return sendEmpty(reply);
      },
    );

    app.get(
      '/:orderId/divergence',
      {
        schema: {
          tags,
          summary: 'Packing divergence',
          params: OrderIdParams,
          response: { 200: TotalDivergence, ...errorResponses },
        },
      },
      async (request, reply) =>
        reply
          .type(HAL)
          .send(await packages.divergence(request.principal, parseId('order', request.params.orderId))),
    );

    app.get(
      '/:orderId/history',
      {
        schema: {
          tags,
          summary: 'History of a document, newest first',
          description:
            'Takes the filter set of find (reference OrderFilter) and applies `limit`, `page` or `cursor` ' +
            '(P172), `count` and `dateFrom`/`dateTo` on the change date; the other parameters, `sortBy` and ' +
            '`ascending` included, are accepted and ignored (decision P23).',
          params: OrderIdParams,
          querystring: OrderHistoryQuery,
          response: { 200: PageFindResponseOrderHistory, ...errorResponses },
        },
      },
      async (request, reply) =>
        reply
          .type(HAL)
          .send(
            await lists.history(
              request.principal,
              parseId('order', request.params.orderId),
              request.query,
              request.url,
            ),
          ),
    );
    done();
  };

/**
 * `GET /api/inbound/{orderId}` without query from the process's document cache, in front of the framework (P223):
 * the same body and entity tag as the route's handler gives for a cached document.
 */
export function cachedDocumentRoute(orders: InboundService): CachedRoute {
  return {
    route: '/api/inbound/:orderId',
    path: /^\/api\/inbound\/([0-9]{1,19})$/,
    answer(principal, orderId) {
      const id = Number(orderId);
      const cached = Number.isSafeInteger(id) ? orders.cachedOrderBody(principal, id) : undefined;
      return (
        cached && { body: cached.body, contentType: HAL, entityTag: entityTag('order', id, cached.versionId) }
      );
    },
  };
}
