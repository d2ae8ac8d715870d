/**
 * Product tags (spec §4.5, decision D7): create, rename, delete and list tags (names unique per client,
 * case-insensitive), bind them to products and models, and find them. When each of the spec's tag error codes
 * answers is decided in docs/decisions.md (P60–P63).
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import type { SearchTurns } from '../../db/search-turns.ts';
import type { ChangeRunner } from '../../changes/change-runner.ts';
import type { Principal } from '../../http/auth.ts';
import { AppError, notFound, validationError } from '../../http/errors.ts';
import { catalogEntityExists } from '../catalog/repository.ts';
import { tagRepository } from './repository.ts';
import type {
  FindResponseProductTag,
  FindResponseProductTagInfo,
  ProductTag,
  TagFindQuery,
} from './schemas.ts';
import { visibleText } from '../../domain/text.ts';
import { cutPage, resolvePaging, type CursorCodec } from '../../http/cursor.ts';

const isUniqueViolation = (error: unknown) => (error as { code?: string }).code === '23505';

const present = (row: { id: number; name: string; client_id: number }): ProductTag => ({
  id: row.id,
  name: row.name,
  clientId: row.client_id,
});

/** Operations of the tag group. */
export class TagService {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly changes: ChangeRunner,
    private readonly searches: SearchTurns,
    private readonly cursors: CursorCodec,
  ) {}

  /**
   * Creates a tag.
   * @throws 400 `error_tag_name_required` (missing or blank name), `error_duplicate_tag_name` `{0: name}` (P60)
   */
  async create(principal: Principal, rawName: string | null | undefined): Promise<ProductTag> {
    const name = visibleText(rawName);
    if (name === undefined) throw new AppError('error_tag_name_required');
    try {
      return await this.changes.run(async (trx) => {
        if (await tagRepository.findByName(trx, principal.clientId, name))
          throw new AppError('error_duplicate_tag_name', { 0: name });
        return present(await tagRepository.insert(trx, principal.clientId, name));
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw new AppError('error_duplicate_tag_name', { 0: name });
      throw error;
    }
  }

  /**
   * Renames a tag (both forms of D7.1).
   * @throws 400 `error_tag_id_required` (no id), `error_tag_id_and_name_required` (no name),
   *   `error_tag_update_failed` `{0: id}` (the name belongs to another tag of the client); 404 for an unknown id (P61)
   */
  async rename(
    principal: Principal,
    id: number | null | undefined,
    rawName: string | null | undefined,
  ): Promise<ProductTag> {
    if (id === undefined || id === null) throw new AppError('error_tag_id_required');
    const name = visibleText(rawName);
    if (name === undefined) throw new AppError('error_tag_id_and_name_required');
    try {
      return await this.changes.run(async (trx) => {
        const same = await tagRepository.findByName(trx, principal.clientId, name);
        if (same && same.id !== id) throw new AppError('error_tag_update_failed', { 0: id });
        const row = await tagRepository.rename(trx, principal.clientId, id, name);
        if (!row) throw notFound('tag', id);
        return present(row);
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw new AppError('error_tag_update_failed', { 0: id });
      throw error;
    }
  }

  /** Deletes a tag with its bindings; the tag as it was (D7.1). @throws 404 `error_not_found` `{entity: 'tag'}` */
  async delete(principal: Principal, id: number): Promise<ProductTag> {
    return this.changes.run(async (trx) => {
      const row = await tagRepository.delete(trx, principal.clientId, id);
      if (!row) throw notFound('tag', id);
      return present(row);
    });
  }

  /**
   * A page of tags (D4), by `page` or after a `cursor` (P172): `query` name substring (a search that takes its
   * turn, P211), `productId` tags bound to it or to its model; `sortBy` ID or NAME (ignoring case), newest first
   * unless `ascending` (D4.4).
   * @throws AppError `error_validation` for a cursor that is not this list's or is sent with `page`
   */
  async find(principal: Principal, query: TagFindQuery): Promise<FindResponseProductTag> {
    const limit = query.limit ?? 100;
    const sortBy = query.sortBy ?? 'ID';
    const ascending = query.ascending ?? false;
    const scope = { list: 'tag.find', clientId: principal.clientId, sortBy, ascending };
    const { page, after } = resolvePaging(this.cursors, query, scope);
    const criteria = {
      clientId: principal.clientId,
      query: visibleText(query.query),
      productId: query.productId,
    };
    const { rows, total } = await this.searches.run(criteria.query !== undefined, async () => ({
      rows: await tagRepository.page(
        this.db,
        criteria,
        sortBy,
        ascending,
        limit + 1,
        after === undefined ? { offset: (page - 1) * limit } : { after },
      ),
      total: query.count ? await tagRepository.count(this.db, criteria) : undefined,
    }));
    const cut = cutPage(this.cursors, scope, rows, limit, page, (row) => ({
      value: row.keyset_value,
      id: row.id,
    }));
    return {
      rows: cut.rows.map(present),
      page,
      ...(total !== undefined && { total }),
      ...(cut.nextCursor !== undefined && { nextCursor: cut.nextCursor }),
    };
  }

  /**
   * The products of a model with their tags (their own and the model's, D7.2).
   * @throws 404 `error_not_found` `{entity: 'model'}`
   */
  async ofModel(principal: Principal, modelId: number): Promise<FindResponseProductTagInfo> {
    if (!(await catalogEntityExists(this.db, 'product_model', principal.clientId, modelId)))
      throw notFound('model', modelId);
    const rows = (await tagRepository.tagsOfModelProducts(this.db, principal.clientId, modelId)).rows;
    const byProduct = new Map<number, ProductTag[]>();
    for (const row of rows) {
      const tags = byProduct.get(row.product_id) ?? [];
      if (row.id !== null && row.name !== null && row.client_id !== null)
        tags.push(present({ id: row.id, name: row.name, client_id: row.client_id }));
      byProduct.set(row.product_id, tags);
    }
    return { rows: [...byProduct].map(([productId, productTags]) => ({ productId, productTags })) };
  }

  /**
   * Binds or unbinds a tag and a product or model (spec §4.5). Id 0 stands for "not given" (P62).
   * @throws 400 `error_tag_and_product_id_required` (bind to a product), `error_tag_and_model_id_required`
   *   (model operations and unbind from a product, as spec §7 lists), `error_duplicate_tag_association`
   *   (bind twice); 404 `error_not_found` for the tag, product or model
   */
  async binding(
    principal: Principal,
    action: 'bind' | 'unbind',
    target: 'product' | 'model',
    tagId: number,
    entityId: number,
  ): Promise<void> {
    if (tagId === 0 || entityId === 0)
      throw new AppError(
        target === 'product' && action === 'bind'
          ? 'error_tag_and_product_id_required'
          : 'error_tag_and_model_id_required',
      );
    await this.changes.run(async (trx) => {
      if (!(await tagRepository.find(trx, principal.clientId, tagId))) throw notFound('tag', tagId);
      const table = target === 'product' ? 'product' : 'product_model';
      if (!(await catalogEntityExists(trx, table, principal.clientId, entityId)))
        throw notFound(target, entityId);
      if (action === 'unbind') {
        await (target === 'product' ? tagRepository.unbindProduct : tagRepository.unbindModel)(
          trx,
          principal.clientId,
          tagId,
          entityId,
        );
        return;
      }
      const bound = await (target === 'product' ? tagRepository.bindProduct : tagRepository.bindModel)(
        trx,
        principal.clientId,
        tagId,
        entityId,
      );
      if (!bound) throw new AppError('error_duplicate_tag_association', { tagId, [`${target}Id`]: entityId });
    });
  }
}

/**
 * The read-only ids of a tag read with GET and sent back to a rename (P169): ignored when `id` is the tag of the
 * path (`pathId`; `PUT /api/tag` names the tag by its body's `id`) and `clientId` the token's client.
 * @throws 400 `error_validation` on `id` or `clientId`
 */
export function checkReadOnlyIds(
  principal: Principal,
  body: { id?: number | null; clientId?: number },
  pathId?: number,
): void {
  if (pathId !== undefined && body.id !== undefined && body.id !== pathId)
    throw validationError('id', `is not the tag of the path (${pathId})`);
  if (body.clientId !== undefined && body.clientId !== principal.clientId)
    throw validationError('clientId', "is not the token's client");
}
