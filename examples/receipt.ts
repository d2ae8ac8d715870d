/**
 * A fiscal receipt for a receiving document, as spec §4.3 and decision D8 describe it (Node ≥ 20, the typed
 * client):
 *
 *   1. find or create the catalog products (positions reference catalog products);
 *   2. create a receiving document with two positions;
 *   3. create its INCOME receipt (`POST /api/receipt/order/{orderId}`): the service commits it and sends it to
 *      the organization's cash-register provider;
 *   4. refresh it (`GET /api/receipt/{id}/update`) until it is COMPLETED, and print its fiscal data.
 *
 * Environment: SELLER_OPS_URL (default http://127.0.0.1:8080), SELLER_OPS_TOKEN and SELLER_OPS_ORGANIZATION_ID;
 * without a token, the demo credentials of a local service are read from `${DATA_DIR:-./data}/demo-credentials.json`.
 * The demo organization of `npm start` is configured with provider A's sandbox, so this works out of the box.
 *
 * Run:  npx tsx examples/receipt.ts      (exit status 0 when the receipt was completed)
 */
import { connect } from './lib/client.ts';

const { baseUrl, organizationId, api, call, findOrCreate, fail } = await connect('receipt');
const ARTICLE = 'RCPT-MUG';
const money = (value: number) =>
  value.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });

console.log(`Fiscal receipt at ${baseUrl}`);

// 1. The catalog products: the model with the article, else a new one with two sizes.
const [existing] = (
  await call(api.GET('/api/product/find', { params: { query: { article: ARTICLE, limit: 1 } } }))
).rows;
const model = existing
  ? await call(api.GET('/api/model/{modelId}', { params: { path: { modelId: existing.modelId } } }))
  : await call(
      api.POST('/api/model', {
        body: {
          article: ARTICLE,
          title: 'Ceramic mug',
          brandId: (await findOrCreate('brand', { name: 'Northwind Kitchen' })).id,
          categoryId: (await findOrCreate('category', { name: 'Mugs' })).id,
          organizationId,
          views: [
            {
              color: 'white',
              sizes: [
                { name: 'Ceramic mug, white, 300 ml', size: '300 ml' },
                { name: 'Ceramic mug, white, 450 ml', size: '450 ml' },
              ],
            },
          ],
        },
      }),
    );
const noSize = () => fail(`model #${model.id} ${ARTICLE} has not two sizes`);
const [small = noSize(), large = noSize()] = model.views[0]?.sizes ?? [];
console.log(
  `1. products of model #${model.id} ${ARTICLE}: #${small.id} ${small.size}, #${large.id} ${large.size}`,
);

// 2. The receiving document.
const order = await call(
  api.POST('/api/inbound/', {
    body: {
      organizationId,
      type: 'INCOME',
      name: 'Mugs from the supplier, invoice 24-1107',
      products: [
        { productId: small.id, quantity: 12, price: 249.9 },
        { productId: large.id, quantity: 8, price: 319.5 },
      ],
    },
  }),
);
console.log(
  `2. receiving document #${order.id}: ${order.products?.length} positions, ${order.totalQuantity} pcs for ${money(order.totalPrice)}`,
);

// 3. The receipt: committed first, then sent to the provider.
const created = await call(
  api.POST('/api/receipt/order/{orderId}', { params: { path: { orderId: order.id } } }),
);
console.log(
  `3. receipt #${created.id} ${created.receiptType} for ${money(created.totalAmount)}: ${created.status} at ${created.cashRegisterService}`,
);

// 4. Refresh until the provider has fiscalised it (a 503 means the provider is unavailable: try again).
let receipt = created;
let refreshes = 0;
const deadline = Date.now() + 60_000;
while (receipt.status === 'CREATED' || receipt.status === 'PENDING') {
  if (Date.now() > deadline) fail(`receipt #${receipt.id} is still ${receipt.status} after 60 s`);
  await new Promise((resolve) => setTimeout(resolve, 500));
  refreshes += 1;
  const refreshed = await api.GET('/api/receipt/{receiptId}/update', {
    params: { path: { receiptId: receipt.id } },
  });
  if (refreshed.response.status === 503) continue;
  receipt = await call(Promise.resolve(refreshed));
}
if (receipt.status !== 'COMPLETED')
  fail(`receipt #${receipt.id} is ${receipt.status}: ${receipt.errorMessage}`);
console.log(`4. ${receipt.status} after ${refreshes} refresh${refreshes === 1 ? '' : 'es'}`);
for (const [label, value] of <Array<[string, unknown]>>[
  ['fiscal document number (ФД)', receipt.fiscalNumber],
  ['fiscal document attribute (ФПД)', receipt.fiscalDocumentAttribute],
  ['fiscal storage number (ФН)', receipt.fiscalStorageNumber],
  ['provider receipt id', receipt.externalReceiptId],
  ['completed', receipt.completedDate],
  ['check it at', receipt.fnsUrl],
])
  console.log(`   ${label.padEnd(32)} ${value}`);
