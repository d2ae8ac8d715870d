/**
 * SQL of `GET /api/inbound/find` (D4, D5.10). A page is read with a deferred join: the page's ids come from an
 * index-only scan of `(client_id, id)` (partial indexes on `deleted`), and only those rows are fetched. Ties of
 * any sort break by id in the same direction, so pages never overlap or skip. A page after a cursor starts
 * after the cursor's row (keyset pagination, P172) instead of skipping rows.
 */
import {
  expressionBuilder,
  sql,
  type Expression,
  type ExpressionBuilder,
  type Kysely,
  type RawBuilder,
  type SqlBool,
} from 'kysely';
import type { DB } from '../../db/schema.ts';
import { ignoringCase, keysetAfter, keysetValue, type KeysetOrder } from '../../db/keyset.ts';
import { pageBounds } from '../../db/page-bounds.ts';
import { likeContains } from '../../db/like.ts';
import { CLOSED_ORDER_STATUSES, type OrderSortField } from './enums.ts';
import type { DateRange, FindCriteria } from './find-filter.ts';
import type { OrderRow } from './presenter.ts';
import { visibleText } from '../../domain/text.ts';

type OrderColumn = keyof DB['inbound_order'];
type Eb = ExpressionBuilder<DB, 'inbound_order'>;

const orderColumn = (name: OrderColumn) => sql.ref(`inbound_order.${name}`);

/**
 * Sort key of each sort field: its stored column, the document's name ignoring case (P222); none (the id alone)
 * for `ID` and the fields of data we do not store (queue, collect task, start of collection, product).
 */
const SORT_KEYS: Record<OrderSortField, RawBuilder<unknown> | undefined> = {
  ID: undefined,
  CREATEDDATE: orderColumn('created_date'),
  ORDERCREATED: orderColumn('created_date'),
  CREATED: orderColumn('created'),
  CREATEDUSER: orderColumn('created_user'),
  STATUS: orderColumn('status'),
  SERVICE: orderColumn('service'),
  TYPE: orderColumn('type'),
  BOXTYPE: orderColumn('box_type'),
  NAME: ignoringCase(orderColumn('name')),
  ORGANIZATIONID: orderColumn('organization_id'),
  WAREHOUSE: orderColumn('warehouse_id'),
  INVOICENUMBER: orderColumn('invoice_number'),
  EXTERNALORDERID: orderColumn('external_order_id'),
  QUEUE: undefined,
  SUPPLYID: orderColumn('supply_id'),
  CLOSEDATE: orderColumn('close_date'),
  STARTCOLLECTDATE: undefined,
  CLOSEUSERID: orderColumn('close_user_id'),
  USERID: orderColumn('user_id'),
  PRICE: orderColumn('total_price'),
  PRODUCT: undefined,
  COLLECTORDERTASKID: undefined,
  DELIVERYDATE: orderColumn('delivery_date'),
  MARKINGSTATUS: orderColumn('marking_status'),
  QUANTITY: orderColumn('total_quantity'),
  DATE: orderColumn('created'),
  SERVICEWAREHOUSEID: orderColumn('service_warehouse_id'),
};

/** The keyset order of a sort key (PostgreSQL's default null placement: nulls last when ascending). */
const keysetOrder = (key: RawBuilder<unknown> | undefined, ascending: boolean): KeysetOrder => ({
  column: key,
  id: sql.ref('inbound_order.id'),
  ascending,
  nullsFirst: !ascending,
});

function dateConditions(eb: Eb, column: OrderColumn, range: DateRange): Array<Expression<SqlBool>> {
  const conditions: Array<Expression<SqlBool>> = [];
  if (range.from) conditions.push(eb(column, '>=', range.from));
  if (range.to) conditions.push(eb(column, range.toExclusive ? '<' : '<=', range.to));
  return conditions;
}

/** EXISTS over the document's positions matching `condition`. */
function hasPosition(
  eb: Eb,
  condition: (inner: ExpressionBuilder<DB, 'inbound_order' | 'inbound_order_product'>) => Expression<SqlBool>,
): Expression<SqlBool> {
  return eb.exists(
    eb
      .selectFrom('inbound_order_product')
      .select(sql`1`.as('one'))
      .whereRef('inbound_order_product.client_id', '=', 'inbound_order.client_id')
      .whereRef('inbound_order_product.order_id', '=', 'inbound_order.id')
      .where((inner) => condition(inner)),
  );
}

/** How many conditions every find has: the client and `deleted` (the others are filters). */
const UNFILTERED_CONDITIONS = 2;

/** Every condition of the criteria on stored data (D5.10): the client, `deleted`, then the filters. */
function conditions(eb: Eb, clientId: number, criteria: FindCriteria): Array<Expression<SqlBool>> {
  const q = criteria.query;
  const all: Array<Expression<SqlBool>> = [
    eb('inbound_order.client_id', '=', clientId),
    // Literal, so the planner matches the partial indexes `WHERE deleted` / `WHERE NOT deleted`.
    criteria.deleted ? sql<SqlBool>`inbound_order.deleted` : sql<SqlBool>`not inbound_order.deleted`,
  ];
  const push = (condition: Expression<SqlBool>) => all.push(condition);
  if (q.type !== undefined) push(eb('type', '=', q.type));
  if (q.status !== undefined) push(eb('status', '=', q.status));
  if (q.statuses?.length) push(eb('status', 'in', q.statuses));
  if (q.actual === true) push(eb('status', 'not in', [...CLOSED_ORDER_STATUSES]));
  if (q.service !== undefined) push(eb('service', '=', q.service));
  if (q.services?.length) push(eb('service', 'in', q.services));
  if (q.organizationId !== undefined) push(eb('organization_id', '=', q.organizationId));
  if (q.organizations?.length) push(eb('organization_id', 'in', q.organizations));
  if (q.ids?.length) push(sql<SqlBool>`inbound_order.id = any(${q.ids}::bigint[])`);
  if (q.orderId !== undefined) push(eb('inbound_order.id', '=', q.orderId));
  if (q.externalOrderId !== undefined) push(eb('external_order_id', '=', q.externalOrderId));
  if (q.serviceWarehouseId !== undefined) push(eb('service_warehouse_id', '=', q.serviceWarehouseId));
  if (q.invoiceNumber !== undefined) push(eb('invoice_number', '=', q.invoiceNumber));
  if (q.supplyId !== undefined) push(eb('supply_id', '=', q.supplyId));
  if (q.withoutSupply === true) push(eb('supply_id', 'is', null));
  if (q.supplierId !== undefined) push(eb('supplier_id', '=', q.supplierId));
  if (q.incomeId !== undefined) push(eb('income_id', '=', q.incomeId));
  if (q.userId !== undefined) push(eb('user_id', '=', q.userId));
  if (q.warehouseId !== undefined) push(eb('warehouse_id', '=', q.warehouseId));
  if (q.warehouseIds?.length) push(eb('warehouse_id', 'in', q.warehouseIds));
  if (q.noWarehouse === true) push(eb('warehouse_id', 'is', null));
  if (q.express !== undefined) push(eb('express', '=', q.express));
  if (q.updateInService !== undefined) push(eb('update_in_service', '=', q.updateInService));
  if (q.markingStatus !== undefined) push(eb('marking_status', '=', q.markingStatus));
  if (q.article !== undefined) {
    const article = q.article;
    push(hasPosition(eb, (inner) => inner('inbound_order_product.article', '=', article)));
  }
  const containsArticle = visibleText(q.containsArticle);
  if (containsArticle !== undefined) {
    const pattern = likeContains(containsArticle);
    push(hasPosition(eb, (inner) => inner('inbound_order_product.article', 'ilike', pattern)));
  }
  if (q.barcode !== undefined) {
    const barcode = q.barcode;
    push(hasPosition(eb, (inner) => inner('inbound_order_product.barcode', '=', barcode)));
  }
  const product = visibleText(q.product);
  if (product !== undefined) {
    const pattern = likeContains(product);
    push(
      hasPosition(eb, (inner) =>
        inner.or([
          inner('inbound_order_product.product_name', 'ilike', pattern),
          inner('inbound_order_product.article', 'ilike', pattern),
          inner('inbound_order_product.barcode', '=', product),
        ]),
      ),
    );
  }
  if (q.productId !== undefined) {
    const productId = q.productId;
    push(hasPosition(eb, (inner) => inner('inbound_order_product.product_id', '=', productId)));
  }
  if (q.orderProductId !== undefined) {
    const positionId = q.orderProductId;
    push(hasPosition(eb, (inner) => inner('inbound_order_product.id', '=', positionId)));
  }
  const text = visibleText(q.query);
  if (text !== undefined) {
    const pattern = likeContains(text);
    const anyOf: Array<Expression<SqlBool>> = [
      eb('name', 'ilike', pattern),
      eb('external_order_id', 'ilike', pattern),
      eb('tracking_number', 'ilike', pattern),
    ];
    if (/^\d{1,15}$/.test(text)) anyOf.push(eb('inbound_order.id', '=', Number(text)));
    push(eb.or(anyOf));
  }
  all.push(
    ...dateConditions(eb, 'created', criteria.created),
    ...dateConditions(eb, 'created_date', criteria.createdDate),
    ...dateConditions(eb, 'modified_date', criteria.modified),
    ...dateConditions(eb, 'close_date', criteria.closed),
    ...dateConditions(eb, 'delivery_date', criteria.delivered),
  );
  return all;
}

/** Document search of one client. */
export const findRepository = {
  /**
   * One page of documents matching `criteria`, in the requested order, with one row more than `limit` when there
   * is a next page; each row carries its sort value as text (`keyset_value`) for the cursor.
   */
  page: (
    db: Kysely<DB>,
    clientId: number,
    criteria: FindCriteria,
  ): Promise<Array<OrderRow & { keyset_value: string | null }>> => {
    const key = SORT_KEYS[(criteria.sortBy ?? 'ID') as OrderSortField];
    const direction = criteria.ascending ? 'asc' : 'desc';
    const order = keysetOrder(key, criteria.ascending);
    const where = conditions(expressionBuilder<DB, 'inbound_order'>(), clientId, criteria);
    let ids = db
      .selectFrom('inbound_order')
      .select('inbound_order.id')
      .where((eb) => eb.and(where))
      .$if(criteria.after !== undefined, (qb) =>
        qb.where(keysetAfter(order, criteria.after as NonNullable<FindCriteria['after']>)),
      );
    if (key !== undefined) ids = ids.orderBy(key, direction);
    ids = pageBounds(
      ids.orderBy('inbound_order.id', direction),
      criteria.limit + 1,
      criteria.after === undefined ? criteria.offset : 0,
      where.length > UNFILTERED_CONDITIONS,
    );

    let rows = db
      .selectFrom('inbound_order')
      .innerJoin(ids.as('page'), 'page.id', 'inbound_order.id')
      .selectAll('inbound_order')
      .select(keysetValue(order).as('keyset_value'))
      .where('inbound_order.client_id', '=', clientId);
    if (key !== undefined) rows = rows.orderBy(key, direction);
    return rows.orderBy('inbound_order.id', direction).execute();
  },

  /** Number of documents matching `criteria` (ignores paging). */
  count: async (db: Kysely<DB>, clientId: number, criteria: FindCriteria): Promise<number> => {
    const row = await db
      .selectFrom('inbound_order')
      .select(sql<number>`count(*)::int`.as('total'))
      .where((eb) => eb.and(conditions(eb, clientId, criteria)))
      .executeTakeFirstOrThrow();
    return row.total;
  },
};
