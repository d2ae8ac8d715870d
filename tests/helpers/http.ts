/**
 * The test kit's HTTP part, shared by every group's tests: requests through `app.inject` with a token, query
 * strings with repeated array parameters (D4.3), and the one set of assertions of the error model (spec §7,
 * D3.1): `expectError`, `expectValidation`, `expectNotFound`, plus `expectEmpty` for "empty" answers.
 */
import { expect } from 'vitest';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';

/** A request; `query` values that are arrays become repeated parameters (D4.3). */
export interface ApiRequest {
  method: 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  url: string;
  query?: Record<string, string | number | boolean | readonly (string | number)[]>;
  payload?: unknown;
  /** More request headers (e.g. `Idempotency-Key`). */
  headers?: Record<string, string>;
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
export function queryString(query: ApiRequest['query'] = {}): string {
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
  request: ApiRequest,
): Promise<LightMyRequestResponse> {
  const headers: Record<string, string> = {
    ...request.headers,
    ...(token === undefined ? {} : { authorization: token }),
  };
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
