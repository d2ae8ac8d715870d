/**
 * Operator routes outside `/api` (decision D12.4): `/health` while the process runs, `/ready` once the start-up
 * set-up is done (`starting` with 503 before, P166) and while the database answers (with the job queue's state,
 * P132), and `/metrics` in the Prometheus text format
 * (P129), guarded by `METRICS_TOKEN` when it is set. None of them is rate limited (P125).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { sql } from 'kysely';
import type { Runtime } from '../../runtime.ts';
import { bearerToken, secretsEqual } from '../../http/auth.ts';
import { AppError } from '../../http/errors.ts';
import { jobQueueStats } from '../../jobs/queue-stats.ts';

const Status = Type.Object({ status: Type.String() });

const JobQueueState = Type.Object({
  /** `ready` when pg-boss's tables answer. */
  status: Type.String(),
  /** Whether this process runs background workers. */
  workers: Type.Boolean(),
  /** Jobs of every queue due now and not taken by a worker. */
  dueJobs: Type.Integer(),
  /** Seconds since the oldest of them became due (0 when none is). */
  oldestDueSeconds: Type.Number(),
});

const Ready = Type.Object({ status: Type.String(), jobQueue: JobQueueState });

/** `/health`, `/ready` and `/metrics` over `runtime`. */
export const healthRoutes =
  (runtime: Runtime): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get('/health', { schema: { hide: true, response: { 200: Status } } }, () => ({ status: 'ok' }));

    app.get(
      '/ready',
      { schema: { hide: true, response: { 200: Ready, 503: Status } } },
      async (_request, reply) => {
        if (!runtime.ready) return reply.code(503).send({ status: 'starting' });
        try {
          await sql`select 1`.execute(runtime.database.db);
        } catch {
          return reply.code(503).send({ status: 'database unavailable' });
        }
        try {
          const queues = await jobQueueStats(runtime.database.db);
          return {
            status: 'ready',
            jobQueue: {
              status: 'ready',
              workers: runtime.workers,
              dueJobs: queues.reduce((sum, queue) => sum + queue.due, 0),
              oldestDueSeconds: Math.max(0, ...queues.map((queue) => queue.oldestDueSeconds)),
            },
          };
        } catch {
          return reply.code(503).send({ status: 'job queue unavailable' });
        }
      },
    );

    const { metricsToken } = runtime.config;
    app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
      if (metricsToken !== undefined) {
        const token = bearerToken(request.headers.authorization);
        if (token === undefined || !secretsEqual(token, metricsToken)) throw new AppError('auth_required');
      }
      const { registry } = runtime.metrics;
      return reply.type(registry.contentType).send(await registry.metrics());
    });
  };
