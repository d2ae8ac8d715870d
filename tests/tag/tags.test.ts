/**
 * Product tags through HTTP (spec §4.5, D7): create, rename (both forms), delete and list; binding to products
 * and models; the two finds; every tag error code of spec §7 in its situation; roles and tenancy.
 */
import { describe, expect, it } from 'vitest';
import { useTestApp, type TestApp } from '../helpers/test-app.ts';
import { createAccount, type TestAccount } from '../helpers/factories.ts';
import { expectEmpty, expectError, expectNotFound, send, MISSING_ID } from '../helpers/http.ts';
import { createModel } from '../helpers/catalog.ts';
import type { FindResponseProductTag, ProductTag } from '../../src/modules/tag/schemas.ts';

let t: TestApp;
let account: TestAccount;
let stranger: TestAccount;
useTestApp(
  async (app) => {
    t = app;
    account = await createAccount(app.runtime);
    stranger = await createAccount(app.runtime);
  },
  {},
  { workers: false },
);

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';
const call = (method: Method, url: string, payload?: unknown, token = account.writeToken) =>
  send(t.app, token, { method, url, payload });
const newTag = async (name: string, token = account.writeToken) => {
  const response = await call('POST', '/api/tag', { name }, token);
  expect(response.statusCode, response.body).toBe(200);
  return response.json<ProductTag>();
};

describe('tags', () => {
  it('creates, renames in both forms, lists and deletes', async () => {
    const tag = await newTag('Sale');
    expect(tag).toEqual({ id: tag.id, name: 'Sale', clientId: account.clientId });
    expect((await call('PUT', `/api/tag/${tag.id}`, { name: 'Big sale' })).json()).toMatchObject({
      name: 'Big sale',
    });
    expect((await call('PUT', '/api/tag', { id: tag.id, name: 'Final sale' })).json()).toMatchObject({
      name: 'Final sale',
    });
    const listed = (
      await call('GET', '/api/tag?count=true', undefined, account.readToken)
    ).json<FindResponseProductTag>();
    expect(listed.rows.map((row) => row.name)).toContain('Final sale');
    expect(listed.total).toBe(listed.rows.length);
    const deleted = await call('DELETE', `/api/tag/${tag.id}`);
    expect(deleted.statusCode, deleted.body).toBe(200);
    expect(deleted.json()).toEqual({ id: tag.id, name: 'Final sale', clientId: account.clientId });
    expectNotFound(await call('DELETE', `/api/tag/${tag.id}`), tag.id);
  });

  it('answers the create and update error codes of spec §7', async () => {
    expectError(await call('POST', '/api/tag', {}), 400, 'error_tag_name_required');
    expectError(await call('POST', '/api/tag', { name: '  ' }), 400, 'error_tag_name_required');
    const tag = await newTag('Unique');
    expectError(await call('POST', '/api/tag', { name: 'UNIQUE' }), 400, 'error_duplicate_tag_name', {
      0: 'UNIQUE',
    });
    expectError(await call('PUT', '/api/tag', { name: 'x' }), 400, 'error_tag_id_required');
    expectError(await call('PUT', '/api/tag', { id: tag.id }), 400, 'error_tag_id_and_name_required');
    expectError(
      await call('PUT', `/api/tag/${tag.id}`, { name: null }),
      400,
      'error_tag_id_and_name_required',
    );
    const other = await newTag('Other');
    expectError(
      await call('PUT', `/api/tag/${other.id}`, { name: 'unique' }),
      400,
      'error_tag_update_failed',
      {
        0: other.id,
      },
    );
    expectNotFound(await call('PUT', `/api/tag/${MISSING_ID}`, { name: 'x' }), MISSING_ID);
    // Another client may use the same name.
    expect((await call('POST', '/api/tag', { name: 'Unique' }, stranger.writeToken)).statusCode).toBe(200);
  });

  it('finds by name substring with paging, sorting by NAME or ID, and count only when asked', async () => {
    const owner = await createAccount(t.runtime);
    for (const name of ['beta', 'Alpha', 'gamma']) await newTag(name, owner.writeToken);
    const find = (query: string) =>
      call('GET', `/api/tag/find?${query}`, undefined, owner.readToken).then((r) =>
        r.json<FindResponseProductTag>(),
      );
    // Descending unless `ascending=true` (D4.4).
    expect((await find('sortBy=NAME&ascending=true')).rows.map((row) => row.name)).toEqual([
      'Alpha',
      'beta',
      'gamma',
    ]);
    expect((await find('sortBy=NAME')).rows.map((row) => row.name)).toEqual(['gamma', 'beta', 'Alpha']);
    expect((await find('sortBy=ID')).rows.map((row) => row.name)).toEqual(['gamma', 'Alpha', 'beta']);
    expect((await find('ascending=true')).rows.map((row) => row.name)).toEqual(['beta', 'Alpha', 'gamma']);
    expect(await find('query=AL&count=true')).toMatchObject({ rows: [{ name: 'Alpha' }], total: 1, page: 1 });
    expect(await find('limit=2&page=2')).toEqual({
      rows: [expect.objectContaining({ name: 'beta' })],
      page: 2,
    });
  });
});

describe('binding', () => {
  it('binds to products and models, finds by product and by model (model tags count for each product)', async () => {
    const model = await createModel(t.app, account, ['black'], ['S', 'M']);
    const [small, medium] = model.views[0]?.sizes ?? [];
    const onProduct = await newTag('On product');
    const onModel = await newTag('On model');
    expectEmpty(await call('PUT', `/api/tag/product/${onProduct.id}/${small?.id}`));
    expectEmpty(await call('PUT', `/api/tag/model/${onModel.id}/${model.id}`));
    expectError(
      await call('PUT', `/api/tag/product/${onProduct.id}/${small?.id}`),
      400,
      'error_duplicate_tag_association',
    );
    expectError(
      await call('PUT', `/api/tag/model/${onModel.id}/${model.id}`),
      400,
      'error_duplicate_tag_association',
    );
    const byProduct = (
      await call('GET', `/api/tag/find?productId=${small?.id}`)
    ).json<FindResponseProductTag>();
    expect(byProduct.rows.map((row) => row.id)).toEqual([onModel.id, onProduct.id]);
    expect((await call('GET', `/api/tag/find/${model.id}`, undefined, account.readToken)).json()).toEqual({
      rows: [
        { productId: small?.id, productTags: [onProduct, onModel] },
        { productId: medium?.id, productTags: [onModel] },
      ],
    });
    expectEmpty(await call('DELETE', `/api/tag/product/${onProduct.id}/${small?.id}`));
    expectEmpty(await call('DELETE', `/api/tag/model/${onModel.id}/${model.id}`));
    expect((await call('GET', `/api/tag/find/${model.id}`)).json()).toEqual({
      rows: [
        { productId: small?.id, productTags: [] },
        { productId: medium?.id, productTags: [] },
      ],
    });
  });

  it('answers missing ids (0) with the codes spec §7 names for each operation', async () => {
    const model = await createModel(t.app, account, ['white'], ['S']);
    const product = model.views[0]?.sizes[0]?.id;
    const tag = await newTag('Ids');
    expectError(await call('PUT', `/api/tag/product/0/${product}`), 400, 'error_tag_and_product_id_required');
    expectError(await call('PUT', `/api/tag/product/${tag.id}/0`), 400, 'error_tag_and_product_id_required');
    expectError(await call('DELETE', `/api/tag/product/${tag.id}/0`), 400, 'error_tag_and_model_id_required');
    expectError(await call('PUT', `/api/tag/model/0/${model.id}`), 400, 'error_tag_and_model_id_required');
    expectError(await call('DELETE', `/api/tag/model/${tag.id}/0`), 400, 'error_tag_and_model_id_required');
  });

  it('answers another client’s tag, product or model exactly like unknown ones', async () => {
    const theirs = await createModel(t.app, stranger, ['red'], ['L']);
    const theirProduct = theirs.views[0]?.sizes[0]?.id;
    const theirTag = await newTag('Theirs', stranger.writeToken);
    const mine = await newTag('Mine');
    const model = await createModel(t.app, account, ['grey'], ['S']);
    expectNotFound(await call('PUT', `/api/tag/product/${mine.id}/${theirProduct}`), String(theirProduct));
    expectNotFound(await call('PUT', `/api/tag/model/${mine.id}/${theirs.id}`), theirs.id);
    expectNotFound(await call('PUT', `/api/tag/model/${theirTag.id}/${model.id}`), theirTag.id);
    expectNotFound(await call('GET', `/api/tag/find/${theirs.id}`), theirs.id);
    expectNotFound(await call('PUT', `/api/tag/${theirTag.id}`, { name: 'stolen' }), theirTag.id);
    expectNotFound(await call('DELETE', `/api/tag/${theirTag.id}`), theirTag.id);
    expect((await call('GET', '/api/tag/find?query=Theirs&count=true')).json()).toMatchObject({ total: 0 });
  });

  it('refuses every write with a READ token', async () => {
    const tag = await newTag('Read only');
    const model = await createModel(t.app, account, ['blue'], ['S']);
    const product = model.views[0]?.sizes[0]?.id;
    for (const [method, url, body] of [
      ['POST', '/api/tag', { name: 'x' }],
      ['PUT', '/api/tag', { id: tag.id, name: 'x' }],
      ['PUT', `/api/tag/${tag.id}`, { name: 'x' }],
      ['DELETE', `/api/tag/${tag.id}`, undefined],
      ['PUT', `/api/tag/product/${tag.id}/${product}`, undefined],
      ['DELETE', `/api/tag/product/${tag.id}/${product}`, undefined],
      ['PUT', `/api/tag/model/${tag.id}/${model.id}`, undefined],
      ['DELETE', `/api/tag/model/${tag.id}/${model.id}`, undefined],
    ] as const)
      expectError(await call(method, url, body, account.readToken), 400, 'error_access_denied');
  });
});
