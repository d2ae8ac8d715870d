/**
 * A receiving day at the warehouse, played against a running seller-ops service.
 *
 * Node 20 with the typed client of `@seller-ops/client`. It:
 *   0. finds the invoice's products in the catalog by barcode, creating the missing cards (positions reference
 *      catalog products);
 *   1. creates an INCOME document from receiving-day.csv (39 positions from the supplier's invoice, then the
 *      40th added as a late correction of the invoice);
 *   2. packs the goods into 3 cargo places, one line short-packed (3 bath towels missing from the box);
 *   3. reads the packing divergence, fixes it (the position's quantity becomes what was packed, D5.7);
 *   4. moves the document to FINISHED, which records the accepted stock (D5.8);
 *   5. removes that income stock again (as when the receipt was entered by mistake), and
 *   6. prints the document's history.
 *
 * Settings (environment):
 *   SELLER_OPS_URL              service address, default http://127.0.0.1:8080
 *   SELLER_OPS_TOKEN            a WRITE token
 *   SELLER_OPS_ORGANIZATION_ID  the organization that receives the goods
 *   SELLER_OPS_WAREHOUSE_ID     receiving warehouse id, default 1
 * When SELLER_OPS_TOKEN is not set, the demo credentials of a local service are read from
 * `${DATA_DIR:-./data}/demo-credentials.json` (written on the service's first start).
 *
 * Run:  npx tsx examples/receiving-day.ts
 * Exit status 0 when every step succeeded; otherwise the failing request and the service's error are printed.
 */
import { readFile } from 'node:fs/promises';
import type { paths } from '@seller-ops/client';
import { connect } from './lib/client.ts';

type Order = paths['/api/inbound/{orderId}']['get']['responses'][200]['content']['application/hal+json'];
type OrderProduct = NonNullable<Order['products']>[number];
/** A line of the supplier's invoice (receiving-day.csv); `productId` is the catalog product found or created. */
interface InvoiceLine {
  productId: number;
  article: string;
  barcode: string;
  name: string;
  quantity: number;
  price: number;
}

const { baseUrl, organizationId, api, call, findOrCreate, fail } = await connect('receiving-day');
const warehouseId = Number(process.env.SELLER_OPS_WAREHOUSE_ID ?? 1);

/** Index (0-based) of the CSV line that is short-packed, and by how many pieces. */
const SHORT_LINE = 14; // TWL-BTH-WHT-70140, bath towels
const SHORT_BY = 3;

const lines = parseCsv(await readFile(new URL('./receiving-day.csv', import.meta.url), 'utf8'));
const lateLine = lines[39];
if (lines.length !== 40 || !lateLine)
  fail(`receiving-day.csv should hold 40 products, found ${lines.length}`);
const late = lateLine as InvoiceLine;

heading(`Receiving day at ${baseUrl}`);

// 0. Positions reference catalog products: find each CSV line's product by barcode, or create its card.
let created = 0;
const brand = await findOrCreate('brand', { name: 'Receiving day supplier' });
const category = await findOrCreate('category', { name: 'Receiving day goods' });
for (const line of lines) {
  const [found] = (
    await call(api.GET('/api/product/find', { params: { query: { barcode: line.barcode, limit: 1 } } }))
  ).rows;
  if (found) {
    line.productId = found.id;
    continue;
  }
  const model = await call(
    api.POST('/api/model', {
      body: {
        article: line.article,
        title: line.name,
        brandId: brand.id,
        categoryId: category.id,
        organizationId,
        views: [
          { sizes: [{ name: line.name, size: line.article.split('-').at(-1) ?? '', barcode: line.barcode }] },
        ],
      },
    }),
  );
  line.productId = model.views[0]?.sizes[0]?.id ?? fail(`model ${line.article} came back without its size`);
  created += 1;
}
console.log(
  `Catalog: ${lines.length} products of the invoice (${created} cards created, ${lines.length - created} found by barcode)`,
);

// 1. The document: the invoice's first 39 positions at once, the 40th as a late addition.
const toPosition = (line: InvoiceLine) => ({
  productId: line.productId,
  quantity: line.quantity,
  price: line.price,
  product: { name: line.name, article: line.article, barcode: line.barcode },
});
const today = new Date().toISOString().slice(0, 10);
let order = await call(
  api.POST('/api/inbound/', {
    body: {
      organizationId,
      type: 'INCOME',
      name: `Receiving ${today}: supplier invoice 24-0871`,
      warehouseId,
      products: lines.slice(0, 39).map(toPosition),
    },
  }),
);
const getOrder = () => call(api.GET('/api/inbound/{orderId}', { params: { path: { orderId } } }));
const onOrder = { params: { query: { orderId: String(order.id) } } };
const orderId = order.id;
console.log(
  `Created INCOME document #${orderId} "${order.name}" with ${order.products?.length} positions (status ${order.status})`,
);
await call(
  api.POST('/api/inbound/{orderId}/product', { params: { path: { orderId } }, body: toPosition(late) }),
);
order = await getOrder();
console.log(
  `Added the late position ${late.article}; now ${order.products?.length} positions, ` +
    `${order.totalQuantity} pcs for ${money(order.totalPrice)}`,
);

// 2. Cargo places: three boxes, one line short-packed.
const positionByProduct = new Map((order.products ?? []).map((position) => [position.productId, position]));
const boxes = [
  { number: 'CP-1', width: 60, height: 40, length: 80, weight: 14_200, lines: lines.slice(0, 14) },
  { number: 'CP-2', width: 60, height: 60, length: 80, weight: 22_700, lines: lines.slice(14, 27) },
  { number: 'CP-3', width: 40, height: 40, length: 60, weight: 9_850, lines: lines.slice(27, 40) },
];
const packages = boxes.map(({ lines: boxLines, ...box }) => ({
  ...box,
  items: boxLines.map((line) => {
    const position =
      positionByProduct.get(line.productId) ??
      fail(`position for product ${line.productId} is missing from document #${orderId}`);
    const short = line === lines[SHORT_LINE] ? SHORT_BY : 0;
    return { orderProductId: position.id, quantity: position.quantity - short };
  }),
}));
await call(api.POST('/api/inbound/updateOrderPackage', { ...onOrder, body: packages }));
await call(
  api.POST('/api/inbound/{orderId}/status', { params: { path: { orderId }, query: { status: 'PACKING' } } }),
);
const stored = await call(api.GET('/api/inbound/getOrderPackage', onOrder));
heading('Cargo places');
table(
  ['number', 'size, cm', 'weight, kg', 'lines', 'pcs'],
  stored.map((box) => [
    box.number,
    `${box.width}×${box.height}×${box.length}`,
    ((box.weight ?? 0) / 1000).toFixed(2),
    box.items?.length ?? 0,
    (box.items ?? []).reduce((sum, item) => sum + item.quantity, 0),
  ]),
);

// 3. Divergence between the invoice and what was packed, then the fix.
const getDivergence = () =>
  call(api.GET('/api/inbound/{orderId}/divergence', { params: { path: { orderId } } }));
let divergence = await getDivergence();
heading('Packing divergence');
table(
  ['article', 'barcode', 'invoice', 'packed', 'diff'],
  divergence.divergence.map((row) => [
    row.product.article,
    row.product.barcode,
    row.supplyQuantity,
    row.packedQuantity,
    row.packedQuantity - row.supplyQuantity,
  ]),
);
console.log(`Total: invoice ${divergence.totalSupplied} pcs, packed ${divergence.totalPacked} pcs`);
if (divergence.divergence.length !== 1) fail('expected exactly one divergent line');

await call(api.POST('/api/inbound/{orderId}/divergence/fix', { params: { path: { orderId } } }));
divergence = await getDivergence();
order = await getOrder();
console.log(
  `Fixed: ${divergence.divergence.length} divergent lines left; document now ${order.totalQuantity} pcs ` +
    `for ${money(order.totalPrice)}`,
);

// 4. Finish receiving: the accepted stock is recorded per position.
await call(
  api.POST('/api/inbound/{orderId}/status', { params: { path: { orderId }, query: { status: 'FINISHED' } } }),
);
order = await getOrder();
const positions = order.products ?? [];
console.log(
  `\nStatus ${order.status}: stock accepted for ${accepted(positions)} pcs ` +
    `in ${positions.filter((position) => position.introducedQuantity > 0).length} positions`,
);

// 5. Remove the income stock again (a second call would be a no-op, D5.8).
await call(api.POST('/api/inbound/removeIncomeStock', onOrder));
order = await getOrder();
console.log(`Income stock removed: ${accepted(order.products ?? [])} pcs remain accepted`);

// 6. History, oldest first for reading.
const history = await call(
  api.GET('/api/inbound/{orderId}/history', { params: { path: { orderId }, query: { limit: 100 } } }),
);
heading(`History of document #${orderId}`);
table(
  ['time', 'action', 'status', 'pcs', 'total', 'version', 'changed'],
  [...history.rows]
    .reverse()
    .map((row) => [
      row.date.slice(11, 19),
      row.action,
      row.orderStatus,
      row.totalQuantity,
      money(row.totalPrice),
      row.versionId,
      Object.keys(row.changes ?? {}).join(', '),
    ]),
);
console.log(`\nDone: document #${orderId} received, fixed, finished and its stock removed.`);

/** Parses the CSV of this folder: a header line, comma-separated, double-quoted fields may hold commas. */
function parseCsv(text: string): InvoiceLine[] {
  const [header = [], ...rows] = text.trim().split(/\r?\n/).map(splitCsvLine);
  return rows.map((cells) => {
    const record: Record<string, string | undefined> = Object.fromEntries(
      header.map((name, index) => [name, cells[index]]),
    );
    return {
      productId: Number(record.productId),
      article: record.article ?? '',
      barcode: record.barcode ?? '',
      name: record.name ?? '',
      quantity: Number(record.quantity),
      price: Number(record.price),
    };
  });
}

function splitCsvLine(line: string): string[] {
  const cells: string[] = [];
  const pattern = /(?:^|,)(?:"((?:[^"]|"")*)"|([^,]*))/g;
  for (const match of line.matchAll(pattern)) cells.push(match[1]?.replace(/""/g, '"') ?? match[2] ?? '');
  return cells;
}

/** The stock accepted at receiving over the positions. */
function accepted(positions: OrderProduct[]): number {
  return positions.reduce((total, position) => total + position.introducedQuantity, 0);
}

function money(amount: number): string {
  return `${Number(amount).toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
}

function heading(text: string): void {
  console.log(`\n${text}\n${'-'.repeat(text.length)}`);
}

/** Prints rows as an aligned text table. */
function table(columns: string[], rows: Array<Array<string | number | null | undefined>>): void {
  const cells = [columns, ...rows].map((row) => row.map((cell) => String(cell ?? '')));
  const widths = columns.map((_, index) => Math.max(...cells.map((row) => row[index]?.length ?? 0)));
  for (const row of cells)
    console.log(
      row
        .map((cell, index) => cell.padEnd(widths[index] ?? 0))
        .join('  ')
        .trimEnd(),
    );
}
