/** Kysely table types of product tags (migration 0005, D7), added to `DB` by augmentation. */
import type { Generated } from 'kysely';

export interface ProductTagTable {
  id: Generated<number>;
  client_id: number;
  name: string;
}

export interface ProductTagProductTable {
  tag_id: number;
  product_id: number;
}

export interface ProductTagModelTable {
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
