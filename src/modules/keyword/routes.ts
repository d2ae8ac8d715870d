/**
 * Routes of the keyword group (spec §4.2, decision D6), under `/api/keyword`. The spec's Access column decides:
 * GET operations are read, the others write (D2.3).
 */
import type { FastifyPluginCallbackTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { EmptyResponse, errorResponses, parseId, sendEmpty, sendString } from '../../http/schemas.ts';
import type { KeywordService } from './service.ts';
import {
  AttachQuery,
  Done,
  GroupNameQuery,
  GroupParams,
  IdList,
  Keyword,
  KeywordAndGroup,
  KeywordGroup,
  KeywordGroupUpdateBody,
  KeywordWords,
  MergeQuery,
  ModelParams,
  NewNameQuery,
  WordQuery,
} from './schemas.ts';

const tags = ['keyword'];
const Group = Type.Ref('KeywordGroup');
const Groups = Type.Array(Group);

/** The twelve operations of spec §4.2 over the group's service. */
export const keywordRoutes =
  (keywords: KeywordService): FastifyPluginCallbackTypebox =>
  (app, _options, done) => {
    app.addSchema(Keyword);
    app.addSchema(KeywordGroup);
    const groupId = (params: { groupId: string }) => parseId('keywordGroup', params.groupId);
    const modelId = (params: { modelId: string }) => parseId('model', params.modelId);

    app.get(
      '/group',
      {
        schema: {
          tags,
          summary: 'Every keyword group of the client',
          response: { 200: Groups, ...errorResponses },
        },
      },
      (request) => keywords.listGroups(request.principal),
    );
    app.post(
      '/group',
      {
        schema: {
          tags,
          summary: 'Create a group with the given keyword strings',
          querystring: GroupNameQuery,
          body: KeywordWords,
          response: { 200: Group, ...errorResponses },
        },
      },
      (request) => keywords.createGroup(request.principal, request.query.groupName, request.body),
    );
    app.delete(
      '/group',
      {
        schema: {
          tags,
          summary: 'Delete the groups with the given ids (all or nothing)',
          body: IdList,
          response: { 200: Done, ...errorResponses },
        },
      },
      async (request, reply) =>
        sendString(reply, await keywords.deleteGroups(request.principal, request.body)),
    );
    app.get(
      '/group/find',
      {
        schema: {
          tags,
          summary: 'Groups whose name or keywords contain the word (case-insensitive)',
          querystring: WordQuery,
          response: { 200: Groups, ...errorResponses },
        },
      },
      (request) => keywords.findGroups(request.principal, request.query.word),
    );
    app.post(
      '/group/merge',
      {
        schema: {
          tags,
          summary: 'Merge groups into a new one that takes over their attachments',
          querystring: MergeQuery,
          body: IdList,
          response: { 200: Group, ...errorResponses },
        },
      },
      (request) => keywords.merge(request.principal, request.query.newGroupName, request.body),
    );
    app.get(
      '/group/:groupId',
      {
        schema: {
          tags,
          summary: 'One keyword group',
          params: GroupParams,
          response: { 200: Group, ...errorResponses },
        },
      },
      (request) => keywords.getGroup(request.principal, groupId(request.params)),
    );
    app.put(
      '/group/:groupId',
      {
        schema: {
          tags,
          summary:
            'Rename a group (newName) and add keyword strings to it; the group as GET returns it works too',
          params: GroupParams,
          querystring: NewNameQuery,
          body: KeywordGroupUpdateBody,
          response: { 200: Group, ...errorResponses },
        },
      },
      (request) =>
        keywords.updateGroup(request.principal, groupId(request.params), request.query.newName, request.body),
    );
    app.delete(
      '/group/:groupId',
      {
        schema: {
          tags,
          summary: 'Delete a group; answers it as it was',
          params: GroupParams,
          response: { 200: Group, ...errorResponses },
        },
      },
      (request) => keywords.deleteGroup(request.principal, groupId(request.params)),
    );
    app.delete(
      '/group/:groupId/keywords',
      {
        schema: {
          tags,
          summary: 'Delete keywords (ids) of a group',
          params: GroupParams,
          body: IdList,
          response: { 200: Done, ...errorResponses },
        },
      },
      async (request, reply) =>
        sendString(
          reply,
          await keywords.deleteKeywords(request.principal, groupId(request.params), request.body),
        ),
    );
    app.put(
      '/add',
      {
        schema: {
          tags,
          summary: 'Attach every keyword of the groups (ids) to one product, view or model',
          querystring: AttachQuery,
          body: IdList,
          response: { 200: EmptyResponse, ...errorResponses },
        },
      },
      async (request, reply) => {
        await keywords.attach(request.principal, request.query, request.body);
        return sendEmpty(reply);
      },
    );
    app.get(
      '/:modelId',
      {
        schema: {
          tags,
          summary: 'Keywords attached to a model and the groups they come from',
          params: ModelParams,
          response: { 200: KeywordAndGroup, ...errorResponses },
        },
      },
      (request) => keywords.ofModel(request.principal, modelId(request.params)),
    );
    app.delete(
      '/model/:modelId',
      {
        schema: {
          tags,
          summary: 'Detach every keyword of the groups (ids) from a model',
          params: ModelParams,
          body: IdList,
          response: { 200: Done, ...errorResponses },
        },
      },
      async (request, reply) =>
        sendString(
          reply,
          await keywords.detachFromModel(request.principal, modelId(request.params), request.body),
        ),
    );
    done();
  };
