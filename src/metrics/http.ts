/**
 * The request histogram's hook (P130): every answer is observed with its route template (`/api/tag/:tagId`, never
 * the raw URL, so ids and query strings never become labels), method and status code. Requests no route matched
 * are labelled `route="unmatched"`.
 */
import type { FastifyInstance } from 'fastify';
import type { ServiceMetrics } from './service-metrics.ts';

/** Observes the duration of every request of `app` in `metrics.httpRequestDuration`. */
export function installRequestMetrics(app: FastifyInstance, metrics: ServiceMetrics): void {
  app.addHook('onResponse', (request, reply, done) => {
    metrics.httpRequestDuration.observe(
      {
        route: request.routeOptions.url ?? 'unmatched',
        method: request.method,
        status: String(reply.statusCode),
      },
      reply.elapsedTime / 1000,
    );
    done();
  });
}
