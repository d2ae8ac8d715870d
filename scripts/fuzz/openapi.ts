/**
 * Reads the service's own OpenAPI 3.1 document (`GET /openapi.json`) into the operations the fuzzer walks
 * (P140): every path × method, with its parameters, its JSON request body schema (references
 * to `components.schemas` inlined, so a generator can use it alone) and where each documented response schema
 * lives in the document (a JSON pointer, so Ajv resolves its `$ref`s against the document itself).
 *
 * Nothing here knows a resource group: groups added later are walked the same way.
 */

/** A JSON Schema node as the document holds it. */
export type JsonSchema = Record<string, unknown>;

/** The parts of an OpenAPI 3.1 document the fuzzer reads. */
export interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, OpenApiOperation>>;
  components?: { schemas?: Record<string, JsonSchema> };
}

interface OpenApiParameter {
  name: string;
  in: string;
  required?: boolean;
  schema?: JsonSchema;
}

interface OpenApiMedia {
  schema?: JsonSchema;
}

interface OpenApiOperation {
  operationId?: string;
  tags?: string[];
  parameters?: OpenApiParameter[];
  requestBody?: { required?: boolean; content?: Record<string, OpenApiMedia> };
  responses?: Record<string, { content?: Record<string, OpenApiMedia> }>;
}

/** Where a parameter goes in a request. */
export type ParameterLocation = 'path' | 'query' | 'header';

/** A parameter of an operation; `schema` has its references inlined. */
export interface FuzzParameter {
  name: string;
  in: ParameterLocation;
  required: boolean;
  schema: JsonSchema;
}

/** A documented answer: its media type and the JSON pointer of its schema, or neither for an empty body. */
export interface DocumentedResponse {
  mediaType?: string;
  /** `#/paths/…/schema` inside the document. */
  schemaPointer?: string;
}

/** One operation of the document, ready for the fuzzer. */
export interface FuzzOperation {
  /** `METHOD /path/{param}`, as printed in reports. */
  key: string;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** The templated path, e.g. `/api/inbound/{orderId}`. */
  path: string;
  operationId: string;
  /** The operation's groups (OpenAPI tags). */
  tags: string[];
  parameters: FuzzParameter[];
  /** The request body, when the operation documents one. */
  body?: { mediaType: string; required: boolean; schema: JsonSchema };
  /** Documented answers by status code (`"200"`, `"400"`, …). */
  responses: Record<string, DocumentedResponse>;
}

/** An operation the fuzzer cannot send, and why (printed, never silent). */
export interface SkippedOperation {
  key: string;
  reason: string;
}

const METHODS = new Set(['get', 'post', 'put', 'patch', 'delete']);
const PARAMETER_LOCATIONS = new Set<string>(['path', 'query', 'header']);

/** Escapes a JSON pointer segment (RFC 6901). */
const pointerSegment = (text: string) => text.replace(/~/g, '~0').replace(/\//g, '~1');

/** Whether a media type carries JSON (`application/json`, `application/hal+json`, `…+json`). */
export const isJsonMediaType = (mediaType: string) => /^application\/([\w.-]+\+)?json\b/.test(mediaType);

/**
 * The name of a `#/components/schemas/<name>` reference.
 * @throws Error for a reference elsewhere (the document would be broken)
 */
function componentName(reference: string): string {
  const name = /^#\/components\/schemas\/(.+)$/.exec(reference)?.[1];
  if (name === undefined) throw new Error(`unresolvable $ref ${reference}`);
  return name;
}

/**
 * `schema` itself, or the component schema its `$ref` names; `{}` for anything that is not a schema object.
 * @throws Error for a reference that is not a component schema of `document`
 */
export function followReference(schema: unknown, document: OpenApiDocument): JsonSchema {
  if (typeof schema !== 'object' || schema === null) return {};
  const node = schema as JsonSchema;
  if (typeof node.$ref !== 'string') return node;
  const target = document.components?.schemas?.[componentName(node.$ref)];
  if (target === undefined) throw new Error(`unresolvable $ref ${node.$ref}`);
  return target;
}

/**
 * Inlines every `#/components/schemas/…` reference of `schema` (a reference met again inside itself becomes
 * `{}`: any value), so generators need no resolver.
 * @throws Error for a reference that is not a component schema of `document`
 */
export function inlineReferences(schema: unknown, document: OpenApiDocument, seen: string[] = []): unknown {
  if (Array.isArray(schema)) return schema.map((item) => inlineReferences(item, document, seen));
  if (typeof schema !== 'object' || schema === null) return schema;
  const node = schema as JsonSchema;
  if (typeof node.$ref === 'string') {
    const name = componentName(node.$ref);
    return seen.includes(name)
      ? {}
      : inlineReferences(followReference(node, document), document, [...seen, name]);
  }
  return Object.fromEntries(
    Object.entries(node).map(([key, value]) => [key, inlineReferences(value, document, seen)]),
  );
}

/**
 * Lists the operations of `document` in document order, and those it cannot send with the reason (a method
 * other than GET, POST, PUT, PATCH, DELETE; a parameter in a cookie).
 */
export function listOperations(document: OpenApiDocument): {
  operations: FuzzOperation[];
  skipped: SkippedOperation[];
} {
  const operations: FuzzOperation[] = [];
  const skipped: SkippedOperation[] = [];
  for (const [path, methods] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(methods)) {
      const key = `${method.toUpperCase()} ${path}`;
      if (!METHODS.has(method)) {
        skipped.push({ key, reason: `method ${method.toUpperCase()} is not fuzzed` });
        continue;
      }
      const foreign = (operation.parameters ?? []).find((p) => !PARAMETER_LOCATIONS.has(p.in));
      if (foreign) {
        skipped.push({ key, reason: `parameter ${foreign.name} is in ${foreign.in}` });
        continue;
      }
      const pointer = `#/paths/${pointerSegment(path)}/${method}`;
      const [bodyMediaType, bodyMedia] = Object.entries(operation.requestBody?.content ?? {})[0] ?? [];
      operations.push({
        key,
        method: method.toUpperCase() as FuzzOperation['method'],
        path,
        operationId: operation.operationId ?? key,
        tags: operation.tags ?? [],
        parameters: (operation.parameters ?? []).map((parameter) => ({
          name: parameter.name,
          in: parameter.in as ParameterLocation,
          required: parameter.required === true,
          schema: inlineReferences(parameter.schema ?? {}, document) as JsonSchema,
        })),
        ...(bodyMediaType !== undefined && {
          body: {
            mediaType: bodyMediaType,
            required: operation.requestBody?.required === true,
            schema: inlineReferences(bodyMedia?.schema ?? {}, document) as JsonSchema,
          },
        }),
        responses: Object.fromEntries(
          Object.entries(operation.responses ?? {}).map(([status, response]) => {
            const [mediaType, media] = Object.entries(response.content ?? {})[0] ?? [];
            if (mediaType === undefined || media?.schema === undefined) return [status, {}];
            return [
              status,
              {
                mediaType,
                schemaPointer: `${pointer}/responses/${status}/content/${pointerSegment(mediaType)}/schema`,
              },
            ];
          }),
        ),
      });
    }
  }
  return { operations, skipped };
}
