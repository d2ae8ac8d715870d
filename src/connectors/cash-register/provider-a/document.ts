/**
 * Provider A's published protocol, encoded once: the ATOL Online document (`reference/cash-register-a/
 * atol-online-v4-api-spec.md`, document version 5.23 of 2025-12-09) — authentication §4, registration fields §6,
 * registration answer §9, report §10, error table §11 — with the v5 item fields (`measure`, numeric
 * `payment_object`) of the v5 request classes (`lamoda/atol-client`, `src/V5/DTO/Register/`), which the document
 * says keep v4's authentication, errors, report and required fields.
 *
 * The sandbox refuses a registration with `registrationProblems` (error 32 naming the field), and the conformance
 * test (`tests/receipt/provider-a-conformance.test.ts`) checks every request our client sends and every answer the
 * sandbox gives against these schemas and the error table. Objects are closed to the fields the document lists,
 * so a misspelt field leaves the protocol. Money is in rubles (JSON numbers), times `dd.mm.yyyy HH:MM:SS`.
 */
import { Type, type TSchema } from 'typebox';
import { Value } from 'typebox/value';

const closed = { additionalProperties: false } as const;
const text = (maxLength: number, options: object = {}) =>
  Type.String({ minLength: 1, maxLength, ...options });
/** Rubles: at most 10^10 (§6.6); "at most 2 decimals" is checked by the sandbox on kopecks. */
const money = Type.Number({ minimum: 0, maximum: 10_000_000_000 });
const oneOf = <T extends string | number>(values: readonly T[]) =>
  Type.Union(values.map((value) => Type.Literal(value)));

/** `dd.mm.yyyy HH:MM:SS` (§6.1). */
export const TIMESTAMP_PATTERN =
  '^(0[1-9]|[12][0-9]|3[01])\\.(0[1-9]|1[0-2])\\.[0-9]{4} ([01][0-9]|2[0-4]):[0-5][0-9]:[0-5][0-9]$';
const timestamp = Type.String({ pattern: TIMESTAMP_PATTERN });
const inn = Type.String({ pattern: '^([0-9]{10}|[0-9]{12})$' });

/** Taxation systems `sno` (§8.1). */
export const SNO_VALUES = ['osn', 'usn_income', 'usn_income_outcome', 'envd', 'esn', 'patent'] as const;
/** Payment methods (§8.2). */
export const PAYMENT_METHODS = [
  'full_prepayment',
  'prepayment',
  'advance',
  'full_payment',
  'partial_payment',
  'credit',
  'credit_payment',
] as const;
/** VAT rates (§8.4, with the schema's legacy `vat18`, `vat118`). */
export const VAT_TYPES = [
  'none',
  'vat0',
  'vat10',
  'vat110',
  'vat20',
  'vat120',
  'vat5',
  'vat7',
  'vat105',
  'vat107',
  'vat22',
  'vat122',
  'vat18',
  'vat118',
] as const;
/** v5 units of measure (`Measure`): 0 = pieces … 255 = other. */
export const MEASURES = [
  0, 10, 11, 12, 20, 21, 22, 30, 31, 32, 40, 41, 42, 50, 51, 70, 71, 72, 73, 80, 81, 82, 83, 255,
] as const;
/** v5 payment objects (`PaymentObject`): 1 = commodity … 33 = marked product. */
export const PAYMENT_OBJECTS = [
  1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 30, 31, 32,
  33,
] as const;

/** `receipt.client` (§6.2): email or phone, at least one. */
const client = Type.Union([
  Type.Object(
    {
      email: text(64),
      phone: Type.Optional(text(64)),
      name: Type.Optional(text(256)),
      inn: Type.Optional(inn),
    },
    closed,
  ),
  Type.Object(
    {
      email: Type.Optional(text(64)),
      phone: text(64),
      name: Type.Optional(text(256)),
      inn: Type.Optional(inn),
    },
    closed,
  ),
]);

/** `receipt.company` (§6.3): email, inn and payment_address required; sno when the organization has several. */
const company = Type.Object(
  {
    email: text(64),
    sno: Type.Optional(oneOf(SNO_VALUES)),
    inn,
    payment_address: text(256),
    location: Type.Optional(text(256)),
  },
  closed,
);

/** `receipt.items[]` (§6.6, v5 `Item`). */
const item = Type.Object(
  {
    name: text(128),
    price: money,
    quantity: Type.Number({ minimum: 0.000001, maximum: 99_999_999 }),
    sum: money,
    measure: oneOf(MEASURES),
    payment_method: oneOf(PAYMENT_METHODS),
    payment_object: oneOf(PAYMENT_OBJECTS),
    vat: Type.Object({ type: oneOf(VAT_TYPES), sum: Type.Optional(money) }, closed),
    user_data: Type.Optional(text(64)),
    excise: Type.Optional(money),
    country_code: Type.Optional(Type.String({ pattern: '^[0-9]{1,3}$' })),
    declaration_number: Type.Optional(text(32)),
  },
  closed,
);

/** The body of `POST /possystem/{version}/{group_code}/{operation}` (§6; required per §6.9's schema note). */
export const RegistrationRequest = Type.Object(
  {
    external_id: text(128),
    timestamp,
    source_id: Type.Optional(Type.Integer({ minimum: 0, maximum: 9 })),
    service: Type.Optional(Type.Object({ callback_url: Type.Optional(text(256)) }, closed)),
    receipt: Type.Object(
      {
        client,
        company,
        items: Type.Array(item, { minItems: 1, maxItems: 100 }),
        payments: Type.Array(
          Type.Object({ type: Type.Integer({ minimum: 0, maximum: 9 }), sum: money }, closed),
          {
            minItems: 1,
            maxItems: 10,
          },
        ),
        vats: Type.Optional(
          Type.Array(Type.Object({ type: oneOf(VAT_TYPES), sum: money }, closed), {
            minItems: 1,
            maxItems: 6,
          }),
        ),
        total: money,
        cashier: Type.Optional(text(64)),
        internet: Type.Optional(Type.Boolean()),
      },
      closed,
    ),
  },
  closed,
);

/** The body of `POST /possystem/{version}/getToken` (§4.2). */
export const TokenRequest = Type.Object(
  {
    login: text(100),
    pass: text(100),
    source: Type.Optional(text(100, { pattern: '^[a-zA-Z0-9_\\-@.]+$' })),
  },
  closed,
);

/** Error sources (§8.9). */
export const ERROR_TYPES = ['none', 'system', 'driver', 'timeout', 'agent', 'unknown'] as const;

/** The error object of every answer (§11.1). */
const errorObject = Type.Object(
  { error_id: Type.String(), code: Type.Integer(), text: Type.String(), type: oneOf(ERROR_TYPES) },
  closed,
);

/** An answer with an error (§4.3, §9, §10.4): `uuid` only where a document exists (33), `status` per §11.2. */
export const ErrorAnswer = Type.Object(
  {
    error: errorObject,
    timestamp,
    uuid: Type.Optional(Type.Union([Type.String({ maxLength: 128 }), Type.Null()])),
    status: Type.Optional(Type.Union([oneOf(['wait', 'done', 'fail'] as const), Type.Null()])),
    token: Type.Optional(Type.Null()),
    callback_url: Type.Optional(Type.String()),
  },
  closed,
);

/** A successful getToken (§4.3). */
export const TokenAnswer = Type.Object(
  { token: Type.String({ minLength: 1, maxLength: 1000 }), error: Type.Null(), timestamp },
  closed,
);

/** A registration accepted (§9): `uuid`, `timestamp`, `error` required. */
export const RegistrationAnswer = Type.Object(
  {
    uuid: Type.String({ minLength: 1, maxLength: 128 }),
    status: oneOf(['wait', 'fail'] as const),
    error: Type.Union([errorObject, Type.Null()]),
    timestamp,
  },
  closed,
);

/** The fiscal attributes of a `done` report (§10.5: all but `ofd_inn` and `ofd_receipt_url` required). */
export const ReportPayload = Type.Object(
  {
    fiscal_receipt_number: Type.Integer(),
    shift_number: Type.Integer(),
    receipt_datetime: timestamp,
    total: money,
    fn_number: Type.String({ minLength: 1 }),
    ecr_registration_number: Type.String({ minLength: 1 }),
    fiscal_document_number: Type.Integer(),
    fiscal_document_attribute: Type.Integer(),
    fns_site: Type.String({ minLength: 1 }),
    ofd_inn: Type.Optional(Type.String()),
    ofd_receipt_url: Type.Optional(Type.String()),
  },
  closed,
);

/** A report (§10.3, §10.5): required `uuid`, `timestamp`, `error`, `payload`, `group_code`, `daemon_code`, `device_code`. */
export const ReportAnswer = Type.Object(
  {
    uuid: Type.String({ minLength: 1, maxLength: 128 }),
    timestamp,
    callback_url: Type.Optional(Type.String()),
    status: oneOf(['wait', 'done', 'fail'] as const),
    group_code: Type.String(),
    daemon_code: Type.String(),
    device_code: Type.String(),
    external_id: Type.Optional(Type.String()),
    error: Type.Union([errorObject, Type.Null()]),
    warnings: Type.Optional(Type.Object({ callback_url: Type.Optional(Type.String()) })),
    payload: Type.Union([ReportPayload, Type.Null()]),
  },
  closed,
);

/** One row of the service error table (§11.2): its name, HTTP status and the document status it comes with. */
export interface ServiceError {
  name: string;
  httpStatus: number;
  status: 'fail' | 'wait' | null;
}

/** The service errors (`type: system`, §11.2). */
export const SERVICE_ERRORS: Readonly<Record<number, ServiceError>> = {
  0: { name: 'Undefined', httpStatus: 400, status: null },
  1: { name: 'IncomingChequeProcessingFailed', httpStatus: 400, status: null },
  10: { name: 'MissingToken', httpStatus: 401, status: null },
  11: { name: 'ExpiredToken', httpStatus: 401, status: null },
  12: { name: 'WrongLoginOrPassword', httpStatus: 401, status: null },
  13: { name: 'ValidationException', httpStatus: 400, status: null },
  14: { name: 'UserBlocked', httpStatus: 403, status: null },
  20: { name: 'GroupCodeAndTokenDontMatch', httpStatus: 401, status: null },
  21: { name: 'NotSupportedGroupCodeForProtocol', httpStatus: 401, status: null },
  30: { name: 'MissingUuid', httpStatus: 400, status: 'fail' },
  31: { name: 'IncomingOperationNotSupported', httpStatus: 400, status: null },
  32: { name: 'IncomingValidationException', httpStatus: 400, status: 'fail' },
  33: { name: 'IncomingExternalIdAlreadyExists', httpStatus: 400, status: 'wait' },
  34: { name: 'StateCheckNotFound', httpStatus: 200, status: 'wait' },
  40: { name: 'BadRequest', httpStatus: 400, status: null },
  41: { name: 'UnsupportedMediaType', httpStatus: 415, status: null },
  50: { name: 'ErrorServerConfiguration', httpStatus: 500, status: null },
};

/** The cash-register errors a `fail` report may carry (§11.3): `agent` codes and `driver` codes. */
export const DEVICE_ERRORS: Readonly<Record<'agent' | 'driver', ReadonlySet<number>>> = {
  agent: new Set([2003, 2004, 2006, 2007, 2009]),
  driver: new Set([
    1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 26, 27, 28, 29, 30,
    31, 32, 34, 35, 36, 38, 40, 41, 42, 43, 48, 52, 53, 54, 55, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67,
    68, 69, 70, 71, 72, 73, 77, 78, 80, 81, 82, 83, 86, 89, 90, 93, 95, 97, 98, 104, 105, 106, 107, 109, 110,
    111, 112, 115, 116, 117, 118, 119, 120, 121, 122, 123, 124, 125, 127, 128, 129, 131, 132, 133, 134, 135,
    136, 137, 138, 139, 140, 141, 142, 143, 144, 145, 146, 147, 148, 149, 154, 158, 159, 160, 161, 162, 163,
    165, 166, 167, 168, 169, 172, 177, 178, 179, 180, 181, 183, 188, 189, 190, 191, 192, 193, 194, 195, 196,
    197, 198, 199, 200, 201, 203, 204, 205, 206, 207, 208, 209, 210, 211, 212, 213, 214, 215, 216, 217, 221,
    224, 225, 226, 227, 228, 230, 231, 241, 243, 244, 245, 246, 247, 248, 249, 251, 258, 261, 262, 263, 264,
    265, 402, 404, 405, 406, 407, 408, 409, 410, 411, 412, 413, 414, 418, 419, 420, 421, 501, 502,
  ]),
};

/** The dotted field of a schema error (`receipt.items.0.name`), naming a missing property too. */
function fieldOf(error: { instancePath: string; keyword: string; params: unknown }): string {
  const path = error.instancePath.split('/').filter(Boolean);
  const params = error.params as { requiredProperties?: string[]; additionalProperties?: string[] };
  const named = params.requiredProperties?.[0] ?? params.additionalProperties?.[0];
  return [...path, ...(named !== undefined ? [named] : [])].join('.') || '(body)';
}

/** Every way `value` leaves `schema`, as `field: message`; empty when it conforms. */
export function schemaProblems(schema: TSchema, value: unknown): string[] {
  if (Value.Check(schema, value)) return [];
  return [...Value.Errors(schema, value)]
    .filter((error) => error.keyword !== 'boolean')
    .map((error) => `${fieldOf(error)}: ${error.message}`);
}

/** How a registration body leaves the document's fields (§6), first problem first; empty when it conforms. */
export const registrationProblems = (body: unknown): string[] => schemaProblems(RegistrationRequest, body);

/** The operations our client uses and the sandbox serves. */
export type DocumentOperation = 'getToken' | 'register' | 'report';

/**
 * How an answer of `operation` with `httpStatus` leaves the document: its shape (§4.3, §9, §10) and, for an error,
 * the error table (§11.2: a `system` code with its HTTP status and document status; §11.3: an `agent` or `driver`
 * code only in a `fail` report answered 200). Empty when it conforms.
 */
export function answerProblems(operation: DocumentOperation, httpStatus: number, body: unknown): string[] {
  const error = (body as { error?: { code?: unknown; type?: unknown } | null } | null)?.error;
  if (error === null || error === undefined) {
    if (httpStatus !== 200) return [`HTTP ${httpStatus} without an error object`];
    const schema = { getToken: TokenAnswer, register: RegistrationAnswer, report: ReportAnswer }[operation];
    return schemaProblems(schema, body);
  }
  const code = Number(error.code);
  if (error.type === 'agent' || error.type === 'driver' || error.type === 'timeout') {
    const known = error.type === 'timeout' ? code === -1 : DEVICE_ERRORS[error.type].has(code);
    const problems = known ? [] : [`error ${code} is not a ${String(error.type)} error of §11.3`];
    if (operation !== 'report' || httpStatus !== 200)
      problems.push(`a ${String(error.type)} error comes only in a report answered 200`);
    return [...problems, ...schemaProblems(ReportAnswer, body)];
  }
  const row = SERVICE_ERRORS[code];
  if (!row) return [`error ${code} is not in the service error table (§11.2)`];
  const problems: string[] = [];
  if (row.httpStatus !== httpStatus)
    problems.push(`error ${code} (${row.name}) is answered with HTTP ${row.httpStatus}, not ${httpStatus}`);
  const status = (body as { status?: unknown }).status;
  if (row.status !== null && status !== row.status)
    problems.push(`error ${code} (${row.name}) comes with status ${row.status}, not ${String(status)}`);
  return [...problems, ...schemaProblems(ErrorAnswer, body)];
}
