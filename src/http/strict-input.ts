/**
 * Input rules every route gets without opting in (P32–P34):
 *
 * - Unknown body fields and unknown query parameters are refused (`error_validation` naming the field), not
 *   silently dropped: every object of a body, querystring or params schema gets `additionalProperties: false`
 *   unless it says otherwise.
 * - Numbers are finite and bounded: an integer or number without a `maximum`/`minimum` gets ±(2^53 − 1), so
 *   `Infinity`, `1e309` or an int64 beyond 2^53 are refused before they reach SQL.
 * - Strings carry no NUL character and no unpaired UTF-16 surrogate (PostgreSQL text cannot store either).
 * - Values nest at most `MAX_INPUT_DEPTH` levels (P146).
 * - An integer in a query string or path is written in decimal digits with an optional minus sign (P138):
 *   Ajv's coercion alone would read `0x1F` as 31, `1e3` as 1000 and `1.0` as 1.
 *
 * Schemas are cloned before they are changed, so response schemas sharing the same objects keep their shape.
 */
import type { Ajv } from 'ajv';
import type { FastifyInstance, FastifyRequest, preValidationHookHandler, RouteOptions } from 'fastify';
import { validationError, type AppError } from './errors.ts';
import { hooksOf } from './route-hooks.ts';

type JsonSchema = Record<string, unknown>;

/** The Ajv keyword (an OpenAPI `x-` extension) that refuses Infinity and NaN after type coercion. */
export const FINITE_KEYWORD = 'x-finite';

/** Adds the `x-finite` keyword to an Ajv instance (Fastify's `ajv.plugins`). */
export function finiteNumbersPlugin(ajv: Ajv): Ajv {
  return ajv.addKeyword({
    keyword: FINITE_KEYWORD,
    schemaType: 'boolean',
    errors: false,
    validate: (required: boolean, data: unknown) =>
      !required || typeof data !== 'number' || Number.isFinite(data),
  });
}

/** A deep copy of a schema without TypeBox's symbol keys. */
const clone = <T>(schema: T): T => JSON.parse(JSON.stringify(schema)) as T;

/** Makes `schema` strict in place (see the module comment); `$ref`s are left to their own schemas. */
function tighten(schema: unknown): void {
  if (Array.isArray(schema)) {
    for (const item of schema) tighten(item);
    return;
  }
  if (typeof schema !== 'object' || schema === null) return;
  const node = schema as JsonSchema;
  const types = Array.isArray(node.type) ? node.type : [node.type];
  if (types.includes('object') && node.properties && node.additionalProperties === undefined)
    node.additionalProperties = false;
  if (types.includes('integer') || types.includes('number')) {
    node.maximum ??= Number.MAX_SAFE_INTEGER;
    node.minimum ??= -Number.MAX_SAFE_INTEGER;
    // Ajv's coercion turns the query text "Infinity" into Infinity after its own number checks (P33).
    node[FINITE_KEYWORD] = true;
  }
  for (const key of ['properties', 'patternProperties'] as const) {
    const children = node[key];
    if (children && typeof children === 'object') for (const child of Object.values(children)) tighten(child);
  }
  for (const key of ['items', 'anyOf', 'oneOf', 'allOf', 'not', 'additionalProperties'] as const)
    tighten(node[key]);
}

/**
 * A strict copy of a shared schema (`app.addSchema`) that a request part references with `Type.Ref`: the rules
 * above reach a route's own schemas but not what they reference.
 */
export function strictSchema<T>(schema: T): T {
  const copy = clone(schema);
  tighten(copy);
  return copy;
}

const UNPAIRED_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * How deeply a body, query or path value may nest (P146). No operation takes more than a few levels; a deeper
 * value (`[[[…]]]` 5,000 times) would overflow the stack of the recursive walks that read it.
 */
export const MAX_INPUT_DEPTH = 64;

/** A value no request may carry: its dotted path and why. */
export interface UnstorableValue {
  path: string;
  reason: string;
}

/**
 * The first string holding NUL or an unpaired surrogate (P34), or the first value nested deeper than
 * `MAX_INPUT_DEPTH` (P146), if any.
 */
export function findUnstorableValue(value: unknown, path: string, depth = 0): UnstorableValue | undefined {
  if (typeof value === 'string')
    return value.includes('\u0000') || UNPAIRED_SURROGATE.test(value)
      ? { path, reason: 'contains a NUL character or an unpaired surrogate' }
      : undefined;
  if (typeof value !== 'object' || value === null) return undefined;
  if (depth >= MAX_INPUT_DEPTH) return { path, reason: `nested more than ${MAX_INPUT_DEPTH} levels deep` };
  for (const [key, item] of Object.entries(value)) {
    const found = findUnstorableValue(item, path === '' ? key : `${path}.${key}`, depth + 1);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** How an integer is written in a query string or path (P138). */
const DECIMAL_INTEGER = /^-?[0-9]+$/;

/** Names of the properties of an object schema that are integers or arrays of integers. */
function integerProperties(schema: unknown): string[] {
  const properties = (schema as { properties?: Record<string, JsonSchema> } | undefined)?.properties ?? {};
  const isInteger = (node: unknown) => (node as JsonSchema | undefined)?.type === 'integer';
  return Object.entries(properties)
    .filter(([, property]) => isInteger(property) || (property.type === 'array' && isInteger(property.items)))
    .map(([name]) => name);
}

/**
 * The name of the first query or path integer of `values` not written in decimal digits, if any.
 * @param names the integer parameters of the route (`integerProperties`)
 */
function findNonDecimalInteger(values: unknown, names: readonly string[]): string | undefined {
  if (typeof values !== 'object' || values === null) return undefined;
  for (const name of names) {
    const value = (values as Record<string, unknown>)[name];
    const texts = Array.isArray(value) ? value : [value];
    if (texts.some((text) => typeof text === 'string' && !DECIMAL_INTEGER.test(text))) return name;
  }
  return undefined;
}

/** The integer parameters of a route's query string and path, checked for decimal digits (P138). */
interface IntegerParameters {
  query: string[];
  params: string[];
}

/**
 * Installs the rules on `app`; call before any route is registered. Each route gets its own `preValidation`
 * hook, first of its own, holding the route's integer parameters.
 */
export function installStrictInput(app: FastifyInstance): void {
  app.addHook('onRoute', (route: RouteOptions) => {
    const schema = route.schema as Record<string, unknown> | undefined;
    let integers: IntegerParameters | undefined;
    if (schema) {
      for (const part of ['body', 'querystring', 'params'] as const) {
        if (schema[part] === undefined) continue;
        schema[part] = clone(schema[part]);
        tighten(schema[part]);
      }
      const found = {
        query: integerProperties(schema.querystring),
        params: integerProperties(schema.params),
      };
      if (found.query.length + found.params.length > 0) integers = found;
    }
    const strictInput: preValidationHookHandler = (request, _reply, done) =>
      done(strictInputError(request, integers));
    route.preValidation = [strictInput, ...hooksOf(route.preValidation)];
  });
}

/** The `error_validation` of `request`'s first non-decimal integer or unstorable value; undefined when none. */
function strictInputError(
  request: FastifyRequest,
  integers: IntegerParameters | undefined,
): AppError | undefined {
  if (integers) {
    const field =
      findNonDecimalInteger(request.params, integers.params) ??
      findNonDecimalInteger(request.query, integers.query);
    if (field !== undefined) return validationError(field, 'must be an integer written in decimal digits');
  }
  for (const [part, fallback] of [
    [request.params, 'params'],
    [request.query, 'querystring'],
    [request.body, 'body'],
  ] as const) {
    const found = findUnstorableValue(part, '');
    if (found !== undefined) return validationError(found.path === '' ? fallback : found.path, found.reason);
  }
  return undefined;
}
