/**
 * Maps inbound rows to their API shapes (D5.1, D5.11): camelCase names, ISO 8601 dates, money as JSON numbers
 * read from the exact numeric text, HAL `_links.self.href` built from `PUBLIC_BASE_URL` (relative when empty).
 */
import type { Selectable } from 'kysely';
import type {
  InboundOrderHistoryTable,
  InboundOrderPackageItemTable,
  InboundOrderPackageTable,
  InboundOrderProductTable,
  InboundOrderTable,
} from '../../db/schema.ts';
import type { MarkingStatus, OrderStatus, OrderType } from './enums.ts';
import type { Order, OrderHistory, OrderPackage, OrderProduct } from './schemas.ts';

/** A stored document row. */
export type OrderRow = Selectable<InboundOrderTable>;
/** A stored position row. */
export type OrderProductRow = Selectable<InboundOrderProductTable>;
/** A stored cargo place row. */
export type OrderPackageRow = Selectable<InboundOrderPackageTable>;
/** A stored cargo place item row. */
export type OrderPackageItemRow = Selectable<InboundOrderPackageItemTable>;
/** A stored history row. */
export type OrderHistoryRow = Selectable<InboundOrderHistoryTable>;

/** A `{self: {href}}` HAL link: `baseUrl` + `path` (relative when `baseUrl` is empty). */
export const selfLink = (baseUrl: string, path: string) => ({ self: { href: `${baseUrl}${path}` } });

/** Path of a document, as `_links.self` and the cache key of GET use it. */
export const orderPath = (id: number) => `/api/inbound/${id}`;

const iso = (value: Date | null) => (value === null ? null : value.toISOString());

/** Converts an exact numeric(16,2) text to a JSON number (at most 2 decimals, so exact to the kopeck). */
export const money = (value: string | number) => Number(value);

/** A position as the API shows it (reference OrderProduct). */
export function presentProduct(row: OrderProductRow): OrderProduct {
  return {
    id: row.id,
    orderId: row.order_id,
    productId: row.product_id,
    product: { id: row.product_id, name: row.product_name, article: row.article, barcode: row.barcode },
    quantity: row.quantity,
    introducedQuantity: row.introduced_quantity,
    price: money(row.price),
    position: row.position,
    createdUser: row.created_user,
    createdDate: row.created_date.toISOString(),
    lastUpdateDate: row.last_update_date.toISOString(),
  };
}

/**
 * A document as the API shows it (reference Order); `products` only when given (GET, `find?withProducts`).
 * Field order is fixed here, so a cached serialization equals a fresh one.
 */
export function presentOrder(row: OrderRow, products: OrderProductRow[] | undefined, baseUrl: string): Order {
  return {
    id: row.id,
    versionId: row.version_id,
    clientId: row.client_id,
    organizationId: row.organization_id,
    type: row.type as OrderType,
    status: row.status as OrderStatus,
    markingStatus: row.marking_status as MarkingStatus,
    markingType: row.marking_type,
    boxType: row.box_type,
    service: row.service,
    name: row.name,
    comment: row.comment,
    warehouseId: row.warehouse_id,
    stockWarehouseId: row.stock_warehouse_id,
    serviceWarehouseId: row.service_warehouse_id,
    externalOrderId: row.external_order_id,
    invoiceNumber: row.invoice_number,
    trackingNumber: row.tracking_number,
    supplyId: row.supply_id,
    supplierId: row.supplier_id,
    incomeId: row.income_id,
    userId: row.user_id,
    closeUserId: row.close_user_id,
    createdUser: row.created_user,
    express: row.express,
    updateInService: row.update_in_service,
    createdDate: iso(row.created_date),
    created: row.created.toISOString(),
    deliveryDate: iso(row.delivery_date),
    closeDate: iso(row.close_date),
    modifiedDate: row.modified_date.toISOString(),
    deleted: row.deleted,
    totalQuantity: row.total_quantity,
    totalPrice: money(row.total_price),
    ...(products && { products: products.map(presentProduct) }),
    _links: selfLink(baseUrl, orderPath(row.id)),
  };
}

/** A cargo place with its items (reference OrderPackage / OrderPackageItem). */
export function presentPackage(row: OrderPackageRow, items: OrderPackageItemRow[]): OrderPackage {
  return {
    packageId: row.id,
    orderId: row.order_id,
    number: row.number,
    width: row.width,
    height: row.height,
    length: row.length,
    weight: row.weight,
    items: items.map((item) => ({
      id: item.id,
      orderProductId: item.order_product_id,
      productId: item.product_id,
      packageId: item.package_id,
      quantity: item.quantity,
    })),
    clientId: row.client_id,
    organizationId: row.organization_id,
  };
}

/** A history snapshot (reference OrderHistory) with `action` and `changes` (D5.9). */
export function presentHistory(row: OrderHistoryRow): OrderHistory {
  return {
    id: row.id,
    orderId: row.order_id,
    organizationId: row.organization_id,
    clientId: row.client_id,
    date: row.date.toISOString(),
    userId: row.user_id,
    action: row.action,
    changes: row.changes,
    orderStatus: row.order_status as OrderStatus,
    orderType: row.order_type as OrderType,
    orderCreatedDate: iso(row.order_created_date),
    deliveryDate: iso(row.delivery_date),
    trackingNumber: row.tracking_number,
    totalQuantity: row.total_quantity,
    totalPrice: money(row.total_price),
    versionId: row.version_id,
  };
}
