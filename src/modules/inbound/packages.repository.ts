/**
 * SQL of cargo places and their items (D5.6). The replace runs a fixed number of statements for any number of
 * places and items: rows travel as one JSON parameter expanded with `jsonb_to_recordset`.
 */
import { sql, type Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';

/** A cargo place to write: `id` set for an existing place, unset for a new one. */
export interface PackageWrite {
  id?: number;
  number: string | null;
  width: number | null;
  height: number | null;
  length: number | null;
  weight: number | null;
}

/** An item to write, already resolved to its position's product. */
export interface PackageItemWrite {
  packageIndex: number;
  orderProductId: number;
  productId: number;
  quantity: number;
}

/** Cargo places of documents. */
export const packageRepository = {
  /** The cargo places (by id) and all their items (by id) of the document `orderId` of `clientId`. */
  list: async (db: Kysely<DB>, clientId: number, orderId: number) => {
    const [packages, items] = await Promise.all([
      // sorted here: an `order by id` lets a plan on statistics that see the client as about one row walk the
      // client's places in primary-key order instead of reaching the document's (P197)
      db
        .selectFrom('inbound_order_package')
        .selectAll()
        .where('client_id', '=', clientId)
        .where('order_id', '=', orderId)
        .execute()
        .then((rows) => rows.sort((a, b) => a.id - b.id)),
      db
        .selectFrom('inbound_order_package_item')
        .selectAll()
        .where('client_id', '=', clientId)
        .where('order_id', '=', orderId)
        .orderBy('id')
        .execute(),
    ]);
    return { packages, items };
  },

  /** Ids of the document's cargo places. */
  ids: async (db: Kysely<DB>, clientId: number, orderId: number): Promise<Set<number>> => {
    const rows = await db
      .selectFrom('inbound_order_package')
      .select('id')
      .where('client_id', '=', clientId)
      .where('order_id', '=', orderId)
      .execute();
    return new Set(rows.map((row) => row.id));
  },

  /**
   * Replaces the document's cargo places with `packages` (D5.6): updates those with an id, creates the others,
   * removes the missing ones, and rewrites every item. Runs inside the caller's transaction.
   */
  replace: async (
    db: Kysely<DB>,
    order: { id: number; client_id: number; organization_id: number },
    packages: PackageWrite[],
    items: PackageItemWrite[],
  ): Promise<void> => {
    const newCount = packages.filter((row) => row.id === undefined).length;
    const allocated =
      newCount === 0
        ? []
        : (
            await sql<{ id: number }>`
              select nextval('inbound_order_package_id_seq')::bigint as id from generate_series(1, ${newCount})`.execute(
              db,
            )
          ).rows.map((row) => row.id);
    let next = 0;
    const rows = packages.map((row) => ({ ...row, id: row.id ?? (allocated[next++] as number) }));
    const keptIds = rows.map((row) => row.id);

    await db
      .deleteFrom('inbound_order_package_item')
      .where('client_id', '=', order.client_id)
      .where('order_id', '=', order.id)
      .execute();
    await db
      .deleteFrom('inbound_order_package')
      .where('client_id', '=', order.client_id)
      .where('order_id', '=', order.id)
      .$if(keptIds.length > 0, (query) => query.where(sql<boolean>`not (id = any(${keptIds}::bigint[]))`))
      .execute();
    if (rows.length > 0) {
      const json = JSON.stringify(rows);
      await sql`
        insert into inbound_order_package (id, client_id, organization_id, order_id, number, width, height, length,
          weight)
        select v.id, ${order.client_id}, ${order.organization_id}, ${order.id}, v.number, v.width, v.height,
          v.length, v.weight
        from jsonb_to_recordset(${json}::jsonb) as v(id bigint, number text, width int, height int, length int,
          weight int)
        on conflict (client_id, id) do update set number = excluded.number, width = excluded.width,
          height = excluded.height, length = excluded.length, weight = excluded.weight`.execute(db);
    }
    if (items.length > 0) {
      const json = JSON.stringify(
        items.map((item) => ({
          package_id: rows[item.packageIndex]?.id,
          order_product_id: item.orderProductId,
          product_id: item.productId,
          quantity: item.quantity,
        })),
      );
      await sql`
        insert into inbound_order_package_item (client_id, order_id, package_id, order_product_id, product_id,
          quantity)
        select ${order.client_id}, ${order.id}, v.package_id, v.order_product_id, v.product_id, v.quantity
        from jsonb_to_recordset(${json}::jsonb) as v(package_id bigint, order_product_id bigint,
          product_id bigint, quantity int)`.execute(db);
    }
  },
};
