/**
 * Schemas of the inbound group (spec §4.1; shapes from the reference's Order, OrderProduct, OrderPackage,
 * OrderPackageItem, OrderHistory, TotalDivergence, Divergence, restricted to what we store: decision D5.1).
 *
 * Units: `price`/`totalPrice` are decimals with 2 places in the organization's currency (stored exactly);
 * dates are ISO 8601 UTC; ids are int64.
 */
import { CursorQuery, NextCursor } from '../../http/cursor.ts';
import { Type, type Static, type TObject } from 'typebox';
import { ServiceSchema, StringEnum } from '../../domain/enums.ts';
import {
  DateTime as DateTimeSchema,
  Int32,
  Int64,
  Int64String,
  MAX_PAGE,
  Links,
  Money as MoneySchema,
  Nullable,
  PagingQuery,
  ReadOnlyFields,
  RepeatedQuery,
} from '../../http/schemas.ts';
import {
  BOX_TYPES,
  CarrierSchema,
  MARKING_TYPES,
  MarkingStatusSchema,
  OrderSortFieldSchema,
  OrderStatusSchema,
  OrderTypeSchema,
} from './enums.ts';

const DateTime = DateTimeSchema();
const Money = MoneySchema();

/** Descriptive product data of a position (until the catalog group lands: see docs/decisions.md). */
export const ProductSummary = Type.Object({
  id: Int64(),
  name: Type.Optional(Nullable(Type.String())),
  article: Type.Optional(Nullable(Type.String())),
  barcode: Type.Optional(Nullable(Type.String())),
});

/** A position of the document (reference OrderProduct). */
export const OrderProduct = Type.Object(
  {
    id: Int64({ description: 'Position id' }),
    orderId: Int64(),
    productId: Int64(),
    product: ProductSummary,
    quantity: Type.Integer(),
    introducedQuantity: Type.Integer({ description: 'Stock accepted at receiving (D5.8)' }),
    price: Type.Number(),
    position: Nullable(Type.Integer()),
    createdUser: Nullable(Type.String()),
    createdDate: DateTime,
    lastUpdateDate: DateTime,
    _links: Type.Optional(Links),
  },
  { $id: 'OrderProduct', title: 'OrderProduct' },
);
export type OrderProduct = Static<typeof OrderProduct>;

/** Body of product add/update. Read-only fields are ignored (D5.1). */
export const OrderProductInput = Type.Object(
  {
    id: Type.Optional(
      Int64({ description: 'Position id (update: identifies the row; else productId does)' }),
    ),
    productId: Type.Optional(Int64()),
    product: Type.Optional(
      Type.Object({
        id: Type.Optional(Type.Unknown({ description: 'Read-only: ignored (D5.1)' })),
        name: Type.Optional(Nullable(Type.String({ maxLength: 500 }))),
        article: Type.Optional(Nullable(Type.String({ maxLength: 200 }))),
        barcode: Type.Optional(Nullable(Type.String({ maxLength: 200 }))),
      }),
    ),
    quantity: Type.Optional(Type.Integer({ minimum: 0, maximum: 2_147_483_647 })),
    price: Type.Optional(Money),
    position: Type.Optional(Nullable(Int32())),
    versionId: Type.Optional(
      Int64({ description: "The document's versionId for optimistic locking (D5.2)" }),
    ),
    ...ReadOnlyFields({ orderId: Int64() }),
    ...Object.fromEntries(
      ['introducedQuantity', 'createdUser', 'createdDate', 'lastUpdateDate', '_links'].map((name) => [
        name,
        Type.Optional(Type.Unknown({ description: 'Read-only: ignored (D5.1)' })),
      ]),
    ),
  },
  { $id: 'OrderProductInput', title: 'OrderProductInput' },
);
export type OrderProductInput = Static<typeof OrderProductInput>;

/** An item of a cargo place (reference OrderPackageItem). */
export const OrderPackageItem = Type.Object({
  id: Type.Optional(Int64()),
  orderProductId: Int64(),
  productId: Type.Optional(Int64()),
  packageId: Type.Optional(Int64()),
  quantity: Type.Integer({ minimum: 0, maximum: 2_147_483_647 }),
});

/** A cargo place (reference OrderPackage). */
export const OrderPackage = Type.Object(
  {
    packageId: Type.Optional(Int64({ description: 'Send only for existing cargo places' })),
    orderId: Type.Optional(Int64()),
    number: Type.Optional(Nullable(Type.String({ maxLength: 200 }))),
    width: Type.Optional(Nullable(Int32({ description: 'Centimetres (P21)' }))),
    height: Type.Optional(Nullable(Int32({ description: 'Centimetres (P21)' }))),
    length: Type.Optional(Nullable(Int32({ description: 'Centimetres (P21)' }))),
    weight: Type.Optional(Nullable(Int32({ description: 'Grams (P21)' }))),
    items: Type.Optional(Type.Array(OrderPackageItem, { maxItems: 10_000 })),
    clientId: Type.Optional(Int64()),
    organizationId: Type.Optional(Int64()),
  },
  { $id: 'OrderPackage', title: 'OrderPackage' },
);
export type OrderPackage = Static<typeof OrderPackage>;

/**
 * The fields of `entity` other than `except` and the writable ones, accepted in a request body and ignored
 * (D5.1: read-only fields are never stored), so a body read with GET can be sent back as it is while unknown
 * fields are still refused (P32).
 */
function readOnlyFields(entity: TObject, except: readonly string[]) {
  const writable = new Set([...except, ...Object.keys(orderWritableFields)]);
  return Object.fromEntries(
    Object.keys(entity.properties)
      .filter((name) => !writable.has(name))
      .map((name) => [name, Type.Optional(Type.Unknown({ description: 'Read-only: ignored (D5.1)' }))]),
  );
}

/** Writable fields of a document (create and PATCH). */
const orderWritableFields = {
  name: Type.Optional(Nullable(Type.String({ maxLength: 500 }))),
  comment: Type.Optional(Nullable(Type.String({ maxLength: 4000 }))),
  boxType: Type.Optional(Nullable(StringEnum(BOX_TYPES))),
  markingType: Type.Optional(Nullable(StringEnum(MARKING_TYPES))),
  service: Type.Optional(ServiceSchema),
  warehouseId: Type.Optional(Nullable(Int64())),
  stockWarehouseId: Type.Optional(Nullable(Int64())),
  serviceWarehouseId: Type.Optional(Nullable(Type.String({ maxLength: 200 }))),
  externalOrderId: Type.Optional(Nullable(Type.String({ maxLength: 200 }))),
  invoiceNumber: Type.Optional(Nullable(Int64())),
  trackingNumber: Type.Optional(Nullable(Type.String({ maxLength: 200 }))),
  supplyId: Type.Optional(Nullable(Int64())),
  supplierId: Type.Optional(Nullable(Int64())),
  incomeId: Type.Optional(Nullable(Int64())),
  userId: Type.Optional(Nullable(Int32())),
  express: Type.Optional(Type.Boolean()),
  updateInService: Type.Optional(Type.Boolean()),
  createdDate: Type.Optional(Nullable(DateTime)),
  deliveryDate: Type.Optional(Nullable(DateTime)),
};

/** A receiving document (reference Order), as `GET /api/inbound/{orderId}` returns it. */
export const Order = Type.Object(
  {
    id: Int64(),
    versionId: Int64(),
    clientId: Int64(),
    organizationId: Int64(),
    type: OrderTypeSchema,
    status: OrderStatusSchema,
    markingStatus: MarkingStatusSchema,
    markingType: Nullable(Type.String()),
    boxType: Nullable(Type.String()),
    service: Type.String(),
    name: Nullable(Type.String()),
    comment: Nullable(Type.String()),
    warehouseId: Nullable(Int64()),
    stockWarehouseId: Nullable(Int64()),
    serviceWarehouseId: Nullable(Type.String()),
    externalOrderId: Nullable(Type.String()),
    invoiceNumber: Nullable(Int64()),
    trackingNumber: Nullable(Type.String()),
    supplyId: Nullable(Int64()),
    supplierId: Nullable(Int64()),
    incomeId: Nullable(Int64()),
    userId: Nullable(Type.Integer()),
    closeUserId: Nullable(Type.Integer()),
    createdUser: Nullable(Type.String()),
    express: Type.Boolean(),
    updateInService: Type.Boolean(),
    createdDate: Nullable(DateTime),
    created: DateTime,
    deliveryDate: Nullable(DateTime),
    closeDate: Nullable(DateTime),
    modifiedDate: DateTime,
    deleted: Type.Boolean(),
    totalQuantity: Type.Integer({ description: 'Sum of position quantities (computed)' }),
    totalPrice: Type.Number({ description: 'Sum of quantity × price (computed, exact to 0.01)' }),
    products: Type.Optional(Type.Array(OrderProduct)),
    packages: Type.Optional(Type.Array(OrderPackage)),
    _links: Links,
  },
  { $id: 'Order', title: 'Order' },
);
export type Order = Static<typeof Order>;

/** Body of `POST /api/inbound/`: `organizationId` and `type` required (D5.1); products optional. */
export const OrderCreateBody = Type.Object(
  {
    organizationId: Int64(),
    type: OrderTypeSchema,
    ...orderWritableFields,
    products: Type.Optional(Type.Array(OrderProductInput, { maxItems: 10_000 })),
    ...readOnlyFields(Order, ['organizationId', 'type', 'products']),
  },
  { $id: 'OrderCreate', title: 'OrderCreate' },
);
export type OrderCreateBody = Static<typeof OrderCreateBody>;

/** Body of `PATCH /api/inbound/`: `id` required, `versionId` for optimistic locking; absent fields keep their value. */
export const OrderPatchBody = Type.Object(
  {
    id: Int64(),
    versionId: Type.Optional(Int64()),
    organizationId: Type.Optional(Int64()),
    type: Type.Optional(OrderTypeSchema),
    ...orderWritableFields,
    ...readOnlyFields(Order, ['id', 'versionId', 'organizationId', 'type']),
  },
  { $id: 'OrderPatch', title: 'OrderPatch' },
);
export type OrderPatchBody = Static<typeof OrderPatchBody>;

/** Packing divergence of one position (reference Divergence, D5.7). */
export const Divergence = Type.Object({
  orderId: Int64(),
  product: ProductSummary,
  supplyQuantity: Type.Integer(),
  packedQuantity: Type.Integer(),
});

/** Divergence summary (reference TotalDivergence, D5.7): only positions whose packed ≠ supplied are listed. */
export const TotalDivergence = Type.Object(
  {
    divergence: Type.Array(Divergence),
    totalSupplied: Type.Integer(),
    totalPacked: Type.Integer(),
    _links: Links,
  },
  { $id: 'TotalDivergence', title: 'TotalDivergence' },
);
export type TotalDivergence = Static<typeof TotalDivergence>;

/** One history snapshot (reference OrderHistory, D5.9) plus what changed. */
export const OrderHistory = Type.Object(
  {
    id: Int64(),
    orderId: Int64(),
    organizationId: Int64(),
    clientId: Int64(),
    date: DateTime,
    userId: Nullable(Int64()),
    action: Type.String({ description: 'What happened: CREATE, UPDATE, PRODUCT_ADD, STATUS, …' }),
    changes: Type.Record(Type.String(), Type.Unknown(), {
      description: 'Changed fields: {field: {from, to}}',
    }),
    orderStatus: OrderStatusSchema,
    orderType: OrderTypeSchema,
    orderCreatedDate: Nullable(DateTime),
    deliveryDate: Nullable(DateTime),
    trackingNumber: Nullable(Type.String()),
    totalQuantity: Type.Integer(),
    totalPrice: Type.Number(),
    versionId: Int64(),
  },
  { $id: 'OrderHistory', title: 'OrderHistory' },
);
export type OrderHistory = Static<typeof OrderHistory>;

/** `{orderId}` path parameter (int64 text, parsed with `parseId`). */
export const OrderIdParams = Type.Object({ orderId: Int64String });
/** `orderId` query parameter of the package, marking and stock operations. */
export const OrderIdQuery = Type.Object({ orderId: Int64String });

/** Query of `GET /api/inbound/{orderId}`; the stock/set/warehouse options are accepted (no sets or reserves are stored). */
export const OrderGetQuery = Type.Object({
  withReservedStocks: Type.Optional(Type.Boolean()),
  withComponents: Type.Optional(Type.Boolean()),
  replaceSetByComponent: Type.Optional(Type.Boolean()),
  forceReplaceSetByComponent: Type.Optional(Type.Boolean()),
  calculatePriceSums: Type.Optional(Type.Boolean()),
  withWarehouse: Type.Optional(Type.Boolean()),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000, description: 'Products per page' })),
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE })),
});
export type OrderGetQuery = Static<typeof OrderGetQuery>;

/** `status` query parameter of the status operations. */
export const StatusQuery = Type.Object({ status: OrderStatusSchema });
/** Body of the bulk status call: 1..10,000 document ids (D5.4). */
export const BulkStatusBody = Type.Array(Int64(), {
  minItems: 1,
  maxItems: 10_000,
  description: 'Document ids',
});
/** Query of DELETE: `deleted=false` restores (D5.5). */
export const DeleteQuery = Type.Object({
  deleted: Type.Optional(Type.Boolean({ description: 'false restores a deleted document' })),
});
/** Query of `setOrderMarkingStatus`. */
export const MarkingStatusQuery = Type.Object({ status: MarkingStatusSchema, orderId: Int64String });
/** Body of `updateOrderPackage`: the complete new list of cargo places (D5.6). */
export const PackagesBody = Type.Array(OrderPackage, { maxItems: 5_000 });

const Int64Query = Type.Integer({ minimum: 0, format: 'int64' });
const LooseDate = Type.String({ maxLength: 40, description: 'ISO 8601 date or date-time' });

/** A text filter: at most 200 characters, as every group's text filters. */
const SearchText = Type.String({ maxLength: 200 });

/** The filter set of `history` and `find` (spec §4.1); print/export-only parameters are accepted and ignored (D5.10). */
export const OrderFilterQuery = Type.Object({
  ...PagingQuery,
  columns: RepeatedQuery(Type.String()),
  actual: Type.Optional(Type.Boolean()),
  type: Type.Optional(OrderTypeSchema),
  serviceWarehouseId: Type.Optional(SearchText),
  externalOrderId: Type.Optional(SearchText),
  invoiceNumber: Type.Optional(Int64Query),
  article: Type.Optional(SearchText),
  containsArticle: Type.Optional(SearchText),
  product: Type.Optional(SearchText),
  barcode: Type.Optional(SearchText),
  organizations: RepeatedQuery(Int64Query, { uniqueItems: true }),
  organizationId: Type.Optional(Int64Query),
  clientOrganizationIds: RepeatedQuery(Int64Query),
  query: Type.Optional(SearchText),
  userId: Type.Optional(Int32()),
  service: Type.Optional(ServiceSchema),
  services: RepeatedQuery(ServiceSchema),
  status: Type.Optional(OrderStatusSchema),
  statuses: RepeatedQuery(OrderStatusSchema),
  withoutSupply: Type.Optional(Type.Boolean()),
  supplyId: Type.Optional(Int64Query),
  orderProductId: Type.Optional(Int64Query),
  productId: Type.Optional(Int64Query),
  brandId: Type.Optional(Int32()),
  supplierId: Type.Optional(Int64Query),
  hasCollectTask: Type.Optional(Type.Boolean()),
  updateInService: Type.Optional(Type.Boolean()),
  hasServiceError: Type.Optional(Type.Boolean()),
  noLabel: Type.Optional(Type.Boolean()),
  isLegal: Type.Optional(Type.Boolean()),
  notCollected: Type.Optional(Type.Boolean()),
  dbs: Type.Optional(Type.Boolean()),
  express: Type.Optional(Type.Boolean()),
  fbs: Type.Optional(Type.Boolean()),
  noWarehouse: Type.Optional(Type.Boolean()),
  hasVideoFixation: Type.Optional(Type.Boolean()),
  hasMarkedProducts: Type.Optional(Type.Boolean()),
  noSystemAOrder: Type.Optional(Type.Boolean()),
  noSystemADemand: Type.Optional(Type.Boolean()),
  forSystemA: Type.Optional(Type.Boolean()),
  withSystemAOrder: Type.Optional(Type.Boolean()),
  ids: RepeatedQuery(Int64Query, { uniqueItems: true, maxItems: 10_000 }),
  closeDate: Type.Optional(LooseDate),
  orderDate: Type.Optional(LooseDate),
  deliveryDate: Type.Optional(LooseDate),
  deliveryDateFrom: Type.Optional(LooseDate),
  deliveryDateTo: Type.Optional(LooseDate),
  createdDateFrom: Type.Optional(LooseDate),
  createdDateTo: Type.Optional(LooseDate),
  modifiedDate: Type.Optional(LooseDate),
  modifiedDateTo: Type.Optional(LooseDate),
  closeDateFrom: Type.Optional(LooseDate),
  closeDateTo: Type.Optional(LooseDate),
  dateFrom: Type.Optional(LooseDate),
  dateTo: Type.Optional(LooseDate),
  incomeId: Type.Optional(Int64Query),
  bindingOrderId: Type.Optional(Int64Query),
  warehouseId: Type.Optional(Int64Query),
  warehouseIds: RepeatedQuery(Int64Query, { uniqueItems: true }),
  timeZone: Type.Optional(Type.Integer({ minimum: -12, maximum: 14 })),
  markingStatus: Type.Optional(MarkingStatusSchema),
  deleted: Type.Optional(Type.Boolean()),
  collectLabel: Type.Optional(Type.Boolean()),
  sortOrdersByDate: Type.Optional(Type.Boolean()),
  sortBySku: Type.Optional(Type.Boolean()),
  notGroupByOrganization: Type.Optional(Type.Boolean()),
  notGroupByService: Type.Optional(Type.Boolean()),
  productLabel: Type.Optional(Type.Boolean()),
  productCodeLabel: Type.Optional(Type.Boolean()),
  infoLabel: Type.Optional(Type.Boolean()),
  collectDeliveryLabel: Type.Optional(Type.Boolean()),
  servicesForLabel: RepeatedQuery(ServiceSchema),
  shippingServicesForLabel: RepeatedQuery(CarrierSchema),
  grouped: Type.Optional(Type.Boolean()),
  replaceSetByComponent: Type.Optional(Type.Boolean()),
  replaceSetsByComponentsIncome: Type.Optional(Type.Boolean()),
  withProducts: Type.Optional(Type.Boolean()),
  passageIds: RepeatedQuery(Int64Query, { uniqueItems: true }),
  withContractor: Type.Optional(Type.Boolean()),
  boxId: Type.Optional(Int64Query),
  withAnalytics: Type.Optional(Type.Boolean()),
  sortBy: Type.Optional(OrderSortFieldSchema),
  ascending: Type.Optional(Type.Boolean()),
});
export type OrderFilterQuery = Static<typeof OrderFilterQuery>;

/** `find` takes the filter set plus `orderId`, and a `cursor` of keyset pagination (P172). */
export const OrderFindQuery = Type.Object({
  ...OrderFilterQuery.properties,
  orderId: Type.Optional(Int64Query),
  ...CursorQuery,
});
export type OrderFindQuery = Static<typeof OrderFindQuery>;

/** `history` takes the filter set (only its paging and `dateFrom`/`dateTo` apply, P23) and a `cursor` (P172). */
export const OrderHistoryQuery = Type.Object({ ...OrderFilterQuery.properties, ...CursorQuery });
export type OrderHistoryQuery = Static<typeof OrderHistoryQuery>;

/** Response of `find` (reference FindResponseOrder, D4.2). */
export const FindResponseOrder = Type.Object(
  {
    rows: Type.Array(Order),
    page: Type.Integer(),
    total: Type.Optional(Type.Integer()),
    nextCursor: NextCursor,
    _links: Links,
  },
  { $id: 'FindResponseOrder', title: 'FindResponseOrder' },
);

/** Response of `history` (PageFindResponseOrderHistory, D4.2, newest first). */
export const PageFindResponseOrderHistory = Type.Object(
  {
    rows: Type.Array(OrderHistory),
    page: Type.Integer(),
    total: Type.Optional(Type.Integer()),
    nextCursor: NextCursor,
    _links: Links,
  },
  { $id: 'PageFindResponseOrderHistory', title: 'PageFindResponseOrderHistory' },
);
