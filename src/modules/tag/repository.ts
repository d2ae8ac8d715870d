/** SQL of the tag group (D7); every query is scoped by the caller's client. */
import { sql, type Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { likeContains } from '../../db/like.ts';
import { ignoringCase, keysetAfter, keysetValue, type KeysetOrder } from '../../db/keyset.ts';
import type { CursorPosition } from '../../http/cursor.ts';

/** Filters of a tag list. */
export interface TagCriteria {
  clientId: number;
  query?: string;
  productId?: number;
}

/** The client's tags matching `criteria`; each correlated probe names the client too (one Citus shard). */
function filtered(db: Kysely<DB>, criteria: TagCriteria) {
  return db
    .selectFrom('product_tag as tag')
    .where('tag.client_id', '=', criteria.clientId)
    .$if(criteria.query !== undefined, (qb) =>
      qb.where('tag.name', 'ilike', likeContains(criteria.query ?? '')),
    )
    .$if(criteria.productId !== undefined, (qb) =>
      qb.where((eb) =>
        eb.or([
          eb.exists(
            eb
              .selectFrom('product_tag_product as bound')
              .select('bound.tag_id')
              .where('bound.client_id', '=', criteria.clientId)
              .whereRef('bound.client_id', '=', 'tag.client_id')
              .whereRef('bound.tag_id', '=', 'tag.id')
              .where('bound.product_id', '=', criteria.productId as number),
          ),
          eb.exists(
            eb
              .selectFrom('product_tag_model as bound')
              .innerJoin('product', (join) =>
                join
                  .onRef('product.client_id', '=', 'bound.client_id')
                  .onRef('product.model_id', '=', 'bound.model_id'),
              )
              .select('bound.tag_id')
              .where('bound.client_id', '=', criteria.clientId)
              .whereRef('bound.client_id', '=', 'tag.client_id')
              .whereRef('bound.tag_id', '=', 'tag.id')
              .where('product.id', '=', criteria.productId as number),
          ),
        ]),
      ),
    );
}

export const tagRepository = {
  insert: (db: Kysely<DB>, clientId: number, name: string) =>
    db
      .insertInto('product_tag')
      .values({ client_id: clientId, name })
      .returningAll()
      .executeTakeFirstOrThrow(),
  rename: (db: Kysely<DB>, clientId: number, id: number, name: string) =>
    db
      .updateTable('product_tag')
      .set({ name })
      .where('client_id', '=', clientId)
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst(),
  find: (db: Kysely<DB>, clientId: number, id: number) =>
    db
      .selectFrom('product_tag')
      .selectAll()
      .where('client_id', '=', clientId)
      .where('id', '=', id)
      .executeTakeFirst(),
  findByName: (db: Kysely<DB>, clientId: number, name: string) =>
    db
      .selectFrom('product_tag')
      .selectAll()
      .where('client_id', '=', clientId)
      .where(sql`lower(name)`, '=', name.toLowerCase())
      .executeTakeFirst(),
  /** Deletes the client's tag `id` (its bindings go with it); the row as it was, or undefined. */
  delete: (db: Kysely<DB>, clientId: number, id: number) =>
    db
      .deleteFrom('product_tag')
      .where('client_id', '=', clientId)
      .where('id', '=', id)
      .returning(['id', 'name', 'client_id'])
      .executeTakeFirst(),
  /**
   * A page of the client's tags matching `criteria`, by id or by name ignoring case, then id: `offset` rows skipped,
   * or those after a cursor's position (keyset pagination, P172); each row with its `keyset_value`.
   */
  page: (
    db: Kysely<DB>,
    criteria: TagCriteria,
    sortBy: 'ID' | 'NAME',
    ascending: boolean,
    limit: number,
    from: { offset: number } | { after: CursorPosition },
  ) => {
    const direction = ascending ? 'asc' : 'desc';
    const name = ignoringCase(sql.ref('tag.name'));
    const order: KeysetOrder = {
      column: sortBy === 'NAME' ? name : undefined,
      id: sql.ref('tag.id'),
      ascending,
      nullsFirst: false,
    };
    return filtered(db, criteria)
      .selectAll('tag')
      .select(keysetValue(order).as('keyset_value'))
      .$if('after' in from, (qb) => qb.where(keysetAfter(order, (from as { after: CursorPosition }).after)))
      .$if(sortBy === 'NAME', (qb) => qb.orderBy(name, direction))
      .orderBy('tag.id', direction)
      .limit(limit)
      .offset('offset' in from ? from.offset : 0)
      .execute();
  },
  count: async (db: Kysely<DB>, criteria: TagCriteria) =>
    Number(
      (
        await filtered(db, criteria)
          .select((eb) => eb.fn.countAll<string>().as('total'))
          .executeTakeFirstOrThrow()
      ).total,
    ),
  /** Binds; false when already bound. */
  bindProduct: async (db: Kysely<DB>, clientId: number, tagId: number, productId: number) =>
    (await db
      .insertInto('product_tag_product')
      .values({ client_id: clientId, tag_id: tagId, product_id: productId })
      .onConflict((c) => c.doNothing())
      .returning('tag_id')
      .executeTakeFirst()) !== undefined,
  unbindProduct: (db: Kysely<DB>, clientId: number, tagId: number, productId: number) =>
    db
      .deleteFrom('product_tag_product')
      .where('client_id', '=', clientId)
      .where('tag_id', '=', tagId)
      .where('product_id', '=', productId)
      .execute(),
  bindModel: async (db: Kysely<DB>, clientId: number, tagId: number, modelId: number) =>
    (await db
      .insertInto('product_tag_model')
      .values({ client_id: clientId, tag_id: tagId, model_id: modelId })
      .onConflict((c) => c.doNothing())
      .returning('tag_id')
      .executeTakeFirst()) !== undefined,
  unbindModel: (db: Kysely<DB>, clientId: number, tagId: number, modelId: number) =>
    db
      .deleteFrom('product_tag_model')
      .where('client_id', '=', clientId)
      .where('tag_id', '=', tagId)
      .where('model_id', '=', modelId)
      .execute(),
  /**
   * Every (product, tag) of a model: tags bound to each product and tags bound to the model (D7.2). Each lateral
   * probe names the client as a value too, so Citus routes the statement to the client's shard.
   */
  tagsOfModelProducts: (db: Kysely<DB>, clientId: number, modelId: number) =>
    sql<{ product_id: number; id: number | null; name: string | null; client_id: number | null }>`
      SELECT p.id AS product_id, t.id, t.name, t.client_id
      FROM product p
      LEFT JOIN LATERAL (
        SELECT client_id, tag_id FROM product_tag_product
        WHERE client_id = ${clientId} AND client_id = p.client_id AND product_id = p.id
        UNION SELECT client_id, tag_id FROM product_tag_model
        WHERE client_id = ${clientId} AND client_id = p.client_id AND model_id = p.model_id
      ) bound ON bound.client_id = p.client_id
      -- Each bound tag by its key (OFFSET 0 keeps the lookup a lateral probe, never a scan of the tags).
      LEFT JOIN LATERAL (
        SELECT id, name, client_id FROM product_tag
        WHERE client_id = ${clientId} AND client_id = bound.client_id AND id = bound.tag_id OFFSET 0
      ) t ON true
      WHERE p.client_id = ${clientId} AND p.model_id = ${modelId} AND NOT p.deleted
      ORDER BY p.id, t.id`.execute(db),
};
