/**
 * Small HTTP helpers for the inbound semantics tests (tests/inbound): one account per test, requests through
 * `app.inject`, and JSON bodies of any status.
 */
import { randomInt } from 'node:crypto';
import { expect } from 'vitest';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { expectEmpty as expectEmptyResponse, expectError as expectErrorResponse } from '../helpers/http.ts';
import type { Runtime } from '../../src/runtime.ts';
import type { Order } from '../../src/modules/inbound/schemas.ts';
import { createAccount, type TestAccount } from '../helpers/factories.ts';
import { productIdsOf, provideProducts } from '../helpers/catalog-products.ts';

/** A request's answer: status, content type and parsed body (undefined when empty). */
export interface Answer<T = unknown> {
  status: number;
  type: string | undefined;
  raw: string;
  body: T;
  /** The raw response, for the kit's assertions. */
  response: LightMyRequestResponse;
}

/** A client of the API bound to one account's WRITE token. */
export interface Caller {
  account: TestAccount;
  call<T = Record<string, unknown>>(
    method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
    url: string,
    payload?: unknown,
  ): Promise<Answer<T>>;
  /** Creates a document of the account's organization (type INCOME unless given) and expects success. */
  create(body?: Record<string, unknown>): Promise<Order>;
  /** Reads a document and expects success. */
  get(id: number): Promise<Order>;
}

/** A random product id; the caller makes it a product of its account's catalog before it is sent. */
export const productId = () => randomInt(1, 2 ** 40);

/** Builds a caller for a fresh account. */
export async function newCaller(app: FastifyInstance, runtime: Runtime): Promise<Caller> {
  const account = await createAccount(runtime);
  const call: Caller['call'] = async (method, url, payload) => {
    if (method !== 'GET') await provideProducts(account.writeToken, productIdsOf(payload));
    const response = await app.inject({
      method,
      url,
      headers: { authorization: account.writeToken },
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
    return {
      status: response.statusCode,
      type: response.headers['content-type'] as string | undefined,
      raw: response.body,
      body: (response.body === '' ? undefined : response.json()) as never,
      response,
    };
  };
  return {
    account,
    call,
    async create(body = {}) {
      const answer = await call<Order>('POST', '/api/inbound/', {
        organizationId: account.organizationId,
        type: 'INCOME',
        ...body,
      });
      expect(answer.status, answer.raw).toBe(200);
      return answer.body;
    },
    async get(id) {
      const answer = await call<Order>('GET', `/api/inbound/${id}`);
      expect(answer.status, answer.raw).toBe(200);
      return answer.body;
    },
  };
}

/** Expects an empty 200 (the kit's `expectEmpty` on an `Answer`). */
export const expectEmpty = (answer: Answer): void => expectEmptyResponse(answer.response);

/** Expects an error of the spec's model (the kit's `expectError` on an `Answer`). */
export const expectError = (answer: Answer, status: number, code: string, params?: Record<string, unknown>) =>
  expectErrorResponse(answer.response, status, code, params);
