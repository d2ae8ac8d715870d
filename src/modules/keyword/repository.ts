/** SQL of the keyword group (D6); every query is scoped by the caller's client. */
import { sql, type Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { idRows } from '../../db/id-rows.ts';
import { likeContains } from '../../db/like.ts';
import type { KeywordEntityType } from './tables.ts';

export const keywordRepository = {
  insertGroup: (db: Kysely<DB>, clientId: number, name: string) =>
    db
      .insertInto('keyword_group')
      .values({ client_id: clientId, name })
      .returningAll()
      .executeTakeFirstOrThrow(),
  renameGroup: (db: Kysely<DB>, clientId: number, id: number, name: string) =>
    db
      .updateTable('keyword_group')
      .set({ name })
      .where('client_id', '=', clientId)
      .where('id', '=', id)
      .execute(),
  /** Adds words to a group; words it already has (case-insensitively) are skipped. */
  addWords: async (db: Kysely<DB>, clientId: number, groupId: number, words: readonly string[]) => {
    if (words.length === 0) return;
    await db
      .insertInto('keyword')
      .values(words.map((name) => ({ client_id: clientId, group_id: groupId, name })))
      .onConflict((conflict) => conflict.doNothing())
      .execute();
  },
  /** The client's groups among `ids` (locked for a change when `lock`), each looked up by its key (P197). */
  groupsOf: (db: Kysely<DB>, clientId: number, ids: readonly number[], lock = false) =>
    ids.length === 0
      ? Promise.resolve([])
      : db
          .selectFrom(idRows(ids, 't'))
          .innerJoinLateral(
            (eb) =>
              eb
                .selectFrom('keyword_group')
                .selectAll()
                .where('client_id', '=', clientId)
                .whereRef('id', '=', 't.id')
                .offset(0)
                .$if(lock, (qb) => qb.forUpdate())
                .as('g'),
            (join) => join.onTrue(),
          )
          .selectAll('g')
          .execute(),
  /**
   * Group ids of the client, optionally those whose name or a keyword matches `word` (case-insensitive). Each
   * match is a statement of its own over one table, so each is served by its trigram index (P173): an `or` of the
   * name and the keywords would be a filter over every group of the client.
   */
  groupIds: async (db: Kysely<DB>, clientId: number, word?: string) => {
    const pattern = likeContains(word ?? '');
    return (
      await db
        .selectFrom('keyword_group as g')
        .select('g.id')
        .where('g.client_id', '=', clientId)
        .$if(word !== undefined, (qb) =>
          qb.where(
            'g.id',
            'in',
            db
              .selectFrom('keyword_group as named')
              .select('named.id')
              .where('named.client_id', '=', clientId)
              .where('named.name', 'ilike', pattern)
              .union(
                db
                  .selectFrom('keyword as k')
                  .select('k.group_id as id')
                  .where('k.client_id', '=', clientId)
                  .where('k.name', 'ilike', pattern),
              ),
          ),
        )
        .orderBy('g.id')
        .execute()
    ).map((row) => row.id);
  },
  /** The keywords of `groupIds` with their `usingQuantity`, by group then id; each group's looked up by its key (P197). */
  keywordsOf: (db: Kysely<DB>, clientId: number, groupIds: readonly number[]) =>
    groupIds.length === 0
      ? Promise.resolve([])
      : db
          .selectFrom(idRows(groupIds, 't'))
          .innerJoinLateral(
            (eb) =>
              eb
                .selectFrom('keyword')
                .select(['client_id', 'id', 'group_id', 'name'])
                .where('client_id', '=', clientId)
                .whereRef('group_id', '=', 't.id')
                .offset(0)
                .as('k'),
            (join) => join.onTrue(),
          )
          .leftJoin('keyword_attachment as a', (join) =>
            join
              .on('a.client_id', '=', clientId)
              .onRef('a.client_id', '=', 'k.client_id')
              .onRef('a.keyword_id', '=', 'k.id'),
          )
          .select([
            'k.id',
            'k.group_id',
            'k.name',
            (eb) => eb.fn.count<string>('a.keyword_id').as('using_quantity'),
          ])
          .groupBy(['k.id', 'k.group_id', 'k.name'])
          .orderBy('k.group_id')
          .orderBy('k.id')
          .execute(),
  deleteGroups: (db: Kysely<DB>, clientId: number, ids: readonly number[]) =>
    ids.length === 0
      ? Promise.resolve()
      : db
          .deleteFrom('keyword_group')
          .where('client_id', '=', clientId)
          .where('id', 'in', [...ids])
          .execute()
          .then(() => undefined),
  /** Deletes keywords of one group; returns the ids that were there. */
  deleteKeywords: async (db: Kysely<DB>, clientId: number, groupId: number, ids: readonly number[]) =>
    ids.length === 0
      ? []
      : (
          await db
            .deleteFrom('keyword')
            .where('client_id', '=', clientId)
            .where('group_id', '=', groupId)
            .where('id', 'in', [...ids])
            .returning('id')
            .execute()
        ).map((row) => row.id),
  /** Attaches every keyword of `groupIds` to the entity (already attached ones are kept). */
  attach: (
    db: Kysely<DB>,
    clientId: number,
    groupIds: readonly number[],
    type: KeywordEntityType,
    entityId: number,
  ) =>
    sql`
      INSERT INTO keyword_attachment (client_id, keyword_id, entity_type, entity_id)
      SELECT ${clientId}, k.id, ${type}, ${entityId} FROM keyword k
      WHERE k.client_id = ${clientId} AND k.group_id = ANY(${[...groupIds]}::bigint[])
      ON CONFLICT DO NOTHING`.execute(db),
  /** Detaches every keyword of `groupIds` from the entity. */
  detach: (
    db: Kysely<DB>,
    clientId: number,
    groupIds: readonly number[],
    type: KeywordEntityType,
    entityId: number,
  ) =>
    sql`
      DELETE FROM keyword_attachment a USING keyword k
      WHERE a.client_id = ${clientId} AND k.client_id = ${clientId} AND a.keyword_id = k.id
        AND k.group_id = ANY(${[...groupIds]}::bigint[])
        AND a.entity_type = ${type} AND a.entity_id = ${entityId}`.execute(db),
  /** Ids of the keywords attached to the entity. */
  attachedTo: async (db: Kysely<DB>, clientId: number, type: KeywordEntityType, entityId: number) =>
    await db
      .selectFrom('keyword_attachment as a')
      .innerJoin('keyword as k', (join) =>
        join.onRef('k.client_id', '=', 'a.client_id').onRef('k.id', '=', 'a.keyword_id'),
      )
      .select(['k.id', 'k.group_id'])
      .where('a.client_id', '=', clientId)
      .where('a.entity_type', '=', type)
      .where('a.entity_id', '=', entityId)
      .orderBy('k.id')
      .execute(),
  /**
   * Moves the attachments of the keywords of `fromGroupIds` to the keywords of the same name (case-insensitive)
   * in `toGroupId` (merge, D6.3).
   */
  moveAttachments: (db: Kysely<DB>, clientId: number, fromGroupIds: readonly number[], toGroupId: number) =>
    sql`
      INSERT INTO keyword_attachment (client_id, keyword_id, entity_type, entity_id)
      SELECT a.client_id, target.id, a.entity_type, a.entity_id
      FROM keyword_attachment a
      JOIN keyword source ON source.client_id = a.client_id AND source.id = a.keyword_id
        AND source.group_id = ANY(${[...fromGroupIds]}::bigint[])
      JOIN keyword target ON target.client_id = a.client_id AND target.group_id = ${toGroupId}
        AND lower(target.name) = lower(source.name)
      WHERE a.client_id = ${clientId}
      ON CONFLICT DO NOTHING`.execute(db),
};
