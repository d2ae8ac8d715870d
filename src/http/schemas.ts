/**
 * Schemas shared by every resource group: the error model (spec §7), int64 path ids, paging (D4).
 * Each exports its static type; routes declare them so validation, serialization and OpenAPI come from one place.
 */
import {
  Type,
  type Static,
  type TSchema,
  type TObjectOptions,
  type TArrayOptions,
  type TOptional,
} from 'typebox';
import type { FastifyReply } from 'fastify';
import { notFound } from './errors.ts';

/** The error body of every failure (spec §7, D3.1). */
export const ErrorResponse = Type.Object(
  {
    error: Type.String({ description: 'Stable machine-readable code' }),
    localMessage: Type.String({ description: "Message in the token user's language" }),
    params: Type.Record(Type.String(), Type.Unknown(), {
      description: 'Values interpolated into the message',
    }),
  },
  { $id: 'ErrorResponse', title: 'ErrorResponse' },
);
export type ErrorResponse = Static<typeof ErrorResponse>;

/**
 * `T | null` as `type: [T's type, 'null']` rather than `anyOf`: with Ajv's type coercion an `anyOf` would turn
 * `null` into `""` or `0` through its first branch. `T` must be a schema with a single `type`.
 */
export const Nullable = <T extends TSchema>(schema: T) => {
  const raw = schema as TSchema & { type?: unknown; enum?: unknown };
  return Type.Unsafe<Static<T> | null>({
    ...schema,
    type: [raw.type as string, 'null'],
    ...(Array.isArray(raw.enum) && { enum: [...(raw.enum as unknown[]), null] }),
  });
};

/** An ISO 8601 timestamp (P6: returned in UTC). */
export const DateTime = (options: object = {}) => Type.String({ format: 'date-time', ...options });

/** A decimal amount with 2 places in the organization's currency (P5), ≥ 0. */
export const Money = (options: object = {}) =>
  Type.Number({ minimum: 0, maximum: 99_999_999_999_999, description: 'Decimal, 2 places', ...options });

/** HAL `_links` with a `self` link (D5.11). */
export const Links = Type.Object({ self: Type.Object({ href: Type.String() }) });

/** The 200 response of an operation that answers with no body (spec §4: "empty"). */
export const EmptyResponse = Type.Null({ description: 'Empty body' });

/** Ends an operation that answers with no body: 200 and an empty body (not `null`). */
export const sendEmpty = (reply: FastifyReply) => reply.code(200).send();

/** Ends an operation whose answer is a string (spec "string"): a JSON string, `application/json`. */
export const sendString = (reply: FastifyReply, text: string) =>
  reply.code(200).type('application/json; charset=utf-8').send(JSON.stringify(text));

/** Standard error responses to merge into a route's `response` map. */
export const errorResponses = {
  400: Type.Ref('ErrorResponse'),
  401: Type.Ref('ErrorResponse'),
  404: Type.Ref('ErrorResponse'),
};

/** The pattern of an int64 id written as text. */
export const INT64_PATTERN = '^[0-9]{1,19}$';

/** An int64 id in a path or query: decimal digits, kept as text until checked so it is never rounded. */
export const Int64String = Type.String({ pattern: INT64_PATTERN, description: 'int64 id' });

/** Optional int64 integer in a query string or body (ids of our own sequences fit in 2^53). */
export const Int64 = (options: object = {}) => Type.Integer({ minimum: 0, format: 'int64', ...options });

/**
 * Converts a validated int64 text to a number.
 * @throws 404 `error_not_found` when it exceeds 2^53 (no row of ours can have such an id; never rounded)
 */
export function parseId(entity: string, text: string): number {
  const id = Number(text);
  if (!Number.isSafeInteger(id)) throw notFound(entity, text);
  return id;
}

/** An int32 (an `integer` column): 0..2^31−1 unless `options` widen the minimum (never a SQL overflow). */
export const Int32 = (options: object = {}) =>
  Type.Integer({ minimum: 0, maximum: 2_147_483_647, format: 'int32', ...options });

/** The largest `page` (P34): keeps OFFSET = (page − 1) × limit exact and within PostgreSQL's bigint. */
export const MAX_PAGE = 1_000_000;

/** `limit` 1..500 default 100 and `page` 1..1,000,000 default 1 (D4.1, P34). */
export const PagingQuery = {
  limit: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 500, default: 100, description: 'Rows per page, 1..500' }),
  ),
  page: Type.Optional(
    Type.Integer({ minimum: 1, maximum: MAX_PAGE, default: 1, description: 'Page number, from 1' }),
  ),
  count: Type.Optional(Type.Boolean({ description: 'Return `total` (costs a count query)' })),
};

/** A page of rows (D4.2): `total` only when `count=true`. */
export const Page = <T extends TSchema>(row: T, options: TObjectOptions = {}) =>
  Type.Object(
    {
      rows: Type.Array(row),
      page: Type.Integer(),
      total: Type.Optional(Type.Integer()),
    },
    options,
  );

/**
 * The JSON text of a page (`Page`, or `KeysetPage` with `nextCursor`) around rows already serialized, for answers
 * whose rows PostgreSQL writes (P155, P201): `rows` is the text of their JSON array; `total` and `nextCursor`
 * appear only when given, in the schemas' order.
 */
export function pageText(rows: string, page: number, total?: number, nextCursor?: string): string {
  const counted = total === undefined ? '' : `,"total":${total}`;
  const next = nextCursor === undefined ? '' : `,"nextCursor":${JSON.stringify(nextCursor)}`;
  return `{"rows":${rows},"page":${page}${counted}${next}}`;
}

/** A repeated query parameter (`statuses=A&statuses=B`); a single value is a one-element array (D4.3). */
export const RepeatedQuery = <T extends TSchema>(item: T, options: TArrayOptions = {}) =>
  Type.Optional(Type.Array(item, options));

/**
 * Read-only fields of a resource as its GET returns them, for the body of its replace operation: each optional,
 * marked `readOnly`, accepted so that what was read can be sent back changed, and never stored. The service
 * checks that ids among them match the resource (P169); fields outside the resource are still refused.
 */
export const ReadOnlyFields = <T extends Record<string, TSchema>>(fields: T) =>
  Object.fromEntries(
    Object.entries(fields).map(([name, schema]) => [
      name,
      Type.Optional({
        ...schema,
        readOnly: true,
        description: 'Read-only: accepted as GET returns it, ignored',
      }),
    ]),
  ) as unknown as { [K in keyof T]: TOptional<T[K]> };
