/**
 * Marketplace dictionaries and parameter values (spec §4.7 rules 4, 5, 8; D11.2, D11.3): the sample dictionary
 * loaded through the admin API, `getParams` and `fetchOption`, values at the four levels with the most specific
 * winning, multi-value and SUGGEST parameters, and the validation of values.
 */
import { describe, expect, it } from 'vitest';
import { useTestApp, TEST_ADMIN_TOKEN, type TestApp } from '../helpers/test-app.ts';
import { createAccount, type TestAccount } from '../helpers/factories.ts';
import { expectError, expectValidation, send } from '../helpers/http.ts';
import { modelBody, type ProductModel } from '../helpers/catalog.ts';
import { sampleDictionary } from '../../src/modules/catalog/dictionary.ts';

const COLOR = 14177449;
const GENDER = 14177450;
const COMPOSITION = 14177451;
const WEIGHT = 14177455;
const OVERSIZE = 14177456;
const TOWEL_MATERIAL = 15001001;

let t: TestApp;
let account: TestAccount;
useTestApp(
  async (app) => {
    t = app;
    account = await createAccount(app.runtime);
    const loaded = await app.app.inject({
      method: 'POST',
      url: '/admin/dictionaries',
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
      payload: sampleDictionary(),
    });
    expect(loaded.statusCode, loaded.body).toBe(200);
    expect(loaded.json()).toMatchObject({ categories: 5 });
  },
  {},
  { workers: false },
);

const call = (method: 'GET' | 'POST' | 'PUT', url: string, payload?: unknown, token = account.writeToken) =>
  send(t.app, token, { method, url, payload });

/** A brand and a category mapped to the marketplace's T-shirts, with a category-level Gender. */
async function tshirtCategory(params: unknown[] = [{ paramId: GENDER, value: 'Unisex' }]) {
  const suffix = Math.random().toString(36).slice(2, 8);
  const brand = await call('POST', '/api/brand', { name: `Brand ${suffix}` });
  const category = await call('POST', '/api/category', {
    name: `T-shirts ${suffix}`,
    market1CategoryId: 105,
    params,
  });
  expect(category.statusCode, category.body).toBe(200);
  return { brandId: brand.json<{ id: number }>().id, categoryId: category.json<{ id: number }>().id };
}

describe('dictionary lookups', () => {
  it('getParams lists the category’s parameter definitions; fetchOption finds options by substring', async () => {
    const params = await call(
      'GET',
      '/knowledge/getParams?market2CategoryId=105',
      undefined,
      account.readToken,
    );
    expect(params.statusCode, params.body).toBe(200);
    const definitions = params.json<Array<{ id: number; name: string }>>();
    expect(definitions[0]).toEqual({
      id: COLOR,
      name: 'Color',
      valueType: 'STRING',
      multiValueAllowed: true,
      displayType: 'SUGGEST',
      required: true,
      unit: null,
    });
    expect(definitions.find((definition) => definition.id === WEIGHT)).toMatchObject({
      valueType: 'INTEGER',
      unit: 'g',
    });
    expect((await call('GET', '/knowledge/getParams?market2CategoryId=999999')).json()).toEqual([]);
    const options = await call('GET', `/option/fetchOption?paramId=${COLOR}&query=GR&limit=10`);
    expect(options.json<Array<{ value: string }>>().map((option) => option.value)).toEqual([
      'grey',
      'green',
      'graphite',
    ]);
    expect((await call('GET', `/option/fetchOption?paramId=${COLOR}&query=&limit=2`)).json()).toHaveLength(2);
  });

  it('needs a token, like every endpoint', async () => {
    expectError(
      await send(t.app, undefined, { method: 'GET', url: '/knowledge/getParams?market2CategoryId=105' }),
      401,
      'auth_required',
    );
    expectValidation(await call('GET', '/option/fetchOption?paramId=1&query=x'), 'limit');
  });
});

describe('parameter values', () => {
  it('resolves product > view > model > category, per parameter, with multi-value and SUGGEST values', async () => {
    const ids = await tshirtCategory();
    const body = modelBody(account, ids, ['black', 'white'], ['S', 'M']);
    const created = await call('POST', '/api/model', {
      ...body,
      params: [
        { paramId: COLOR, value: 'black' },
        { paramId: COLOR, value: 'white' },
        { paramId: COMPOSITION, value: 'cotton 95%' },
        { paramId: COMPOSITION, value: 'elastane 5%' },
      ],
      views: [
        { ...body.views[0], params: [{ paramId: COLOR, value: 'black' }] },
        {
          ...body.views[1],
          sizes: [
            {
              ...body.views[1]?.sizes[0],
              params: [
                { paramId: WEIGHT, value: 180 },
                { paramId: OVERSIZE, value: true },
              ],
            },
          ],
        },
      ],
    });
    expect(created.statusCode, created.body).toBe(200);
    const model = created.json<ProductModel>();
    expect(model).not.toHaveProperty('params');
    const read = (await call('GET', `/api/model/${model.id}?withParams=true`)).json<ProductModel>();
    const modelLevel = [
      { paramId: COLOR, value: 'black' },
      { paramId: COLOR, value: 'white' },
      { paramId: GENDER, value: 'Unisex' },
      { paramId: COMPOSITION, value: 'cotton 95%' },
      { paramId: COMPOSITION, value: 'elastane 5%' },
    ];
    expect(read.params).toEqual(modelLevel);
    const black = read.views[0];
    expect(black?.params?.filter((value) => value.paramId === COLOR)).toEqual([
      { paramId: COLOR, value: 'black' },
    ]);
    expect(black?.sizes[0]?.params).toEqual(black?.params);
    const whiteSize = read.views[1]?.sizes[0];
    expect(whiteSize?.params).toEqual([
      ...modelLevel,
      { paramId: WEIGHT, value: 180 },
      { paramId: OVERSIZE, value: true },
    ]);

    // PUT replaces the values of each level it names.
    const replaced = await call('PUT', `/api/model/${model.id}`, {
      versionId: model.versionId,
      article: model.article,
      title: model.title,
      brandId: model.brandId,
      categoryId: model.categoryId,
      params: [{ paramId: GENDER, value: 'Women' }],
      views: [{ id: black?.id, color: 'black', sizes: [{ id: black?.sizes[0]?.id, name: 'S', size: 'S' }] }],
    });
    expect(replaced.statusCode, replaced.body).toBe(200);
    const after = (await call('GET', `/api/model/${model.id}?withParams=true`)).json<ProductModel>();
    expect(after.params).toEqual([{ paramId: GENDER, value: 'Women' }]);
    expect(after.views[0]?.sizes[0]?.params).toEqual([{ paramId: GENDER, value: 'Women' }]);
  });

  it('refuses wrong types, unknown options, repeated single values and foreign parameters, naming the field', async () => {
    const ids = await tshirtCategory([]);
    const body = modelBody(account, ids, ['black'], ['S']);
    const withParams = (params: unknown[], where: 'model' | 'view' | 'size' = 'model') =>
      call('POST', '/api/model', {
        ...body,
        ...(where === 'model' && { params }),
        views: [
          {
            ...body.views[0],
            ...(where === 'view' && { params }),
            sizes: [{ ...body.views[0]?.sizes[0], ...(where === 'size' && { params }) }],
          },
        ],
      });
    expectValidation(await withParams([{ paramId: WEIGHT, value: 'heavy' }]), 'params.0.value');
    expectValidation(
      await withParams([{ paramId: WEIGHT, value: 1.5 }], 'size'),
      'views.0.sizes.0.params.0.value',
    );
    expectValidation(
      await withParams([{ paramId: COLOR, value: 'ultraviolet' }], 'view'),
      'views.0.params.0.value',
    );
    expectValidation(
      await withParams([
        { paramId: GENDER, value: 'Men' },
        { paramId: GENDER, value: 'Women' },
      ]),
      'params.1.paramId',
    );
    expectValidation(await withParams([{ paramId: TOWEL_MATERIAL, value: 'cotton' }]), 'params.0.paramId');
    const plain = await call('POST', '/api/category', { name: `No marketplace ${Math.random()}` });
    expectValidation(
      await call('POST', '/api/model', {
        ...body,
        categoryId: plain.json<{ id: number }>().id,
        params: [{ paramId: GENDER, value: 'Men' }],
      }),
      'params',
    );
    expectValidation(
      await call('POST', '/api/category', {
        name: `Bad ${Math.random()}`,
        market1CategoryId: 105,
        params: [{ paramId: GENDER, value: 'Alien' }],
      }),
      'params.0.value',
    );
  });
});
