/**
 * Answers from the caches of this process in front of the framework (P223), as a cache in front of an application
 * does. A group names the paths it can answer from cache (`CachedRoute`; today `GET /api/inbound/{orderId}`, whose
 * documents the process caches, P36); the server's request listener asks `CachedAnswers.answer` first and hands
 * the request to Fastify unless it answered. It answers only when all of this holds:
 *
 * - the service is ready and not shutting down, and Fastify writes no request logs (`LOG_LEVEL` above `info`:
 *   with request logs on, every request goes through the pipeline that writes them);
 * - the request is a `GET` of a named path without a query string and carries no header field outside
 *   `NEUTRAL_FIELDS`, so nothing asks for a compressed, conditional, revalidated or idempotent answer or sends a
 *   body, and no field twice (Node keeps the first `Authorization` of several, the pipeline decides);
 * - its token is in the token cache (a live token, resolved without the database) — any token may read;
 * - the route's cache holds the answer for the token's client;
 * - the rate limit is off or counts in memory (`MemoryCounts`) and the request is within the quota.
 *
 * The answer is the one the pipeline gives: the same body, `Content-Type`, `ETag`, rate-limit fields and
 * `x-request-id`; the request is counted against the same quota and observed by the request histogram under its
 * route template. Every other request — and any of these the caches cannot answer — goes to Fastify, which gives
 * the same answer or the error the request deserves.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Config } from '../config.ts';
import type { ServiceMetrics } from '../metrics/service-metrics.ts';
import type { Principal, TokenAuthenticator } from './auth.ts';
import { requestIdOf } from './error-handler.ts';
import { rateLimitPolicy, tokenRateLimitKey, type MemoryCounts } from './rate-limit.ts';

/** A representation held by a cache: the body as sent and the header fields that describe it. */
export interface CachedRepresentation {
  body: Buffer;
  contentType: string;
  /** The strong entity tag of `body` (`conditional.ts`). */
  entityTag: string;
}

/** A path a group answers from its cache. */
export interface CachedRoute {
  /** The route template of the same path in Fastify (the histogram's label), e.g. `/api/inbound/:orderId`. */
  route: string;
  /** The whole path it answers; its first group is the id, as the route's schema accepts it. */
  path: RegExp;
  /** The answer for `principal` from the cache, or undefined when the cache does not hold it. */
  answer(principal: Principal, id: string): CachedRepresentation | undefined;
}

/**
 * Request header fields that leave a cached answer as it is, each with its bit in a set of fields seen: the
 * connection's, the token, content negotiation the service does not do, the caller's request id and a proxy's
 * forwarding fields. Any other field (`Accept-Encoding`, `If-None-Match`, `Cache-Control`, `Idempotency-Key`, a
 * body's fields…) sends the request to the pipeline.
 */
const NEUTRAL_FIELDS = new Map(
  [
    'host',
    'connection',
    'keep-alive',
    'authorization',
    'user-agent',
    'accept',
    'accept-language',
    'x-request-id',
    'forwarded',
    'x-forwarded-for',
    'x-forwarded-host',
    'x-forwarded-proto',
    'x-forwarded-port',
    'x-real-ip',
  ].map((name, index) => [name, 1 << index]),
);

/** The fields a cached answer reads from a request whose header fields are all neutral. */
interface NeutralFields {
  authorization: string | undefined;
  requestId: string | undefined;
}

/**
 * The `Authorization` and `x-request-id` fields of a request when every header field it carries is neutral and
 * none is repeated, else undefined. Read from the raw header lines (`IncomingMessage.rawHeaders`: name, value, …):
 * Node builds the `headers` object on its first read, a cost a cached answer need not pay. Without repeated
 * fields the values are the ones `headers` would hold.
 */
function neutralFields(rawHeaders: readonly string[]): NeutralFields | undefined {
  const fields: NeutralFields = { authorization: undefined, requestId: undefined };
  let seen = 0;
  for (let index = 0; index < rawHeaders.length; index += 2) {
    const name = (rawHeaders[index] as string).toLowerCase();
    const bit = NEUTRAL_FIELDS.get(name);
    if (bit === undefined || (seen & bit) !== 0) return undefined;
    seen |= bit;
    if (name === 'authorization') fields.authorization = rawHeaders[index + 1];
    else if (name === 'x-request-id') fields.requestId = rawHeaders[index + 1];
  }
  return fields;
}

/** What `CachedAnswers` answers with, known once the app and its groups are built. */
export interface CachedAnswersSettings {
  config: Config;
  authenticator: TokenAuthenticator;
  metrics: ServiceMetrics;
  /** The rate limit's counts when it counts in memory (`MemoryCounts.of(config)`). */
  memoryCounts: MemoryCounts | undefined;
  routes: readonly CachedRoute[];
  /** Whether the service serves requests: ready (P166) and not shutting down (P35). */
  serving: () => boolean;
  /** Whether Fastify writes a log line for every request. */
  requestLogs: boolean;
}

/** A route with its histogram series. */
interface ServedRoute extends CachedRoute {
  observe(seconds: number): void;
}

/**
 * The answers from cache of one server; answers nothing until `enable` (the server exists before the groups and
 * the app's state it needs). Not enabled when the rate limit counts in a shared store (PostgreSQL or Redis: an
 * asynchronous count) or Fastify logs every request: then every request takes the pipeline.
 */
export class CachedAnswers {
  private settings: CachedAnswersSettings | undefined;
  private routes: ServedRoute[] = [];
  private policy = '';

  /** Starts answering with `settings` unless they rule it out (see the class). */
  enable(settings: CachedAnswersSettings): void {
    const { config } = settings;
    if (settings.requestLogs || (config.rateLimitMax > 0 && settings.memoryCounts === undefined)) return;
    this.settings = settings;
    this.policy = rateLimitPolicy(config);
    this.routes = settings.routes.map((route) => {
      const series = settings.metrics.httpRequestDuration.labels({
        route: route.route,
        method: 'GET',
        status: '200',
      });
      return { ...route, observe: (seconds: number) => series.observe(seconds) };
    });
  }

  /**
   * Answers `request` on `response` from a cache when it can (see the module).
   * @returns whether it answered; when false nothing was written or counted and the pipeline must answer
   */
  answer(request: IncomingMessage, response: ServerResponse): boolean {
    const settings = this.settings;
    if (settings === undefined || request.method !== 'GET') return false;
    const startedAt = performance.now();
    const url = request.url as string;
    let route: ServedRoute | undefined;
    let match: RegExpExecArray | null = null;
    for (const candidate of this.routes) {
      match = candidate.path.exec(url);
      if (match) {
        route = candidate;
        break;
      }
    }
    if (route === undefined || match === null) return false;
    const fields = neutralFields(request.rawHeaders);
    if (fields === undefined || !settings.serving()) return false;
    const authenticated = settings.authenticator.cachedAuthentication(fields.authorization);
    if (authenticated === undefined) return false;
    const cached = route.answer(authenticated.principal, match[1] as string);
    if (cached === undefined) return false;
    const { memoryCounts } = settings;
    const rateLimit = memoryCounts?.countWithinQuota(tokenRateLimitKey(authenticated));
    if (memoryCounts !== undefined && rateLimit === undefined) return false;
    const requestId = requestIdOf(fields.requestId);
    if (rateLimit === undefined)
      response.writeHead(200, {
        'content-type': cached.contentType,
        etag: cached.entityTag,
        'x-request-id': requestId,
        'content-length': cached.body.length,
      });
    else
      response.writeHead(200, {
        'content-type': cached.contentType,
        etag: cached.entityTag,
        'ratelimit-policy': this.policy,
        ratelimit: rateLimit,
        'x-request-id': requestId,
        'content-length': cached.body.length,
      });
    response.end(cached.body);
    route.observe((performance.now() - startedAt) / 1000);
    return true;
  }
}
