/**
 * The catalog workflow (spec §4.7, decision D11): brands and categories (names unique per client,
 * case-insensitive), model cards with their colour variants and final products, replacement of a card with
 * optimistic locking, merge patches of one product, and the product search.
 *
 * Every mutation is one change (`ChangeRunner.run`); creating final products raises one `CREATE_PRODUCT` event
 * each (spec §6). A model's `versionId` grows by one with every change of the card, its products included.
 */
import { cutPage, resolvePaging, type CursorCodec, type KeysetPageOf } from '../../http/cursor.ts';
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/schema.ts';
import type { SearchTurns } from '../../db/search-turns.ts';
import type { ChangeRunner, ChangeSet } from '../../changes/change-runner.ts';
import type { Principal } from '../../http/auth.ts';
import { AppError, notFound, validationError } from '../../http/errors.ts';
import { pageText } from '../../http/schemas.ts';
import { organizationRepository } from '../accounts/repository.ts';
import { checkValues, overlay, replaceValues, storedValues } from './parameters.ts';
import {
  presentBrand,
  presentCategory,
  presentModel,
  presentProduct,
  presentProductRow,
  serializeModel,
} from './presenter.ts';
import {
  dictionaryRepository,
  modelRepository,
  productFindRepository,
  productRepository,
  type ModelRow,
  type ProductRecord,
} from './repository.ts';
import type {
  Brand,
  BrandCreateBody,
  Category,
  CategoryCreateBody,
  ModelCreateBody,
  ModelReplaceBody,
  NameFindQuery,
  Product,
  ProductFindQuery,
  ProductModel,
  ProductPatchBody,
  ProductRow,
} from './schemas.ts';
import { trimText, visibleText } from '../../domain/text.ts';

/** PostgreSQL's unique_violation: a concurrent insert of the same name or article won. */
const isUniqueViolation = (error: unknown) => (error as { code?: string }).code === '23505';

/** Operations of the catalog group. */
export class CatalogService {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly changes: ChangeRunner,
    private readonly cursors: CursorCodec,
    private readonly searches: SearchTurns,
    /** Whether the database is a Citus coordinator (`Database.distributed`). */
    private readonly distributed: () => Promise<boolean>,
  ) {}

  /**
   * Creates a brand.
   * @throws 400 `error_duplicate_name` `{entity: 'brand', name, id}` with the existing brand's id
   */
  createBrand(principal: Principal, body: BrandCreateBody): Promise<Brand> {
    return this.createNamed(principal, 'brand', body.name, async (trx) =>
      presentBrand(
        await dictionaryRepository.insertBrand(trx, {
          client_id: principal.clientId,
          name: trimText(body.name),
        }),
      ),
    );
  }

  /**
   * Creates a category, optionally under a parent category of the same client, with category-level parameter
   * values (D11.2) checked against its marketplace category.
   * @throws 400 `error_duplicate_name` `{entity: 'category', name, id}`; 404 `error_not_found` for the parent;
   *   400 `error_validation` for a parameter value (see `checkValues`)
   */
  createCategory(principal: Principal, body: CategoryCreateBody): Promise<Category> {
    return this.createNamed(principal, 'category', body.name, async (trx) => {
      if (
        body.parentId != null &&
        !(await dictionaryRepository.exists(trx, 'category', principal.clientId, body.parentId))
      )
        throw notFound('category', body.parentId);
      await checkValues(trx, body.market1CategoryId ?? null, body.params ?? [], 'params');
      const category = await dictionaryRepository.insertCategory(trx, {
        client_id: principal.clientId,
        name: trimText(body.name),
        parent_id: body.parentId ?? null,
        market1_category_id: body.market1CategoryId ?? null,
      });
      await replaceValues(trx, principal.clientId, 'CATEGORY', category.id, body.params ?? []);
      return presentCategory(category);
    });
  }

  private async createNamed<T>(
    principal: Principal,
    table: 'brand' | 'category',
    name: string,
    insert: (trx: Transaction<DB>) => Promise<T>,
  ): Promise<T> {
    const stored = trimText(name);
    const duplicate = async () => {
      const existing = await dictionaryRepository.findByName(this.db, table, principal.clientId, stored);
      return (
        existing && new AppError('error_duplicate_name', { entity: table, name: stored, id: existing.id })
      );
    };
    const known = await duplicate();
    if (known) throw known;
    try {
      return await this.changes.run((trx) => insert(trx));
    } catch (error) {
      if (isUniqueViolation(error)) throw (await duplicate()) ?? error;
      throw error;
    }
  }

  /**
   * A page of the client's brands or categories by id, newest first unless `ascending` (D4.4), by `page` or after
   * a `cursor` (P172); `query` is a case-insensitive name substring (D4), a search that takes its turn (P211);
   * `modifiedDate` a lower bound (D4.5).
   * @throws AppError `error_validation` for a cursor that is not this list's or is sent with `page`
   */
  async findNamed<T>(
    principal: Principal,
    table: 'brand' | 'category',
    query: NameFindQuery,
  ): Promise<KeysetPageOf<T>> {
    const limit = query.limit ?? 100;
    const ascending = query.ascending === true;
    const scope = { list: `${table}.find`, clientId: principal.clientId, sortBy: 'ID', ascending };
    const { page, after } = resolvePaging(this.cursors, query, scope);
    const criteria = {
      clientId: principal.clientId,
      query: visibleText(query.query),
      modifiedSince: query.modifiedDate === undefined ? undefined : new Date(query.modifiedDate),
    };
    const { rows, total } = await this.searches.run(criteria.query !== undefined, async () => ({
      rows: await dictionaryRepository.page(this.db, table, criteria, {
        ascending,
        limit: limit + 1,
        ...(after === undefined ? { offset: (page - 1) * limit } : { afterId: after.id }),
      }),
      total: query.count ? await dictionaryRepository.count(this.db, table, criteria) : undefined,
    }));
    const present = (table === 'brand' ? presentBrand : presentCategory) as (row: (typeof rows)[number]) => T;
    const cut = cutPage(this.cursors, scope, rows, limit, page, (row) => ({ value: null, id: row.id }));
    return {
      rows: cut.rows.map(present),
      page,
      ...(total !== undefined && { total }),
      ...(cut.nextCursor !== undefined && { nextCursor: cut.nextCursor }),
    };
  }

  /**
   * Creates a model card with its views and final products (spec §2 minimal card); raises `CREATE_PRODUCT` for
   * every product.
   * @throws 400 `error_organization_not_found`; 404 `error_not_found` for the brand or category;
   *   400 `error_duplicate_article` `{article, id}` when the client has a model with this article (D11.2)
   */
  async createModel(principal: Principal, body: ModelCreateBody): Promise<ProductModel> {
    try {
      return await this.changes.run(async (trx, change) => {
        if (!(await organizationRepository.findOfClient(trx, principal.clientId, body.organizationId)))
          throw new AppError('error_organization_not_found', { organizationId: body.organizationId });
        const marketCategoryId = await this.checkCard(trx, principal, body, undefined);
        await this.checkParams(trx, marketCategoryId, body);
        const model = await modelRepository.insertModel(trx, {
          client_id: principal.clientId,
          organization_id: body.organizationId,
          article: trimText(body.article),
          title: body.title,
          name: body.name ?? null,
          description: body.description ?? null,
          brand_id: body.brandId,
          category_id: body.categoryId,
          created_user: principal.userName,
        });
        await replaceValues(trx, principal.clientId, 'MODEL', model.id, body.params ?? []);
        for (const [position, view] of body.views.entries())
          await this.insertView(trx, change, model, view, position);
        return this.load(trx, model);
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw await this.duplicateArticle(principal, body.article);
      throw error;
    }
  }

  /**
   * The serialized whole card of a model of the caller's client (the answer of `GET /api/model/{modelId}` without
   * parameters; one statement, its views rendered by PostgreSQL, P201) and the `versionId` it shows.
   * @throws 404 `error_not_found` `{entity: 'model', id}`
   */
  async getModelBody(principal: Principal, id: number): Promise<{ body: string; versionId: number }> {
    const found = await modelRepository.findCard(this.db, principal.clientId, id);
    if (!found) throw notFound('model', id);
    return { body: serializeModel(found.model, found.viewsJson), versionId: found.model.version_id };
  }

  /**
   * The whole card of a model of the caller's client with each level's effective parameter values
   * (`GET /api/model/{modelId}?withParams=true`, D11.2).
   * @throws 404 `error_not_found` `{entity: 'model', id}`
   */
  async getModelWithParams(principal: Principal, id: number): Promise<ProductModel> {
    const model = await modelRepository.find(this.db, principal.clientId, id);
    if (!model) throw notFound('model', id);
    return this.withEffectiveParams(model, await this.load(this.db, model));
  }

  /** Adds each level's effective parameter values: product > view > model > category (D11.2). */
  private async withEffectiveParams(model: ModelRow, card: ProductModel): Promise<ProductModel> {
    const views = card.views.map((view) => view.id);
    const products = card.views.flatMap((view) => view.sizes.map((size) => size.id));
    const stored = await storedValues(this.db, model.client_id, [
      { level: 'CATEGORY', ids: [model.category_id] },
      { level: 'MODEL', ids: [model.id] },
      { level: 'VIEW', ids: views },
      { level: 'PRODUCT', ids: products },
    ]);
    const of = (level: string, id: number) => stored.get(`${level}:${id}`) ?? [];
    const modelParams = overlay(of('CATEGORY', model.category_id), of('MODEL', model.id));
    return {
      ...card,
      params: modelParams,
      views: card.views.map((view) => {
        const viewParams = overlay(modelParams, of('VIEW', view.id));
        return {
          ...view,
          params: viewParams,
          sizes: view.sizes.map((size) => ({ ...size, params: overlay(viewParams, of('PRODUCT', size.id)) })),
        };
      }),
    };
  }

  /**
   * Replaces the editable structure of a card (D11.1): fields, views and sizes; views and sizes with an `id` of
   * this model are updated, without one created (raising `CREATE_PRODUCT`), the others removed.
   * @throws 404 `error_not_found` (model, brand, category); 409 `error_version_conflict` for a stale `versionId`;
   *   400 `error_validation` for an id of a view or size that is not this model's, a changed organizationId, or
   *   a read-only id of the body (`id`, `clientId`, `productModelId`, `productViewId`) that contradicts the model
   *   (P169); 400 `error_duplicate_article`
   */
  async replaceModel(principal: Principal, id: number, body: ModelReplaceBody): Promise<ProductModel> {
    checkReadOnlyIds(principal, id, body);
    try {
      return await this.changes.run(async (trx, change) => {
        const model = await modelRepository.lock(trx, principal.clientId, id);
        if (!model) throw notFound('model', id);
        if (body.versionId !== model.version_id)
          throw new AppError('error_version_conflict', {
            entity: 'model',
            id: String(id),
            currentVersionId: model.version_id,
          });
        if (body.organizationId !== undefined && body.organizationId !== model.organization_id)
          throw validationError('organizationId', 'the organization of a model cannot change');
        const marketCategoryId = await this.checkCard(trx, principal, body, model.id);
        await this.checkParams(trx, marketCategoryId, body);
        const views = await modelRepository.views(trx, model.client_id, model.id);
        const products = await modelRepository.products(trx, model.client_id, model.id);
        const viewIds = new Set(views.map((view) => view.id));
        const productIds = new Set(products.map((product) => product.id));
        const keptViews = new Set<number>();
        const keptProducts = new Set<number>();
        for (const [index, view] of body.views.entries()) {
          if (view.id !== undefined && (!viewIds.has(view.id) || keptViews.has(view.id)))
            throw validationError(`views.${index}.id`, 'not a view of this model (or repeated)');
          if (view.id !== undefined) keptViews.add(view.id);
          for (const [sizeIndex, size] of view.sizes.entries()) {
            if (size.id === undefined) continue;
            const field = `views.${index}.sizes.${sizeIndex}.id`;
            if (view.id === undefined)
              throw validationError(field, 'a new view takes new sizes only (no id)');
            if (!productIds.has(size.id) || keptProducts.has(size.id))
              throw validationError(field, 'not a product of this model (or repeated)');
            keptProducts.add(size.id);
          }
        }
        const updated = await modelRepository.update(trx, model.client_id, model.id, {
          article: trimText(body.article),
          title: body.title,
          name: body.name ?? null,
          description: body.description ?? null,
          brand_id: body.brandId,
          category_id: body.categoryId,
        });
        // Kept views and products first (a product may move between kept views), then new ones, then removals.
        for (const [position, view] of body.views.entries()) {
          if (view.id === undefined) {
            await this.insertView(trx, change, updated, view, position);
            continue;
          }
          await modelRepository.updateView(trx, model.client_id, view.id, {
            color: view.color ?? null,
            position,
          });
          await replaceValues(trx, principal.clientId, 'VIEW', view.id, view.params ?? []);
          const created: Array<Parameters<typeof modelRepository.insertProducts>[1][number]> = [];
          for (const [sizePosition, size] of view.sizes.entries()) {
            const values = {
              view_id: view.id,
              name: size.name,
              size: size.size,
              barcode: size.barcode ?? null,
              position: sizePosition,
            };
            if (size.id === undefined) {
              created.push({ ...values, client_id: principal.clientId, model_id: updated.id });
              continue;
            }
            await modelRepository.updateProduct(trx, model.client_id, size.id, values);
            await replaceValues(trx, principal.clientId, 'PRODUCT', size.id, size.params ?? []);
          }
          const inserted = await modelRepository.insertProducts(trx, created);
          const newSizes = view.sizes.filter((size) => size.id === undefined);
          for (const [index, product] of inserted.entries())
            await replaceValues(
              trx,
              principal.clientId,
              'PRODUCT',
              product.id,
              newSizes[index]?.params ?? [],
            );
          this.raiseCreated(change, updated, inserted);
        }
        await replaceValues(trx, principal.clientId, 'MODEL', updated.id, body.params ?? []);
        await modelRepository.deleteProducts(
          trx,
          principal.clientId,
          products.filter((product) => !keptProducts.has(product.id)).map((product) => product.id),
        );
        await modelRepository.deleteViews(
          trx,
          principal.clientId,
          views.filter((view) => !keptViews.has(view.id)).map((view) => view.id),
        );
        return this.load(trx, updated);
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw await this.duplicateArticle(principal, body.article);
      throw error;
    }
  }

  /**
   * Applies a JSON merge patch (RFC 7396) to one final product: present fields are set, `null` clears `barcode`,
   * absent fields are kept. A patch that changes nothing is a no-op; otherwise the model's version grows.
   * @param modelId the model an `If-Match` tag named (P134): another model than the product's is a conflict
   * @throws 404 `error_not_found` `{entity: 'product'}`; 409 `error_version_conflict` for a stale model `versionId`
   */
  async patchProduct(
    principal: Principal,
    id: number,
    patch: ProductPatchBody,
    modelId?: number,
  ): Promise<Product> {
    return this.changes.run(async (trx) => {
      const product = await productRepository.lockWithModel(trx, principal.clientId, id);
      if (!product) throw notFound('product', id);
      if (
        (patch.versionId !== undefined && patch.versionId !== product.model_version_id) ||
        (modelId !== undefined && modelId !== product.model_id)
      )
        throw new AppError('error_version_conflict', {
          entity: 'model',
          id: String(product.model_id),
          currentVersionId: product.model_version_id,
        });
      const values: Partial<Pick<ProductRecord, 'name' | 'size' | 'barcode'>> = {};
      if (patch.name !== undefined && patch.name !== product.name) values.name = patch.name;
      if (patch.size !== undefined && patch.size !== product.size) values.size = patch.size;
      if (patch.barcode !== undefined && patch.barcode !== product.barcode) values.barcode = patch.barcode;
      if (Object.keys(values).length === 0) return presentProduct(product);
      const updated = await modelRepository.updateProduct(trx, principal.clientId, id, values);
      await modelRepository.update(trx, principal.clientId, product.model_id, {});
      return presentProduct(updated);
    });
  }

  /**
   * A page of product rows (stable id order; `count` only when asked, D4), by `page` or after a `cursor` (P172);
   * with `query`, a search that takes its turn (P211).
   * @returns the page (`ProductPage`) as JSON text, its rows written by PostgreSQL (P201)
   * @throws AppError `error_validation` for a cursor that is not this list's or is sent with `page`
   */
  async findProducts(principal: Principal, query: ProductFindQuery): Promise<string> {
    const limit = query.limit ?? 100;
    const ascending = query.ascending ?? false;
    const scope = { list: 'product.find', clientId: principal.clientId, sortBy: 'ID', ascending };
    const { page, after } = resolvePaging(this.cursors, query, scope);
    const criteria = {
      clientId: principal.clientId,
      query: visibleText(query.query),
      modelId: query.modelId,
      article: query.article,
      barcode: query.barcode,
      brandId: query.brandId,
      categoryId: query.categoryId,
      ids: query.ids,
      modifiedSince: query.modifiedDate === undefined ? undefined : new Date(query.modifiedDate),
    };
    const { read, total } = await this.searches.run(criteria.query !== undefined, async () => ({
      read: await productFindRepository.page(
        this.db,
        criteria,
        ascending,
        limit,
        after === undefined ? { offset: (page - 1) * limit } : { afterId: after.id },
        await this.distributed(),
      ),
      total: query.count ? await productFindRepository.count(this.db, criteria) : undefined,
    }));
    const { rows, nextCursor } = cutPage(this.cursors, scope, read, limit, page, (row) => ({
      value: null,
      id: row.id,
    }));
    return pageText(`[${rows.map((row) => row.json).join(',')}]`, page, total, nextCursor);
  }

  /** Product rows by id, for `CREATE_PRODUCT` event bodies (D9.2). */
  async renderProducts(db: Kysely<DB>, clientId: number, ids: number[]): Promise<Map<number, ProductRow>> {
    return new Map(
      (await productFindRepository.byIds(db, clientId, ids)).map((row) => [row.id, presentProductRow(row)]),
    );
  }

  private async checkCard(
    trx: Transaction<DB>,
    principal: Principal,
    body: { article: string; brandId: number; categoryId: number },
    modelId: number | undefined,
  ): Promise<number | null> {
    if (!(await dictionaryRepository.exists(trx, 'brand', principal.clientId, body.brandId)))
      throw notFound('brand', body.brandId);
    const category = await dictionaryRepository.findCategory(trx, principal.clientId, body.categoryId);
    if (!category) throw notFound('category', body.categoryId);
    const same = await modelRepository.findByArticle(trx, principal.clientId, trimText(body.article));
    if (same && same.id !== modelId)
      throw new AppError('error_duplicate_article', { article: trimText(body.article), id: same.id });
    return category.market1_category_id;
  }

  /** Checks the parameter values of every level of a card body against the category's parameters. */
  private async checkParams(
    trx: Transaction<DB>,
    marketCategoryId: number | null,
    body: Pick<ModelCreateBody, 'params' | 'views'>,
  ): Promise<void> {
    await checkValues(trx, marketCategoryId, body.params ?? [], 'params');
    for (const [index, view] of body.views.entries()) {
      await checkValues(trx, marketCategoryId, view.params ?? [], `views.${index}.params`);
      for (const [sizeIndex, size] of view.sizes.entries())
        await checkValues(
          trx,
          marketCategoryId,
          size.params ?? [],
          `views.${index}.sizes.${sizeIndex}.params`,
        );
    }
  }

  private async duplicateArticle(principal: Principal, article: string): Promise<AppError> {
    const same = await modelRepository.findByArticle(this.db, principal.clientId, trimText(article));
    return new AppError('error_duplicate_article', { article: trimText(article), id: same?.id ?? null });
  }

  private async insertView(
    trx: Transaction<DB>,
    change: ChangeSet,
    model: ModelRow,
    view: ModelCreateBody['views'][number],
    position: number,
  ): Promise<void> {
    const row = await modelRepository.insertView(trx, {
      client_id: model.client_id,
      model_id: model.id,
      color: view.color ?? null,
      position,
    });
    await replaceValues(trx, model.client_id, 'VIEW', row.id, view.params ?? []);
    const products = await modelRepository.insertProducts(
      trx,
      view.sizes.map((size, sizePosition) => ({
        client_id: model.client_id,
        model_id: model.id,
        view_id: row.id,
        name: size.name,
        size: size.size,
        barcode: size.barcode ?? null,
        position: sizePosition,
      })),
    );
    for (const [index, product] of products.entries())
      await replaceValues(trx, model.client_id, 'PRODUCT', product.id, view.sizes[index]?.params ?? []);
    this.raiseCreated(change, model, products);
  }

  private raiseCreated(change: ChangeSet, model: ModelRow, products: ProductRecord[]): void {
    for (const product of products)
      change.event('CREATE_PRODUCT', {
        id: product.id,
        clientId: model.client_id,
        organizationId: model.organization_id,
      });
  }

  private async load(db: Kysely<DB>, model: ModelRow): Promise<ProductModel> {
    const [views, products] = await Promise.all([
      modelRepository.views(db, model.client_id, model.id),
      modelRepository.products(db, model.client_id, model.id),
    ]);
    return presentModel(model, views, products);
  }
}

/**
 * The read-only ids of a model read with GET and sent back with `PUT` (P169): ignored when they match the model
 * of the path, the token's client and the view each size sits in.
 * @throws 400 `error_validation` naming the first field that contradicts
 */
function checkReadOnlyIds(principal: Principal, id: number, body: ModelReplaceBody): void {
  if (body.id !== undefined && body.id !== id)
    throw validationError('id', `is not the model of the path (${id})`);
  if (body.clientId !== undefined && body.clientId !== principal.clientId)
    throw validationError('clientId', "is not the token's client");
  const notThisModel = 'is not the model of the path';
  for (const [index, view] of body.views.entries()) {
    if (view.productModelId !== undefined && view.productModelId !== id)
      throw validationError(`views.${index}.productModelId`, notThisModel);
    for (const [sizeIndex, size] of view.sizes.entries()) {
      const field = `views.${index}.sizes.${sizeIndex}`;
      if (size.productModelId !== undefined && size.productModelId !== id)
        throw validationError(`${field}.productModelId`, notThisModel);
      if (size.productViewId !== undefined && size.productViewId !== view.id)
        throw validationError(`${field}.productViewId`, 'is not the id of the view it is sent in');
    }
  }
}
