/**
 * The catalog group through HTTP (spec §4.7, D11): brands and categories, model cards, replacement with
 * optimistic locking, merge patches of a product, product search, CREATE_PRODUCT events, roles and tenancy.
 */
import { describe, expect, it } from 'vitest';
import { useTestApp, type TestApp } from '../helpers/test-app.ts';
import { createAccount, type TestAccount } from '../helpers/factories.ts';
import { expectError, expectNotFound, expectValidation, send, MISSING_ID } from '../helpers/http.ts';
import { createBrandAndCategory, createModel, modelBody, type ProductModel } from '../helpers/catalog.ts';
import type { EventCandidate, EventRecorder } from '../../src/events/outbox.ts';
import { sql } from 'kysely';
import { presentModel, presentProductRow } from '../../src/modules/catalog/presenter.ts';
import { modelRepository, productFindRepository } from '../../src/modules/catalog/repository.ts';

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

const call = (
  method: 'GET' | 'POST' | 'PUT' | 'PATCH',
  url: string,
  payload?: unknown,
  token = account.writeToken,
) => send(t.app, token, { method, url, payload });

describe('brands and categories', () => {
  it('creates a brand, refuses a case-insensitive duplicate with the existing id, and finds by substring', async () => {
    const created = await call('POST', '/api/brand', { name: 'Northwind Apparel' });
    expect(created.statusCode, created.body).toBe(200);
    const brand = created.json<{ id: number; name: string; clientId: number }>();
    expect(brand).toMatchObject({ name: 'Northwind Apparel', clientId: account.clientId });
    expectError(
      await call('POST', '/api/brand', { name: ' northwind APPAREL ' }),
      400,
      'error_duplicate_name',
      {
        entity: 'brand',
        id: brand.id,
      },
    );
    const found = await call('GET', '/api/brand/find?query=WIND&count=true', undefined, account.readToken);
    expect(found.json()).toMatchObject({ rows: [{ id: brand.id }], page: 1, total: 1 });
    expect(found.json()).toHaveProperty('rows');
    expect(
      (await call('GET', '/api/brand/find?query=wind', undefined, account.readToken)).json(),
    ).not.toHaveProperty('total');
    // Newest first unless ascending=true (D4.4); modifiedDate is a lower bound (D4.5).
    const second = (await call('POST', '/api/brand', { name: 'Southwind' })).json<{ id: number }>();
    const ids = async (query: string) =>
      (await call('GET', `/api/brand/find?query=wind&${query}`, undefined, account.readToken))
        .json<{ rows: Array<{ id: number }> }>()
        .rows.map((row) => row.id);
    expect(await ids('')).toEqual([second.id, brand.id]);
    expect(await ids('ascending=true')).toEqual([brand.id, second.id]);
    expect(
      await ids(`modifiedDate=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`),
    ).toEqual([]);
    expect(await ids('modifiedDate=2000-01-01T00:00:00Z&ascending=true')).toEqual([brand.id, second.id]);
    // Another client has its own namespace and sees none of these.
    expect(
      (await call('POST', '/api/brand', { name: 'Northwind Apparel' }, stranger.writeToken)).statusCode,
    ).toBe(200);
    expect(
      (await call('GET', '/api/brand/find?query=wind&count=true', undefined, stranger.readToken)).json(),
    ).toMatchObject({
      total: 1,
    });
  });

  it('creates categories under a parent of the same client only', async () => {
    const parent = (await call('POST', '/api/category', { name: 'Apparel', market1CategoryId: 5067 })).json<{
      id: number;
    }>();
    const child = await call('POST', '/api/category', { name: 'T-shirts', parentId: parent.id });
    expect(child.json()).toMatchObject({ name: 'T-shirts', parentId: parent.id, market1CategoryId: null });
    expectNotFound(
      await call('POST', '/api/category', { name: 'Orphans', parentId: parent.id }, stranger.writeToken),
      parent.id,
    );
    expectError(await call('POST', '/api/category', { name: 'apparel' }), 400, 'error_duplicate_name', {
      id: parent.id,
    });
    expectValidation(await call('POST', '/api/category', { name: '   ' }), 'name');
  });

  it('refuses writes with a READ token', async () => {
    expectError(
      await call('POST', '/api/brand', { name: 'Read only' }, account.readToken),
      400,
      'error_access_denied',
    );
  });
});

describe('model cards', () => {
  it('creates a card with two colours × three sizes and reads the whole hierarchy', async () => {
    const model = await createModel(t.app, account);
    expect(model.versionId).toBe(1);
    expect(model.views.map((view) => view.color)).toEqual(['black', 'white']);
    expect(model.views.map((view) => view.sizes.map((size) => size.size))).toEqual([
      ['S', 'M', 'L'],
      ['S', 'M', 'L'],
    ]);
    const read = await call('GET', `/api/model/${model.id}`, undefined, account.readToken);
    expect(read.json()).toEqual(model);
  });

  it('answers GET with the bytes of JSON.stringify of the presented card (views rendered by PostgreSQL, P201)', async () => {
    const colors = ['quote " back \\ slash', 'ü 😀 \u2028 </script>', 'grey'];
    const model = await createModel(t.app, account, colors, ['S', 'M']);
    const db = t.runtime.database.db;
    const [first, second, third] = model.views;
    const clientId = account.clientId;
    const change = (statement: ReturnType<typeof sql>) => statement.execute(db);
    // sizes out of id order with a control character and microseconds; a missing barcode; a view without colour;
    // a view whose sizes are all deleted
    await change(sql`update product set position = 10 - position, name = name || ${'\n\t\u0001'},
      created_date = '2024-01-02 03:04:05.999999+00', modified_date = '1999-12-31 23:59:59.0005+03'
      where client_id = ${clientId} and view_id = ${first!.id}`);
    await change(
      sql`update product set barcode = null where client_id = ${clientId} and view_id = ${second!.id}`,
    );
    await change(
      sql`update product_view set color = null where client_id = ${clientId} and id = ${second!.id}`,
    );
    await change(
      sql`update product set deleted = true where client_id = ${clientId} and view_id = ${third!.id}`,
    );
    const stored = await modelRepository.find(db, clientId, model.id);
    const expected = JSON.stringify(
      presentModel(
        stored!,
        await modelRepository.views(db, clientId, model.id),
        await modelRepository.products(db, clientId, model.id),
      ),
    );
    expect(expected).toContain('"sizes":[]');
    const read = await call('GET', `/api/model/${model.id}`, undefined, account.readToken);
    expect(read.body).toBe(expected);
  });

  it('needs at least one view and one size, names the field, and refuses a repeated article', async () => {
    const ids = await createBrandAndCategory(t.app, account);
    const body = modelBody(account, ids);
    expectValidation(await call('POST', '/api/model', { ...body, views: [] }), 'views');
    expectValidation(
      await call('POST', '/api/model', { ...body, views: [{ color: 'red', sizes: [] }] }),
      'views.0.sizes',
    );
    expectValidation(await call('POST', '/api/model', { ...body, article: undefined }), 'article');
    const first = await call('POST', '/api/model', body);
    expect(first.statusCode, first.body).toBe(200);
    expectError(await call('POST', '/api/model', body), 400, 'error_duplicate_article', {
      article: body.article,
      id: first.json<{ id: number }>().id,
    });
  });

  it('answers another client’s brand, organization or model exactly like unknown ones', async () => {
    const ids = await createBrandAndCategory(t.app, stranger);
    expectNotFound(await call('POST', '/api/model', modelBody(account, ids)), ids.brandId);
    const own = await createBrandAndCategory(t.app, account);
    expectError(
      await call('POST', '/api/model', {
        ...modelBody(account, own),
        organizationId: stranger.organizationId,
      }),
      400,
      'error_organization_not_found',
    );
    const theirs = await createModel(t.app, stranger);
    const foreign = await call('GET', `/api/model/${theirs.id}`);
    const missing = await call('GET', `/api/model/${MISSING_ID}`);
    expectNotFound(foreign, theirs.id);
    expectNotFound(missing, MISSING_ID);
    expect(foreign.json<{ params: object }>().params).toEqual({ entity: 'model', id: String(theirs.id) });
    expectNotFound(
      await call('PUT', `/api/model/${theirs.id}`, { ...modelBody(account, own), versionId: 1 }),
      theirs.id,
    );
    expectNotFound(
      await call('PATCH', `/api/product/${theirs.views[0]?.sizes[0]?.id}`, { name: 'x' }),
      String(theirs.views[0]?.sizes[0]?.id),
    );
  });
});

describe('PUT /api/model/{modelId}', () => {
  it('replaces the structure: kept ids updated, new ones created, missing ones removed; version +1', async () => {
    const model = await createModel(t.app, account);
    const [black, white] = model.views as [ProductModel['views'][number], ProductModel['views'][number]];
    const response = await call('PUT', `/api/model/${model.id}`, {
      versionId: 1,
      article: model.article,
      title: 'Renamed card',
      brandId: model.brandId,
      categoryId: model.categoryId,
      views: [
        {
          id: black.id,
          color: 'graphite',
          sizes: [
            { id: black.sizes[0]?.id, name: 'Graphite S', size: 'S' },
            { name: 'Graphite XL', size: 'XL' },
          ],
        },
        { color: 'red', sizes: [{ name: 'Red M', size: 'M' }] },
      ],
    });
    expect(response.statusCode, response.body).toBe(200);
    const replaced = response.json<ProductModel>();
    expect(replaced).toMatchObject({ title: 'Renamed card', versionId: 2 });
    expect(replaced.views.map((view) => view.color)).toEqual(['graphite', 'red']);
    expect(replaced.views[0]?.id).toBe(black.id);
    expect(replaced.views[0]?.sizes[0]).toMatchObject({
      id: black.sizes[0]?.id,
      name: 'Graphite S',
      barcode: null,
    });
    expect(replaced.views[0]?.sizes.map((size) => size.size)).toEqual(['S', 'XL']);
    expect(replaced.views.some((view) => view.id === white.id)).toBe(false);
    const removedProduct = black.sizes[1]?.id;
    expectNotFound(
      await call('PATCH', `/api/product/${removedProduct}`, { name: 'gone' }),
      String(removedProduct),
    );
  });

  it('refuses a stale versionId with 409 and an id of another model with error_validation', async () => {
    const model = await createModel(t.app, account);
    const other = await createModel(t.app, account);
    const body = {
      versionId: 1,
      article: model.article,
      title: model.title,
      brandId: model.brandId,
      categoryId: model.categoryId,
      views: [
        { id: model.views[0]?.id, sizes: [{ id: other.views[0]?.sizes[0]?.id, name: 'x', size: 'S' }] },
      ],
    };
    expectValidation(await call('PUT', `/api/model/${model.id}`, body), 'views.0.sizes.0.id');
    const ok = await call('PUT', `/api/model/${model.id}`, {
      ...body,
      views: [{ sizes: [{ name: 'One', size: 'OS' }] }],
    });
    expect(ok.statusCode, ok.body).toBe(200);
    expectError(await call('PUT', `/api/model/${model.id}`, body), 409, 'error_version_conflict', {
      entity: 'model',
      currentVersionId: 2,
    });
  });
});

describe('PATCH /api/product/{productId}', () => {
  it('applies a JSON merge patch, keeping untouched fields; null clears the barcode; the model version grows', async () => {
    const model = await createModel(t.app, account);
    const product = model.views[0]?.sizes[1];
    const response = await t.app.inject({
      method: 'PATCH',
      url: `/api/product/${product?.id}`,
      headers: { authorization: account.writeToken, 'content-type': 'application/merge-patch+json' },
      payload: JSON.stringify({ name: 'Renamed M' }),
    });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toMatchObject({
      id: product?.id,
      name: 'Renamed M',
      size: 'M',
      barcode: product?.barcode,
    });
    const cleared = await call('PATCH', `/api/product/${product?.id}`, { barcode: null, versionId: 2 });
    expect(cleared.json()).toMatchObject({ name: 'Renamed M', size: 'M', barcode: null });
    expect((await call('GET', `/api/model/${model.id}`)).json()).toMatchObject({ versionId: 3 });
    expectError(
      await call('PATCH', `/api/product/${product?.id}`, { name: 'late', versionId: 1 }),
      409,
      'error_version_conflict',
      { entity: 'model', id: String(model.id), currentVersionId: 3 },
    );
    expectValidation(await call('PATCH', `/api/product/${product?.id}`, { name: null }), 'name');
    expectError(
      await call('PATCH', `/api/product/${product?.id}`, { name: 'x' }, account.readToken),
      400,
      'error_access_denied',
    );
  });
});

describe('GET /api/product/find', () => {
  it('pages lightweight rows in stable id order with filters; count only when asked', async () => {
    const owner = await createAccount(t.runtime);
    const model = await createModel(t.app, owner, ['navy', 'sand'], ['S', 'M', 'L']);
    const find = (query: string) =>
      call('GET', `/api/product/find?ascending=true&${query}`, undefined, owner.readToken);
    const all = (await find('count=true')).json<{ rows: Array<{ id: number }>; total: number }>();
    expect(all.total).toBe(6);
    expect(all.rows.map((row) => row.id)).toEqual([...all.rows.map((row) => row.id)].sort((a, b) => a - b));
    // Without `ascending`, newest first (D4.4).
    const newestFirst = await call('GET', '/api/product/find', undefined, owner.readToken);
    expect(newestFirst.json<{ rows: Array<{ id: number }> }>().rows.map((row) => row.id)).toEqual(
      all.rows.map((row) => row.id).reverse(),
    );
    expect(all.rows[0]).toEqual({
      id: model.views[0]?.sizes[0]?.id,
      modelId: model.id,
      viewId: model.views[0]?.id,
      article: model.article,
      barcode: model.views[0]?.sizes[0]?.barcode,
      name: 'T-shirt navy S',
      size: 'S',
      color: 'navy',
      brandId: model.brandId,
      categoryId: model.categoryId,
      modifiedDate: expect.any(String) as string,
    });
    const first = (await find('limit=4&page=1')).json<{ rows: Array<{ id: number }> }>().rows;
    const second = (await find('limit=4&page=2')).json<{ rows: Array<{ id: number }> }>().rows;
    expect([...first, ...second].map((row) => row.id)).toEqual(all.rows.map((row) => row.id));
    expect((await find('limit=4')).json()).not.toHaveProperty('total');
    expect((await find(`article=${model.article}&count=true`)).json()).toMatchObject({ total: 6 });
    expect(
      (await find(`brandId=${model.brandId}&categoryId=${model.categoryId}&count=true`)).json(),
    ).toMatchObject({ total: 6 });
    expect(
      (await find(`article=${model.article}&limit=4&page=2`))
        .json<{ rows: Array<{ id: number }> }>()
        .rows.map((row) => row.id),
    ).toEqual(all.rows.slice(4).map((row) => row.id));
    expect((await find(`article=${model.article}-other&count=true`)).json()).toMatchObject({ total: 0 });
    expect((await find('query=sand%20m&count=true')).json()).toMatchObject({ total: 1 });
    // A text of several words matches as one substring, whichever word the index looks up (P195).
    expect((await find('query=shirt%20SAND&count=true')).json()).toMatchObject({ total: 3 });
    expect((await find('query=t-shirt%20navy%20l&count=true')).json()).toMatchObject({ total: 1 });
    expect((await find('query=sand%20shirt&count=true')).json()).toMatchObject({ total: 0, rows: [] });
    expect((await find(`barcode=${model.views[1]?.sizes[2]?.barcode}`)).json()).toMatchObject({
      rows: [{ id: model.views[1]?.sizes[2]?.id }],
    });
    expect((await find(`ids=${all.rows[0]?.id}&ids=${all.rows[5]?.id}&count=true`)).json()).toMatchObject({
      total: 2,
    });
    const future = new Date(Date.now() + 60_000).toISOString();
    expect((await find(`modifiedDate=${encodeURIComponent(future)}&count=true`)).json()).toMatchObject({
      total: 0,
    });
    // Another client's search never sees these products.
    expect((await call('GET', `/api/product/find?modelId=${model.id}&count=true`)).json()).toMatchObject({
      total: 0,
    });
  });

  it('answers rows with the bytes of JSON.stringify of the presented rows (rendered by PostgreSQL, P201)', async () => {
    const owner = await createAccount(t.runtime);
    const model = await createModel(
      t.app,
      owner,
      ['quote " back \\ slash', 'ü 😀 \u2028 </script>'],
      ['S', 'M'],
    );
    const db = t.runtime.database.db;
    const [first, second] = model.views;
    // a control character and microseconds; a missing barcode; a view without colour
    await sql`update product set name = name || ${'\n\t\u0001'},
      modified_date = '1999-12-31 23:59:59.0005+03'
      where client_id = ${owner.clientId} and view_id = ${first!.id}`.execute(db);
    await sql`update product set barcode = null where client_id = ${owner.clientId} and view_id = ${second!.id}`.execute(
      db,
    );
    await sql`update product_view set color = null where client_id = ${owner.clientId} and id = ${second!.id}`.execute(
      db,
    );
    const ids = model.views.flatMap((view) => view.sizes.map((size) => size.id)).sort((a, b) => a - b);
    const rows = await productFindRepository.byIds(db, owner.clientId, ids);
    const presented = ids.map((id) => presentProductRow(rows.find((row) => row.id === id)!));
    for (const path of ['limit=3', `article=${model.article}&limit=3`, 'query=t-shirt&limit=3']) {
      const read = await call(
        'GET',
        `/api/product/find?${path}&ascending=true&count=true`,
        undefined,
        owner.readToken,
      );
      const { nextCursor } = read.json<{ nextCursor: string }>();
      expect(read.body, path).toBe(
        JSON.stringify({ rows: presented.slice(0, 3), page: 1, total: 4, nextCursor }),
      );
    }
    const last = await call(
      'GET',
      '/api/product/find?limit=3&page=2&ascending=true',
      undefined,
      owner.readToken,
    );
    expect(last.body).toBe(JSON.stringify({ rows: presented.slice(3), page: 2 }));
  });

  it('pages a search like a list: by offset and by cursor, both orders, with other filters, whichever way rows match (P209)', async () => {
    const owner = await createAccount(t.runtime);
    const named = await createModel(t.app, owner, ['red', 'needle'], ['S', 'M', 'L']);
    const byArticle = await createModel(t.app, owner, ['blue', 'green'], ['S', 'M', 'L']);
    const byBarcode = await createModel(t.app, owner, ['black'], ['S', 'M']);
    const db = t.runtime.database.db;
    await sql`update product_model set article = ${`ART-NEEDLE-${byArticle.id}`}
      where client_id = ${owner.clientId} and id = ${byArticle.id}`.execute(db);
    const coded = byBarcode.views[0]!.sizes[1]!.id;
    await sql`update product set barcode = 'needle' where client_id = ${owner.clientId} and id = ${coded}`.execute(
      db,
    );
    const sizesOf = (model: ProductModel, views = model.views) =>
      views.flatMap((view) => view.sizes.map((size) => size.id));
    const matching = [...sizesOf(named, named.views.slice(1)), ...sizesOf(byArticle), coded].sort(
      (a, b) => a - b,
    );
    const ids = async (path: string) =>
      (await call('GET', `/api/product/find?query=needle&${path}`, undefined, owner.readToken)).json<{
        rows: Array<{ id: number }>;
        total?: number;
        nextCursor?: string;
      }>();
    expect(await ids('count=true')).toMatchObject({ total: matching.length });
    expect((await ids('limit=100&ascending=true')).rows.map((row) => row.id)).toEqual(matching);
    // A search's rows are written by `product_page_rows` (P212), a list's by its own statement: the same text.
    const searched = await call(
      'GET',
      '/api/product/find?query=needle&limit=100',
      undefined,
      owner.readToken,
    );
    const listed = await call(
      'GET',
      `/api/product/find?${matching.map((id) => `ids=${id}`).join('&')}&limit=100`,
      undefined,
      owner.readToken,
    );
    expect(searched.body).toBe(listed.body);
    for (const ascending of [true, false]) {
      const expected = ascending ? matching : [...matching].reverse();
      for (const limit of [1, 3, 4]) {
        const byOffset: number[] = [];
        for (let page = 1; byOffset.length < expected.length; page += 1)
          byOffset.push(
            ...(await ids(`limit=${limit}&page=${page}&ascending=${ascending}`)).rows.map((r) => r.id),
          );
        expect(byOffset, `offset, limit ${limit}`).toEqual(expected);
        const byCursor: number[] = [];
        let cursor: string | undefined;
        do {
          const read = await ids(
            `limit=${limit}&ascending=${ascending}${cursor === undefined ? '' : `&cursor=${encodeURIComponent(cursor)}`}`,
          );
          byCursor.push(...read.rows.map((row) => row.id));
          cursor = read.nextCursor;
        } while (cursor !== undefined);
        expect(byCursor, `cursor, limit ${limit}`).toEqual(expected);
      }
    }
    // On one server a search without other filters is `product_search_page` (P214): each way of matching gives the
    // same rows whichever form reads it, the trigram index looked up by a word or the client's products walked.
    if (!(await t.runtime.database.distributed()))
      for (const lookup of [null, '%needle%'])
        for (const ascending of [true, false]) {
          const found = await sql<{
            id: string;
          }>`select id from product_search_page(${owner.clientId}, 'needle',
            '%needle%', ${lookup}, ${lookup}, ${ascending}, ${ascending ? '0' : '9223372036854775807'}, 1, 100)
            order by id`.execute(db);
          const expected = (ascending ? matching : [...matching].reverse()).slice(1);
          expect(
            found.rows.map((row) => Number(row.id)),
            `${lookup}, ${ascending}`,
          ).toEqual([...expected].sort((a, b) => a - b));
        }
    // Every other filter narrows each way of matching.
    expect(await ids(`brandId=${byArticle.brandId}&limit=2&page=2&ascending=true&count=true`)).toMatchObject({
      total: 6,
      rows: sizesOf(byArticle)
        .sort((a, b) => a - b)
        .slice(2, 4)
        .map((id) => ({ id })),
    });
    expect(await ids(`modelId=${byBarcode.id}&count=true`)).toMatchObject({
      total: 1,
      rows: [{ id: coded }],
    });
    expect((await call('GET', '/api/product/find?query=needle&count=true')).json()).toMatchObject({
      total: 0,
    });
  });

  it('shows each row with its own model and view when a page spans several models, on every kind of page (P208)', async () => {
    const owner = await createAccount(t.runtime);
    const models = [
      await createModel(t.app, owner, ['red', 'blue'], ['S', 'M']),
      await createModel(t.app, owner, ['green'], ['L']),
      await createModel(t.app, owner, ['black', 'white'], ['XS', 'XL']),
    ];
    const ids = models
      .flatMap((model) => model.views.flatMap((view) => view.sizes.map((size) => size.id)))
      .sort((a, b) => a - b);
    const rows = await productFindRepository.byIds(t.runtime.database.db, owner.clientId, ids);
    const presented = ids.map((id) => presentProductRow(rows.find((row) => row.id === id)!));
    const read = async (path: string) =>
      (await call('GET', `/api/product/find?${path}`, undefined, owner.readToken)).json<{
        rows: unknown[];
        nextCursor?: string;
      }>();
    expect((await read('limit=100&ascending=true')).rows).toEqual(presented);
    expect((await read('limit=100')).rows).toEqual([...presented].reverse());
    const first = await read('limit=4&ascending=true');
    const next = await read(
      `limit=4&ascending=true&cursor=${encodeURIComponent(first.nextCursor as string)}`,
    );
    expect([...first.rows, ...next.rows]).toEqual(presented.slice(0, 8));
    expect((await read('limit=4&page=2&ascending=true')).rows).toEqual(presented.slice(4, 8));
    expect((await read('limit=2&page=2&ascending=false')).rows).toEqual([...presented].reverse().slice(2, 4));
  });
});

describe('CREATE_PRODUCT events', () => {
  it('records one event per new final product in the creating transaction, with the product row as body', async () => {
    const recorded: Array<EventCandidate & { body: unknown }> = [];
    const recorder: EventRecorder = {
      async record(trx, candidates, render) {
        const bodies = await render(
          trx,
          candidates[0]?.clientId ?? 0,
          candidates.map((candidate) => candidate.entityId),
        );
        for (const candidate of candidates)
          recorded.push({ ...candidate, body: bodies.get(candidate.entityId) });
      },
    };
    const original = t.runtime.changes.eventRecorder;
    t.runtime.changes.installRecorder(recorder);
    try {
      const model = await createModel(t.app, account, ['olive'], ['S', 'M']);
      const ids = model.views.flatMap((view) => view.sizes.map((size) => size.id));
      expect(recorded.map((event) => [event.type, event.entityId, event.organizationId])).toEqual(
        ids.map((id) => ['CREATE_PRODUCT', id, account.organizationId]),
      );
      expect(recorded[0]?.body).toMatchObject({ id: ids[0], modelId: model.id, color: 'olive', size: 'S' });
    } finally {
      t.runtime.changes.installRecorder(original);
    }
  });
});

describe('receiving documents and the catalog', () => {
  it('accepts positions of the caller’s catalog products only (404 entity product otherwise)', async () => {
    const own = await createModel(t.app, account, ['black'], ['S']);
    const theirs = await createModel(t.app, stranger, ['black'], ['S']);
    const ownProduct = own.views[0]?.sizes[0]?.id as number;
    const foreignProduct = theirs.views[0]?.sizes[0]?.id as number;
    const create = (productId: number) =>
      call('POST', '/api/inbound/', {
        organizationId: account.organizationId,
        type: 'INCOME',
        products: [{ productId, quantity: 1, price: 10 }],
      });
    const created = await create(ownProduct);
    expect(created.statusCode, created.body).toBe(200);
    const foreign = await create(foreignProduct);
    const missing = await create(MISSING_ID);
    expectNotFound(foreign, foreignProduct);
    expectNotFound(missing, MISSING_ID);
    expect(foreign.json<{ params: object }>().params).toMatchObject({ entity: 'product' });
    const orderId = created.json<{ id: number }>().id;
    expectNotFound(
      await call('POST', `/api/inbound/${orderId}/product`, { productId: foreignProduct }),
      foreignProduct,
    );
  });
});
