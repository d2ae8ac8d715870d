/**
 * Routes of the task group under `/api/task` (D10.3): `getTask`, `findTask` (read), `cancelTask` (write) with the
 * reference's query parameters, and the download of a task's file (read; P86).
 */
import type { FastifyPluginCallbackTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { errorResponses, parseId } from '../../http/schemas.ts';
import { attachmentHeader } from './presenter.ts';
import type { TaskService } from './service.ts';
import {
  CancelTaskQuery,
  FindResponseTmsTask,
  FindTaskQuery,
  GetTaskQuery,
  TaskFileParams,
  TmsTask,
} from './schemas.ts';

const tags = ['task'];
const Task = Type.Ref('TmsTask');

/** The task operations over the group's service. */
export const taskRoutes =
  (service: TaskService): FastifyPluginCallbackTypebox =>
  (app, _options, done) => {
    app.addSchema(TmsTask);

    app.get(
      '/getTask',
      {
        schema: {
          tags,
          summary: 'A task by id (poll it until FINISHED, ERROR or INTERRUPTED)',
          querystring: GetTaskQuery,
          response: { 200: Task, ...errorResponses },
        },
      },
      (request) => service.get(request.principal, parseId('task', request.query.id)),
    );

    app.get(
      '/findTask',
      {
        schema: {
          tags,
          summary: 'Find tasks (type, status, organization, entity, creation dates; paged)',
          querystring: FindTaskQuery,
          response: { 200: FindResponseTmsTask, ...errorResponses },
        },
      },
      (request) => service.find(request.principal, request.query),
    );

    app.post(
      '/cancelTask',
      {
        schema: {
          tags,
          summary: 'Cancel a task: a queued one never runs, a running one stops at its next step',
          querystring: CancelTaskQuery,
          response: { 200: Task, ...errorResponses },
        },
      },
      (request) => service.cancel(request.principal, parseId('task', request.query.taskId)),
    );

    app.get(
      '/:taskId/file',
      {
        schema: {
          tags,
          summary: "Download a FINISHED task's file (its url)",
          params: TaskFileParams,
          response: {
            200: {
              description: 'The file, with its Content-Type and a Content-Disposition file name',
              content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
            },
            ...errorResponses,
          },
        },
      },
      async (request, reply) => {
        const file = await service.file(request.principal, parseId('task', request.params.taskId));
        return reply
          .type(file.contentType)
          .header('content-length', file.size)
          .header('content-disposition', attachmentHeader(file.fileName))
          .send(file.stream);
      },
    );
    done();
  };
