/**
 * Schemas of the tag group (spec §2 ProductTag, FindResponseProductTag, ProductTagInfo; §4.5; decision D7).
 * Bodies of create and update are `{name}` (and `{id, name}` for `PUT /api/tag`); they are checked by the
 * service so that the spec's tag error codes answer missing fields (P60).
 */
import { Type, type Static } from 'typebox';
import { StringEnum } from '../../domain/enums.ts';
import { CursorQuery, KeysetPage, type KeysetPageOf } from '../../http/cursor.ts';
import { Int64, Int64String, Nullable, PagingQuery, ReadOnlyFields } from '../../http/schemas.ts';

/** A product tag (names unique per client, case-insensitive, D7.1). */
export const ProductTag = Type.Object(
  { id: Int64(), name: Type.String(), clientId: Int64() },
  { $id: 'ProductTag', title: 'ProductTag' },
);
export type ProductTag = Static<typeof ProductTag>;

export const FindResponseProductTag = KeysetPage(Type.Ref('ProductTag'), { title: 'FindResponseProductTag' });
export type FindResponseProductTag = KeysetPageOf<ProductTag>;

/** One product of a model with its tags (its own and its model's, D7.2). */
export const ProductTagInfo = Type.Object(
  { productId: Int64(), productTags: Type.Array(Type.Ref('ProductTag')) },
  { title: 'ProductTagInfo' },
);
export const FindResponseProductTagInfo = Type.Object(
  { rows: Type.Array(ProductTagInfo) },
  { title: 'FindResponseProductTagInfo' },
);
export type FindResponseProductTagInfo = { rows: Array<{ productId: number; productTags: ProductTag[] }> };

/** Body of create and of `PUT /api/tag/{tagId}`; `name` is checked by the service (error_tag_name_required, …). */
export const TagBody = Type.Object({ name: Type.Optional(Nullable(Type.String({ maxLength: 200 }))) });
export type TagBody = Static<typeof TagBody>;
/**
 * Body of `PUT /api/tag/{tagId}`: `{name}`, or the tag as GET returns it with `id` and `clientId` read-only
 * (ignored when they match the path and the token's client, P169).
 */
export const TagRenameBody = Type.Object({
  name: Type.Optional(Nullable(Type.String({ maxLength: 200 }))),
  ...ReadOnlyFields({ id: Int64(), clientId: Int64() }),
});
export type TagRenameBody = Static<typeof TagRenameBody>;
/** Body of `PUT /api/tag` (id in the body, D7.1); `clientId` as GET returns it is read-only (P169). */
export const TagWithIdBody = Type.Object({
  id: Type.Optional(Nullable(Int64())),
  name: Type.Optional(Nullable(Type.String({ maxLength: 200 }))),
  ...ReadOnlyFields({ clientId: Int64() }),
});
export type TagWithIdBody = Static<typeof TagWithIdBody>;

/** Query of `GET /api/tag/find` and `GET /api/tag` (spec §4.5, D4). */
export const TagFindQuery = Type.Object({
  ...PagingQuery,
  ...CursorQuery,
  query: Type.Optional(
    Type.String({ maxLength: 200, description: 'Case-insensitive substring of the name' }),
  ),
  productId: Type.Optional(
    Int64({ description: 'Only tags bound to this product (directly or via its model)' }),
  ),
  sortBy: Type.Optional(
    StringEnum(['ID', 'NAME'] as const, { description: 'Sort field; default: ID; NAME ignores case (P222)' }),
  ),
  ascending: Type.Optional(Type.Boolean({ description: 'Ascending order; default descending' })),
});
export type TagFindQuery = Static<typeof TagFindQuery>;

export const TagParams = Type.Object({ tagId: Int64String });
export const TagProductParams = Type.Object({ tagId: Int64String, productId: Int64String });
export const TagModelParams = Type.Object({ tagId: Int64String, modelId: Int64String });
export const ModelParams = Type.Object({ modelId: Int64String });
