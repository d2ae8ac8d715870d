/**
 * Keyword groups (spec §4.2, decision D6): groups of keyword strings, attached to products, colour variants
 * (views) and models. Every mutation is one transaction; ids of another client answer 404 like unknown ones.
 */
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/schema.ts';
import type { SearchTurns } from '../../db/search-turns.ts';
import type { ChangeRunner } from '../../changes/change-runner.ts';
import type { Principal } from '../../http/auth.ts';
import { AppError, notFound, validationError } from '../../http/errors.ts';
import { catalogEntityExists, type CatalogEntityTable } from '../catalog/repository.ts';
import { keywordRepository } from './repository.ts';
import type {
  AttachQuery,
  Keyword,
  KeywordAndGroup,
  KeywordGroup,
  KeywordGroupUpdateBody,
} from './schemas.ts';
import type { KeywordEntityType } from './tables.ts';
import { trimText, visibleText } from '../../domain/text.ts';

/** Trimmed, non-empty words without case-insensitive repeats, in order (D6.1). */
export function normalizeWords(words: readonly string[]): string[] {
  const seen = new Set<string>();
  const result: string[] = [];
  for (const word of words.map(trimText)) {
    if (word === '' || seen.has(word.toLowerCase())) continue;
    seen.add(word.toLowerCase());
    result.push(word);
  }
  return result;
}

/** The group name, trimmed. @throws 400 `error_empty_group_name` when blank */
function groupName(name: string): string {
  const trimmed = trimText(name);
  if (trimmed === '') throw new AppError('error_empty_group_name');
  return trimmed;
}

const ENTITY: Record<KeywordEntityType, { table: CatalogEntityTable; name: string }> = {
  PRODUCT: { table: 'product', name: 'product' },
  VIEW: { table: 'product_view', name: 'productView' },
  MODEL: { table: 'product_model', name: 'model' },
};

/** Operations of the keyword group. */
export class KeywordService {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly changes: ChangeRunner,
    private readonly searches: SearchTurns,
  ) {}

  /** Every group of the client with its keywords, by id. */
  async listGroups(principal: Principal): Promise<KeywordGroup[]> {
    return this.load(this.db, principal, await keywordRepository.groupIds(this.db, principal.clientId));
  }

  /**
   * Groups whose name or one of whose keywords contains `word`, case-insensitive (D6.4): a search that takes its
   * turn (P211); a blank `word` finds every group (P220).
   */
  async findGroups(principal: Principal, word: string): Promise<KeywordGroup[]> {
    const text = visibleText(word);
    const ids = await this.searches.run(text !== undefined, () =>
      keywordRepository.groupIds(this.db, principal.clientId, text),
    );
    return this.load(this.db, principal, ids);
  }

  /**
   * One group of the client.
   * @throws 404 `error_not_found` `{entity: 'keywordGroup', id}`
   */
  async getGroup(principal: Principal, id: number): Promise<KeywordGroup> {
    await this.requireGroups(this.db, principal, [id]);
    return (await this.load(this.db, principal, [id]))[0] as KeywordGroup;
  }

  /**
   * Creates a group named `name` with `words` (D6.1).
   * @throws 400 `error_empty_group_name` for a blank name
   */
  async createGroup(principal: Principal, name: string, words: string[]): Promise<KeywordGroup> {
    const trimmed = groupName(name);
    return this.changes.run(async (trx) => {
      const group = await keywordRepository.insertGroup(trx, principal.clientId, trimmed);
      await keywordRepository.addWords(trx, principal.clientId, group.id, normalizeWords(words));
      return (await this.load(trx, principal, [group.id]))[0] as KeywordGroup;
    });
  }

  /**
   * Renames a group when `newName` (or the body's `name`) is given and adds the words to it (D6.1). The body is
   * the words, or the group as GET returns it (P169): its `id` and each keyword's `id` must be this group's, a
   * keyword with an `id` keeps its name.
   * @throws 404 `error_not_found`; 400 `error_empty_group_name` for a blank name; 400 `error_validation` on
   *   `id`, `name` (differs from `newName`), `keywords.N.id` or `keywords.N.name`
   */
  async updateGroup(
    principal: Principal,
    id: number,
    newName: string | undefined,
    body: KeywordGroupUpdateBody,
  ): Promise<KeywordGroup> {
    const sent = Array.isArray(body) ? { keywords: body.map((name) => ({ name, id: undefined })) } : body;
    if ('id' in sent && sent.id !== undefined && sent.id !== id)
      throw validationError('id', `is not the group of the path (${id})`);
    if ('name' in sent && sent.name !== undefined && newName !== undefined && sent.name !== newName)
      throw validationError('name', 'differs from the newName query');
    const requested = newName ?? ('name' in sent ? sent.name : undefined);
    const name = requested === undefined ? undefined : groupName(requested);
    const keywords = sent.keywords ?? [];
    return this.changes.run(async (trx) => {
      await this.requireGroups(trx, principal, [id], true);
      if (keywords.some((keyword) => keyword.id !== undefined)) {
        const [current] = await this.load(trx, principal, [id]);
        const stored = new Map(current?.keywords.map((keyword) => [keyword.id, keyword.name]));
        for (const [index, keyword] of keywords.entries()) {
          if (keyword.id === undefined) continue;
          const storedName = stored.get(keyword.id);
          if (storedName === undefined)
            throw validationError(`keywords.${index}.id`, 'is not a keyword of this group');
          if (storedName.toLowerCase() !== trimText(keyword.name).toLowerCase())
            throw validationError(
              `keywords.${index}.name`,
              'a keyword is not renamed: send a new one without id',
            );
        }
      }
      if (name !== undefined) await keywordRepository.renameGroup(trx, principal.clientId, id, name);
      await keywordRepository.addWords(
        trx,
        principal.clientId,
        id,
        normalizeWords(keywords.map((keyword) => keyword.name)),
      );
      return (await this.load(trx, principal, [id]))[0] as KeywordGroup;
    });
  }

  /**
   * Deletes one group with its keywords and their attachments; returns it as it was.
   * @throws 404 `error_not_found`
   */
  async deleteGroup(principal: Principal, id: number): Promise<KeywordGroup> {
    return this.changes.run(async (trx) => {
      await this.requireGroups(trx, principal, [id], true);
      const [group] = await this.load(trx, principal, [id]);
      await keywordRepository.deleteGroups(trx, principal.clientId, [id]);
      return group as KeywordGroup;
    });
  }

  /**
   * Deletes several groups, all or nothing.
   * @throws 404 `error_not_found` `{entity: 'keywordGroup', id, ids}` listing every unknown or foreign id
   */
  async deleteGroups(principal: Principal, ids: number[]): Promise<string> {
    await this.changes.run(async (trx) => {
      await this.requireGroups(trx, principal, ids, true);
      await keywordRepository.deleteGroups(trx, principal.clientId, ids);
    });
    return 'OK';
  }

  /**
   * Deletes keywords of one group (with their attachments), all or nothing.
   * @throws 404 `error_not_found` for the group, or `{entity: 'keyword', id, ids}` for ids not in it
   */
  async deleteKeywords(principal: Principal, groupId: number, keywordIds: number[]): Promise<string> {
    const ids = [...new Set(keywordIds)];
    await this.changes.run(async (trx) => {
      await this.requireGroups(trx, principal, [groupId], true);
      const deleted = new Set(await keywordRepository.deleteKeywords(trx, principal.clientId, groupId, ids));
      const missing = ids.filter((id) => !deleted.has(id)).map(String);
      if (missing.length > 0)
        throw new AppError('error_not_found', { entity: 'keyword', id: missing[0], ids: missing });
    });
    return 'OK';
  }

  /**
   * Merges groups (D6.3): a new group `newGroupName` with the union of their words takes over their attachments;
   * the source groups are deleted.
   * @throws 400 `error_empty_group_name`, `error_need_at_least_two_groups` (fewer than two distinct ids),
   *   `error_empty_keywords_groups` (no word in any of them); 404 `error_not_found` for unknown or foreign ids
   */
  async merge(principal: Principal, newGroupName: string, groupIds: number[]): Promise<KeywordGroup> {
    const name = groupName(newGroupName);
    const ids = [...new Set(groupIds)];
    if (ids.length < 2) throw new AppError('error_need_at_least_two_groups');
    return this.changes.run(async (trx) => {
      await this.requireGroups(trx, principal, ids, true);
      const words = normalizeWords(
        (await keywordRepository.keywordsOf(trx, principal.clientId, ids)).map((keyword) => keyword.name),
      );
      if (words.length === 0) throw new AppError('error_empty_keywords_groups');
      const group = await keywordRepository.insertGroup(trx, principal.clientId, name);
      await keywordRepository.addWords(trx, principal.clientId, group.id, words);
      await keywordRepository.moveAttachments(trx, principal.clientId, ids, group.id);
      await keywordRepository.deleteGroups(trx, principal.clientId, ids);
      return (await this.load(trx, principal, [group.id]))[0] as KeywordGroup;
    });
  }

  /**
   * Attaches every keyword of `groupIds` to exactly one of a product, a view or a model (D6.2).
   * @throws 400 `error_validation` unless exactly one entity is given; 404 `error_not_found` for the entity
   *   (`product`, `productView`, `model`) or a group
   */
  async attach(principal: Principal, target: AttachQuery, groupIds: number[]): Promise<void> {
    const given = (
      [
        ['PRODUCT', target.productId],
        ['VIEW', target.productViewId],
        ['MODEL', target.modelId],
      ] as const
    ).filter(([, id]) => id !== undefined);
    if (given.length !== 1)
      throw validationError('productId', 'exactly one of productId, productViewId, modelId is required');
    const [type, entityId] = given[0] as [KeywordEntityType, number];
    await this.changes.run(async (trx) => {
      await this.requireEntity(trx, principal, type, entityId);
      await this.requireGroups(trx, principal, groupIds);
      await keywordRepository.attach(trx, principal.clientId, [...new Set(groupIds)], type, entityId);
    });
  }

  /**
   * The keywords attached to a model and the groups they come from (D6.4).
   * @throws 404 `error_not_found` `{entity: 'model'}`
   */
  async ofModel(principal: Principal, modelId: number): Promise<KeywordAndGroup> {
    await this.requireEntity(this.db, principal, 'MODEL', modelId);
    const attached = await keywordRepository.attachedTo(this.db, principal.clientId, 'MODEL', modelId);
    const groups = await this.load(this.db, principal, [...new Set(attached.map((row) => row.group_id))]);
    const ids = new Set(attached.map((row) => row.id));
    return {
      keyword: groups.flatMap((group) => group.keywords.filter((keyword) => ids.has(keyword.id))),
      group: groups,
    };
  }

  /**
   * Detaches every keyword of `groupIds` from a model (D6.2).
   * @throws 404 `error_not_found` for the model or a group
   */
  async detachFromModel(principal: Principal, modelId: number, groupIds: number[]): Promise<string> {
    await this.changes.run(async (trx) => {
      await this.requireEntity(trx, principal, 'MODEL', modelId);
      await this.requireGroups(trx, principal, groupIds);
      await keywordRepository.detach(trx, principal.clientId, [...new Set(groupIds)], 'MODEL', modelId);
    });
    return 'OK';
  }

  private async requireEntity(db: Kysely<DB>, principal: Principal, type: KeywordEntityType, id: number) {
    if (!(await catalogEntityExists(db, ENTITY[type].table, principal.clientId, id)))
      throw notFound(ENTITY[type].name, id);
  }

  private async requireGroups(
    db: Kysely<DB> | Transaction<DB>,
    principal: Principal,
    ids: number[],
    lock = false,
  ) {
    const unique = [...new Set(ids)];
    const found = new Set(
      (await keywordRepository.groupsOf(db, principal.clientId, unique, lock)).map((row) => row.id),
    );
    const missing = unique.filter((id) => !found.has(id)).map(String);
    if (missing.length > 0)
      throw new AppError('error_not_found', { entity: 'keywordGroup', id: missing[0], ids: missing });
  }

  private async load(db: Kysely<DB>, principal: Principal, ids: number[]): Promise<KeywordGroup[]> {
    const groups = await keywordRepository.groupsOf(db, principal.clientId, ids);
    const keywords = await keywordRepository.keywordsOf(db, principal.clientId, ids);
    const byGroup = new Map<number, Keyword[]>();
    for (const keyword of keywords) {
      const list = byGroup.get(keyword.group_id) ?? [];
      list.push({ id: keyword.id, name: keyword.name, usingQuantity: Number(keyword.using_quantity) });
      byGroup.set(keyword.group_id, list);
    }
    return groups
      .sort((a, b) => a.id - b.id)
      .map((group) => ({ id: group.id, name: group.name, keywords: byGroup.get(group.id) ?? [] }));
  }
}
