/** SQL of the receipt group (spec §4.3, D8); every query of an integrator's request is scoped by client. */
import type { Insertable, Kysely, Updateable } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { acrossClients } from '../../db/cross-tenant.ts';
import type { ReceiptRow } from './presenter.ts';
import type { ReceiptTable } from './tables.ts';

/** A position of a receiving document with the name of its catalog product. */
export interface ReceiptPosition {
  id: number;
  product_id: number;
  /** The position's snapshot name (P15). */
  product_name: string | null;
  article: string | null;
  /** The catalog product's name. */
  catalog_name: string | null;
  quantity: number;
  /** numeric(16,2) as exact decimal text. */
  price: string;
}

/** Receipts. */
export const receiptRepository = {
  insert: (db: Kysely<DB>, values: Insertable<ReceiptTable>): Promise<ReceiptRow> =>
    db.insertInto('receipt').values(values).returningAll().executeTakeFirstOrThrow(),

  /** The receipt of `clientId`; undefined when missing or another client's (D2.5). */
  findOfClient: (db: Kysely<DB>, clientId: number, id: number): Promise<ReceiptRow | undefined> =>
    db
      .selectFrom('receipt')
      .selectAll()
      .where('id', '=', id)
      .where('client_id', '=', clientId)
      .executeTakeFirst(),

  /**
   * A receipt by id, any client: for a refresh job queued before jobs carried their client (spans clients,
   * P176).
   */
  findById: (db: Kysely<DB>, id: number): Promise<ReceiptRow | undefined> =>
    acrossClients(db, (trx) => trx.selectFrom('receipt').selectAll().where('id', '=', id).executeTakeFirst()),

  /** The receipt of `clientId` locked for the rest of the transaction. */
  lock: (db: Kysely<DB>, clientId: number, id: number): Promise<ReceiptRow | undefined> =>
    db
      .selectFrom('receipt')
      .selectAll()
      .where('client_id', '=', clientId)
      .where('id', '=', id)
      .forUpdate()
      .executeTakeFirst(),

  /** The receipts of a document of `clientId`, oldest first. */
  listOfOrder: (db: Kysely<DB>, clientId: number, orderId: number): Promise<ReceiptRow[]> =>
    db
      .selectFrom('receipt')
      .selectAll()
      .where('client_id', '=', clientId)
      .where('order_id', '=', orderId)
      .orderBy('id')
      .execute(),

  update: (
    db: Kysely<DB>,
    clientId: number,
    id: number,
    values: Updateable<ReceiptTable>,
  ): Promise<ReceiptRow> =>
    db
      .updateTable('receipt')
      .set(values)
      .where('client_id', '=', clientId)
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow(),

  /** The positions of a document of `clientId` in position order, with their catalog product names. */
  positions: (db: Kysely<DB>, clientId: number, orderId: number): Promise<ReceiptPosition[]> =>
    db
      .selectFrom('inbound_order_product as position')
      .leftJoin('product', (join) =>
        join
          .onRef('product.id', '=', 'position.product_id')
          .onRef('product.client_id', '=', 'position.client_id'),
      )
      .select([
        'position.id',
        'position.product_id',
        'position.product_name',
        'position.article',
        'product.name as catalog_name',
        'position.quantity',
        'position.price',
      ])
      .where('position.client_id', '=', clientId)
      .where('position.order_id', '=', orderId)
      .orderBy('position.id')
      .execute(),
};
