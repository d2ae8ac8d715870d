/**
 * Routes of the catalog group (spec §4.7, decision D11), registered under `/api`: brands, categories, model
 * cards, final products. GET needs a READ or WRITE token, every other method a WRITE token (D2.3).
 */
import type { FastifyPluginCallbackTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { answerNotModified, entityTag, requiredVersion } from '../../http/conditional.ts';
import { validationError } from '../../http/errors.ts';
import { errorResponses, parseId } from '../../http/schemas.ts';
import type { CatalogService } from './service.ts';
import {
  Brand,
  BrandCreateBody,
  BrandPage,
  Category,
  CategoryCreateBody,
  CategoryPage,
  ModelParams,
  ProductParams,
  ModelCreateBody,
  ModelGetQuery,
  ModelReplaceBody,
  NameFindQuery,
  Product,
  ProductFindQuery,
  ProductModel,
  ProductPage,
  ProductPatchBody,
  ProductRow,
  ProductView,
} from './schemas.ts';

const tags = ['catalog'];

/** The catalog operations over the group's service. */
export const catalogRoutes =
  (catalog: CatalogService): FastifyPluginCallbackTypebox =>
  (app, _options, done) => {
    for (const schema of [Brand, Category, Product, ProductView, ProductModel, ProductRow])
      app.addSchema(schema);

    app.post(
      '/brand',
      {
        schema: {
          tags,
          summary: 'Create a brand (names unique per client, case-insensitive)',
          body: BrandCreateBody,
          response: { 200: Type.Ref('Brand'), ...errorResponses },
        },
      },
      (request) => catalog.createBrand(request.principal, request.body),
    );
    app.get(
      '/brand/find',
      {
        schema: {
          tags,
          summary: 'Find brands by name substring',
          querystring: NameFindQuery,
          response: { 200: BrandPage, ...errorResponses },
        },
      },
      (request) => catalog.findNamed<Brand>(request.principal, 'brand', request.query),
    );
    app.post(
      '/category',
      {
        schema: {
          tags,
          summary: 'Create a category (names unique per client, case-insensitive)',
          body: CategoryCreateBody,
          response: { 200: Type.Ref('Category'), ...errorResponses },
        },
      },
      (request) => catalog.createCategory(request.principal, request.body),
    );
    app.get(
      '/category/find',
      {
        schema: {
          tags,
          summary: 'Find categories by name substring',
          querystring: NameFindQuery,
          response: { 200: CategoryPage, ...errorResponses },
        },
      },
      (request) => catalog.findNamed<Category>(request.principal, 'category', request.query),
    );
    app.post(
      '/model',
      {
        schema: {
          tags,
          summary:
            'Create a model card with its colour variants and sizes (raises CREATE_PRODUCT per product)',
          body: ModelCreateBody,
          response: { 200: Type.Ref('ProductModel'), ...errorResponses },
        },
      },
      (request) => catalog.createModel(request.principal, request.body),
    );
    app.get(
      '/model/:modelId',
      {
        config: { conditional: 'read' },
        schema: {
          tags,
          summary:
            'The complete model with its variants and sizes; withParams=true adds effective parameter values',
          params: ModelParams,
          querystring: ModelGetQuery,
          response: { 200: Type.Ref('ProductModel'), ...errorResponses },
        },
      },
      async (request, reply) => {
        const id = parseId('model', request.params.modelId);
        if (request.query.withParams === true) {
          const model = await catalog.getModelWithParams(request.principal, id);
          if (answerNotModified(request, reply, entityTag('model', id, model.versionId, 'params')))
            return reply;
          return model;
        }
        const { body, versionId } = await catalog.getModelBody(request.principal, id);
        if (answerNotModified(request, reply, entityTag('model', id, versionId, ''))) return reply;
        // Ready JSON text: Fastify sends it as it is (no second serialization).
        return reply.type('application/json; charset=utf-8').send(body);
      },
    );
    app.put(
      '/model/:modelId',
      {
        config: { conditional: 'write' },
        schema: {
          tags,
          summary: 'Replace the editable structure of a model (versionId or If-Match required; stale → 409)',
          params: ModelParams,
          body: ModelReplaceBody,
          response: { 200: Type.Ref('ProductModel'), ...errorResponses },
        },
      },
      (request) => {
        const id = parseId('model', request.params.modelId);
        const { versionId } = requiredVersion(request, 'model', id, request.body.versionId);
        if (versionId === undefined)
          throw validationError('versionId', 'is required (or an If-Match header)');
        return catalog.replaceModel(request.principal, id, { ...request.body, versionId });
      },
    );
    app.patch(
      '/product/:productId',
      {
        config: { conditional: 'write' },
        schema: {
          tags,
          summary:
            'Change one final product by a JSON merge patch (application/merge-patch+json or application/json)',
          params: ProductParams,
          body: ProductPatchBody,
          response: { 200: Type.Ref('Product'), ...errorResponses },
        },
      },
      (request) => {
        const { versionId, id: modelId } = requiredVersion(
          request,
          'model',
          undefined,
          request.body.versionId,
        );
        return catalog.patchProduct(
          request.principal,
          parseId('product', request.params.productId),
          { ...request.body, versionId },
          modelId,
        );
      },
    );
    app.get(
      '/product/find',
      {
        schema: {
          tags,
          summary: 'Product search: lightweight rows, stable id order; count only when asked',
          querystring: ProductFindQuery,
          response: { 200: ProductPage, ...errorResponses },
        },
      },
      // Ready JSON text: Fastify sends it as it is (no second serialization).
      async (request, reply) =>
        reply
          .type('application/json; charset=utf-8')
          .send(await catalog.findProducts(request.principal, request.query)),
    );
    done();
  };
