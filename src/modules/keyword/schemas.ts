/**
 * Schemas of the keyword group (spec §2 Keyword, KeywordGroup, KeywordAndGroup; §4.2; decision D6). Bodies:
 * POST/PUT of a group take keyword strings; the other arrays are ids (D6.2).
 */
import { Type, type Static } from 'typebox';
import { Int64, Int64String, ReadOnlyFields } from '../../http/schemas.ts';

/** A keyword; `usingQuantity` = the number of entities it is attached to (D6.3). */
export const Keyword = Type.Object(
  { id: Int64(), name: Type.String(), usingQuantity: Type.Integer({ format: 'int32' }) },
  { $id: 'Keyword', title: 'Keyword' },
);
export type Keyword = Static<typeof Keyword>;

/** A keyword group with its keywords. */
export const KeywordGroup = Type.Object(
  { id: Int64(), name: Type.String(), keywords: Type.Array(Type.Ref('Keyword')) },
  { $id: 'KeywordGroup', title: 'KeywordGroup' },
);
export type KeywordGroup = Omit<Static<typeof KeywordGroup>, 'keywords'> & { keywords: Keyword[] };

/** The keywords attached to a model and the groups they come from (D6.4). */
export const KeywordAndGroup = Type.Object(
  { keyword: Type.Array(Type.Ref('Keyword')), group: Type.Array(Type.Ref('KeywordGroup')) },
  { title: 'KeywordAndGroup' },
);
export type KeywordAndGroup = { keyword: Keyword[]; group: KeywordGroup[] };

/** Keyword strings of a group body (trimmed; case-insensitive duplicates ignored, D6.1). */
export const KeywordWords = Type.Array(Type.String({ maxLength: 200 }), { maxItems: 10_000 });
/**
 * Body of `PUT /api/keyword/group/{groupId}`: the keyword strings to add (spec), or the group as GET returns it
 * (P169): `name` renames it like `newName`, the `name` of each keyword is added, and the read-only ids are
 * ignored when they are the group's own. A keyword left out is not removed (that is
 * `DELETE /api/keyword/group/{groupId}/keywords`).
 */
export const KeywordGroupUpdateBody = Type.Union([
  KeywordWords,
  Type.Object(
    {
      name: Type.Optional(Type.String({ maxLength: 200, description: 'New name (as the newName query)' })),
      keywords: Type.Optional(
        Type.Array(
          Type.Object({
            name: Type.String({ maxLength: 200 }),
            ...ReadOnlyFields({ id: Int64(), usingQuantity: Type.Integer({ format: 'int32' }) }),
          }),
          { maxItems: 10_000 },
        ),
      ),
      ...ReadOnlyFields({ id: Int64() }),
    },
    { title: 'KeywordGroupUpdate' },
  ),
]);
export type KeywordGroupUpdateBody = Static<typeof KeywordGroupUpdateBody>;
/** An array of int64 ids (groups or keywords, D6.2). */
export const IdList = Type.Array(Int64(), { maxItems: 10_000 });

export const GroupNameQuery = Type.Object({ groupName: Type.String({ maxLength: 200 }) });
export const NewNameQuery = Type.Object({ newName: Type.Optional(Type.String({ maxLength: 200 })) });
export const MergeQuery = Type.Object({ newGroupName: Type.String({ maxLength: 200 }) });
export const WordQuery = Type.Object({ word: Type.String({ minLength: 1, maxLength: 200 }) });
/** Exactly one of the three (D6.2). */
export const AttachQuery = Type.Object({
  productId: Type.Optional(Int64()),
  productViewId: Type.Optional(Int64()),
  modelId: Type.Optional(Int64()),
});
export type AttachQuery = Static<typeof AttachQuery>;

export const GroupParams = Type.Object({ groupId: Int64String });
export const ModelParams = Type.Object({ modelId: Int64String });

/** The string answer of the delete operations (spec §4.2 "string"). */
export const Done = Type.String({ description: '"OK" once done' });
