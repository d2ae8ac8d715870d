/**
 * The OpenAPI 3.1 document (issue: schemas are the single source of truth) lists every integrator operation with
 * its success and error schemas, and hides the operator API.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/test-app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => {
  await t.close();
});

interface OpenApiDocument {
  openapi: string;
  servers: Array<{ url: string }>;
  tags: Array<{ name: string; description: string }>;
  paths: Record<
    string,
    Record<
      string,
      {
        operationId?: string;
        tags?: string[];
        parameters?: Array<{ in: string; name: string; required?: boolean }>;
        responses: Record<string, { content?: Record<string, unknown> }>;
      }
    >
  >;
}

const operations = [
  ['post', '/api/inbound/'],
  ['patch', '/api/inbound/'],
  ['get', '/api/inbound/{orderId}'],
  ['delete', '/api/inbound/{orderId}'],
  ['post', '/api/inbound/{orderId}/product'],
  ['put', '/api/inbound/{orderId}/product'],
  ['post', '/api/inbound/{orderId}/status'],
  ['post', '/api/inbound/status'],
  ['post', '/api/inbound/{orderId}/divergence/fix'],
  ['get', '/api/inbound/{orderId}/divergence'],
  ['post', '/api/inbound/updateOrderPackage'],
  ['get', '/api/inbound/getOrderPackage'],
  ['post', '/api/inbound/setOrderMarkingStatus'],
  ['post', '/api/inbound/removeIncomeStock'],
  ['get', '/api/inbound/{orderId}/history'],
  ['get', '/api/inbound/find'],
  ['get', '/api/webhook/'],
  ['post', '/api/webhook/'],
  ['delete', '/api/webhook/{webhookId}'],
  ['get', '/api/webhook/{webhookId}/deliveries'],
  ['post', '/api/webhook/{webhookId}/deliveries/{deliveryId}/retry'],
  ['post', '/api/webhook/{webhookId}/secret/rotate'],
  ['post', '/api/brand'],
  ['get', '/api/brand/find'],
  ['post', '/api/category'],
  ['get', '/api/category/find'],
  ['post', '/api/model'],
  ['get', '/api/model/{modelId}'],
  ['put', '/api/model/{modelId}'],
  ['patch', '/api/product/{productId}'],
  ['get', '/api/product/find'],
  ['get', '/knowledge/getParams'],
  ['get', '/option/fetchOption'],
  ['get', '/api/keyword/group'],
  ['post', '/api/keyword/group'],
  ['delete', '/api/keyword/group'],
  ['get', '/api/keyword/group/{groupId}'],
  ['put', '/api/keyword/group/{groupId}'],
  ['delete', '/api/keyword/group/{groupId}'],
  ['delete', '/api/keyword/group/{groupId}/keywords'],
  ['post', '/api/keyword/group/merge'],
  ['get', '/api/keyword/group/find'],
  ['put', '/api/keyword/add'],
  ['get', '/api/keyword/{modelId}'],
  ['delete', '/api/keyword/model/{modelId}'],
  ['put', '/api/tag/product/{tagId}/{productId}'],
  ['delete', '/api/tag/product/{tagId}/{productId}'],
  ['put', '/api/tag/model/{tagId}/{modelId}'],
  ['delete', '/api/tag/model/{tagId}/{modelId}'],
  ['get', '/api/tag/find'],
  ['get', '/api/tag/find/{modelId}'],
  ['post', '/api/tag'],
  ['put', '/api/tag'],
  ['get', '/api/tag'],
  ['put', '/api/tag/{tagId}'],
  ['delete', '/api/tag/{tagId}'],
  ['get', '/api/receipt/order/{orderId}'],
  ['post', '/api/receipt/order/{orderId}'],
  ['get', '/api/receipt/{receiptId}'],
  ['get', '/api/receipt/{receiptId}/update'],
  ['get', '/api/task/getTask'],
  ['get', '/api/task/findTask'],
  ['post', '/api/task/cancelTask'],
  ['get', '/api/task/{taskId}/file'],
] as const;

describe('GET /openapi.json', () => {
  it('documents every operation with a 200 and the error model', async () => {
    const document = (await t.app.inject('/openapi.json')).json<OpenApiDocument>();
    expect(document.openapi).toBe('3.1.0');
    for (const [method, path] of operations) {
      const operation = document.paths[path]?.[method];
      expect(operation, `${method.toUpperCase()} ${path}`).toBeDefined();
      expect(Object.keys(operation?.responses ?? {}), `${method.toUpperCase()} ${path}`).toEqual(
        expect.arrayContaining(['200', '400']),
      );
    }
  });

  it('names every operation once, declares the server, the tags and the hal+json answers of inbound', async () => {
    const document = (await t.app.inject('/openapi.json')).json<OpenApiDocument>();
    const declared = document.tags.map((tag) => tag.name);
    const used = Object.values(document.paths).flatMap((methods) =>
      Object.values(methods).flatMap((operation) => operation.tags ?? []),
    );
    expect(new Set(declared)).toEqual(new Set(used));
    expect(document.servers).toEqual([expect.objectContaining({ url: '/' })]);
    const ids = Object.values(document.paths).flatMap((methods) =>
      Object.values(methods).map((operation) => operation.operationId),
    );
    expect(ids.every((id) => typeof id === 'string' && /^[a-z][A-Za-z0-9]+$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    const get = document.paths['/api/inbound/{orderId}']?.get;
    expect(get?.operationId).toBe('getInboundByOrderId');
    expect(Object.keys(get?.responses['200']?.content ?? {})).toEqual(['application/hal+json']);
    expect(Object.keys(document.paths['/api/webhook/']?.get?.responses['200']?.content ?? {})).toEqual([
      'application/json',
    ]);
  });

  it('declares the Idempotency-Key header and its 409/422 answers on every mutation, never on a read', async () => {
    const document = (await t.app.inject('/openapi.json')).json<OpenApiDocument>();
    for (const [method, path] of operations) {
      if (!path.startsWith('/api/')) continue;
      const operation = document.paths[path]?.[method];
      const header = operation?.parameters?.find(
        (parameter) => parameter.in === 'header' && parameter.name === 'Idempotency-Key',
      );
      const label = `${method.toUpperCase()} ${path}`;
      if (method === 'get') {
        expect(header, label).toBeUndefined();
        expect(Object.keys(operation?.responses ?? {}), label).not.toContain('409');
        continue;
      }
      expect(header, label).toMatchObject({ name: 'Idempotency-Key', required: false });
      expect(Object.keys(operation?.responses ?? {}), label).toEqual(expect.arrayContaining(['409', '422']));
    }
  });

  it('declares the 429 answer with its rate-limit header fields on every operation', async () => {
    const document = (await t.app.inject('/openapi.json')).json<OpenApiDocument>();
    const all = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]) => ({ label: `${method} ${path}`, operation })),
    );
    expect(all.length).toBeGreaterThan(50);
    for (const { label, operation } of all) {
      const answer = operation.responses['429'] as
        | { headers?: Record<string, unknown>; content?: Record<string, { schema?: { $ref?: string } }> }
        | undefined;
      expect(Object.keys(answer?.headers ?? {}).sort(), label).toEqual([
        'RateLimit',
        'RateLimit-Policy',
        'Retry-After',
      ]);
      expect(answer?.content?.['application/json']?.schema?.$ref, label).toBe(
        '#/components/schemas/ErrorResponse',
      );
    }
  });

  it('hides the operator API and the service endpoints', async () => {
    const document = (await t.app.inject('/openapi.json')).json<OpenApiDocument>();
    // Only the dictionary lookups live outside /api (spec §4.7, D11.3).
    const outside = Object.keys(document.paths).filter((path) => !path.startsWith('/api/'));
    expect(outside.sort()).toEqual(['/knowledge/getParams', '/option/fetchOption']);
  });
});
