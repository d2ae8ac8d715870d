/**
 * HTTP helpers for the black-box tests of the inbound group (spec §4.1, decisions D2–D5): calls through
 * `app.inject` only, plus assertions for the error model (D3.1), HAL bodies (D5.11) and empty bodies.
 */
import { randomInt } from 'node:crypto';
import { expect } from 'vitest';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import type {
  Order,
  OrderHistory,
  OrderPackage,
  OrderProduct,
  TotalDivergence,
} from '../../src/modules/inbound/schemas.ts';

export type { Order, OrderHistory, OrderPackage, OrderProduct, TotalDivergence };

/** A request of the inbound group; `query` values that are arrays become repeated parameters (D4.3). */
export interface InboundRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  url: string;
  query?: Record<string, string | number | boolean | readonly (string | number)[]>;
  payload?: unknown;
}

/** A page of a list response (D4.2). */
export interface ListPage<T> {
  rows: T[];
  page: number;
  total?: number;
  _links: { self: { href: string } };
}

/** An error body of the spec's error model (§7). */
export interface ErrorBody {
  error: string;
  localMessage: string;
  params: Record<string, unknown>;
}

/** An int64 id no test ever creates (far beyond any sequence value, yet below 2^53). */
export const MISSING_ID = 8_000_000_000_000_001;

/** Builds a query string; arrays are repeated parameters (`ids=1&ids=2`). */
export function queryString(query: InboundRequest['query'] = {}): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (Array.isArray(value)) for (const item of value) search.append(name, String(item));
    else search.append(name, String(value));
  }
  const text = search.toString();
  return text === '' ? '' : `?${text}`;
}

/**
 * Sends one request with `token` in `Authorization` (no header when `token` is undefined).
 * A string payload is sent verbatim as `application/json` (for malformed or unsafe-integer JSON).
 */
export function send(
  app: FastifyInstance,
  token: string | undefined,
  request: InboundRequest,
): Promise<LightMyRequestResponse> {
  const headers: Record<string, string> = token === undefined ? {} : { authorization: token };
  if (typeof request.payload === 'string') headers['content-type'] = 'application/json';
  return app.inject({
    method: request.method,
    url: request.url + queryString(request.query),
    headers,
    ...(request.payload === undefined ? {} : { payload: request.payload as string | object }),
  });
}

/**
 * Asserts the response is an error of the spec's model (§7, D3.1): exactly `{error, localMessage, params}`,
 * `params` an object, the given status and code, and `params` containing `params` when given.
 * @returns the error body
 */
export function expectError(
  response: LightMyRequestResponse,
  status: number,
  code: string,
  params?: Record<string, unknown>,
): ErrorBody {
  expect(response.statusCode, `${code} expected, got ${response.body}`).toBe(status);
  expect(response.headers['content-type']).toMatch(/^application\/json/);
  const body = response.json<ErrorBody>();
  expect(Object.keys(body).sort()).toEqual(['error', 'localMessage', 'params']);
  expect(body.error).toBe(code);
  expect(typeof body.localMessage).toBe('string');
  expect(body.localMessage.length).toBeGreaterThan(0);
  expect(body.params).toBeTypeOf('object');
  expect(body.params).not.toBeNull();
  expect(Array.isArray(body.params)).toBe(false);
  if (params) expect(body.params).toMatchObject(params);
  return body;
}

/** Asserts 400 `error_validation` naming `field` (D3.2); `field` may be a pattern for the dotted path. */
export function expectValidation(response: LightMyRequestResponse, field: string | RegExp): ErrorBody {
  const body = expectError(response, 400, 'error_validation');
  if (typeof field === 'string') expect(body.params.field).toBe(field);
  else expect(String(body.params.field)).toMatch(field);
  expect(typeof body.params.reason).toBe('string');
  return body;
}

/** Asserts 404 `error_not_found` with `params: {entity, id}` (D2.5). */
export function expectNotFound(response: LightMyRequestResponse, id: number | string): ErrorBody {
  const body = expectError(response, 404, 'error_not_found');
  expect(typeof body.params.entity).toBe('string');
  expect(String(body.params.entity).length).toBeGreaterThan(0);
  expect(String(body.params.id)).toBe(String(id));
  return body;
}

/** Asserts a 200 response with an empty body (spec §4.1 "empty"). */
export function expectEmpty(response: LightMyRequestResponse): void {
  expect(response.statusCode, response.body).toBe(200);
  expect(response.body).toBe('');
}

/** Asserts a 200 `application/hal+json` response (D5.11) and returns its parsed body. */
export function expectHal<T>(response: LightMyRequestResponse): T {
  expect(response.statusCode, response.body).toBe(200);
  expect(response.headers['content-type']).toMatch(/^application\/hal\+json/);
  return response.json<T>();
}

/** Asserts `_links.self.href` is present and ends with `suffix` (path part of the link). */
export function expectSelfLink(body: unknown, suffix: string | RegExp): void {
  const href = (body as { _links?: { self?: { href?: unknown } } })._links?.self?.href;
  expect(typeof href, `_links.self.href of ${JSON.stringify(body)}`).toBe('string');
  const path = String(href).split('?')[0] ?? '';
  if (typeof suffix === 'string') expect(path.endsWith(suffix), `${path} ends with ${suffix}`).toBe(true);
  else expect(path).toMatch(suffix);
}

/** A random product id for a position (no catalog yet: any int64 identifies a product). */
export function newProductId(): number {
  return randomInt(1, 2 ** 47);
}

/** A unique text marker for filters that must not match other tests' data. */
export function marker(prefix: string): string {
  return `${prefix}-${randomInt(1, 2 ** 47).toString(36)}`;
}

/** A position to put in a create body or product add. */
export function productLine(
  overrides: Partial<{
    productId: number;
    quantity: number;
    price: number;
    product: { name?: string; article?: string; barcode?: string };
  }> = {},
) {
  const productId = overrides.productId ?? newProductId();
  return {
    productId,
    quantity: overrides.quantity ?? 1,
    price: overrides.price ?? 10,
    product: overrides.product ?? { name: `Product ${productId}`, article: `ART-${productId}` },
  };
}

/** Creates a document (`POST /api/inbound/`), expecting success. */
export async function createOrder(
  app: FastifyInstance,
  token: string,
  body: Record<string, unknown>,
): Promise<Order> {
  const response = await send(app, token, { method: 'POST', url: '/api/inbound/', payload: body });
  return expectHal<Order>(response);
}

/** Reads a document (`GET /api/inbound/{orderId}`), expecting success. */
export async function getOrder(app: FastifyInstance, token: string, orderId: number): Promise<Order> {
  return expectHal<Order>(await send(app, token, { method: 'GET', url: `/api/inbound/${orderId}` }));
}

/** Reads the cargo places of a document (`GET /api/inbound/getOrderPackage`), expecting success. */
export async function getPackages(
  app: FastifyInstance,
  token: string,
  orderId: number,
): Promise<OrderPackage[]> {
  return expectHal<OrderPackage[]>(
    await send(app, token, { method: 'GET', url: '/api/inbound/getOrderPackage', query: { orderId } }),
  );
}

/** Reads one page of a document's history, newest first. */
export async function getHistory(
  app: FastifyInstance,
  token: string,
  orderId: number,
  query: InboundRequest['query'] = {},
): Promise<ListPage<OrderHistory>> {
  return expectHal<ListPage<OrderHistory>>(
    await send(app, token, { method: 'GET', url: `/api/inbound/${orderId}/history`, query }),
  );
}

/** Runs `find` with `query`, expecting success. */
export async function findOrders(
  app: FastifyInstance,
  token: string,
  query: InboundRequest['query'] = {},
): Promise<ListPage<Order>> {
  return expectHal<ListPage<Order>>(
    await send(app, token, { method: 'GET', url: '/api/inbound/find', query }),
  );
}

/**
 * Everything a client can observe of one document: the document with its products, its cargo places and its
 * whole history count. Equal snapshots before and after a refused call prove nothing changed.
 */
export async function snapshot(app: FastifyInstance, token: string, orderId: number) {
  const order = await getOrder(app, token, orderId);
  const packages = await getPackages(app, token, orderId);
  const history = await getHistory(app, token, orderId, { count: true, limit: 1 });
  return { order, packages, historyTotal: history.total };
}

/** Sets a document's status (`POST /api/inbound/{orderId}/status`), expecting success. */
export async function setStatus(
  app: FastifyInstance,
  token: string,
  orderId: number,
  status: string,
): Promise<void> {
  expectEmpty(
    await send(app, token, { method: 'POST', url: `/api/inbound/${orderId}/status`, query: { status } }),
  );
}

/** Deletes (`deleted` omitted) or restores (`deleted=false`) a document, expecting success. */
export async function deleteOrder(
  app: FastifyInstance,
  token: string,
  orderId: number,
  deleted?: boolean,
): Promise<void> {
  expectEmpty(
    await send(app, token, {
      method: 'DELETE',
      url: `/api/inbound/${orderId}`,
      ...(deleted === undefined ? {} : { query: { deleted } }),
    }),
  );
}

/** Replaces a document's cargo places (`POST /api/inbound/updateOrderPackage`), expecting success. */
export async function putPackages(
  app: FastifyInstance,
  token: string,
  orderId: number,
  packages: unknown[],
): Promise<void> {
  expectEmpty(
    await send(app, token, {
      method: 'POST',
      url: '/api/inbound/updateOrderPackage',
      query: { orderId },
      payload: packages,
    }),
  );
}

/** Finds the position of `productId` in a document read back, failing the test when absent. */
export function positionOf(order: Order, productId: number): OrderProduct {
  const position = order.products?.find((row) => row.productId === productId);
  expect(position, `position of product ${productId}`).toBeDefined();
  return position as OrderProduct;
}
