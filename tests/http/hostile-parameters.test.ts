/**
 * Path ids, integer query parameters and array query parameters of every operation, at and beyond every
 * boundary, answer in the error model and never 5xx (P138). The operations and their
 * parameters come from the service's own OpenAPI document, so a new operation is covered without editing this.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { useTestApp, type TestApp } from '../helpers/test-app.ts';
import { createAccount, type TestAccount } from '../helpers/factories.ts';

let t: TestApp;
let account: TestAccount;
useTestApp(
  async (app) => {
    t = app;
    account = await createAccount(app.runtime);
  },
  {},
  { workers: false },
);

interface Parameter {
  in: 'path' | 'query' | 'header';
  name: string;
  schema?: { type?: string; pattern?: string; items?: { type?: string } };
}
interface Operation {
  method: string;
  path: string;
  parameters: Parameter[];
}

let operations: Operation[] = [];
beforeAll(async () => {
  const document = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json<{
    paths: Record<string, Record<string, { parameters?: Parameter[] }>>;
  }>();
  operations = Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({
      method: method.toUpperCase(),
      path,
      parameters: operation.parameters ?? [],
    })),
  );
});

/** Path and query values that are not an id of ours: signs, zero padding, int64 and beyond, floats, text. */
const HOSTILE_IDS = [
  '-1',
  '0',
  '-0',
  '9007199254740993',
  '9223372036854775807',
  '9223372036854775808',
  '18446744073709551616',
  '99999999999999999999999999',
  '1.5',
  '1e3',
  '1e309',
  '0x10',
  'NaN',
  'Infinity',
  'abc',
  '%20',
  '%00',
  '%D9%A1%D9%A2',
  'x'.repeat(900),
];

/** Integer query values at and beyond the int32/int64 limits, in every spelling Ajv might coerce. */
const HOSTILE_INTEGERS = [
  '2147483647',
  '2147483648',
  '-2147483648',
  '-2147483649',
  '9223372036854775807',
  '9223372036854775808',
  '-9223372036854775809',
  '1.5',
  '1.0',
  '1e3',
  '1e309',
  '-1e309',
  '0x1F',
  'NaN',
  '',
  '%20',
];
/** Values no integer parameter may accept. */
const NEVER_INTEGERS = new Set([
  '9223372036854775808',
  '-9223372036854775809',
  '1.5',
  '1e309',
  '-1e309',
  '0x1F',
  'NaN',
]);

const isIdSchema = (parameter: Parameter) =>
  parameter.schema?.type === 'integer' || parameter.schema?.pattern === '^[0-9]{1,19}$';

/** Sends `method` `url` with the WRITE token and an empty JSON object as the body of a mutation. */
function call(method: string, url: string): Promise<LightMyRequestResponse> {
  return t.app.inject({
    method: method as 'GET',
    url,
    headers: { authorization: account.writeToken },
    ...(method === 'GET' || method === 'DELETE' ? {} : { payload: {} }),
  });
}

/** The operation's path with `values` for its path parameters (1 for the others). */
const pathWith = (operation: Operation, values: Record<string, string> = {}) =>
  operation.path.replace(/\{(\w+)\}/g, (_match, name: string) => values[name] ?? '1');

/** Asserts an answer below 500 and, for a failure, a body of the error model; returns the status. */
function expectAnswered(response: LightMyRequestResponse, what: string): number {
  expect(response.statusCode, `${what}: ${response.body.slice(0, 300)}`).toBeLessThan(500);
  if (response.statusCode >= 400) {
    const body = response.json<Record<string, unknown>>();
    expect(typeof body.error, what).toBe('string');
    expect(typeof body.localMessage, what).toBe('string');
    expect(typeof body.params, what).toBe('object');
  }
  return response.statusCode;
}

describe('path ids', () => {
  it('every operation answers a hostile id in any path parameter with 400 or 404 in the error model', async () => {
    let checked = 0;
    for (const operation of operations)
      for (const parameter of operation.parameters.filter((p) => p.in === 'path'))
        for (const value of HOSTILE_IDS) {
          const url = pathWith(operation, { [parameter.name]: value });
          const status = expectAnswered(await call(operation.method, url), `${operation.method} ${url}`);
          expect([400, 404], `${operation.method} ${url}`).toContain(status);
          checked++;
        }
    expect(checked).toBeGreaterThan(300);
  });
});

describe('integer query parameters', () => {
  it('answer every boundary value below 500, refusing the impossible ones with 400', async () => {
    let checked = 0;
    for (const operation of operations)
      for (const parameter of operation.parameters.filter((p) => p.in === 'query' && isIdSchema(p)))
        for (const value of HOSTILE_INTEGERS) {
          const url = `${pathWith(operation)}?${parameter.name}=${value}`;
          const status = expectAnswered(await call(operation.method, url), `${operation.method} ${url}`);
          // An int64 id written as text (pattern `^[0-9]{1,19}$`) beyond 2^53 is an id no row has: 404 (D12, `parseId`).
          if (NEVER_INTEGERS.has(value))
            expect(
              parameter.schema?.type === 'integer' ? [400] : [400, 404],
              `${operation.method} ${url}`,
            ).toContain(status);
          checked++;
        }
    expect(checked).toBeGreaterThan(300);
  });
});

describe('array query parameters', () => {
  it('answer repeated and comma forms, too many items and bad items below 500 in the error model', async () => {
    let checked = 0;
    for (const operation of operations)
      for (const parameter of operation.parameters.filter(
        (p) => p.in === 'query' && p.schema?.type === 'array',
      )) {
        const integer = parameter.schema?.items?.type === 'integer';
        const item = integer ? '1' : 'CREATED';
        const name = parameter.name;
        const forms = [
          `${name}=${item}&${name}=${item}&${name}=${item}`,
          `${name}=${item},${item},${item}`,
          Array.from({ length: 1_500 }, (_, index) => `${name}=${integer ? index : item}`).join('&'),
          `${name}=${item}&${name}=&${name}=${item}`,
          `${name}=${item}&${name}=9223372036854775808`,
          `${name}=${item}&${name}=-1`,
          `${name}=${item}&${name}=1.5`,
          `${name}=%00`,
          `${name}[]=${item}`,
          `${name}[0]=${item}`,
        ];
        for (const form of forms) {
          const url = `${pathWith(operation)}?${form}`;
          expectAnswered(await call(operation.method, url), `${operation.method} ${url.slice(0, 120)}`);
          checked++;
        }
        if (integer) {
          const url = `${pathWith(operation)}?${name}=1&${name}=9223372036854775808`;
          expect((await call(operation.method, url)).statusCode, url).toBe(400);
        }
      }
    expect(checked).toBeGreaterThan(50);
  });
});
