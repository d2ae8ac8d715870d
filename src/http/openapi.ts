/**
 * Shapes the OpenAPI document for generated clients: every operation gets an `operationId`
 * (`<method><Path>`, e.g. `getInboundByOrderId`, unless the route names its own), int64 path ids are declared as
 * integers (they are validated as digit strings so they are never rounded, P4), operations that answer
 * `application/hal+json` (inbound, D5.11) declare that media type for their 200 answer, every mutation of
 * `/api` declares the `Idempotency-Key` header with its 409 and 422 answers (D3.2, P120), and every counted
 * operation its 429 answer with the rate-limit header fields (P125–P127).
 */
import type { FastifyDynamicSwaggerOptions } from '@fastify/swagger';
import { isExempt } from './rate-limit.ts';
import { INT64_PATTERN } from './schemas.ts';

type Schema = Record<string, unknown>;

/** `get` + `/api/inbound/{orderId}/history` → `getInboundByOrderIdHistory`. */
export function operationIdOf(method: string, url: string): string {
  const words = url
    .replace(/^\/api\//, '/')
    .split('/')
    .filter(Boolean)
    .flatMap((segment) => {
      const parameter = /^[{:](\w+)}?$/.exec(segment);
      return parameter ? ['by', parameter[1] as string] : segment.split(/[^A-Za-z0-9]+/);
    })
    .filter(Boolean);
  return method.toLowerCase() + words.map((word) => word[0]?.toUpperCase() + word.slice(1)).join('');
}

/** Path parameters checked as int64 digit strings, shown as `integer`/`int64`. */
function typedPathIds(params: unknown): unknown {
  if (typeof params !== 'object' || params === null) return params;
  const schema = params as Schema;
  const properties = schema.properties as Record<string, Schema> | undefined;
  if (!properties) return params;
  return {
    ...schema,
    properties: Object.fromEntries(
      Object.entries(properties).map(([name, property]) => [
        name,
        property.pattern === INT64_PATTERN
          ? { type: 'integer', format: 'int64', minimum: 0, description: property.description ?? 'int64 id' }
          : property,
      ]),
    ),
  };
}

/** Routes whose bodies are sent as `application/hal+json` (D5.11). */
const isHal = (url: string) => url.startsWith('/api/inbound');

/** Methods whose `/api` operations take an `Idempotency-Key` (D3.2, P120). */
const IDEMPOTENT_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Declares the `Idempotency-Key` header and its 409/422 answers on a mutation of `/api` (D3.2, P120). */
function withIdempotencyKey(schema: Schema): Schema {
  const headers = (schema.headers ?? { type: 'object', properties: {} }) as Schema;
  const response = schema.response as Record<string, Schema> | undefined;
  const error = { $ref: 'ErrorResponse' };
  return {
    ...schema,
    headers: {
      ...headers,
      properties: {
        ...(headers.properties as Schema),
        'Idempotency-Key': {
          type: 'string',
          minLength: 1,
          maxLength: 255,
          pattern: '^[\\x20-\\x7e]+$',
          description:
            'Makes a retry safe: the first request with a key runs and its answer is stored for 24 h; a repeat ' +
            'with the same key and request gets that answer with `Idempotent-Replayed: true`. 409 ' +
            '`error_idempotency_in_progress` while the first still runs, 422 `error_idempotency_key_reuse` for ' +
            'the same key with another request.',
        },
      },
    },
    response: { ...response, 409: response?.['409'] ?? error, 422: error },
  };
}

/**
 * Declares the conditional headers of a route that says `config: {conditional: 'read' | 'write'}` (P133, P134):
 * a read gets `If-None-Match` and its 304, a write `If-Match` (documentation only: `conditional.ts` reads them).
 */
function withConditionalHeaders(schema: Schema, kind: unknown): Schema {
  if (kind !== 'read' && kind !== 'write') return schema;
  const headers = (schema.headers ?? { type: 'object', properties: {} }) as Schema;
  const header =
    kind === 'read'
      ? {
          'If-None-Match': {
            type: 'string',
            description:
              'The ETag of an earlier answer (e.g. `"order-12-v3"`); while the entity is unchanged the answer is ' +
              '304 with no body (P133).',
          },
        }
      : {
          'If-Match': {
            type: 'string',
            description:
              'The ETag the change applies to, instead of `versionId` in the body; stale → 409 ' +
              '`error_version_conflict` (P134).',
          },
        };
  const response = schema.response as Record<string, Schema> | undefined;
  return {
    ...schema,
    headers: { ...headers, properties: { ...(headers.properties as Schema), ...header } },
    ...(kind === 'read' && {
      response: { ...response, 304: { type: 'null', description: 'Not modified: the ETag still matches' } },
    }),
  };
}

/** The 429 answer of a counted operation (P125–P127); every counted answer also carries the two `RateLimit` fields. */
const RATE_LIMITED = {
  $ref: 'ErrorResponse',
  description:
    'Rate limited (`error_rate_limited`): the token spent its quota of the window. Every counted answer carries ' +
    '`RateLimit-Policy` and `RateLimit` (draft-ietf-httpapi-ratelimit-headers-10).',
  headers: {
    'Retry-After': { type: 'integer', minimum: 0, description: 'Seconds until the window ends' },
    'RateLimit-Policy': {
      type: 'string',
      description: 'The quota and its window in seconds, e.g. `"default";q=6000;w=60`',
    },
    RateLimit: {
      type: 'string',
      description: 'Requests remaining and seconds until the window ends, e.g. `"default";r=0;t=42`',
    },
  },
};

/** The per-route transform of `@fastify/swagger`. */
export const transformRoute: NonNullable<FastifyDynamicSwaggerOptions['transform']> = ({
  schema,
  url,
  route,
}) => {
  const method = (Array.isArray(route.method) ? route.method[0] : route.method) as string;
  const given = schema as Schema;
  const next: Schema =
    url.startsWith('/api/') && IDEMPOTENT_METHODS.has(method) ? withIdempotencyKey(given) : { ...given };
  next.operationId ??= operationIdOf(method, url);
  Object.assign(
    next,
    withConditionalHeaders(next, (route.config as { conditional?: unknown } | undefined)?.conditional),
  );
  if (next.params) next.params = typedPathIds(next.params);
  if (!isExempt(url)) next.response = { ...(next.response as Schema), 429: RATE_LIMITED };
  const response = next.response as Record<string, Schema> | undefined;
  const success = response?.['200'];
  if (isHal(url) && success && success.type !== 'null') {
    next.response = { ...response, 200: { content: { 'application/hal+json': { schema: success } } } };
  }
  return { schema: next, url };
};
