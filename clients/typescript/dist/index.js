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
import createClient from 'openapi-fetch';
/** A client of the service at `baseUrl` that sends `token` in `Authorization` with every request. */
export function createSellerOpsClient(options) {
    return createClient({
        baseUrl: options.baseUrl.replace(/\/+$/, ''),
        headers: { Authorization: options.token },
        ...(options.fetch ? { fetch: options.fetch } : {}),
    });
}
/** A failed call: the HTTP status and the service's error body (`error` is the stable code). */
export class ApiError extends Error {
    status;
    body;
    url;
    constructor(status, body, url) {
        super(`${url} → ${status}` +
            (body ? ` ${body.error}: ${body.localMessage} ${JSON.stringify(body.params)}` : ''));
        this.status = status;
        this.body = body;
        this.url = url;
        this.name = 'ApiError';
    }
}
/**
 * The data of a call's result, or an `ApiError` thrown with the service's error body.
 * @throws ApiError for any non-2xx answer
 */
export async function ok(call) {
    const { data, error, response } = await call;
    if (!response.ok) {
        const body = error;
        throw new ApiError(response.status, body?.error ? body : undefined, response.url);
    }
    return data;
}
/**
 * The `Idempotency-Key` header of a mutation: a retried request with the same key is answered once (the stored
 * answer is replayed with `Idempotent-Replayed: true`). A fresh random key unless `key` is given; keep it for
 * the retries of one operation.
 */
export function idempotencyKey(key = crypto.randomUUID()) {
    return { 'Idempotency-Key': key };
}
/**
 * The `If-Match` header of a replace or change: the entity tag (`ETag`) of the version it was read at, so that a
 * change made meanwhile answers 409 `error_version_conflict` instead of being overwritten. Takes the tag or the
 * response of the GET that carried it.
 * @throws Error when the response has no `ETag`
 */
export function ifMatch(entityTag) {
    const tag = typeof entityTag === 'string' ? entityTag : entityTag.headers.get('etag');
    if (!tag)
        throw new Error('the response carries no ETag to send in If-Match');
    return { 'If-Match': tag };
}
/**
 * Every row of a page-numbered find (`limit`, `page` from 1; an answer `{rows, page, total?}`): asks for page 1,
 * 2, … while a page comes back full.
 * @param fetchPage asks for one page, e.g. `(page) => ok(api.GET('/api/brand/find', {params: {query: {limit, page}}}))`
 * @param limit the `limit` that `fetchPage` sends (a page with fewer rows is the last)
 */
export async function* allRows(fetchPage, limit) {
    for (let page = 1;; page += 1) {
        const { rows } = await fetchPage(page);
        yield* rows;
        if (rows.length < limit)
            return;
    }
}
/**
 * Every row of a find that pages by keyset (`cursor` in, `nextCursor` out: inbound find, product find,
 * getCampaigns, findTask, a webhook's delivery log): asks for the first page, then for the page after each
 * answer's `nextCursor` until an answer has none. Stable while rows are inserted and deleted meanwhile: no row is
 * read twice and none that existed throughout is skipped; deep pages cost what the first one does.
 * @param fetchPage asks for one page, e.g.
 *   `(cursor) => ok(api.GET('/api/inbound/find', {params: {query: {limit: 500, cursor}}}))`
 */
export async function* allRowsByCursor(fetchPage) {
    let cursor;
    do {
        const { rows, nextCursor } = await fetchPage(cursor);
        yield* rows;
        cursor = nextCursor ?? undefined;
    } while (cursor !== undefined);
}
