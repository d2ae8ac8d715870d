/** Maps catalog rows to their API shapes (D11.1): camelCase names, ISO 8601 UTC dates. */
import type {
  BrandRow,
  CategoryRow,
  ModelRow,
  ProductFindRecord,
  ProductRecord,
  ViewRow,
} from './repository.ts';
import type { Brand, Category, Product, ProductModel, ProductRow } from './schemas.ts';

export const presentBrand = (row: BrandRow): Brand => ({
  id: row.id,
  clientId: row.client_id,
  name: row.name,
  modifiedDate: row.modified_date.toISOString(),
});

export const presentCategory = (row: CategoryRow): Category => ({
  id: row.id,
  clientId: row.client_id,
  name: row.name,
  parentId: row.parent_id,
  market1CategoryId: row.market1_category_id,
  modifiedDate: row.modified_date.toISOString(),
});

export const presentProduct = (row: ProductRecord): Product => ({
  id: row.id,
  productModelId: row.model_id,
  productViewId: row.view_id,
  name: row.name,
  size: row.size,
  barcode: row.barcode,
  createdDate: row.created_date.toISOString(),
  modifiedDate: row.modified_date.toISOString(),
});

/** The model's own fields of a card, in the card's key order (everything but `views`). */
const presentModelFields = (model: ModelRow): Omit<ProductModel, 'views'> => ({
  id: model.id,
  clientId: model.client_id,
  organizationId: model.organization_id,
  article: model.article,
  title: model.title,
  name: model.name,
  description: model.description,
  brandId: model.brand_id,
  categoryId: model.category_id,
  versionId: model.version_id,
  createdUser: model.created_user,
  createdDate: model.created_date.toISOString(),
  modifiedDate: model.modified_date.toISOString(),
});

/** The whole card: the model, its views in order, each with its products in order. */
export function presentModel(model: ModelRow, views: ViewRow[], products: ProductRecord[]): ProductModel {
  return {
    ...presentModelFields(model),
    views: views.map((view) => ({
      id: view.id,
      productModelId: view.model_id,
      color: view.color,
      sizes: products.filter((product) => product.view_id === view.id).map(presentProduct),
    })),
  };
}

/**
 * The JSON text of the card with its views given as the text of their JSON array (`viewsJson`, rendered by
 * PostgreSQL, P201): the bytes of `JSON.stringify(presentModel(…))`, `views` being the last key.
 */
export const serializeModel = (model: ModelRow, viewsJson: string): string =>
  `${JSON.stringify(presentModelFields(model)).slice(0, -1)},"views":${viewsJson}}`;

export const presentProductRow = (row: ProductFindRecord): ProductRow => ({
  id: row.id,
  modelId: row.model_id,
  viewId: row.view_id,
  article: row.article,
  barcode: row.barcode,
  name: row.name,
  size: row.size,
  color: row.color,
  brandId: row.brand_id,
  categoryId: row.category_id,
  modifiedDate: row.modified_date.toISOString(),
});
