/**
 * Catalog synchronisation as spec §4.7's rules describe it for an integrator (Node ≥ 20, the typed client):
 *
 *   1. page through the products with stable id ordering (count only on the first page);
 *   2. load the full models the rows point to (modelId from the search row);
 *   3. find or create a brand and a category, and keep their ids; the article is the stable external key;
 *   4. create a model card with two colours × three sizes;
 *   5. set a multi-value parameter and a SUGGEST parameter whose option is resolved through fetchOption;
 *   6. replace the model after a fresh read (PUT with the versionId just read);
 *   7. verify the saved card with a second read.
 *
 * Environment: SELLER_OPS_URL (default http://127.0.0.1:8080), SELLER_OPS_TOKEN and SELLER_OPS_ORGANIZATION_ID;
 * without a token, the demo credentials of a local service are read from `${DATA_DIR:-./data}/demo-credentials.json`.
 * The marketplace category 105 (T-shirts) comes from the sample dictionary the demo account gets on first start.
 *
 * Run:  npx tsx examples/catalog-sync.ts      (exit status 0 when every step succeeded)
 */
import type { components } from '@seller-ops/client';
import { connect } from './lib/client.ts';

type ProductModel = components['schemas']['ProductModel'];

const { baseUrl, organizationId, api, call, findOrCreate, fail } = await connect('catalog-sync');
const MARKET_CATEGORY = 105; // T-shirts in the sample dictionary

console.log(`Catalog sync at ${baseUrl}`);

// 1 + 2. Page through every product in id order; load each model once.
const models = new Map<number, ProductModel>();
let total: number | undefined;
for (let page = 1; ; page++) {
  const result = await call(
    api.GET('/api/product/find', {
      params: {
        query: { sortBy: 'ID', ascending: true, limit: 100, page, ...(page === 1 && { count: true }) },
      },
    }),
  );
  if (page === 1) total = result.total;
  for (const row of result.rows)
    if (!models.has(row.modelId))
      models.set(
        row.modelId,
        await call(api.GET('/api/model/{modelId}', { params: { path: { modelId: row.modelId } } })),
      );
  if (result.rows.length < 100) break;
}
console.log(`1. ${total} products in the catalog, in ${models.size} models`);

// 3. Find or create the brand and the category; keep their ids.
const brand = await findOrCreate('brand', { name: 'Northwind Basics' });
const category = await findOrCreate('category', { name: 'T-shirts', market1CategoryId: MARKET_CATEGORY });
console.log(
  `2. brand #${brand.id} "${brand.name}", category #${category.id} "${category.name}" → marketplace ${MARKET_CATEGORY}`,
);

// 5 (prepared). The parameters of the marketplace category and a SUGGEST option resolved by its text.
const definitions = await call(
  api.GET('/knowledge/getParams', { params: { query: { market2CategoryId: MARKET_CATEGORY } } }),
);
const byName = (name: string) =>
  definitions.find((definition) => definition.name === name) ?? fail(`no parameter ${name}`);
const color = byName('Color'); // multi-value SUGGEST
const gender = byName('Gender'); // single SUGGEST
const weight = byName('Package weight'); // INTEGER
const [unisex = fail('no Unisex option for Gender')] = await call(
  api.GET('/option/fetchOption', { params: { query: { paramId: gender.id, query: 'unisex', limit: 1 } } }),
);
console.log(
  `3. ${definitions.length} parameters; Color multi-value=${color.multiValueAllowed}, Gender option "${unisex.value}" (#${unisex.id})`,
);

// 4 + 5. The article is the stable key: reuse the model that has it, else create the card.
const article = 'NW-TEE-BASIC';
const [existing] = (await call(api.GET('/api/product/find', { params: { query: { article, limit: 1 } } })))
  .rows;
let model: ProductModel;
if (existing) {
  model = await call(api.GET('/api/model/{modelId}', { params: { path: { modelId: existing.modelId } } }));
  console.log(`4. model ${article} exists: #${model.id} (version ${model.versionId})`);
} else {
  const colors = ['black', 'white'];
  model = await call(
    api.POST('/api/model', {
      body: {
        article,
        title: 'Basic T-shirt',
        brandId: brand.id,
        categoryId: category.id,
        organizationId,
        params: [
          ...colors.map((value) => ({ paramId: color.id, value })),
          { paramId: gender.id, value: unisex.value },
        ],
        views: colors.map((value) => ({
          color: value,
          params: [{ paramId: color.id, value }],
          sizes: ['S', 'M', 'L'].map((size) => ({
            name: `Basic T-shirt ${value} ${size}`,
            size,
            params: [
              { paramId: weight.id, value: ({ S: 170, M: 180, L: 195 } as Record<string, number>)[size]! },
            ],
          })),
        })),
      },
    }),
  );
  const sizes = model.views.map((view) => `${view.color}: ${view.sizes.map((size) => size.size).join('/')}`);
  console.log(
    `4. created model #${model.id} ${article} with ${sizes.join(', ')} (version ${model.versionId})`,
  );
}

// 6. Replace after a fresh read: rename, add an XL to every colour, keep every id.
const withParams = { params: { path: { modelId: model.id }, query: { withParams: true } } };
const fresh = await call(api.GET('/api/model/{modelId}', withParams));
const replaced = await call(
  api.PUT('/api/model/{modelId}', {
    params: { path: { modelId: model.id } },
    body: {
      versionId: fresh.versionId,
      article: fresh.article,
      title: 'Basic T-shirt, 180 g/m²',
      brandId: fresh.brandId,
      categoryId: fresh.categoryId,
      params: (fresh.params ?? []).filter((value) => value.paramId !== weight.id),
      views: fresh.views.map((view) => ({
        id: view.id,
        color: view.color,
        params: view.color === null ? [] : [{ paramId: color.id, value: view.color }],
        sizes: [
          ...view.sizes.map((size) => ({
            id: size.id,
            name: size.name,
            size: size.size,
            barcode: size.barcode,
          })),
          ...(view.sizes.some((size) => size.size === 'XL')
            ? []
            : [{ name: `Basic T-shirt ${view.color} XL`, size: 'XL' }]),
        ],
      })),
    },
  }),
);
console.log(`5. replaced: "${replaced.title}", version ${fresh.versionId} → ${replaced.versionId}`);

// 7. Verify with a second read.
const check = await call(api.GET('/api/model/{modelId}', withParams));
const sizes = check.views.flatMap((view) => view.sizes);
const ok =
  check.versionId === replaced.versionId &&
  check.title === replaced.title &&
  check.views.every((view) => view.sizes.some((size) => size.size === 'XL')) &&
  check.views.every((view) => view.params?.filter((value) => value.paramId === color.id).length === 1);
console.log(
  `6. verified: ${sizes.length} products, each colour has XL and its own Color value: ${ok ? 'yes' : 'NO'}`,
);
for (const view of check.views) {
  const values = (view.params ?? []).map(
    (value) => `${definitions.find((d) => d.id === value.paramId)?.name}=${value.value}`,
  );
  console.log(
    `   ${(view.color ?? '').padEnd(6)} ${view.sizes
      .map((size) => size.size)
      .join('/')
      .padEnd(10)} ${values.join(', ')}`,
  );
}
if (!ok) fail('the saved card differs from what was sent');
