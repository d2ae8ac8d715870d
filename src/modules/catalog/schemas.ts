/**
 * Schemas of the catalog group (spec §2 "Catalog card", §4.7, decision D11): brands, categories, and the card
 * hierarchy model → views (colour variants) → products (final products, one per size). Field names follow the
 * reference's ProductModel, ProductView and Product, restricted to what we store (P40). Dates are ISO 8601 UTC;
 * ids are int64.
 */
import { CursorQuery, KeysetPage } from '../../http/cursor.ts';
import { Type, type Static } from 'typebox';
import { VISIBLE_TEXT } from '../../domain/text.ts';
import {
  DateTime,
  Int64,
  Int64String,
  Nullable,
  PagingQuery,
  ReadOnlyFields,
  RepeatedQuery,
} from '../../http/schemas.ts';
import { ParamValue, ParamValues } from './parameters.ts';

/** Effective parameter values of a level, present only with `?withParams=true` (D11.2). */
const EffectiveParams = Type.Optional(
  Type.Array(ParamValue, {
    description: 'Effective values (withParams=true): this level over the more general ones',
  }),
);

const Name = (maxLength: number) => Type.String({ minLength: 1, maxLength, pattern: VISIBLE_TEXT });
const Id = Int64();

/** A brand of the client's catalog (reference Brand: `id` stands for `brandId`). */
export const Brand = Type.Object(
  { id: Id, clientId: Id, name: Type.String(), modifiedDate: DateTime() },
  { $id: 'Brand', title: 'Brand' },
);
export type Brand = Static<typeof Brand>;

/** A category of the client's catalog; `market1CategoryId` links it to the marketplace's dictionaries (D11.3). */
export const Category = Type.Object(
  {
    id: Id,
    clientId: Id,
    name: Type.String(),
    parentId: Nullable(Id),
    market1CategoryId: Nullable(Id),
    modifiedDate: DateTime(),
  },
  { $id: 'Category', title: 'Category' },
);
export type Category = Static<typeof Category>;

/** Body of `POST /api/brand`. */
export const BrandCreateBody = Type.Object({ name: Name(200) });
export type BrandCreateBody = Static<typeof BrandCreateBody>;

/** Body of `POST /api/category`. */
export const CategoryCreateBody = Type.Object({
  name: Name(200),
  parentId: Type.Optional(Nullable(Int64({ description: 'Parent category of the same client' }))),
  market1CategoryId: Type.Optional(Nullable(Int64({ description: 'Marketplace category (subject) id' }))),
  params: ParamValues,
});
export type CategoryCreateBody = Static<typeof CategoryCreateBody>;

/** Query of `GET /api/brand/find` and `GET /api/category/find` (D4): by id, newest first unless `ascending`. */
export const NameFindQuery = Type.Object({
  ...PagingQuery,
  ...CursorQuery,
  query: Type.Optional(
    Type.String({ maxLength: 200, description: 'Case-insensitive substring of the name' }),
  ),
  modifiedDate: Type.Optional(DateTime({ description: 'Only those changed at or after this time (D4.5)' })),
  ascending: Type.Optional(Type.Boolean({ description: 'Default false: newest first (D4.4)' })),
});
export type NameFindQuery = Static<typeof NameFindQuery>;

export const BrandPage = KeysetPage(Type.Ref('Brand'), { title: 'FindResponseBrand' });
export const CategoryPage = KeysetPage(Type.Ref('Category'), { title: 'FindResponseCategory' });

/** A final product (one size of a colour variant; reference Product). */
export const Product = Type.Object(
  {
    id: Id,
    productModelId: Id,
    productViewId: Id,
    name: Type.String(),
    size: Type.String(),
    barcode: Nullable(Type.String()),
    createdDate: DateTime(),
    modifiedDate: DateTime(),
    params: EffectiveParams,
  },
  { $id: 'Product', title: 'Product' },
);
export type Product = Omit<Static<typeof Product>, 'params'> & { params?: ParamValue[] };

/** A colour variant with its sizes (reference ProductView). */
export const ProductView = Type.Object(
  {
    id: Id,
    productModelId: Id,
    color: Nullable(Type.String()),
    sizes: Type.Array(Type.Ref('Product')),
    params: EffectiveParams,
  },
  { $id: 'ProductView', title: 'ProductView' },
);
export type ProductView = Omit<Static<typeof ProductView>, 'sizes' | 'params'> & {
  sizes: Product[];
  params?: ParamValue[];
};

/** A model card with its whole hierarchy (reference ProductModel). */
export const ProductModel = Type.Object(
  {
    id: Id,
    clientId: Id,
    organizationId: Id,
    article: Type.String(),
    title: Type.String(),
    name: Nullable(Type.String()),
    description: Nullable(Type.String()),
    brandId: Id,
    categoryId: Id,
    versionId: Type.Integer({ description: 'Grows by one with every change of the card (D11.1)' }),
    createdUser: Nullable(Type.String()),
    createdDate: DateTime(),
    modifiedDate: DateTime(),
    views: Type.Array(Type.Ref('ProductView')),
    params: EffectiveParams,
  },
  { $id: 'ProductModel', title: 'ProductModel' },
);
export type ProductModel = Omit<Static<typeof ProductModel>, 'views' | 'params'> & {
  views: ProductView[];
  params?: ParamValue[];
};

// The read-only fields of each level of the card as GET returns it (P169).
const sizeReadOnly = ReadOnlyFields({
  productModelId: Id,
  productViewId: Id,
  createdDate: DateTime(),
  modifiedDate: DateTime(),
});
const viewReadOnly = ReadOnlyFields({ productModelId: Id });
const modelReadOnly = ReadOnlyFields({
  id: Id,
  clientId: Id,
  createdUser: Nullable(Type.String()),
  createdDate: DateTime(),
  modifiedDate: DateTime(),
});

const sizeInput = (replace: boolean) =>
  Type.Object({
    id: Type.Optional(
      Int64({ description: 'PUT: an existing product of this model; absent = a new product' }),
    ),
    name: Name(500),
    size: Type.String({ minLength: 1, maxLength: 100 }),
    barcode: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 200 }))),
    params: ParamValues,
    ...(replace ? sizeReadOnly : {}),
  });

const viewInput = (replace: boolean) =>
  Type.Object({
    id: Type.Optional(Int64({ description: 'PUT: an existing view of this model; absent = a new view' })),
    color: Type.Optional(Nullable(Type.String({ maxLength: 200 }))),
    sizes: Type.Array(sizeInput(replace), {
      minItems: 1,
      maxItems: 500,
      description: 'At least one final product',
    }),
    params: ParamValues,
    ...(replace ? viewReadOnly : {}),
  });

const cardFields = (replace: boolean) => ({
  article: Name(200),
  title: Name(1000),
  name: Type.Optional(Nullable(Type.String({ maxLength: 1000 }))),
  description: Type.Optional(Nullable(Type.String({ maxLength: 20_000 }))),
  brandId: Int64(),
  categoryId: Int64(),
  views: Type.Array(viewInput(replace), {
    minItems: 1,
    maxItems: 200,
    description: 'At least one colour variant',
  }),
  params: ParamValues,
});

/** Body of `POST /api/model`: the minimal card of spec §2. */
export const ModelCreateBody = Type.Object({ ...cardFields(false), organizationId: Int64() });
export type ModelCreateBody = Static<typeof ModelCreateBody>;

/**
 * Body of `PUT /api/model/{modelId}`: the whole editable structure and the `versionId` it was read at (D11.1).
 * Views and sizes with an `id` are updated, without one created, and those left out removed. The model as GET
 * returns it is accepted: its read-only fields are ignored when their ids match (P169).
 */
export const ModelReplaceBody = Type.Object({
  ...cardFields(true),
  versionId: Type.Optional(
    Int64({
      description: 'The versionId of the card this replacement is based on; required unless If-Match says it',
    }),
  ),
  organizationId: Type.Optional(Int64({ description: 'Read-only after creation: must match when sent' })),
  ...modelReadOnly,
});
export type ModelReplaceBody = Static<typeof ModelReplaceBody>;

/** Body of `PATCH /api/product/{productId}`: a JSON merge patch (RFC 7396) of a final product. */
export const ProductPatchBody = Type.Object({
  name: Type.Optional(Name(500)),
  size: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  barcode: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 200 }))),
  versionId: Type.Optional(Int64({ description: "The model's versionId; stale → 409 (D11.1)" })),
});
export type ProductPatchBody = Static<typeof ProductPatchBody>;

/** `GET /api/model/{modelId}` query. */
export const ModelGetQuery = Type.Object({
  withParams: Type.Optional(
    Type.Boolean({ description: 'Add each level’s effective parameter values (D11.2)' }),
  ),
});

/** A lightweight row of `GET /api/product/find`. */
export const ProductRow = Type.Object(
  {
    id: Id,
    modelId: Id,
    viewId: Id,
    article: Type.String(),
    barcode: Nullable(Type.String()),
    name: Type.String(),
    size: Type.String(),
    color: Nullable(Type.String()),
    brandId: Id,
    categoryId: Id,
    modifiedDate: DateTime(),
  },
  { $id: 'ProductRow', title: 'ProductRow' },
);
export type ProductRow = Static<typeof ProductRow>;

/** Query of `GET /api/product/find` (D4; stable `sortBy=ID` paging, `count` only when asked). */
export const ProductFindQuery = Type.Object({
  ...PagingQuery,
  ...CursorQuery,
  query: Type.Optional(Type.String({ maxLength: 200, description: 'Substring of name, article or barcode' })),
  modelId: Type.Optional(Int64()),
  article: Type.Optional(Type.String({ maxLength: 200, description: 'Exact model article' })),
  barcode: Type.Optional(Type.String({ maxLength: 200, description: 'Exact barcode' })),
  brandId: Type.Optional(Int64()),
  categoryId: Type.Optional(Int64()),
  ids: RepeatedQuery(Int64(), { maxItems: 500, uniqueItems: true }),
  modifiedDate: Type.Optional(DateTime({ description: 'Only products changed at or after this time' })),
  sortBy: Type.Optional(Type.Unsafe<'ID'>({ type: 'string', enum: ['ID'] })),
  ascending: Type.Optional(Type.Boolean({ description: 'Default false: newest first (D4.4)' })),
});
export type ProductFindQuery = Static<typeof ProductFindQuery>;

export const ProductPage = KeysetPage(Type.Ref('ProductRow'), { title: 'FindResponseProduct' });

/** Path of the model operations, named as spec §4.7 names it (`/api/model/{modelId}`). */
export const ModelParams = Type.Object({ modelId: Int64String });
/** Path of the final product's change (`/api/product/{productId}`, named like the tag bindings' path). */
export const ProductParams = Type.Object({ productId: Int64String });
