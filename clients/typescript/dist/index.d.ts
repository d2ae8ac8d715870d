/**
 * Typed client of the seller-ops HTTP API: `openapi-fetch` over the types `openapi-typescript` generated from the
 * service's own `/openapi.json` (`schema.ts`, regenerated with `npm run client:generate` in the repository).
 *
 * Shapes as the service sends them: int64 ids are JSON numbers (`number`; every id of the service is below
 * 2^53), in paths they are written as decimal text; money is a decimal `number` with 2 places; dates are ISO 8601
 * UTC strings. Errors come in the spec's error model `{error, localMessage, params}` (`ApiError`).
 *
 *   const api = createSellerOpsClient({ baseUrl: 'http://127.0.0.1:8080', token });
 *   const order = await ok(api.GET('/api/inbound/{orderId}', { params: { path: { orderId: 12 } } }));
 */
import { type Client, type ClientOptions } from 'openapi-fetch';
import type { components, paths } from './schema.js';
export type { components, operations, paths } from './schema.js';
/** The error body of every failure (spec §7). */
export type ApiErrorBody = components['schemas']['ErrorResponse'];
/** Where the service is and the token to send (the bare token, or `Bearer <token>`). */
export interface SellerOpsClientOptions {
    /** The service's address, e.g. `http://127.0.0.1:8080` (a trailing `/` is ignored). */
    baseUrl: string;
    /** A READ or WRITE token, sent in `Authorization` with every request. */
    token: string;
    /** Another `fetch` (tests, proxies); the global one by default. */
    fetch?: ClientOptions['fetch'];
}
/** The typed client: `GET`, `POST`, `PUT`, `PATCH`, `DELETE` of every path of the service's document. */
export type SellerOpsClient = Client<paths>;
/** A client of the service at `baseUrl` that sends `token` in `Authorization` with every request. */
export declare function createSellerOpsClient(options: SellerOpsClientOptions): SellerOpsClient;
/** A failed call: the HTTP status and the service's error body (`error` is the stable code). */
export declare class ApiError extends Error {
    readonly status: number;
    readonly body: ApiErrorBody | undefined;
    readonly url: string;
    constructor(status: number, body: ApiErrorBody | undefined, url: string);
}
/**
 * The data of a call's result, or an `ApiError` thrown with the service's error body.
 * @throws ApiError for any non-2xx answer
 */
export declare function ok<Data>(call: Promise<{
    data?: Data;
    error?: unknown;
    response: Response;
}>): Promise<Data>;
/**
 * The `Idempotency-Key` header of a mutation: a retried request with the same key is answered once (the stored
 * answer is replayed with `Idempotent-Replayed: true`). A fresh random key unless `key` is given; keep it for
 * the retries of one operation.
 */
export declare function idempotencyKey(key?: string): {
    'Idempotency-Key': string;
};
/**
 * The `If-Match` header of a replace or change: the entity tag (`ETag`) of the version it was read at, so that a
 * change made meanwhile answers 409 `error_version_conflict` instead of being overwritten. Takes the tag or the
 * response of the GET that carried it.
 * @throws Error when the response has no `ETag`
 */
export declare function ifMatch(entityTag: string | Response): {
    'If-Match': string;
};
/**
 * Every row of a page-numbered find (`limit`, `page` from 1; an answer `{rows, page, total?}`): asks for page 1,
 * 2, … while a page comes back full.
 * @param fetchPage asks for one page, e.g. `(page) => ok(api.GET('/api/brand/find', {params: {query: {limit, page}}}))`
 * @param limit the `limit` that `fetchPage` sends (a page with fewer rows is the last)
 */
export declare function allRows<Row>(fetchPage: (page: number) => Promise<{
    rows: Row[];
}>, limit: number): AsyncGenerator<Row>;
/**
 * Every row of a find that pages by keyset (`cursor` in, `nextCursor` out: inbound find, product find,
 * getCampaigns, findTask, a webhook's delivery log): asks for the first page, then for the page after each
 * answer's `nextCursor` until an answer has none. Stable while rows are inserted and deleted meanwhile: no row is
 * read twice and none that existed throughout is skipped; deep pages cost what the first one does.
 * @param fetchPage asks for one page, e.g.
 *   `(cursor) => ok(api.GET('/api/inbound/find', {params: {query: {limit: 500, cursor}}}))`
 */
export declare function allRowsByCursor<Row>(fetchPage: (cursor: string | undefined) => Promise<{
    rows: Row[];
    nextCursor?: string | null;
}>): AsyncGenerator<Row>;
