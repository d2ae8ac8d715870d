/** Kysely table types of keyword groups (migration 0005, D6), added to `DB` by augmentation. */
import type { Generated } from 'kysely';
import type { CreatedAt } from '../../db/schema.ts';

export interface KeywordGroupTable {
  id: Generated<number>;
  client_id: number;
  name: string;
  created_date: CreatedAt;
}

export interface KeywordTable {
  id: Generated<number>;
  client_id: number;
  group_id: number;
  name: string;
}

/** Which entity a keyword is attached to (D6.2). */
export type KeywordEntityType = 'PRODUCT' | 'VIEW' | 'MODEL';

export interface KeywordAttachmentTable {
  client_id: number;
  keyword_id: number;
  entity_type: KeywordEntityType;
  entity_id: number;
}

declare module '../../db/schema.ts' {
  interface DB {
    keyword_group: KeywordGroupTable;
    keyword: KeywordTable;
    keyword_attachment: KeywordAttachmentTable;
  }
}
