/**
 * Shapes the OpenAPI document for generated clients (issue 6): every operation gets an `operationId`
 * (`<method><Path>`, e.g. `getInboundByOrderId`, unless the route names its own), int64 path ids are declared as
 * integers (they are validated as digit strings so they are never rounded, P4), and operations that answer
 * `application/hal+json` (inbound, D5.11) declare that media type for their 200 answer.
 */
import type { FastifyDynamicSwaggerOptions } from '@fastify/swagger';
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

/** The per-route transform of `@fastify/swagger`. */
export const transformRoute: NonNullable<FastifyDynamicSwaggerOptions['transform']> = ({
  schema,
  url,
  route,
}) => {
  const method = (Array.isArray(route.method) ? route.method[0] : route.method) as string;
  const next: Schema = { ...(schema as Schema) };
  next.operationId ??= operationIdOf(method, url);
  if (next.params) next.params = typedPathIds(next.params);
  const response = next.response as Record<string, Schema> | undefined;
  const success = response?.['200'];
  if (isHal(url) && success && success.type !== 'null') {
    next.response = { ...response, 200: { content: { 'application/hal+json': { schema: success } } } };
  }
  return { schema: next, url };
};
