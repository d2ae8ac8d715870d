/**
 * Mechanical conformance with Market1's published protocol: checks one HTTP exchange (a request our client sent
 * and the sandbox's answer) against the operation of the marketplace's OpenAPI 3.0 documents
 * (`tests/market1/reference/`, copies of `../shared/reference/market1/`): the operation exists and is not
 * `deprecated`; its path and query parameters are documented, required ones present, values of their schema;
 * the request body's media type and schema; the answer's status is documented for the operation, its media type
 * (`application/json`, `text/plain`…) and body match the documented response. Schemas are validated with ajv
 * (formats by ajv-formats: `date-time` needs an offset), so `additionalProperties: false` refuses what the
 * document closes; OpenAPI's `nullable` is ajv's own keyword. A body whose schema is a `oneOf` of several
 * alternatives is checked against the one alternative its properties name (P179).
 */
import { readFileSync } from 'node:fs';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { afterEach, expect } from 'vitest';
import { parse } from 'yaml';
import type { SandboxExchange } from '../../src/connectors/market1/sandbox.ts';

/** One exchange as the sandbox's `onExchange` reports it (the fault mode aside). */
export type Exchange = Omit<SandboxExchange, 'fault'>;

interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  schema?: Record<string, unknown>;
}

interface Operation {
  deprecated?: boolean;
  parameters?: (Parameter | { $ref: string })[];
  requestBody?: { required?: boolean; content?: Record<string, unknown> };
  responses: Record<string, unknown>;
}

interface Document {
  paths: Record<string, Record<string, unknown>>;
  components?: Record<string, Record<string, unknown>>;
}

/** The reference documents of the Market1 connector. */
export const MARKET1_DOCUMENTS = ['08-promotion.yaml', '02-products.yaml', '10-tariffs.yaml'].map(
  (name) => new URL(`./reference/${name}`, import.meta.url),
);

const pointer = (segments: string[]) =>
  segments.map((segment) => segment.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

/** The checker of a set of OpenAPI documents. */
export class OpenApiConformance {
  private readonly ajv = new Ajv({ strict: false, allErrors: true, logger: false });
  /** Each document as ajv knows it (`oneOf` read as `anyOf`) and as written (`raw`, for telling alternatives apart). */
  private readonly documents: { id: string; document: Document; raw: Document }[] = [];
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(files: URL[] = MARKET1_DOCUMENTS) {
    addFormats.default(this.ajv);
    for (const format of ['int32', 'int64', 'uint', 'double', 'float', 'ISO 8601', 'binary', 'byte'])
      this.ajv.addFormat(format, true);
    for (const file of files) {
      const id = `market1:${file.pathname.split('/').pop()}`;
      const raw = parse(readFileSync(file, 'utf8')) as Document;
      const document = anyOfForOneOf(raw) as Document;
      this.ajv.addSchema(document, id);
      this.documents.push({ id, document, raw });
    }
  }

  /** The violations of `exchange` (empty when it follows the documents), each a sentence. */
  check(exchange: Exchange): string[] {
    const method = exchange.method.toLowerCase();
    const where = `${exchange.method} ${exchange.path}`;
    const found = this.find(method, exchange.path);
    if (!found) return [`${where}: no such operation in the documents`];
    const { id, document, raw, template, operation, pathParameters } = found;
    const violations: string[] = [];
    const fail = (message: string) => violations.push(`${where}: ${message}`);
    if (operation.deprecated) fail('the operation is deprecated');
    const base = ['', 'paths', template, method];

    // Parameters.
    const parameters = [
      ...((document.paths[template]!.parameters as Operation['parameters']) ?? []),
      ...(operation.parameters ?? []),
    ].map((parameter) => this.resolve<Parameter>(document, parameter));
    const queryNames = new Set(parameters.filter((p) => p.in === 'query').map((p) => p.name));
    for (const name of Object.keys(exchange.query))
      if (!queryNames.has(name)) fail(`query parameter ${name} is not documented`);
    for (const parameter of parameters) {
      if (parameter.in !== 'query' && parameter.in !== 'path') continue;
      const raw = parameter.in === 'query' ? exchange.query[parameter.name] : pathParameters[parameter.name];
      if (raw === undefined) {
        if (parameter.required) fail(`required ${parameter.in} parameter ${parameter.name} is missing`);
        continue;
      }
      const schema = parameter.schema ?? {};
      const value = coerce(raw, schema.type);
      const validate = this.ajv.compile(schema);
      if (!validate(value))
        fail(`${parameter.in} parameter ${parameter.name}=${raw}: ${this.ajv.errorsText(validate.errors)}`);
    }

    // Request body.
    const requestBody = operation.requestBody;
    const hasBody = exchange.requestBody !== undefined && exchange.requestBody !== null;
    if (!requestBody) {
      if (hasBody) fail('the operation takes no request body');
    } else if (!hasBody) {
      if (requestBody.required) fail('the required request body is missing');
    } else {
      const media = mediaType(exchange.requestContentType);
      if (!media || !requestBody.content?.[media])
        fail(`request media type ${String(media)} is not documented`);
      else
        this.validateBody(
          id,
          raw,
          [...base, 'requestBody', 'content', media, 'schema'],
          exchange.requestBody,
          (errors) => fail(`request body: ${errors}`),
        );
    }

    // Answer.
    const status = String(exchange.status);
    const responseKey = [status, `${status[0]}XX`, 'default'].find((key) => key in operation.responses);
    if (!responseKey) {
      fail(`answer status ${status} is not documented`);
      return violations;
    }
    const response = this.resolve<{ content?: Record<string, unknown> }>(
      document,
      operation.responses[responseKey] as object,
    );
    const responsePath = responseRef(operation.responses[responseKey]) ?? [...base, 'responses', responseKey];
    if (!response.content) {
      if (exchange.responseText !== '') fail(`answer ${status} has a body the document does not give it`);
      return violations;
    }
    const media = mediaType(exchange.responseContentType);
    if (!media || !response.content[media]) {
      fail(
        `answer ${status} media type ${String(media)} is not documented (${Object.keys(response.content).join(', ')})`,
      );
      return violations;
    }
    let body: unknown = exchange.responseText;
    if (media.endsWith('json'))
      try {
        body = JSON.parse(exchange.responseText);
      } catch {
        fail(`answer ${status} is not JSON`);
        return violations;
      }
    this.validateBody(id, raw, [...responsePath, 'content', media, 'schema'], body, (errors) =>
      fail(`answer ${status}: ${errors}`),
    );
    return violations;
  }

  private find(method: string, path: string) {
    for (const { id, document, raw } of this.documents)
      for (const [template, item] of Object.entries(document.paths)) {
        const names: string[] = [];
        const pattern = template
          .replace(/[.*+?^$()|[\]\\]/g, '\\$&')
          .replace(/\{(\w+)\}/g, (_match, name: string) => {
            names.push(name);
            return '([^/]+)';
          });
        const match = new RegExp(`^${pattern}$`).exec(path);
        const operation = item[method] as Operation | undefined;
        if (!match || !operation) continue;
        const pathParameters = Object.fromEntries(
          names.map((name, index) => [name, decodeURIComponent(match[index + 1]!)]),
        );
        return { id, document, raw, template, operation, pathParameters };
      }
    return undefined;
  }

  private resolve<T>(document: Document, value: object): T {
    let current = value as Record<string, unknown>;
    while (typeof current.$ref === 'string') {
      const segments = current.$ref.replace(/^#\//, '').split('/');
      current = segments.reduce<Record<string, unknown>>(
        (node, segment) => node[segment.replace(/~1/g, '/').replace(/~0/g, '~')] as Record<string, unknown>,
        document as unknown as Record<string, unknown>,
      );
    }
    return current as T;
  }

  /**
   * Validates a request or answer body (P179). When its schema is a `oneOf` of several alternatives, the
   * alternative is chosen by the properties only it declares (the commission report's `paidStorageKgvp…` for
   * Russia, `kgvpChina` for China, …): the body must carry those of exactly one alternative and is validated
   * against that one alone, so what it closes stays closed. A body that names none (an empty report) must be
   * valid under every alternative.
   */
  private validateBody(
    id: string,
    raw: Document,
    segments: string[],
    value: unknown,
    report: (errors: string) => void,
  ): void {
    const { node, path } = followRefs(raw, segments);
    const alternatives = node.oneOf;
    if (!Array.isArray(alternatives) || alternatives.length < 2) {
      this.validate(id, segments, value, report);
      return;
    }
    const declared = alternatives.map((alternative: object) => declaredProperties(raw, alternative));
    const present = propertiesOf(value);
    const named = declared
      .map((names, index) => ({
        index,
        own: [...names].filter((name) => declared.every((other, j) => j === index || !other.has(name))),
      }))
      .filter(({ own }) => own.some((name) => present.has(name)));
    const label = (index: number) => refName(alternatives[index]) ?? `alternative ${index}`;
    if (named.length > 1) {
      report(`mixes the properties of ${named.map(({ index }) => label(index)).join(' and ')} (oneOf)`);
      return;
    }
    const chosen = named.length === 1 ? [named[0]!.index] : alternatives.map((_alternative, index) => index);
    for (const index of chosen)
      this.validate(id, [...path, 'anyOf', String(index)], value, (errors) =>
        report(`as ${label(index)}: ${errors}`),
      );
  }

  private validate(id: string, segments: string[], value: unknown, report: (errors: string) => void): void {
    const ref = `${id}#${pointer(segments.slice(1)).replace(/^/, '/')}`;
    let validate = this.validators.get(ref);
    if (!validate) {
      validate = this.ajv.compile({ $ref: ref });
      this.validators.set(ref, validate);
    }
    if (!validate(value)) report(this.ajv.errorsText(validate.errors, { dataVar: 'body' }));
  }
}

/**
 * The document with every `oneOf` read as `anyOf`: the documents list alternatives that are not mutually
 * exclusive (the commission report's country variants have no required fields, so any object matches them), and
 * a strict `oneOf` would refuse every real answer. A body's own `oneOf` is then decided by `validateBody`.
 */
function anyOfForOneOf(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(anyOfForOneOf);
  if (typeof node !== 'object' || node === null) return node;
  return Object.fromEntries(
    Object.entries(node).map(([key, value]) => [key === 'oneOf' ? 'anyOf' : key, anyOfForOneOf(value)]),
  );
}

/** The schema at `segments` (starting with '') of `document`, following `$ref`s, and the path it was found at. */
function followRefs(
  document: Document,
  segments: string[],
): { node: Record<string, unknown>; path: string[] } {
  const node = segments
    .slice(1)
    .reduce<unknown>(
      (current, segment) => (current as Record<string, unknown> | undefined)?.[segment],
      document,
    ) as Record<string, unknown> | undefined;
  if (typeof node?.$ref === 'string')
    return followRefs(document, ['', ...node.$ref.replace(/^#\//, '').split('/').map(unescapePointer)]);
  return { node: node ?? {}, path: segments };
}

const unescapePointer = (segment: string) => segment.replace(/~1/g, '/').replace(/~0/g, '~');

/** The name of the component a `{$ref}` alternative points at. */
function refName(alternative: unknown): string | undefined {
  const ref = (alternative as { $ref?: unknown }).$ref;
  return typeof ref === 'string' ? ref.split('/').pop() : undefined;
}

/** Every property name a schema declares, at any depth (`properties`, `items`, compositions, `$ref`s). */
function declaredProperties(document: Document, schema: unknown, seen = new Set<string>()): Set<string> {
  const names = new Set<string>();
  const visit = (node: unknown): void => {
    if (typeof node !== 'object' || node === null) return;
    const record = node as Record<string, unknown>;
    if (typeof record.$ref === 'string') {
      if (seen.has(record.$ref)) return;
      seen.add(record.$ref);
      visit(
        followRefs(document, ['', ...record.$ref.replace(/^#\//, '').split('/').map(unescapePointer)]).node,
      );
      return;
    }
    for (const [name, property] of Object.entries((record.properties as object | undefined) ?? {})) {
      names.add(name);
      visit(property);
    }
    visit(record.items);
    if (typeof record.additionalProperties === 'object') visit(record.additionalProperties);
    for (const key of ['allOf', 'anyOf', 'oneOf'])
      if (Array.isArray(record[key])) (record[key] as unknown[]).forEach(visit);
  };
  visit(schema);
  return names;
}

/** Every property name of a JSON value, at any depth. */
function propertiesOf(value: unknown, names = new Set<string>()): Set<string> {
  if (Array.isArray(value)) for (const item of value) propertiesOf(item, names);
  else if (typeof value === 'object' && value !== null)
    for (const [name, item] of Object.entries(value)) {
      names.add(name);
      propertiesOf(item, names);
    }
  return names;
}

/** `#/components/responses/401` of a `$ref` response as path segments (starting with ''). */
function responseRef(response: unknown): string[] | undefined {
  const ref = (response as { $ref?: unknown }).$ref;
  return typeof ref === 'string' ? ['', ...ref.replace(/^#\//, '').split('/')] : undefined;
}

function mediaType(contentType: string | undefined): string | undefined {
  return contentType?.split(';')[0]?.trim().toLowerCase() || undefined;
}

/** A query or path value as the JSON value its schema expects. */
function coerce(raw: string, type: unknown): unknown {
  if (type === 'integer' || type === 'number') return raw.trim() === '' ? raw : Number(raw);
  if (type === 'boolean') return raw === 'true' ? true : raw === 'false' ? false : raw;
  return raw;
}

let shared: OpenApiConformance | undefined;

/** The checker of the Market1 documents, built once per test file. */
export function market1Conformance(): OpenApiConformance {
  shared ??= new OpenApiConformance();
  return shared;
}

/**
 * A recorder for a sandbox's `onExchange`: keeps every exchange and lists the violations of those no injected
 * fault answered (a fault is outside the protocol on purpose).
 */
export function conformanceRecorder(): {
  onExchange: (exchange: SandboxExchange) => void;
  exchanges: SandboxExchange[];
  violations: () => string[];
} {
  const exchanges: SandboxExchange[] = [];
  return {
    onExchange: (exchange) => exchanges.push(exchange),
    exchanges,
    violations: () =>
      exchanges
        .filter((exchange) => exchange.fault === undefined)
        .flatMap((exchange) => market1Conformance().check(exchange)),
  };
}

/**
 * A recorder whose exchanges are checked after each test of the file: the test fails when one of them left the
 * published protocol. Pass its `onExchange` to `startMarket1Sandbox`.
 */
export function useConformanceCheck(): ReturnType<typeof conformanceRecorder> {
  const recorder = conformanceRecorder();
  afterEach(() => {
    const violations = recorder.violations();
    recorder.exchanges.length = 0;
    expect(violations).toEqual([]);
  });
  return recorder;
}
