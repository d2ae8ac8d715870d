/**
 * The read path's JSON, written by PostgreSQL: a document (and its positions) as the text that
 * `JSON.stringify(presentOrder(...))` produces for the same row, byte for byte, so uncached GET and `find`
 * pass one text value per document through Node instead of decoding ≈ 35 columns into objects, parsing and
 * re-printing every timestamp, and serializing again (docs/performance.md, "uncached reads").
 *
 * Why each expression gives the presenter's bytes:
 * - `row_to_json` writes keys in column order, compact (`{"a":1}`, no spaces), `null` for NULL, and escapes
 *   strings as `JSON.stringify` does (`\"`, `\\`, `\b\f\n\r\t`, other controls as lowercase `\u00xx`; text
 *   holds no NUL or lone surrogate). `json_build_object`/`json_agg` are not used: they insert spaces.
 * - Timestamps: `to_char(… at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')` truncates microseconds to
 *   milliseconds, as pg's date parser + `toISOString` do (checked for every microsecond fraction).
 * - Money: `numeric::float8` prints the shortest text that round-trips the double (Ryu, extra_float_digits ≥ 1,
 *   the default since PostgreSQL 12), as JS prints `Number("636911.80")` → `636911.8`.
 * - int8 ids print as digits; JS numbers print the same while ids stay below 2^53 (D1: ids are bigserial).
 * The test tests/inbound/read-json.test.ts compares both outputs over documents with every edge above.
 */
import { sql, type RawBuilder } from 'kysely';
import { orderPath, selfLink } from './presenter.ts';

/** How a column becomes a JSON value: as is, an ISO 8601 UTC string, or a JSON number from numeric. */
type Kind = 'plain' | 'iso' | 'money';
/** `[JSON key, stored column, kind]` in the presenter's key order. */
type Field = readonly [key: string, column: string, kind?: Kind];

/** Keys of `presentOrder` before `products` and `_links`, in its order. */
const ORDER_FIELDS: readonly Field[] = [
  ['id', 'id'],
  ['versionId', 'version_id'],
  ['clientId', 'client_id'],
  ['organizationId', 'organization_id'],
  ['type', 'type'],
  ['status', 'status'],
  ['markingStatus', 'marking_status'],
  ['markingType', 'marking_type'],
  ['boxType', 'box_type'],
  ['service', 'service'],
  ['name', 'name'],
  ['comment', 'comment'],
  ['warehouseId', 'warehouse_id'],
  ['stockWarehouseId', 'stock_warehouse_id'],
  ['serviceWarehouseId', 'service_warehouse_id'],
  ['externalOrderId', 'external_order_id'],
  ['invoiceNumber', 'invoice_number'],
  ['trackingNumber', 'tracking_number'],
  ['supplyId', 'supply_id'],
  ['supplierId', 'supplier_id'],
  ['incomeId', 'income_id'],
  ['userId', 'user_id'],
  ['closeUserId', 'close_user_id'],
  ['createdUser', 'created_user'],
  ['express', 'express'],
  ['updateInService', 'update_in_service'],
  ['createdDate', 'created_date', 'iso'],
  ['created', 'created', 'iso'],
  ['deliveryDate', 'delivery_date', 'iso'],
  ['closeDate', 'close_date', 'iso'],
  ['modifiedDate', 'modified_date', 'iso'],
  ['deleted', 'deleted'],
  ['totalQuantity', 'total_quantity'],
  ['totalPrice', 'total_price', 'money'],
];

/** Keys of `presentProduct` after `product`, in its order. */
const PRODUCT_TAIL_FIELDS: readonly Field[] = [
  ['quantity', 'quantity'],
  ['introducedQuantity', 'introduced_quantity'],
  ['price', 'price', 'money'],
  ['position', 'position'],
  ['createdUser', 'created_user'],
  ['createdDate', 'created_date', 'iso'],
  ['lastUpdateDate', 'last_update_date', 'iso'],
];

function field(table: string, [key, column, kind = 'plain']: Field): RawBuilder<unknown> {
  const ref = sql.ref(`${table}.${column}`);
  const value =
    kind === 'iso'
      ? sql`to_char(${ref} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`
      : kind === 'money'
        ? sql`${ref}::float8`
        : ref;
  return sql`${value} as ${sql.id(key)}`;
}

/** Which positions a document's JSON embeds: none, all, or one page of them (ordered by position id). */
export type ProductsJson = 'none' | 'all' | { limit: number; offset: number };

/** JSON array text of the positions of the document `inbound_order.id`, as `products.map(presentProduct)`. */
function productsArray(page: Exclude<ProductsJson, 'none'>): RawBuilder<unknown> {
  const paging = page === 'all' ? sql`` : sql`limit ${page.limit} offset ${page.offset}`;
  return sql`(
    select coalesce('[' || string_agg(row_to_json(x)::text, ',' order by x.id) || ']', '[]')::json
    from (
      select p.id, p.order_id as "orderId", p.product_id as "productId",
             (select s from (select p.product_id as id, p.product_name as name, p.article, p.barcode) as s)
               as product,
             ${sql.join(PRODUCT_TAIL_FIELDS.map((tail) => field('p', tail)))}
      from inbound_order_product as p
      where p.order_id = inbound_order.id
      order by p.id
      ${paging}
    ) as x
  )`;
}

/**
 * A scalar subquery giving the JSON text of the current `inbound_order` row (the table must be in the outer
 * query under its own name) without `_links`: `withSelfLink` adds them in Node, which costs less than
 * PostgreSQL parsing a `json` value per row.
 * @param products which positions to embed (`none`: no `products` key at all)
 */
export function orderJson(products: ProductsJson): RawBuilder<string> {
  return sql<string>`(
    select row_to_json(d)::text
    from (
      select ${sql.join(ORDER_FIELDS.map((entry) => field('inbound_order', entry)))}
             ${products === 'none' ? sql`` : sql`, ${productsArray(products)} as "products"`}
    ) as d
  )`;
}

/**
 * `JSON.stringify(presentOrder(row, products, baseUrl))`: the text of `orderJson` for document `id` with
 * `_links` appended as its last key.
 * @param baseUrl `PUBLIC_BASE_URL` for `_links.self.href` (empty = relative)
 */
export const withSelfLink = (json: string, id: number, baseUrl: string): string =>
  `${json.slice(0, -1)},"_links":${JSON.stringify(selfLink(baseUrl, orderPath(id)))}}`;
