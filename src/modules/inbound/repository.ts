/**
 * SQL of the inbound documents, their positions, history and receiving stock (spec §4.1, D5). Every query is
 * scoped by `client_id` (D1.1); callers pass a transaction for mutations, which keeps bulk changes all or nothing
 * (D5.4). Reads and locks of several documents look each id up by the primary key in one statement (`idRows`,
 * P193); changes of several documents run one primary-key statement per document on the server, in one round
 * trip (migration 0030, P196).
 */
import {
  sql,
  type Expression,
  type ExpressionBuilder,
  type Insertable,
  type Kysely,
  type RawBuilder,
  type SqlBool,
  type Updateable,
} from 'kysely';
import type { DB, InboundOrderProductTable, InboundOrderTable } from '../../db/schema.ts';
import { compiledOnce } from '../../db/compiled-once.ts';
import { idRows } from '../../db/id-rows.ts';
import { isoText, jsonArrayText } from '../../db/json-text.ts';
import type { DateRange } from './find-filter.ts';
import type { OrderHistoryRow, OrderProductRow, OrderRow } from './presenter.ts';

/** Values of a document row a change may set (never id, client, version or totals). */
export type OrderValues = Omit<
  Updateable<InboundOrderTable>,
  'id' | 'client_id' | 'version_id' | 'total_quantity' | 'total_price' | 'modified_date'
>;

/** What a history row records besides the snapshot (D5.9). */
export interface HistoryEntry {
  action: string;
  changes: Record<string, unknown>;
  userId: number;
}

function historyConditions(
  eb: ExpressionBuilder<DB, 'inbound_order_history'>,
  clientId: number,
  orderId: number,
  dates: DateRange,
): Array<Expression<SqlBool>> {
  const conditions = [eb('client_id', '=', clientId), eb('order_id', '=', orderId)];
  if (dates.from) conditions.push(eb('date', '>=', dates.from));
  if (dates.to) conditions.push(eb('date', dates.toExclusive ? '<' : '<=', dates.to));
  return conditions;
}

/**
 * The positions `p` of `from` as rows whose `row_to_json` is `presentProduct`'s object (P201): the same keys in
 * the same order, `product` nested, `price` as `float8` (PostgreSQL's shortest exact output, as JavaScript's
 * number to text), times as `toISOString` writes them (`isoText`).
 */
const presentedPositions = (from: RawBuilder<unknown>) => sql`
  select p.id, p.order_id as "orderId", p.product_id as "productId",
    (select row_to_json(n) from (select p.product_id as id, p.product_name as name, p.article, p.barcode) n)
      as product,
    p.quantity, p.introduced_quantity as "introducedQuantity", p.price::float8 as price, p.position,
    p.created_user as "createdUser",
    ${isoText(sql`p.created_date`)} as "createdDate", ${isoText(sql`p.last_update_date`)} as "lastUpdateDate"
  from ${from}`;

/**
 * The document `o` as one row whose `row_to_json` is `presentOrder`'s object without `products` and `_links`
 * (P201): the same keys in the same order, `totalPrice` as `float8` and times as `toISOString` writes them, as
 * `presentedPositions` does.
 */
const presentedOrder = sql`
  select o.id, o.version_id as "versionId", o.client_id as "clientId", o.organization_id as "organizationId",
    o.type, o.status, o.marking_status as "markingStatus", o.marking_type as "markingType",
    o.box_type as "boxType", o.service, o.name, o.comment, o.warehouse_id as "warehouseId",
    o.stock_warehouse_id as "stockWarehouseId", o.service_warehouse_id as "serviceWarehouseId",
    o.external_order_id as "externalOrderId", o.invoice_number as "invoiceNumber",
    o.tracking_number as "trackingNumber", o.supply_id as "supplyId", o.supplier_id as "supplierId",
    o.income_id as "incomeId", o.user_id as "userId", o.close_user_id as "closeUserId",
    o.created_user as "createdUser", o.express, o.update_in_service as "updateInService",
    ${isoText(sql`o.created_date`)} as "createdDate", ${isoText(sql`o.created`)} as created,
    ${isoText(sql`o.delivery_date`)} as "deliveryDate", ${isoText(sql`o.close_date`)} as "closeDate",
    ${isoText(sql`o.modified_date`)} as "modifiedDate", o.deleted, o.total_quantity as "totalQuantity",
    o.total_price::float8 as "totalPrice"`;

/**
 * The statement of a document's answer (`findAnswer`) over its positions `positions` (P201). The document's own
 * keys, then `products`, then `_links`: presentOrder's order. The header's text loses its closing brace and the two
 * last keys are appended as text, so the positions are never parsed as json again.
 */
const answerOfDocument = (
  positions: RawBuilder<unknown>,
  { clientId, id, baseUrl }: { clientId: number; id: number; baseUrl: string },
) => sql<{ version_id: number; json: string }>`
  select o.version_id, left((select row_to_json(d) from (${presentedOrder}) d)::text, -1)
    || ',"products":' || (
      select ${jsonArrayText(sql`row_to_json(x)`, sql`x.id`)} from (${presentedPositions(positions)}) x
    ) || ',"_links":{"self":{"href":' || to_json(${baseUrl}::text || '/api/inbound/' || o.id)::text || '}}}'
    as json
  from inbound_order o where o.id = ${id} and o.client_id = ${clientId}`;

/** A document's answer with all its positions, compiled once (P216). */
const documentAnswer = compiledOnce((values: { clientId: number; id: number; baseUrl: string }) =>
  answerOfDocument(
    sql`inbound_order_product p where p.client_id = ${values.clientId} and p.order_id = o.id`,
    values,
  ),
);

/** A document's answer with a page of its positions by position id, compiled once (P216). */
const documentPageAnswer = compiledOnce(
  (values: { clientId: number; id: number; baseUrl: string; limit: number; offset: number }) =>
    answerOfDocument(
      sql`(select * from inbound_order_product where client_id = ${values.clientId} and order_id = o.id
             order by id limit ${values.limit} offset ${values.offset}) p`,
      values,
    ),
);

/** Documents. */
export const orderRepository = {
  /** The document of `clientId` locked for the rest of the transaction; undefined when missing or foreign. */
  lock: (db: Kysely<DB>, clientId: number, id: number): Promise<OrderRow | undefined> =>
    db
      .selectFrom('inbound_order')
      .selectAll()
      .where('id', '=', id)
      .where('client_id', '=', clientId)
      .forUpdate()
      .executeTakeFirst(),

  /**
   * The `versionId` of each given document of `clientId` (missing or foreign ids are left out); one statement,
   * each id looked up by the primary key (`idRows`, P193).
   */
  versionsOf: async (db: Kysely<DB>, clientId: number, ids: number[]): Promise<Map<number, number>> => {
    const rows = (
      await sql<{ id: number; version_id: number }>`
        select o.id, o.version_id from ${idRows(ids, 't')}
        cross join lateral (
          select id, version_id from inbound_order where client_id = ${clientId} and id = t.id offset 0
        ) o`.execute(db)
    ).rows;
    return new Map(rows.map((row) => [row.id, row.version_id]));
  },

  /** The document of `clientId`; undefined when missing or foreign. */
  find: (db: Kysely<DB>, clientId: number, id: number): Promise<OrderRow | undefined> =>
    db
      .selectFrom('inbound_order')
      .selectAll()
      .where('id', '=', id)
      .where('client_id', '=', clientId)
      .executeTakeFirst(),

  /** Documents of `clientId` by id (the ids come from this transaction's own changes). */
  findMany: async (db: Kysely<DB>, clientId: number, ids: readonly number[]): Promise<OrderRow[]> =>
    (
      await sql<OrderRow>`
        select o.* from ${idRows(ids, 't')}
        cross join lateral (
          select * from inbound_order where client_id = ${clientId} and id = t.id offset 0
        ) o`.execute(db)
    ).rows,

  /** Locks the listed documents of `clientId` and returns which exist and whether they are deleted. */
  lockMany: async (
    db: Kysely<DB>,
    clientId: number,
    ids: readonly number[],
  ): Promise<Array<{ id: number; deleted: boolean }>> =>
    (
      await sql<{ id: number; deleted: boolean }>`
        select o.id, o.deleted from ${idRows(ids, 't')}
        cross join lateral (
          select id, deleted from inbound_order where client_id = ${clientId} and id = t.id for update
        ) o`.execute(db)
    ).rows,

  /** Inserts a document (version 1, totals 0). */
  insert: (db: Kysely<DB>, values: Insertable<InboundOrderTable>): Promise<OrderRow> =>
    db.insertInto('inbound_order').values(values).returningAll().executeTakeFirstOrThrow(),

  /**
   * Applies `values`, increments `version_id` (unless `bump` is false: the insert of a new document), stamps
   * `modified_date` and, when `recomputeTotals`, sets `total_quantity`/`total_price` from the positions in SQL
   * (D5.3: totals are never taken from input).
   */
  update: (
    db: Kysely<DB>,
    clientId: number,
    id: number,
    values: OrderValues,
    options: { recomputeTotals?: boolean; bump?: boolean } = {},
  ): Promise<OrderRow> =>
    db
      .updateTable('inbound_order')
      .set((eb) => ({
        ...values,
        ...(options.bump !== false && {
          version_id: eb('version_id', '+', 1),
          modified_date: sql<Date>`now()`,
        }),
        ...(options.recomputeTotals && {
          total_quantity: eb
            .selectFrom('inbound_order_product')
            .select(sql<number>`coalesce(sum(quantity), 0)::int`.as('q'))
            .where('client_id', '=', clientId)
            .where('order_id', '=', id),
          total_price: eb
            .selectFrom('inbound_order_product')
            .select(sql<string>`coalesce(sum(quantity * price), 0)`.as('p'))
            .where('client_id', '=', clientId)
            .where('order_id', '=', id),
        }),
      }))
      .where('client_id', '=', clientId)
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow(),

  /**
   * The answer of `GET /api/inbound/{orderId}` for the document of `clientId` with all its positions, or with one
   * page of them by position id, written by PostgreSQL as the JSON text `JSON.stringify(presentOrder(…))` gives,
   * byte for byte (P201), and its `versionId` (for the entity tag); read in one statement (one snapshot, one round
   * trip). Undefined when the document is missing or foreign.
   * @param baseUrl `PUBLIC_BASE_URL` for `_links` (empty = relative)
   */
  findAnswer: async (
    db: Kysely<DB>,
    clientId: number,
    id: number,
    baseUrl: string,
    page?: { limit: number; offset: number },
  ): Promise<{ versionId: number; json: string } | undefined> => {
    const [row] =
      page === undefined
        ? await documentAnswer(db, { clientId, id, baseUrl })
        : await documentPageAnswer(db, { clientId, id, baseUrl, ...page });
    return row && { versionId: row.version_id, json: row.json };
  },

  /**
   * Sets `status` on every listed document of `clientId` whose status differs and appends their STATUS history
   * rows (D5.4, D5.9). A closed status stamps `close_date` and `close_user_id`. The server runs one
   * primary-key statement per document, in id order, in one round trip (`inbound_set_status`, migration 0030,
   * P196); the caller's transaction keeps the change all or nothing.
   * @returns the changed documents' ids and organizations, by id
   */
  setStatus: async (
    db: Kysely<DB>,
    clientId: number,
    ids: readonly number[],
    status: string,
    closed: boolean,
    userId: number,
  ): Promise<Array<{ id: number; organization_id: number }>> =>
    (
      await sql<{ id: number; organization_id: number }>`select id, organization_id
        from inbound_set_status(${clientId}, ${ids}::bigint[], ${status}, ${closed}, ${userId}::int)
        order by id`.execute(db)
    ).rows,

  /**
   * Records received stock for the listed `INCOME` documents that have none yet (D5.8): a `+quantity` ledger row
   * per position with quantity > 0 at the document's warehouse, `introduced_quantity` set to the quantity, state
   * RECORDED. One primary-key statement per document, in id order, in one round trip as `setStatus`
   * (`inbound_record_income_stock`, migration 0030, P196).
   */
  recordIncomeStock: async (db: Kysely<DB>, clientId: number, ids: readonly number[]): Promise<void> => {
    await sql`select inbound_record_income_stock(${clientId}, ${ids}::bigint[])`.execute(db);
  },

  /**
   * Reverses the stock recorded for one document exactly once (D5.8): `-quantity` rows for its INCOME_RECEIVED
   * rows, `introduced_quantity` 0, state REMOVED.
   * @returns false when the document had no recorded stock (nothing changed)
   */
  removeIncomeStock: async (db: Kysely<DB>, clientId: number, orderId: number): Promise<boolean> => {
    const result = await sql<{ removed: number }>`
      with orders as (
        update inbound_order set income_stock_state = 'REMOVED'
        where client_id = ${clientId} and id = ${orderId} and income_stock_state = 'RECORDED'
        returning id
      ), positions as (
        update inbound_order_product p set introduced_quantity = 0
        from orders o where p.client_id = ${clientId} and p.order_id = o.id
        returning p.id
      ), reversal as (
        insert into stock_ledger (client_id, organization_id, warehouse_id, product_id, order_id, order_product_id,
          quantity, reason)
        select l.client_id, l.organization_id, l.warehouse_id, l.product_id, l.order_id, l.order_product_id,
          -l.quantity, 'INCOME_REMOVED'
        from stock_ledger l
        where l.client_id = ${clientId} and l.order_id = ${orderId} and l.reason = 'INCOME_RECEIVED'
          and exists (select 1 from orders)
      )
      select (select count(*) from orders)::int as removed`.execute(db);
    return (result.rows[0]?.removed ?? 0) > 0;
  },
};

/** Positions (order products). */
export const productRepository = {
  /**
   * Positions of the given documents, by document then position id, in one statement: each document's positions
   * looked up by `(client_id, order_id)` in a lateral subquery (as `idRows`, P193).
   */
  listByOrders: async (
    db: Kysely<DB>,
    clientId: number,
    orderIds: readonly number[],
  ): Promise<OrderProductRow[]> =>
    orderIds.length === 0
      ? []
      : (
          await sql<OrderProductRow>`
            select p.* from ${idRows(orderIds, 't')}
            cross join lateral (
              select * from inbound_order_product where client_id = ${clientId} and order_id = t.id offset 0
            ) p
            order by p.order_id, p.id`.execute(db)
        ).rows,

  /** Positions of one document by position id; a page when `limit` is given. */
  listByOrder: (
    db: Kysely<DB>,
    clientId: number,
    orderId: number,
    page?: { limit: number; offset: number },
  ): Promise<OrderProductRow[]> => {
    let query = db
      .selectFrom('inbound_order_product')
      .selectAll()
      .where('client_id', '=', clientId)
      .where('order_id', '=', orderId)
      .orderBy('id');
    if (page) query = query.limit(page.limit).offset(page.offset);
    return query.execute();
  },

  /** The position of a document identified by position id or product id. */
  findInOrder: (
    db: Kysely<DB>,
    clientId: number,
    orderId: number,
    key: { id: number } | { productId: number },
  ): Promise<OrderProductRow | undefined> =>
    db
      .selectFrom('inbound_order_product')
      .selectAll()
      .where('client_id', '=', clientId)
      .where('order_id', '=', orderId)
      .$if('id' in key, (query) => query.where('id', '=', (key as { id: number }).id))
      .$if('productId' in key, (query) =>
        query.where('product_id', '=', (key as { productId: number }).productId),
      )
      .executeTakeFirst(),

  /** Inserts positions (multi-row). */
  insertMany: (
    db: Kysely<DB>,
    rows: Array<Insertable<InboundOrderProductTable>>,
  ): Promise<OrderProductRow[]> =>
    rows.length === 0
      ? Promise.resolve([])
      : db.insertInto('inbound_order_product').values(rows).returningAll().execute(),

  /** Updates one position and stamps `last_update_date`. */
  update: (
    db: Kysely<DB>,
    clientId: number,
    id: number,
    values: Updateable<InboundOrderProductTable>,
  ): Promise<OrderProductRow> =>
    db
      .updateTable('inbound_order_product')
      .set({ ...values, last_update_date: sql<Date>`now()` })
      .where('client_id', '=', clientId)
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow(),

  /**
   * Sets each position's quantity to its packed quantity where they differ (D5.7), in one statement.
   * @returns the changed positions with their previous quantity
   */
  fixDivergence: async (db: Kysely<DB>, clientId: number, orderId: number) => {
    const result = await sql<{ product_id: number; from: number; to: number }>`
      with packed as (
        select p.id, p.quantity as old_quantity, coalesce(sum(i.quantity), 0)::int as packed
        from inbound_order_product p
        left join inbound_order_package_item i on i.client_id = p.client_id and i.order_product_id = p.id
          and i.order_id = ${orderId}
        where p.client_id = ${clientId} and p.order_id = ${orderId}
        group by p.client_id, p.id
      )
      update inbound_order_product p set quantity = packed.packed, last_update_date = now()
      from packed where p.client_id = ${clientId} and p.id = packed.id and packed.packed <> packed.old_quantity
      returning p.product_id, packed.old_quantity as "from", p.quantity as "to"`.execute(db);
    return result.rows.sort((a, b) => a.product_id - b.product_id);
  },

  /** Per position: its quantity and the sum of its cargo place items (D5.7), by position id. */
  packedQuantities: async (db: Kysely<DB>, clientId: number, orderId: number) => {
    const result = await sql<OrderProductRow & { packed: number }>`
      select p.*, coalesce(packed.quantity, 0)::int as packed
      from inbound_order_product p
      left join (select client_id, order_product_id, sum(quantity) as quantity from inbound_order_package_item
                 where client_id = ${clientId} and order_id = ${orderId} group by client_id, order_product_id) packed
        on packed.client_id = p.client_id and packed.order_product_id = p.id
      where p.client_id = ${clientId} and p.order_id = ${orderId} order by p.id`.execute(db);
    return result.rows;
  },
};

/** History snapshots (D5.9). */
export const historyRepository = {
  /** Appends the snapshot of `order` (as it is after the change) with what changed. */
  insert: async (db: Kysely<DB>, order: OrderRow, entry: HistoryEntry): Promise<void> => {
    await db
      .insertInto('inbound_order_history')
      .values({
        client_id: order.client_id,
        order_id: order.id,
        organization_id: order.organization_id,
        user_id: entry.userId,
        action: entry.action,
        changes: JSON.stringify(entry.changes),
        order_status: order.status,
        order_type: order.type,
        order_created_date: order.created_date,
        delivery_date: order.delivery_date,
        tracking_number: order.tracking_number,
        total_quantity: order.total_quantity,
        total_price: order.total_price,
        version_id: order.version_id,
      })
      .execute();
  },

  /**
   * One page of a document's history, newest first, optionally within `dates` on `date`: `offset` rows skipped, or
   * those before `afterId` (keyset pagination, P172).
   */
  page: (
    db: Kysely<DB>,
    clientId: number,
    orderId: number,
    filter: { limit: number; dates: DateRange } & ({ offset: number } | { afterId: number }),
  ): Promise<OrderHistoryRow[]> =>
    db
      .selectFrom('inbound_order_history')
      .selectAll()
      .where((eb) => eb.and(historyConditions(eb, clientId, orderId, filter.dates)))
      .$if('afterId' in filter, (qb) => qb.where('id', '<', (filter as { afterId: number }).afterId))
      .orderBy('id', 'desc')
      .limit(filter.limit)
      .offset('offset' in filter ? filter.offset : 0)
      .execute(),

  /** Number of history rows within the same dates. */
  count: async (db: Kysely<DB>, clientId: number, orderId: number, dates: DateRange): Promise<number> => {
    const row = await db
      .selectFrom('inbound_order_history')
      .select(sql<number>`count(*)::int`.as('total'))
      .where((eb) => eb.and(historyConditions(eb, clientId, orderId, dates)))
      .executeTakeFirstOrThrow();
    return row.total;
  },
};
