/**
 * Requests for one operation of the OpenAPI document (P141). A `RequestPlan` is drawn by fast-check from the
 * run's seed; `buildRequest` turns it into a request for an operation:
 *
 * 1. a valid request: path, query and header parameters and the body generated together from their schemas by
 *    json-schema-faker (seeded by the plan, optional fields kept with the plan's probability), or taken from
 *    the requests of the operation that succeeded before (`corpus.ts`); then id fields filled from the pools
 *    of real ids (P142);
 * 2. for about half the plans, one mutation drawn by fast-check: a value of the wrong type (`fc.anything()`),
 *    a number out of range, a hostile string, a required field or parameter removed, an unknown field or
 *    query parameter added, or a raw body (JSON of another shape, malformed or deeply nested JSON, another
 *    media type, a body over the size limit);
 * 3. the token: WRITE for most plans, READ, none or an unknown token for some.
 *
 * The same seed gives the same plans; with the same ids in the pools (a fresh database) the same requests.
 */
import fc from 'fast-check';
import { generateSync } from 'json-schema-faker';
import type { Corpus, RequestValues } from './corpus.ts';
import { IdPools, isIdName, pathStemsOf, stemsOf } from './id-pools.ts';
import { isJsonMediaType, type FuzzOperation, type JsonSchema, type ParameterLocation } from './openapi.ts';

/** Which token a request carries. */
export type AuthMode = 'write' | 'read' | 'none' | 'unknown';

/** A body sent as it is instead of the generated one. */
export type RawBody =
  | { kind: 'text'; text: string; contentType: string | undefined }
  /** `[[[…]]]` nested `depth` times (built when sent). */
  | { kind: 'nesting'; depth: number }
  /** A JSON string one byte over `bodyLimitBytes` (built when sent). */
  | { kind: 'oversized' };

/**
 * What makes a request invalid. `target` in [0, 1) chooses the field or parameter among those the mutation
 * applies to.
 */
export type Mutation =
  | { kind: 'wrong-type'; target: number; value: unknown }
  | { kind: 'out-of-range'; target: number; choice: number; offset: number }
  | { kind: 'hostile-string'; target: number; text: string; raw: boolean }
  | { kind: 'missing-required'; target: number }
  | { kind: 'unknown-field'; target: number; name: string; value: unknown }
  | { kind: 'raw-body'; body: RawBody };

/** Everything random about one request, drawn before the operation's state is known. */
export interface RequestPlan {
  /** Seed of json-schema-faker for the valid parts. */
  seed: number;
  /** Probability that the generator fills an optional field or parameter. */
  optionals: number;
  /** Start from a request that succeeded, chosen by this number in [0, 1); null = generate one. */
  corpusDraw: number | null;
  auth: AuthMode;
  /** Uniform numbers in [0, 1) for the id choices, used in turn. */
  draws: number[];
  mutation: Mutation | null;
}

/** A request ready for `app.inject`. */
export interface FuzzRequest {
  method: FuzzOperation['method'];
  url: string;
  headers: Record<string, string>;
  payload?: string;
  /** `valid` or the mutation's kind (reports). */
  variant: string;
}

/** What `buildRequest` needs besides the plan. */
export interface RequestContext {
  pools: IdPools;
  corpus: Corpus;
  writeToken: string;
  readToken: string;
  /** The service's `BODY_LIMIT_BYTES`. */
  bodyLimitBytes: number;
}

const unit = fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true });

/** Pieces hostile strings are made of: NUL, lone surrogates, quotes, escapes, URL syntax, bidi controls. */
const HOSTILE_PIECES = [
  '\u0000',
  '\uD800',
  '\uDFFF',
  "'",
  '"',
  '\\',
  '%',
  '%ff',
  '%00',
  '../',
  '..%2f',
  '<script>',
  '${x}',
  "' OR 1=1 --",
  '\u202E',
  '\uFEFF',
  '\u{1F600}',
  'é',
  '\r\n',
  '\t',
  ' ',
  '/',
  '?',
  '#',
  '&',
  '=',
  '+',
] as const;

/** Strings no schema expects: any code point, hostile pieces, longer than any limit, or lookalikes. */
const hostileString: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 64 }),
  fc.string({ unit: fc.constantFrom(...HOSTILE_PIECES), minLength: 1, maxLength: 16 }),
  fc.integer({ min: 1_001, max: 70_000 }).map((length) => 'x'.repeat(length)),
  fc.constantFrom('', ' ', 'null', 'true', '0', '-1', 'NaN', 'Infinity', '1e309', '[]', '{}'),
);

const rawBody: fc.Arbitrary<RawBody> = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }).map((value) => ({
    kind: 'text' as const,
    text: JSON.stringify(value),
    contentType: 'application/json',
  })),
  fc
    .tuple(fc.json({ maxDepth: 3 }), unit, fc.constantFrom('', '}', ',', '\u0000', '"', 'NaN'))
    .map(([text, at, junk]) => ({
      kind: 'text' as const,
      text: text.slice(0, Math.floor(at * text.length)) + junk,
      contentType: 'application/json',
    })),
  fc.integer({ min: 5_000, max: 200_000 }).map((depth) => ({ kind: 'nesting' as const, depth })),
  fc
    .tuple(
      fc.constantFrom(
        'text/plain',
        'application/xml',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=fuzz',
        'application/octet-stream',
        'application/json; charset=utf-16',
        undefined,
      ),
      fc.string({ unit: 'binary', maxLength: 200 }),
    )
    .map(([contentType, text]) => ({ kind: 'text' as const, text, contentType })),
  fc.constant({ kind: 'oversized' as const }),
);

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant('wrong-type' as const), target: unit, value: fc.anything({ maxDepth: 2 }) }),
  fc.record({ kind: fc.constant('out-of-range' as const), target: unit, choice: unit, offset: fc.nat() }),
  fc.record({
    kind: fc.constant('hostile-string' as const),
    target: unit,
    text: hostileString,
    raw: fc.boolean(),
  }),
  fc.record({ kind: fc.constant('missing-required' as const), target: unit }),
  fc.record({
    kind: fc.constant('unknown-field' as const),
    target: unit,
    name: fc.string({ minLength: 1, maxLength: 24 }),
    value: fc.jsonValue({ maxDepth: 2 }),
  }),
  fc.record({ kind: fc.constant('raw-body' as const), body: rawBody }),
);

/**
 * The plan of one request (P141): 55 % valid, 45 % mutated; 80 % WRITE token; half from a request that
 * succeeded; optional fields generated never, half the time or nearly always.
 */
export const requestPlan: fc.Arbitrary<RequestPlan> = fc.record({
  seed: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
  optionals: fc.constantFrom(0, 0.5, 0.9),
  corpusDraw: fc.option(unit, { freq: 2 }),
  auth: fc.oneof(
    { weight: 16, arbitrary: fc.constant('write' as const) },
    { weight: 2, arbitrary: fc.constant('read' as const) },
    { weight: 1, arbitrary: fc.constant('none' as const) },
    { weight: 1, arbitrary: fc.constant('unknown' as const) },
  ),
  draws: fc.array(unit, { minLength: 32, maxLength: 32 }),
  mutation: fc.oneof({ weight: 11, arbitrary: fc.constant(null) }, { weight: 9, arbitrary: mutation }),
});

/** The parts of a request being built, before serialization. */
interface RequestParts extends RequestValues {
  /** Number literals to put in the body's JSON text in place of their placeholder strings. */
  literals: Map<string, string>;
  /** Parameters written into the URL without escaping `%` (malformed escapes on purpose). */
  raw: Set<string>;
  rawBody?: RawBody;
}

/** A place a mutation can change: a parameter, or a node of the body (`keys` from the body's root). */
interface Location {
  part: ParameterLocation | 'body';
  keys: (string | number)[];
  schema: JsonSchema;
  required: boolean;
}

const schemaCache = new WeakMap<FuzzOperation, JsonSchema>();

/** One object schema for all parts of `operation`, so one generator call draws them consistently. */
function requestSchema(operation: FuzzOperation): JsonSchema {
  const cached = schemaCache.get(operation);
  if (cached) return cached;
  const parametersIn = (location: ParameterLocation) => {
    const parameters = operation.parameters.filter((parameter) => parameter.in === location);
    return {
      type: 'object',
      properties: Object.fromEntries(parameters.map((parameter) => [parameter.name, parameter.schema])),
      required: parameters.filter((parameter) => parameter.required).map((parameter) => parameter.name),
      additionalProperties: false,
    };
  };
  const schema = {
    type: 'object',
    properties: {
      path: parametersIn('path'),
      query: parametersIn('query'),
      header: parametersIn('header'),
      ...(operation.body && { body: operation.body.schema }),
    },
    required: ['path', 'query', 'header', ...(operation.body ? ['body'] : [])],
  };
  schemaCache.set(operation, schema);
  return schema;
}

/**
 * Builds the request `plan` describes for `operation` with the ids, kept requests and tokens of `context`.
 * @returns the request, and its values before any mutation (to keep in the corpus when it succeeds)
 */
export function buildRequest(
  operation: FuzzOperation,
  plan: RequestPlan,
  context: RequestContext,
): { request: FuzzRequest; values: RequestValues } {
  const values =
    (plan.corpusDraw === null ? undefined : context.corpus.pick(operation.key, plan.corpusDraw)) ??
    (generateSync(requestSchema(operation), {
      seed: plan.seed,
      optionalsProbability: plan.optionals,
      // Short arrays keep requests small; past its depth limit the generator gives up on constraints (model
      // cards nest 6 levels under the request object).
      maxItems: 4,
      maxDepth: 12,
    }) as RequestValues);
  let drawn = 0;
  const draw = () => plan.draws[drawn++ % plan.draws.length] ?? 0;
  const parts: RequestParts = { ...values, literals: new Map(), raw: new Set() };
  // A request that succeeded keeps most of its ids; a generated one takes real ids wherever it can.
  fillIds(parts, operation, context.pools, draw, plan.corpusDraw === null ? 0.85 : 0.3);
  const filled: RequestValues = structuredClone({
    path: parts.path,
    query: parts.query,
    header: parts.header,
    body: parts.body,
  });
  if (plan.mutation) mutate(parts, operation, plan.mutation);
  return { request: serialize(parts, operation, plan, context, draw), values: filled };
}

const idLike = (value: unknown) =>
  (typeof value === 'number' && Number.isInteger(value)) ||
  (typeof value === 'string' && /^\d+$/.test(value));

/**
 * Calls `map` with every id of a request (an integer or digit string in an id field or parameter, or in a body
 * that is a list of ids) and the pool names it draws from (`stemsOf`); returns the values with the ids `map`
 * answers. Ids mapped into a list are made unique again (lists of ids are sets: `uniqueItems`).
 */
export function mapIds(
  values: RequestValues,
  operation: FuzzOperation,
  map: (id: number | string, stems: string[]) => unknown,
): RequestValues {
  const pathStems = pathStemsOf(operation.path);
  const mapOne = (value: unknown, stems: string[]) =>
    idLike(value) ? map(value as number | string, stems) : value;
  const visit = (value: unknown, parentKey: string | undefined): unknown => {
    if (Array.isArray(value) && parentKey === undefined && value.every(idLike))
      return [...new Set(value.map((item) => mapOne(item, pathStems)))];
    if (Array.isArray(value)) return value.map((item) => visit(item, parentKey));
    if (typeof value !== 'object' || value === null) return value;
    const entries = Object.entries(value as Record<string, unknown>).map(([key, item]) => {
      if (!isIdName(key)) return [key, visit(item, key)];
      const stems = stemsOf(key, parentKey, pathStems);
      return [
        key,
        Array.isArray(item) ? [...new Set(item.map((id) => mapOne(id, stems)))] : mapOne(item, stems),
      ];
    });
    return Object.fromEntries(entries);
  };
  return {
    path: visit(values.path, undefined) as Record<string, unknown>,
    query: visit(values.query, undefined) as Record<string, unknown>,
    header: values.header,
    body: visit(values.body, undefined),
  };
}

/** Puts real ids (with probability `share`, when a pool matches) into every id field and parameter (P142). */
function fillIds(
  parts: RequestParts,
  operation: FuzzOperation,
  pools: IdPools,
  draw: () => number,
  share: number,
): void {
  const filled = mapIds(parts, operation, (value, stems) => {
    if (draw() >= share) return value;
    const id = pools.pick(stems, draw());
    if (id === undefined) return value;
    return typeof value === 'string' ? String(id) : id;
  });
  parts.path = filled.path;
  parts.query = filled.query;
  parts.body = filled.body;
}

const typesOf = (schema: JsonSchema): unknown[] => (Array.isArray(schema.type) ? schema.type : [schema.type]);

/** The schema of `key` inside `schema` (a property, the items, or the first alternative that has it). */
function childSchema(schema: JsonSchema, key: string | number): JsonSchema {
  if (typeof key === 'number') return (schema.items as JsonSchema | undefined) ?? {};
  const own = (schema.properties as Record<string, JsonSchema> | undefined)?.[key];
  if (own) return own;
  for (const part of ['allOf', 'anyOf', 'oneOf'] as const) {
    const alternatives = schema[part];
    if (!Array.isArray(alternatives)) continue;
    for (const alternative of alternatives as JsonSchema[]) {
      const found = childSchema(alternative, key);
      if (Object.keys(found).length > 0) return found;
    }
  }
  return {};
}

/** Every parameter and body node of the request, for mutations to choose from. */
function locationsOf(parts: RequestParts, operation: FuzzOperation): Location[] {
  const locations: Location[] = operation.parameters.map((parameter) => ({
    part: parameter.in,
    keys: [parameter.name],
    schema: parameter.schema,
    required: parameter.required,
  }));
  if (!operation.body) return locations;
  const visit = (value: unknown, schema: JsonSchema, keys: (string | number)[], required: boolean) => {
    locations.push({ part: 'body', keys, schema, required });
    if (Array.isArray(value))
      value.forEach((item, index) => visit(item, childSchema(schema, index), [...keys, index], false));
    else if (typeof value === 'object' && value !== null) {
      const requiredNames = Array.isArray(schema.required) ? (schema.required as string[]) : [];
      for (const [key, item] of Object.entries(value))
        visit(item, childSchema(schema, key), [...keys, key], requiredNames.includes(key));
    }
  };
  visit(parts.body, operation.body.schema, [], operation.body.required);
  return locations;
}

/** The container of a location and the key of its value in it (`undefined` for the body's root). */
function containerOf(
  parts: RequestParts,
  location: Location,
): [Record<string | number, unknown>, string | number] | undefined {
  if (location.part !== 'body') return [parts[location.part], location.keys[0] ?? ''];
  if (location.keys.length === 0) return undefined;
  let container = parts.body as Record<string | number, unknown>;
  for (const key of location.keys.slice(0, -1))
    container = container[key] as Record<string | number, unknown>;
  return [container, location.keys[location.keys.length - 1] ?? ''];
}

function setAt(parts: RequestParts, location: Location, value: unknown): void {
  const found = containerOf(parts, location);
  if (!found) parts.body = value;
  else found[0][found[1]] = value;
}

function deleteAt(parts: RequestParts, location: Location): void {
  const found = containerOf(parts, location);
  if (!found) parts.body = undefined;
  else if (Array.isArray(found[0])) found[0].splice(Number(found[1]), 1);
  else delete found[0][found[1]];
}

const pick = <T>(items: readonly T[], target: number): T | undefined =>
  items[Math.floor(target * items.length)];

/** Number literals beyond a field's bounds, or beyond what JSON numbers and int64 hold. */
function outOfRangeLiterals(schema: JsonSchema, offset: number): string[] {
  const bounds = [
    ...(typeof schema.maximum === 'number' ? [String(schema.maximum + 1 + offset)] : []),
    ...(typeof schema.minimum === 'number' ? [String(schema.minimum - 1 - offset)] : []),
  ];
  return [
    ...bounds,
    ...bounds,
    '1e309',
    '-1e309',
    '9223372036854775808',
    '-9223372036854775809',
    '1.5',
    '1e-400',
  ];
}

/** Applies `mutation` to `parts` (see the module comment). */
function mutate(parts: RequestParts, operation: FuzzOperation, mutation: Mutation): void {
  const locations = locationsOf(parts, operation);
  const ofType = (type: string, value: (l: Location) => unknown) =>
    locations.filter(
      (location) => typesOf(location.schema).includes(type) || typeof value(location) === type,
    );
  const valueAt = (location: Location): unknown => {
    const found = containerOf(parts, location);
    return found ? found[0][found[1]] : parts.body;
  };
  switch (mutation.kind) {
    case 'wrong-type': {
      const location = pick(locations, mutation.target);
      if (location) setAt(parts, location, mutation.value);
      else parts.query['unexpected'] = mutation.value;
      return;
    }
    case 'out-of-range': {
      const numeric = [...ofType('integer', valueAt), ...ofType('number', valueAt)];
      const location = pick(numeric.length > 0 ? numeric : locations, mutation.target);
      if (!location) return void (parts.query['limit'] = '1e309');
      const literal = pick(outOfRangeLiterals(location.schema, mutation.offset), mutation.choice) ?? '1e309';
      if (location.part !== 'body') return setAt(parts, location, literal);
      const placeholder = `__fuzz_literal_${parts.literals.size}__`;
      parts.literals.set(placeholder, literal);
      return setAt(parts, location, placeholder);
    }
    case 'hostile-string': {
      const strings = ofType('string', valueAt);
      const location = pick(strings.length > 0 ? strings : locations, mutation.target);
      if (!location) return void (parts.query['query'] = mutation.text);
      setAt(parts, location, mutation.text);
      if (mutation.raw && location.part !== 'body') parts.raw.add(String(location.keys[0]));
      return;
    }
    case 'missing-required': {
      const required = locations.filter((location) => location.required && location.part !== 'path');
      const location = pick(
        required.length > 0 ? required : locations.filter((l) => l.part !== 'path'),
        mutation.target,
      );
      if (location) deleteAt(parts, location);
      return;
    }
    case 'unknown-field': {
      const objects = locations.filter((location) => {
        const value = location.part === 'body' ? valueAt(location) : undefined;
        return typeof value === 'object' && value !== null && !Array.isArray(value);
      });
      const location = pick([...objects, undefined], mutation.target);
      const container = location ? (valueAt(location) as Record<string, unknown>) : parts.query;
      const name = mutation.name in container ? `x${mutation.name}` : mutation.name;
      // defineProperty: a name like `__proto__` becomes a field, not the object's prototype.
      Object.defineProperty(container, name, { value: mutation.value, enumerable: true, writable: true });
      return;
    }
    case 'raw-body':
      parts.rawBody = mutation.body;
      return;
    default:
      mutation satisfies never;
  }
}

/** `value` as the text of a parameter: strings as they are, other values as JSON. */
const parameterText = (value: unknown) => (typeof value === 'string' ? value : (JSON.stringify(value) ?? ''));

/**
 * Percent-encodes `text` for a URL. A lone surrogate becomes its (invalid) UTF-8 bytes, as a hostile client
 * would send it; `keepPercent` leaves `%` as it is, so malformed escapes like `%ff` reach the server.
 */
export function encodeComponent(text: string, keepPercent = false): string {
  let encoded = '';
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    const next = text.charCodeAt(index + 1);
    if (code >= 0xd800 && code <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
      encoded += encodeURIComponent(text.slice(index, index + 2));
      index++;
    } else if (code >= 0xd800 && code <= 0xdfff) {
      encoded += [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)]
        .map((byte) => `%${byte.toString(16).toUpperCase()}`)
        .join('');
    } else encoded += keepPercent && text[index] === '%' ? '%' : encodeURIComponent(text[index] ?? '');
  }
  return encoded;
}

function serialize(
  parts: RequestParts,
  operation: FuzzOperation,
  plan: RequestPlan,
  context: RequestContext,
  draw: () => number,
): FuzzRequest {
  const path = operation.path.replace(/\{(\w+)\}/g, (_match, name: string) =>
    encodeComponent(parameterText(parts.path[name]), parts.raw.has(name)),
  );
  const query: string[] = [];
  for (const [name, value] of Object.entries(parts.query)) {
    if (value === undefined) continue;
    for (const item of Array.isArray(value) ? (value as unknown[]) : [value])
      query.push(`${encodeComponent(name)}=${encodeComponent(parameterText(item), parts.raw.has(name))}`);
  }
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(parts.header)) {
    // Header values can only carry visible ASCII: anything else is escaped as in a URL.
    if (value !== undefined) headers[name.toLowerCase()] = encodeComponent(parameterText(value), true);
  }
  const token =
    plan.auth === 'read' ? context.readToken : plan.auth === 'write' ? context.writeToken : undefined;
  if (token !== undefined) headers.authorization = draw() < 0.2 ? `Bearer ${token}` : token;
  if (plan.auth === 'unknown') headers.authorization = `so_fuzz${plan.seed}`;
  const body = bodyOf(parts, operation, context.bodyLimitBytes);
  if (body?.contentType !== undefined) headers['content-type'] = body.contentType;
  return {
    method: operation.method,
    url: path + (query.length > 0 ? `?${query.join('&')}` : ''),
    headers,
    ...(body !== undefined && { payload: body.text }),
    variant: plan.mutation?.kind ?? 'valid',
  };
}

/** The body's text and media type, or undefined for no body. */
function bodyOf(
  parts: RequestParts,
  operation: FuzzOperation,
  bodyLimitBytes: number,
): { text: string; contentType: string | undefined } | undefined {
  const raw = parts.rawBody;
  if (raw?.kind === 'text') return raw;
  if (raw?.kind === 'nesting')
    return { text: '['.repeat(raw.depth) + ']'.repeat(raw.depth), contentType: 'application/json' };
  if (raw?.kind === 'oversized')
    return { text: JSON.stringify('x'.repeat(bodyLimitBytes)), contentType: 'application/json' };
  if (!operation.body || parts.body === undefined) return undefined;
  let text = JSON.stringify(parts.body);
  for (const [placeholder, literal] of parts.literals) text = text.replace(`"${placeholder}"`, literal);
  const mediaType = operation.body.mediaType;
  return { text, contentType: isJsonMediaType(mediaType) ? mediaType : 'application/json' };
}
