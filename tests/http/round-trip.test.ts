/**
 * Round trips of every replace operation (P169): what GET returned, changed and sent back, is accepted — its
 * read-only fields (ids, dates, computed counts) ignored — while an id that contradicts the path is
 * `error_validation` on that field, a field outside the resource is still refused, and a stale `versionId` is
 * 409 where the resource has one. Covered: `PUT /api/model/{modelId}`, `PATCH /api/inbound/`,
 * `PUT /api/inbound/{orderId}/product`, `PUT /api/tag/{tagId}` and `PUT /api/tag`,
 * `PUT /api/keyword/group/{groupId}`.
 */
import { describe, expect, it } from 'vitest';
import { useTestApp, type TestApp } from '../helpers/test-app.ts';
import { createAccount, type TestAccount } from '../helpers/factories.ts';
import { expectError, expectValidation, send, type ApiRequest } from '../helpers/http.ts';
import { createModel, type ProductModel } from '../helpers/catalog.ts';
import { createOrder, expectHal, getOrder, productLine, type Order } from '../helpers/inbound.ts';
import type { OrderProduct } from '../../src/modules/inbound/schemas.ts';
import type { ProductTag, FindResponseProductTag } from '../../src/modules/tag/schemas.ts';
import type { KeywordGroup } from '../../src/modules/keyword/schemas.ts';

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

const call = (method: ApiRequest['method'], url: string, payload?: unknown) =>
  send(t.app, account.writeToken, { method, url, payload });
const ok = async <T>(request: ReturnType<typeof call>): Promise<T> => {
  const response = await request;
  expect(response.statusCode, response.body).toBe(200);
  return response.json<T>();
};

describe('PUT /api/model/{modelId}', () => {
  it('takes the model GET returned, changed; ignores its read-only fields', async () => {
    const created = await createModel(t.app, account);
    const read = await ok<ProductModel>(call('GET', `/api/model/${created.id}`));
    const changed = structuredClone(read);
    changed.title = 'Changed after a fresh read';
    changed.views[0]!.sizes[0]!.name = 'Renamed size';
    changed.modifiedDate = '2000-01-01T00:00:00.000Z';
    const replaced = await ok<ProductModel>(call('PUT', `/api/model/${read.id}`, changed));
    expect(replaced).toMatchObject({
      id: read.id,
      title: 'Changed after a fresh read',
      versionId: read.versionId + 1,
    });
    expect(replaced.views[0]!.sizes[0]).toMatchObject({
      id: read.views[0]!.sizes[0]!.id,
      name: 'Renamed size',
    });
    expect(replaced.modifiedDate).not.toBe('2000-01-01T00:00:00.000Z');
    expect(replaced.createdDate).toBe(read.createdDate);

    // The same body again: its versionId is now stale.
    expectError(await call('PUT', `/api/model/${read.id}`, changed), 409, 'error_version_conflict');
  });

  it('refuses ids that contradict the model and fields outside its shape', async () => {
    const read = await ok<ProductModel>(call('GET', `/api/model/${(await createModel(t.app, account)).id}`));
    const other = await createModel(t.app, account);
    expectValidation(await call('PUT', `/api/model/${read.id}`, { ...read, id: other.id }), 'id');
    expectValidation(
      await call('PUT', `/api/model/${read.id}`, { ...read, clientId: read.clientId + 1 }),
      'clientId',
    );
    const foreignView = structuredClone(read);
    foreignView.views[0]!.productModelId = other.id;
    expectValidation(await call('PUT', `/api/model/${read.id}`, foreignView), 'views.0.productModelId');
    const movedSize = structuredClone(read);
    movedSize.views[0]!.sizes[0]!.productViewId = read.views[1]!.id;
    expectValidation(await call('PUT', `/api/model/${read.id}`, movedSize), 'views.0.sizes.0.productViewId');
    expectValidation(await call('PUT', `/api/model/${read.id}`, { ...read, colour: 'red' }), /colour/);
    // Nothing of the refused bodies was written.
    expect((await ok<ProductModel>(call('GET', `/api/model/${read.id}`))).versionId).toBe(read.versionId);
  });
});

describe('PATCH /api/inbound/ and PUT /api/inbound/{orderId}/product', () => {
  it('take the document and the position GET returned, changed', async () => {
    const created = await createOrder(t.app, account.writeToken, {
      organizationId: account.organizationId,
      type: 'INCOME',
      products: [productLine({ quantity: 3, price: 12.5 })],
    });
    const read = await getOrder(t.app, account.writeToken, created.id);
    const patched = expectHal<Order>(
      await call('PATCH', '/api/inbound/', { ...read, name: 'Renamed after a read', totalQuantity: 999 }),
    );
    expect(patched).toMatchObject({
      name: 'Renamed after a read',
      totalQuantity: 3,
      versionId: read.versionId + 1,
    });
    expectError(
      await call('PATCH', '/api/inbound/', { ...read, comment: 'stale' }),
      409,
      'error_version_conflict',
    );
    expectValidation(await call('PATCH', '/api/inbound/', { ...patched, colour: 'red' }), /colour/);

    const position = (await getOrder(t.app, account.writeToken, created.id)).products![0]!;
    const url = `/api/inbound/${created.id}/product`;
    const updated = expectHal<OrderProduct>(
      await call('PUT', url, { ...position, quantity: 5, versionId: patched.versionId }),
    );
    expect(updated).toMatchObject({
      id: position.id,
      quantity: 5,
      introducedQuantity: position.introducedQuantity,
    });
    expect((await getOrder(t.app, account.writeToken, created.id)).totalQuantity).toBe(5);
    expectError(
      await call('PUT', url, { ...position, quantity: 6, versionId: patched.versionId }),
      409,
      'error_version_conflict',
    );
    const other = await createOrder(t.app, account.writeToken, {
      organizationId: account.organizationId,
      type: 'INCOME',
    });
    expectValidation(
      await call('PUT', url, { ...position, orderId: other.id, versionId: patched.versionId + 1 }),
      'orderId',
    );
    expectValidation(await call('PUT', url, { ...position, colour: 'red' }), /colour/);
  });
});

describe('PUT /api/tag/{tagId} and PUT /api/tag', () => {
  it('take the tag GET returned, changed', async () => {
    const created = await ok<ProductTag>(call('POST', '/api/tag', { name: `Round ${Date.now()}` }));
    const page = await ok<FindResponseProductTag>(
      call('GET', `/api/tag/find?query=${encodeURIComponent(created.name)}`),
    );
    const read = page.rows.find((row) => row.id === created.id)!;
    expect(
      await ok<ProductTag>(call('PUT', `/api/tag/${read.id}`, { ...read, name: `${read.name} A` })),
    ).toEqual({
      ...read,
      name: `${read.name} A`,
    });
    expect(await ok<ProductTag>(call('PUT', '/api/tag', { ...read, name: `${read.name} B` }))).toEqual({
      ...read,
      name: `${read.name} B`,
    });
    const other = await ok<ProductTag>(call('POST', '/api/tag', { name: `Other ${Date.now()}` }));
    expectValidation(await call('PUT', `/api/tag/${read.id}`, { ...read, id: other.id }), 'id');
    expectValidation(
      await call('PUT', `/api/tag/${read.id}`, { ...read, clientId: read.clientId + 1 }),
      'clientId',
    );
    expectValidation(await call('PUT', '/api/tag', { ...read, clientId: read.clientId + 1 }), 'clientId');
    expectValidation(await call('PUT', `/api/tag/${read.id}`, { ...read, colour: 'red' }), /colour/);
  });
});

describe('PUT /api/keyword/group/{groupId}', () => {
  it('takes the group GET returned, changed, as well as the keyword strings', async () => {
    const name = `Group ${Date.now()}`;
    const created = await ok<KeywordGroup>(
      call('POST', `/api/keyword/group?groupName=${encodeURIComponent(name)}`, ['cotton', 'summer']),
    );
    const read = await ok<KeywordGroup>(call('GET', `/api/keyword/group/${created.id}`));
    const changed = { ...read, name: `${name} renamed`, keywords: [...read.keywords, { name: 'linen' }] };
    const updated = await ok<KeywordGroup>(call('PUT', `/api/keyword/group/${read.id}`, changed));
    expect(updated.name).toBe(`${name} renamed`);
    expect(updated.keywords.map((keyword) => keyword.name).sort()).toEqual(['cotton', 'linen', 'summer']);
    expect(
      updated.keywords.filter((keyword) => read.keywords.some((old) => old.id === keyword.id)),
    ).toHaveLength(2);
    // The spec's form still works.
    const added = await ok<KeywordGroup>(call('PUT', `/api/keyword/group/${read.id}`, ['wool']));
    expect(added.keywords).toHaveLength(4);

    const other = await ok<KeywordGroup>(
      call('POST', `/api/keyword/group?groupName=Other%20${Date.now()}`, ['x']),
    );
    const url = `/api/keyword/group/${read.id}`;
    expectValidation(await call('PUT', url, { ...updated, id: other.id }), 'id');
    const foreignKeyword = { ...updated, keywords: [{ ...other.keywords[0]! }] };
    expectValidation(await call('PUT', url, foreignKeyword), 'keywords.0.id');
    const renamedKeyword = { ...updated, keywords: [{ ...updated.keywords[0]!, name: 'renamed' }] };
    expectValidation(await call('PUT', url, renamedKeyword), 'keywords.0.name');
    expectValidation(await call('PUT', `${url}?newName=Else`, updated), 'name');
    // The body is one of two shapes, so the error names the body rather than the field.
    expectValidation(await call('PUT', url, { ...updated, colour: 'red' }), /^body|colour/);
    expect((await ok<KeywordGroup>(call('GET', url))).keywords).toHaveLength(4);
  });
});
