/**
 * HTTP helpers for the black-box tests of the inbound group (spec §4.1, decisions D2–D5): calls through
 * `app.inject` only, plus assertions for the error model (D3.1), HAL bodies (D5.11) and empty bodies.
 */
import { randomInt } from 'node:crypto';
import { expect } from 'vitest';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { expectEmpty, send as sendRequest, type ApiRequest } from './http.ts';
import { productIdsOf, provideProducts } from './catalog-products.ts';

export * from './http.ts';
/** A request of the inbound group. */
export type InboundRequest = ApiRequest;

/**
 * The kit's `send`, after making the product ids a body names exist in the token's catalog (positions must be
 * catalog products).
 */
export async function send(
  app: FastifyInstance,
  token: string | undefined,
  request: ApiRequest,
): Promise<LightMyRequestResponse> {
  if (request.method !== 'GET') await provideProducts(token, productIdsOf(request.payload));
  return sendRequest(app, token, request);
}
import type {
  Order,
  OrderHistory,
  OrderPackage,
  OrderProduct,
  TotalDivergence,
} from '../../src/modules/inbound/schemas.ts';

export type { Order, OrderHistory, OrderPackage, OrderProduct, TotalDivergence };

/** A page of a list response (D4.2). */
export interface ListPage<T> {
  rows: T[];
  page: number;
  total?: number;
  _links: { self: { href: string } };
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
