/**
 * SQL of the catalog group (D11). Every query is scoped by the caller's client (D1.1); a model's views and
 * products are always reached through the model, so a foreign id is never visible.
 */
import {
  sql,
  type Expression,
  type ExpressionBuilder,
  type Insertable,
  type Kysely,
  type Selectable,
  type SqlBool,
  type Updateable,
} from 'kysely';
import type { DB } from '../../db/schema.ts';
import { pageBounds } from '../../db/page-bounds.ts';
import { compiledOnce } from '../../db/compiled-once.ts';
import { idRows } from '../../db/id-rows.ts';
import { isoText, jsonArrayText } from '../../db/json-text.ts';
import { likeContains } from '../../db/like.ts';
import { drivingWord, trigramLookup } from './search-words.repository.ts';
import type {
  BrandTable,
  CategoryTable,
  ProductModelTable,
  ProductTable,
  ProductViewTable,
} from './tables.ts';

export type BrandRow = Selectable<BrandTable>;
export type CategoryRow = Selectable<CategoryTable>;
export type ModelRow = Selectable<ProductModelTable>;
export type ViewRow = Selectable<ProductViewTable>;
export type ProductRecord = Selectable<ProductTable>;

/** Brands and categories: named dictionaries, unique per client case-insensitively. */
export const dictionaryRepository = {
  insertBrand: (db: Kysely<DB>, values: Insertable<BrandTable>) =>
    db.insertInto('brand').values(values).returningAll().executeTakeFirstOrThrow(),
  insertCategory: (db: Kysely<DB>, values: Insertable<CategoryTable>) =>
    db.insertInto('category').values(values).returningAll().executeTakeFirstOrThrow(),
  /** The client's brand or category with this name (case-insensitive). */
  findByName: (db: Kysely<DB>, table: 'brand' | 'category', clientId: number, name: string) =>
    db
      .selectFrom(table)
      .select('id')
      .where('client_id', '=', clientId)
      .where(sql`lower(name)`, '=', name.toLowerCase())
      .executeTakeFirst(),
  findCategory: (db: Kysely<DB>, clientId: number, id: number) =>
    db
      .selectFrom('category')
      .selectAll()
      .where('client_id', '=', clientId)
      .where('id', '=', id)
      .executeTakeFirst(),
  exists: async (db: Kysely<DB>, table: 'brand' | 'category', clientId: number, id: number) =>
    (await db
      .selectFrom(table)
      .select('id')
      .where('client_id', '=', clientId)
      .where('id', '=', id)
      .executeTakeFirst()) !== undefined,
  /**
   * A page of the client's brands or categories matching `criteria`, by id in the asked direction: `offset` rows
   * skipped, or those after `afterId` (keyset pagination, P172).
   */
  page: (
    db: Kysely<DB>,
    table: 'brand' | 'category',
    criteria: NamedCriteria,
    page: { ascending: boolean; limit: number } & ({ offset: number } | { afterId: number }),
  ) =>
    db
      .selectFrom(table)
      .selectAll()
      .where((eb) => namedConditions(eb, criteria))
      .$if('afterId' in page, (qb) =>
        qb.where('id', page.ascending ? '>' : '<', (page as { afterId: number }).afterId),
      )
      .orderBy('id', page.ascending ? 'asc' : 'desc')
      .limit(page.limit)
      .offset('offset' in page ? page.offset : 0)
      .execute(),
  count: async (db: Kysely<DB>, table: 'brand' | 'category', criteria: NamedCriteria) =>
    Number(
      (
        await db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<string>().as('total'))
          .where((eb) => namedConditions(eb, criteria))
          .executeTakeFirstOrThrow()
      ).total,
    ),
};

/** What a brand or category find selects: the client's, a name substring, changed at or after an instant. */
export interface NamedCriteria {
  clientId: number;
  query?: string;
  modifiedSince?: Date;
}

function namedConditions(
  eb: ExpressionBuilder<DB, 'brand' | 'category'>,
  { clientId, query, modifiedSince }: NamedCriteria,
): Expression<SqlBool> {
  return eb.and([
    eb('client_id', '=', clientId),
    ...(query === undefined ? [] : [eb('name', 'ilike', likeContains(query))]),
    ...(modifiedSince === undefined ? [] : [eb('modified_date', '>=', modifiedSince)]),
  ]);
}

/** The statement of `findCard`, compiled once (P216). */
const modelCard = compiledOnce(
  (values: { clientId: number; id: number }) => sql<ModelRow & { views_json: string }>`
    select m.*, (
      select ${jsonArrayText(sql`row_to_json(v)`, sql`pv.position, pv.id`)}
      from product_view pv
      cross join lateral (
        select pv.id, pv.model_id as "productModelId", pv.color, (
          select ${jsonArrayText(sql`row_to_json(s)`, sql`p.position, p.id`)}
          from product p
          cross join lateral (
            select p.id, p.model_id as "productModelId", p.view_id as "productViewId", p.name, p.size,
              p.barcode, ${isoText(sql`p.created_date`)} as "createdDate",
              ${isoText(sql`p.modified_date`)} as "modifiedDate"
          ) s
          where p.client_id = ${values.clientId} and p.view_id = pv.id and not p.deleted
        )::json as sizes
      ) v
      where pv.client_id = ${values.clientId} and pv.model_id = m.id
    ) as views_json
    from product_model m where m.client_id = ${values.clientId} and m.id = ${values.id} and not m.deleted`,
);

/** Models with their views and products. */
export const modelRepository = {
  insertModel: (db: Kysely<DB>, values: Insertable<ProductModelTable>) =>
    db.insertInto('product_model').values(values).returningAll().executeTakeFirstOrThrow(),
  insertView: (db: Kysely<DB>, values: Insertable<ProductViewTable>) =>
    db.insertInto('product_view').values(values).returningAll().executeTakeFirstOrThrow(),
  insertProducts: (db: Kysely<DB>, values: Insertable<ProductTable>[]) =>
    values.length === 0
      ? Promise.resolve([])
      : db.insertInto('product').values(values).returningAll().execute(),
  find: (db: Kysely<DB>, clientId: number, id: number) =>
    db
      .selectFrom('product_model')
      .selectAll()
      .where('client_id', '=', clientId)
      .where('id', '=', id)
      .where((eb) => eb.not(eb.ref('deleted')))
      .executeTakeFirst(),
  /**
   * The live model of `clientId` with its views and their live sizes, in one statement: the views come as the
   * text of their JSON array in the API's shape (`presentModel`'s `views`, in position and id order), rendered
   * by PostgreSQL byte for byte as `JSON.stringify` would write them (P201).
   */
  findCard: async (
    db: Kysely<DB>,
    clientId: number,
    id: number,
  ): Promise<{ model: ModelRow; viewsJson: string } | undefined> => {
    const [row] = await modelCard(db, { clientId, id });
    if (!row) return undefined;
    const { views_json: viewsJson, ...model } = row;
    return { model, viewsJson };
  },
  /** Locks the client's model for a change. */
  lock: (db: Kysely<DB>, clientId: number, id: number) =>
    db
      .selectFrom('product_model')
      .selectAll()
      .where('client_id', '=', clientId)
      .where('id', '=', id)
      .where((eb) => eb.not(eb.ref('deleted')))
      .forUpdate()
      .executeTakeFirst(),
  findByArticle: (db: Kysely<DB>, clientId: number, article: string) =>
    db
      .selectFrom('product_model')
      .select('id')
      .where('client_id', '=', clientId)
      .where('article', '=', article)
      .executeTakeFirst(),
  views: (db: Kysely<DB>, clientId: number, modelId: number) =>
    db
      .selectFrom('product_view')
      .selectAll()
      .where('client_id', '=', clientId)
      .where('model_id', '=', modelId)
      .orderBy('position')
      .orderBy('id')
      .execute(),
  products: (db: Kysely<DB>, clientId: number, modelId: number) =>
    db
      .selectFrom('product')
      .selectAll()
      .where('client_id', '=', clientId)
      .where('model_id', '=', modelId)
      .where((eb) => eb.not(eb.ref('deleted')))
      .orderBy('position')
      .orderBy('id')
      .execute(),
  /** Bumps the model's version (and `modified_date`) with `values`. */
  update: (db: Kysely<DB>, clientId: number, id: number, values: Updateable<ProductModelTable>) =>
    db
      .updateTable('product_model')
      .set({ ...values, version_id: sql<number>`version_id + 1`, modified_date: sql<Date>`now()` })
      .where('client_id', '=', clientId)
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow(),
  updateView: (db: Kysely<DB>, clientId: number, id: number, values: Updateable<ProductViewTable>) =>
    db
      .updateTable('product_view')
      .set({ ...values, modified_date: sql<Date>`now()` })
      .where('client_id', '=', clientId)
      .where('id', '=', id)
      .execute(),
  updateProduct: (db: Kysely<DB>, clientId: number, id: number, values: Updateable<ProductTable>) =>
    db
      .updateTable('product')
      .set({ ...values, modified_date: sql<Date>`now()` })
      .where('client_id', '=', clientId)
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow(),
  deleteViews: (db: Kysely<DB>, clientId: number, ids: number[]) =>
    ids.length === 0
      ? Promise.resolve()
      : db
          .deleteFrom('product_view')
          .where('client_id', '=', clientId)
          .where('id', 'in', ids)
          .execute()
          .then(() => undefined),
  deleteProducts: (db: Kysely<DB>, clientId: number, ids: number[]) =>
    ids.length === 0
      ? Promise.resolve()
      : db
          .deleteFrom('product')
          .where('client_id', '=', clientId)
          .where('id', 'in', ids)
          .execute()
          .then(() => undefined),
};

/** Final products looked up on their own. */
export const productRepository = {
  /** The client's product with its model's id, for a change. */
  lockWithModel: (db: Kysely<DB>, clientId: number, id: number) =>
    db
      .selectFrom('product')
      .innerJoin('product_model', (join) =>
        join
          .onRef('product_model.client_id', '=', 'product.client_id')
          .onRef('product_model.id', '=', 'product.model_id'),
      )
      .selectAll('product')
      .select(['product_model.version_id as model_version_id'])
      .where('product.client_id', '=', clientId)
      .where('product.id', '=', id)
      .where((eb) => eb.not(eb.ref('product.deleted')))
      .where((eb) => eb.not(eb.ref('product_model.deleted')))
      .forUpdate()
      .executeTakeFirst(),
  /** Which of `ids` are live products of the client (each looked up by its key, P197). */
  existing: async (db: Kysely<DB>, clientId: number, ids: readonly number[]) =>
    ids.length === 0
      ? new Set<number>()
      : new Set(
          (
            await db
              .selectFrom(idRows(ids, 't'))
              .innerJoinLateral(
                (eb) =>
                  eb
                    .selectFrom('product')
                    .select('id')
                    .where('client_id', '=', clientId)
                    .whereRef('id', '=', 't.id')
                    .where((inner) => inner.not(inner.ref('deleted')))
                    .offset(0)
                    .as('p'),
                (join) => join.onTrue(),
              )
              .select('p.id')
              .execute()
          ).map((row) => row.id),
        ),
};

/** Filters of `GET /api/product/find`. */
export interface ProductCriteria {
  clientId: number;
  query?: string;
  modelId?: number;
  article?: string;
  barcode?: string;
  brandId?: number;
  categoryId?: number;
  ids?: number[];
  modifiedSince?: Date;
}

/**
 * The client's lightweight product rows: product joined with its model (article, brand, category) and view
 * (colour), every table on the client's keys.
 */
function productRows(db: Kysely<DB>, clientId: number) {
  return db
    .selectFrom('product')
    .innerJoin('product_model as model', (join) =>
      join.onRef('model.client_id', '=', 'product.client_id').onRef('model.id', '=', 'product.model_id'),
    )
    .innerJoin('product_view as view', (join) =>
      join.onRef('view.client_id', '=', 'product.client_id').onRef('view.id', '=', 'product.view_id'),
    )
    .where('product.client_id', '=', clientId)
    .where((eb) => eb.not(eb.ref('product.deleted')))
    .where((eb) => eb.not(eb.ref('model.deleted')));
}

/** Words of a product search text that drive its trigram index scans (P195); undefined: the full pattern does. */
export interface ProductTextDrivers {
  name?: string;
  article?: string;
}

/** The driving words of `text` for the name and the article index, from the columns' statistics samples. */
export async function productTextDrivers(db: Kysely<DB>, text: string): Promise<ProductTextDrivers> {
  const [name, article] = await Promise.all([
    drivingWord(db, 'product.name', text),
    drivingWord(db, 'product_model.article', text),
  ]);
  return { name, article };
}

/**
 * `column ILIKE pattern`: with a driving word, the index looks up `%word%` and the full pattern filters the rows
 * it finds (`texticlike` is the function of `ILIKE`, written as a call so it stays out of the index scan, P195).
 */
function ilikeDriven(column: string, pattern: string, word: string | undefined) {
  const ref = sql.ref(column);
  return word === undefined
    ? sql<SqlBool>`${ref} ilike ${pattern}`
    : sql<SqlBool>`${ref} ilike ${likeContains(word)} and texticlike(${ref}, ${pattern})`;
}

/**
 * The ways a product matches a search text (case-insensitive): its name or its model's article contains `text`, or
 * its barcode is `text`. Each is a condition on `product` served by its own index (the trigram indexes of name and
 * article, P173, each driven by the text's rarest word, P195; the barcode btree), so each becomes a statement of its
 * own (`searchedIds`): ORed together they would be a filter over the client's whole catalog.
 */
function textMatches(db: Kysely<DB>, clientId: number, text: string, drivers: ProductTextDrivers) {
  const pattern = likeContains(text);
  return [
    ilikeDriven('product.name', pattern, drivers.name),
    // With the live products only (`matchingProducts`), the matched models' products are read through
    // `product_model_position_idx` (partial, live rows; P206).
    sql<SqlBool>`product.model_id in (${db
      .selectFrom('product_model')
      .select('id')
      .where('client_id', '=', clientId)
      .where(ilikeDriven('product_model.article', pattern, drivers.article))})`,
    sql<SqlBool>`product.barcode = ${text}`,
  ];
}

/**
 * Ids of the client's live products matching `criteria`, which has a `query`: the union of one statement per way of
 * matching (`textMatches`), each with every other filter of `criteria`. For a `page` each statement stops at its
 * first `offset + limit + 1` ids in the page's order after its cursor (P209): the page's ids are among them, and a
 * text most products contain reads a page's worth of rows instead of every match.
 */
function searchedIds(db: Kysely<DB>, criteria: ProductCriteria, drivers: ProductTextDrivers, page?: PageCut) {
  const statements = textMatches(db, criteria.clientId, criteria.query as string, drivers).map((match) => {
    const matching = matchingProducts(db, criteria, page).where(match).select('id');
    return page === undefined
      ? matching
      : matching.orderBy('id', page.direction).limit(page.offset + page.limit + 1);
  });
  return sql<{ id: number }>`(${sql.join(statements, sql` union `)})`.as('matched');
}

const ROW_COLUMNS = [
  'product.id',
  'product.model_id',
  'product.view_id',
  'model.article',
  'product.barcode',
  'product.name',
  'product.size',
  'view.color',
  'model.brand_id',
  'model.category_id',
  'product.modified_date',
] as const;

/** Whether a search filters by a column of the model. */
const filtersModel = (criteria: ProductCriteria) =>
  criteria.article !== undefined || criteria.brandId !== undefined || criteria.categoryId !== undefined;

/** Whether a search has a filter besides the client and `query`. */
const filtersBesidesQuery = ({ query: _query, ...criteria }: ProductCriteria) => isFiltered(criteria);

/** Whether a search has a filter besides the client. */
const isFiltered = ({ clientId: _clientId, ...filters }: ProductCriteria) =>
  Object.values(filters).some((value) => value !== undefined);

/**
 * The client's live products matching every filter of `criteria` but `query` (see `searchedIds`), on `product`
 * alone, after the cursor of `page` when it has one: the model's columns are matched through the ids of the
 * client's live models that have them (a live product always has a live model).
 */
function matchingProducts(db: Kysely<DB>, criteria: ProductCriteria, page?: PageCut) {
  const afterId = page?.afterId;
  return db
    .selectFrom('product')
    .where('client_id', '=', criteria.clientId)
    .where((eb) => eb.not(eb.ref('deleted')))
    .$if(afterId !== undefined, (qb) =>
      qb.where('id', page?.direction === 'asc' ? '>' : '<', afterId as number),
    )
    .$if(criteria.modelId !== undefined, (qb) => qb.where('model_id', '=', criteria.modelId as number))
    .$if(filtersModel(criteria), (qb) =>
      qb.where(
        'model_id',
        'in',
        db
          .selectFrom('product_model')
          .select('id')
          .where('client_id', '=', criteria.clientId)
          .where((eb) => eb.not(eb.ref('deleted')))
          .$if(criteria.article !== undefined, (models) =>
            models.where('article', '=', criteria.article as string),
          )
          .$if(criteria.brandId !== undefined, (models) =>
            models.where('brand_id', '=', criteria.brandId as number),
          )
          .$if(criteria.categoryId !== undefined, (models) =>
            models.where('category_id', '=', criteria.categoryId as number),
          ),
      ),
    )
    .$if(criteria.barcode !== undefined, (qb) => qb.where('barcode', '=', criteria.barcode as string))
    .$if(criteria.ids !== undefined, (qb) => qb.where('id', 'in', criteria.ids as number[]))
    .$if(criteria.modifiedSince !== undefined, (qb) =>
      qb.where('modified_date', '>=', criteria.modifiedSince as Date),
    );
}

/** Where a product page starts: after `offset` rows, or after the product id of a cursor (P172). */
export type ProductPageStart = { offset: number } | { afterId: number };

/** The columns of `product` a page's rows show; the rest come from the model and the view. */
const PAGE_COLUMNS = ['id', 'model_id', 'view_id', 'barcode', 'name', 'size', 'modified_date'] as const;

/**
 * The statement of a product page without `query` (a search's page is written alike by `product_page_rows`, P212):
 * `page` (the page's `product` rows, found by `pageRows` on `product` alone)
 * joined with the models and views of those rows only, each read by one index scan over the page's distinct ids
 * (P208), and each row's JSON text in the API's shape (`ProductRow`: `presentProductRow`'s keys in its order),
 * written by PostgreSQL byte for byte as `JSON.stringify` of the presented row (P201). Every table is read on the
 * client's keys.
 */
function presentedPage(clientId: number, pageRows: Expression<unknown>, direction: 'asc' | 'desc') {
  return sql<ProductPageRow>`with page as materialized (${pageRows}),
  page_model as materialized (select id, article, brand_id, category_id from product_model
    where client_id = ${clientId} and id = any(array(select distinct model_id from page))),
  page_view as materialized (select id, color from product_view
    where client_id = ${clientId} and id = any(array(select distinct view_id from page)))
  select r.id, row_to_json(r)::text as json from (select page.id, page.model_id as "modelId",
    page.view_id as "viewId", model.article, page.barcode, page.name, page.size, "view".color,
    model.brand_id as "brandId", model.category_id as "categoryId",
    ${isoText(sql`page.modified_date`)} as "modifiedDate"
    from page join page_model as model on model.id = page.model_id
      join page_view as "view" on "view".id = page.view_id) as r
  order by r.id ${sql.raw(direction)}`;
}

/** A row of a product page: its id (for the cursor) and its JSON text in the API's shape. */
export interface ProductPageRow {
  id: number;
  json: string;
}

/**
 * The `product` rows of a page without `query`: a first or cursor page cuts its rows in one scan; a page after an
 * `offset` finds its ids first and reads the columns of those only (a deferred join: deep pages skip the reads of
 * every row skipped). Without any filter the row count is a literal and a first page has no `offset`, so every
 * call sends one named statement (P202); with one, every call is planned for its values.
 */
function filteredPageRows(db: Kysely<DB>, criteria: ProductCriteria, page: PageCut) {
  const { direction, limit, offset } = page;
  const matching = matchingProducts(db, criteria, page).orderBy('id', direction);
  if (offset === 0)
    return matching.select(PAGE_COLUMNS).$call((qb) => pageBounds(qb, limit + 1, 0, isFiltered(criteria)));
  return db
    .selectFrom('product')
    .select(PAGE_COLUMNS)
    .where('client_id', '=', criteria.clientId)
    .where(
      'id',
      'in',
      matching.select('id').$call((qb) => pageBounds(qb, limit + 1, offset, isFiltered(criteria))),
    );
}

/** The cursor of a first page in `direction`: below every product id ascending, above every one descending. */
const FIRST_PAGE_AFTER_ID = { asc: '0', desc: '9223372036854775807' } as const;

/**
 * The statement of a page whose only filter is `query`, on plain PostgreSQL: `product_search_page` (migration 0029,
 * P214), whose statements have one plan each whatever the text; the form of each way of matching (the trigram
 * index looked up by a word, or the client's products walked in the page's order) is chosen here from the columns'
 * statistics samples (`trigramLookup`). The statement calling it matches no pattern, so the connection prepares it
 * (P149) and PostgreSQL parses and plans none of the search on a call.
 */
async function textSearchPage(db: Kysely<DB>, clientId: number, text: string, page: PageCut) {
  const { direction, limit, offset } = page;
  const reach = offset + limit + 1;
  const [nameLookup, articleLookup] = await Promise.all([
    trigramLookup(db, 'product.name', text, reach),
    trigramLookup(db, 'product_model.article', text, reach),
  ]);
  return sql<ProductPageRow>`select id, "json" from product_search_page(${clientId}, ${text}, ${likeContains(text)},
    ${nameLookup ?? null}, ${articleLookup ?? null}, ${direction === 'asc'},
    ${page.afterId ?? FIRST_PAGE_AFTER_ID[direction]}, ${offset}, ${limit + 1})
    order by id ${sql.raw(direction)}`;
}

/**
 * The statement of a page with `query` and other filters, or on Citus: its ids cut from the union of the search's
 * statements, each read no further than the page's end (`searchedIds`, P209), planned for its values on every call
 * (P202). On plain PostgreSQL its rows are written by `product_page_rows` (migration 0028, P212), whose statement
 * each session parses once and keeps one generic plan of; on Citus (`distributed`) by `presentedPage` in the
 * statement itself, which is routed whole to the client's worker, where a function reading tables would nest a
 * distributed query in a shard's query.
 */
async function searchedPage(db: Kysely<DB>, criteria: ProductCriteria, page: PageCut, distributed: boolean) {
  const { direction, limit, offset } = page;
  const drivers = await productTextDrivers(db, criteria.query as string);
  const pageIds = db
    .selectFrom(searchedIds(db, criteria, drivers, page))
    .select('matched.id')
    .orderBy('matched.id', direction)
    .$call((qb) => pageBounds(qb, limit + 1, offset, true));
  if (!distributed)
    return sql<ProductPageRow>`select id, "json" from product_page_rows(${criteria.clientId}, array(${pageIds}))
    order by id ${sql.raw(direction)}`;
  // An array of the page's ids, so its rows are read by their keys whatever the planner guesses of their number.
  const pageRows = db
    .selectFrom('product')
    .select(PAGE_COLUMNS)
    .where('client_id', '=', criteria.clientId)
    .where(sql<SqlBool>`id = any(array(${pageIds}))`);
  return presentedPage(criteria.clientId, pageRows, direction);
}

/** Which rows of a search a page holds: `limit` (+ 1 to tell a next page) after `offset` rows or `afterId`. */
interface PageCut {
  direction: 'asc' | 'desc';
  limit: number;
  offset: number;
  afterId?: number;
}

/**
 * Product search (stable: ordered by id, ties impossible), over `product` alone (P205): `filteredPageRows`
 * presented by `presentedPage` without `query`, `searchedPage` with it. The model and view of the page's rows are
 * read once per distinct id, after the page is cut (P208). A page has `limit + 1` rows when there is a next one; each
 * row comes as JSON text (P201). `page`'s `distributed` says whether the database is a Citus coordinator
 * (`Database.distributed`): a search's rows are written differently there (`searchedPage`).
 */
export const productFindRepository = {
  page: async (
    db: Kysely<DB>,
    criteria: ProductCriteria,
    ascending: boolean,
    limit: number,
    from: ProductPageStart,
    distributed: boolean,
  ): Promise<ProductPageRow[]> => {
    const direction = ascending ? 'asc' : 'desc';
    const page: PageCut =
      'offset' in from
        ? { direction, limit, offset: from.offset }
        : { direction, limit, offset: 0, afterId: from.afterId };
    const statement =
      criteria.query === undefined
        ? presentedPage(criteria.clientId, filteredPageRows(db, criteria, page), direction)
        : !distributed && !filtersBesidesQuery(criteria)
          ? await textSearchPage(db, criteria.clientId, criteria.query, page)
          : await searchedPage(db, criteria, page, distributed);
    return (await statement.execute(db)).rows;
  },
  count: async (db: Kysely<DB>, criteria: ProductCriteria) => {
    const total =
      criteria.query === undefined
        ? matchingProducts(db, criteria).select((eb) => eb.fn.countAll<string>().as('total'))
        : db
            .selectFrom(searchedIds(db, criteria, await productTextDrivers(db, criteria.query)))
            .select((eb) => eb.fn.countAll<string>().as('total'));
    return Number((await total.executeTakeFirstOrThrow()).total);
  },
  /** Rows of the given products of `clientId` (event bodies of the caller's own change). */
  byIds: (db: Kysely<DB>, clientId: number, ids: readonly number[]) =>
    ids.length === 0
      ? Promise.resolve([])
      : productRows(db, clientId)
          .select(ROW_COLUMNS)
          .where('product.id', 'in', [...ids])
          .execute(),
};

/** One row of `productFindRepository.byIds`. */
export type ProductFindRecord = Awaited<ReturnType<typeof productFindRepository.byIds>>[number];

/** Catalog entities other groups attach things to (keywords D6.2, tags D7). */
export type CatalogEntityTable = 'product' | 'product_view' | 'product_model';

/** Whether `id` is a live catalog entity of `clientId` (another client's id is simply absent, D2.5). */
export async function catalogEntityExists(
  db: Kysely<DB>,
  table: CatalogEntityTable,
  clientId: number,
  id: number,
): Promise<boolean> {
  const query = db.selectFrom(table).select('id').where('client_id', '=', clientId).where('id', '=', id);
  const scoped = table === 'product_view' ? query : query.where((eb) => eb.not(eb.ref('deleted')));
  return (await scoped.executeTakeFirst()) !== undefined;
}
