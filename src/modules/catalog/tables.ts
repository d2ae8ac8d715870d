/**
 * Kysely table types of the catalog core (migration 0004): brands, categories, models, views and products.
 * A group declares its tables in its own `tables.ts` by augmenting `DB`, so groups never edit one shared list.
 */
import type { ColumnType, Generated } from 'kysely';
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

export interface MarketCategoryTable {
  id: number;
  name: string;
  parent_id: number | null;
  updated_at: CreatedAt;
}

/** The value types and display types of a marketplace parameter (D11.3). */
export type ValueType = 'STRING' | 'NUMBER' | 'INTEGER' | 'BOOLEAN';
export type DisplayType = 'INPUT' | 'SUGGEST';

export interface MarketParameterTable {
  id: number;
  category_id: number;
  name: string;
  value_type: ValueType;
  multi_value_allowed: boolean;
  display_type: DisplayType;
  required: boolean;
  unit: string | null;
  position: number;
}

export interface MarketParameterOptionTable {
  parameter_id: number;
  id: number;
  value: string;
}

/** The level of the card a parameter value is set at (D11.2). */
export type ParameterLevel = 'CATEGORY' | 'MODEL' | 'VIEW' | 'PRODUCT';

export interface ParameterValueTable {
  client_id: number;
  level: ParameterLevel;
  entity_id: number;
  parameter_id: number;
  position: number;
  value: ColumnType<string | number | boolean, string, string>;
}

declare module '../../db/schema.ts' {
  interface DB {
    market_category: MarketCategoryTable;
    market_parameter: MarketParameterTable;
    market_parameter_option: MarketParameterOptionTable;
    parameter_value: ParameterValueTable;
  }
}
