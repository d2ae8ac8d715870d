/** Liveness and readiness (decision D12.4): `/health` while the process runs, `/ready` while the database answers. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { sql } from 'kysely';
import type { Runtime } from '../../runtime.ts';

const Status = Type.Object({ status: Type.String() });

/** `/health` and `/ready` over `runtime`. */
export const healthRoutes =
  (runtime: Runtime): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get('/health', { schema: { hide: true, response: { 200: Status } } }, () => ({ status: 'ok' }));

    app.get(
      '/ready',
      { schema: { hide: true, response: { 200: Status, 503: Status } } },
      async (_request, reply) => {
        try {
          await sql`select 1`.execute(runtime.database.db);
          return { status: 'ready' };
        } catch {
          return reply.code(503).send({ status: 'database unavailable' });
        }
      },
    );
  };
