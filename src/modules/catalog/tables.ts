/**
 * Kysely table types of the catalog core (migration 0004): brands, categories, models, views and products.
 * A group declares its tables in its own `tables.ts` by augmenting `DB`, so groups never edit one shared list.
 */
import type { Generated } from 'kysely';
import type { CreatedAt } from '../../db/schema.ts';

export interface BrandTable {
  id: Generated<number>;
  client_id: number;
  name: string;
  created_date: CreatedAt;
  modified_date: CreatedAt;
}

export interface CategoryTable {
  id: Generated<number>;
  client_id: number;
  name: string;
  parent_id: number | null;
  market1_category_id: number | null;
  created_date: CreatedAt;
  modified_date: CreatedAt;
}

export interface ProductModelTable {
  id: Generated<number>;
  client_id: number;
  organization_id: number;
  article: string;
  title: string;
  name: string | null;
  description: string | null;
  brand_id: number;
  category_id: number;
  version_id: Generated<number>;
  deleted: Generated<boolean>;
  created_user: string | null;
  created_date: CreatedAt;
  modified_date: CreatedAt;
}

export interface ProductViewTable {
  id: Generated<number>;
  client_id: number;
  model_id: number;
  color: string | null;
  position: Generated<number>;
  created_date: CreatedAt;
  modified_date: CreatedAt;
}

export interface ProductTable {
  id: Generated<number>;
  client_id: number;
  model_id: number;
  view_id: number;
  name: string;
  size: string;
  barcode: string | null;
  position: Generated<number>;
  deleted: Generated<boolean>;
  created_date: CreatedAt;
  modified_date: CreatedAt;
}

declare module '../../db/schema.ts' {
  interface DB {
    brand: BrandTable;
    category: CategoryTable;
    product_model: ProductModelTable;
    product_view: ProductViewTable;
    product: ProductTable;
  }
}
