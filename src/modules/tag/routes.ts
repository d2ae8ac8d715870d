/**
 * Routes of the tag group (spec §4.5, decision D7), under `/api/tag`. The spec's Access column decides: finds
 * are read, everything else write (D2.3).
 */
import type { FastifyPluginCallbackTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { EmptyResponse, errorResponses, parseId, sendEmpty } from '../../http/schemas.ts';
import { checkReadOnlyIds, type TagService } from './service.ts';
import {
  FindResponseProductTag,
  FindResponseProductTagInfo,
  ModelParams,
  ProductTag,
  TagBody,
  TagFindQuery,
  TagModelParams,
  TagParams,
  TagProductParams,
  TagRenameBody,
  TagWithIdBody,
} from './schemas.ts';

const tags = ['tag'];
const Tag = Type.Ref('ProductTag');

/** The tag operations over the group's service. */
export const tagRoutes =
  (service: TagService): FastifyPluginCallbackTypebox =>
  (app, _options, done) => {
    app.addSchema(ProductTag);
    const tagId = (params: { tagId: string }) => parseId('tag', params.tagId);

    app.post(
      '',
      {
        schema: {
          tags,
          summary: 'Create a tag {name}',
          body: TagBody,
          response: { 200: Tag, ...errorResponses },
        },
      },
      (request) => service.create(request.principal, request.body.name),
    );
    app.put(
      '',
      {
        schema: {
          tags,
          summary: 'Rename a tag given {id, name} in the body',
          body: TagWithIdBody,
          response: { 200: Tag, ...errorResponses },
        },
      },
      (request) => {
        checkReadOnlyIds(request.principal, request.body);
        return service.rename(request.principal, request.body.id, request.body.name);
      },
    );
    app.put(
      '/:tagId',
      {
        schema: {
          tags,
          summary: 'Rename a tag',
          params: TagParams,
          body: TagRenameBody,
          response: { 200: Tag, ...errorResponses },
        },
      },
      (request) => {
        const id = tagId(request.params);
        checkReadOnlyIds(request.principal, request.body, id);
        return service.rename(request.principal, id, request.body.name);
      },
    );
    app.delete(
      '/:tagId',
      {
        schema: {
          tags,
          summary: 'Delete a tag and its bindings; answers the tag as it was (D7.1)',
          params: TagParams,
          response: { 200: Tag, ...errorResponses },
        },
      },
      (request) => service.delete(request.principal, tagId(request.params)),
    );
    for (const path of ['', '/find'])
      app.get(
        path,
        {
          schema: {
            tags,
            summary: 'Find tags (name substring, product, paging)',
            querystring: TagFindQuery,
            response: { 200: FindResponseProductTag, ...errorResponses },
          },
        },
        (request) => service.find(request.principal, request.query),
      );
    app.get(
      '/find/:modelId',
      {
        schema: {
          tags,
          summary: 'The products of a model with their tags (model tags count for each product)',
          params: ModelParams,
          response: { 200: FindResponseProductTagInfo, ...errorResponses },
        },
      },
      (request) => service.ofModel(request.principal, parseId('model', request.params.modelId)),
    );
    for (const action of ['bind', 'unbind'] as const) {
      const method = action === 'bind' ? 'put' : 'delete';
      app[method](
        '/product/:tagId/:productId',
        {
          schema: {
            tags,
            summary: `${action === 'bind' ? 'Bind' : 'Unbind'} a tag and a product`,
            params: TagProductParams,
            response: { 200: EmptyResponse, ...errorResponses },
          },
        },
        async (request, reply) => {
          await service.binding(
            request.principal,
            action,
            'product',
            tagId(request.params),
            parseId('product', request.params.productId),
          );
          return sendEmpty(reply);
        },
      );
      app[method](
        '/model/:tagId/:modelId',
        {
          schema: {
            tags,
            summary: `${action === 'bind' ? 'Bind' : 'Unbind'} a tag and a model`,
            params: TagModelParams,
            response: { 200: EmptyResponse, ...errorResponses },
          },
        },
        async (request, reply) => {
          await service.binding(
            request.principal,
            action,
            'model',
            tagId(request.params),
            parseId('model', request.params.modelId),
          );
          return sendEmpty(reply);
        },
      );
    }
    done();
  };
