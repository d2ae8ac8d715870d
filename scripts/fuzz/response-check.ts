/**
 * What every answer of the fuzzer must be (P143): never a 5xx; an error (4xx) exactly
 * `{error, localMessage, params}` with a code of `src/http/error-catalog.ts` answered with that code's status;
 * a success (2xx) documented for the operation, with the documented media type and a body valid against the
 * documented response schema (Ajv over the OpenAPI document itself, so `$ref`s resolve to
 * `components.schemas`), or empty when the operation documents no body; a 304 empty.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import formats from 'ajv-formats';
import { errorCatalog } from '../../src/http/error-catalog.ts';
import type { FuzzOperation, OpenApiDocument } from './openapi.ts';

/** An answer as the fuzzer received it. */
export interface FuzzResponse {
  statusCode: number;
  headers: Record<string, unknown>;
  body: string;
}

/**
 * Why an answer breaks the rules: `5xx`, a body outside the model (`outside-model`), or no answer at all
 * (`no-answer`: the request could not be sent or took longer than the fuzzer waits).
 */
export interface Violation {
  kind: '5xx' | 'outside-model' | 'no-answer';
  message: string;
}

const DOCUMENT_ID = 'openapi.json';
const INT32 = 2 ** 31;

const parseJson = (text: string): { value: unknown } | undefined => {
  try {
    return { value: JSON.parse(text) as unknown };
  } catch {
    return undefined;
  }
};

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Checks answers against the rules above and the schemas of one OpenAPI document. */
export class ResponseChecker {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: false, logger: false });
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(document: OpenApiDocument) {
    formats.default(this.ajv);
    this.ajv.addFormat('int64', { type: 'number', validate: (value: number) => Number.isInteger(value) });
    this.ajv.addFormat('int32', {
      type: 'number',
      validate: (value: number) => Number.isInteger(value) && value >= -INT32 && value < INT32,
    });
    this.ajv.addSchema(document, DOCUMENT_ID);
  }

  /** The violation of `response` to a request of `operation`, or undefined when it keeps every rule. */
  check(operation: FuzzOperation, response: FuzzResponse): Violation | undefined {
    const { statusCode } = response;
    if (statusCode >= 500)
      return { kind: '5xx', message: `status ${statusCode}: ${response.body.slice(0, 500)}` };
    const problem =
      statusCode >= 400
        ? this.errorProblem(response)
        : statusCode >= 200 && statusCode < 300
          ? this.successProblem(operation, response)
          : statusCode === 304
            ? response.body === ''
              ? undefined
              : '304 with a body'
            : `unexpected status ${statusCode}`;
    return problem === undefined ? undefined : { kind: 'outside-model', message: problem };
  }

  private errorProblem(response: FuzzResponse): string | undefined {
    if (!String(response.headers['content-type']).startsWith('application/json'))
      return `error with content-type ${String(response.headers['content-type'])}`;
    const parsed = parseJson(response.body);
    if (!parsed || !isPlainObject(parsed.value))
      return `error body is not a JSON object: ${response.body.slice(0, 300)}`;
    const body = parsed.value;
    const keys = Object.keys(body).sort().join(',');
    if (keys !== 'error,localMessage,params') return `error body has the fields ${keys}`;
    if (typeof body.error !== 'string' || !(body.error in errorCatalog))
      return `unknown error code ${String(body.error)}`;
    const expected = errorCatalog[body.error as keyof typeof errorCatalog].status;
    if (expected !== response.statusCode)
      return `${body.error} answered with ${response.statusCode}, not ${expected}`;
    if (typeof body.localMessage !== 'string' || body.localMessage === '')
      return 'localMessage is not a text';
    if (!isPlainObject(body.params)) return 'params is not an object';
    return undefined;
  }

  private successProblem(operation: FuzzOperation, response: FuzzResponse): string | undefined {
    const documented = operation.responses[String(response.statusCode)];
    if (!documented) return `status ${response.statusCode} is not documented`;
    if (documented.schemaPointer === undefined || documented.mediaType === undefined)
      return response.body === '' ? undefined : `documented as empty, got ${response.body.slice(0, 300)}`;
    const contentType = String(response.headers['content-type']);
    if (!contentType.startsWith(documented.mediaType))
      return `content-type ${contentType}, documented ${documented.mediaType}`;
    const parsed = parseJson(response.body);
    if (!parsed) return `body is not JSON: ${response.body.slice(0, 300)}`;
    const validate = this.validator(documented.schemaPointer);
    if (validate(parsed.value)) return undefined;
    return `body outside the documented schema: ${this.ajv.errorsText(validate.errors)}`;
  }

  private validator(pointer: string): ValidateFunction {
    let validate = this.validators.get(pointer);
    if (!validate) {
      validate = this.ajv.getSchema(`${DOCUMENT_ID}${pointer}`);
      if (!validate) throw new Error(`no schema at ${pointer}`);
      this.validators.set(pointer, validate);
    }
    return validate;
  }
}

/** Parses a successful JSON answer for harvesting ids; undefined when it is not JSON. */
export const parseBody = (body: string): unknown => parseJson(body)?.value;
