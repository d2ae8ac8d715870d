/** Kysely table types of product tags (migrations 0005 and 0016, D7), added to `DB` by augmentation. */
import type { Generated } from 'kysely';

export interface ProductTagTable {
  id: Generated<number>;
  client_id: number;
  name: string;
}

export interface ProductTagProductTable {
  client_id: number;
  tag_id: number;
  product_id: number;
}

export interface ProductTagModelTable {
  client_id: number;
  tag_id: number;
  model_id: number;
}

declare module '../../db/schema.ts' {
  interface DB {
    product_tag: ProductTagTable;
    product_tag_product: ProductTagProductTable;
    product_tag_model: ProductTagModelTable;
  }
}
