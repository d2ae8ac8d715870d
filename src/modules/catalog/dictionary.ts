/**
 * The marketplace dictionaries the service serves itself (D11.3): categories, their parameter definitions and
 * the options of `SUGGEST` parameters, loaded from a dictionary file (admin API, CLI, the demo account's sample)
 * and, later, refreshed from the marketplace by a task. `GET /knowledge/getParams` and `GET /option/fetchOption`
 * read them. Display names are never keys: everything is keyed by the marketplace's ids (spec §4.7 rule 8).
 */
import { readFileSync } from 'node:fs';
import { sql, type Kysely, type Transaction } from 'kysely';
import { Type, type Static } from 'typebox';
import type { DB } from '../../db/schema.ts';
import { Int64, Nullable } from '../../http/schemas.ts';
import { StringEnum } from '../../domain/enums.ts';
import { likeContains } from '../../db/like.ts';

const Option = Type.Object({ id: Int64(), value: Type.String({ minLength: 1, maxLength: 500 }) });

/** A parameter definition as `getParams` answers it and a dictionary file holds it. */
export const ParameterDefinition = Type.Object(
  {
    id: Int64({ description: 'The marketplace parameter id (paramId)' }),
    name: Type.String({ minLength: 1, maxLength: 500 }),
    valueType: StringEnum(['STRING', 'NUMBER', 'INTEGER', 'BOOLEAN'] as const),
    multiValueAllowed: Type.Boolean(),
    displayType: StringEnum(['INPUT', 'SUGGEST'] as const, {
      description: 'SUGGEST: the value must be one of the options (fetchOption)',
    }),
    required: Type.Boolean(),
    unit: Type.Optional(Nullable(Type.String({ maxLength: 50 }))),
  },
  { $id: 'ParameterDefinition', title: 'ParameterDefinition' },
);
export type ParameterDefinition = Static<typeof ParameterDefinition>;

/** A dictionary file (docs/catalog.md): marketplace categories with their parameters and options. */
export const DictionaryFile = Type.Object({
  categories: Type.Array(
    Type.Object({
      id: Int64({ description: 'Marketplace category id (market2CategoryId)' }),
      name: Type.String({ minLength: 1, maxLength: 500 }),
      parentId: Type.Optional(Nullable(Int64())),
      parameters: Type.Array(
        Type.Object({
          ...ParameterDefinition.properties,
          options: Type.Optional(Type.Array(Option, { maxItems: 100_000 })),
        }),
        { maxItems: 10_000 },
      ),
    }),
    { maxItems: 10_000 },
  ),
});
export type DictionaryFile = Static<typeof DictionaryFile>;

/** What a load changed. */
export interface DictionaryLoadResult {
  categories: number;
  parameters: number;
  options: number;
}

/**
 * Loads `dictionary` inside `trx`: each listed category is created or updated and its parameters replaced by
 * the file's (parameters no longer listed are removed with their values; options are replaced).
 */
export async function loadDictionary(
  trx: Transaction<DB>,
  dictionary: DictionaryFile,
): Promise<DictionaryLoadResult> {
  const result: DictionaryLoadResult = { categories: 0, parameters: 0, options: 0 };
  // The transaction's time as a value: on Citus the dictionaries are reference tables, whose upserts refuse a
  // function that is not immutable (now()) in DO UPDATE SET (docs/scale-out.md).
  const { rows } = await sql<{ now: Date }>`select now() as now`.execute(trx);
  const updatedAt = rows[0]?.now ?? new Date();
  for (const category of dictionary.categories) {
    await trx
      .insertInto('market_category')
      .values({ id: category.id, name: category.name, parent_id: category.parentId ?? null })
      .onConflict((conflict) =>
        conflict
          .column('id')
          .doUpdateSet({ name: category.name, parent_id: category.parentId ?? null, updated_at: updatedAt }),
      )
      .execute();
    const ids = category.parameters.map((parameter) => parameter.id);
    await trx
      .deleteFrom('market_parameter')
      .where('category_id', '=', category.id)
      .$if(ids.length > 0, (qb) => qb.where('id', 'not in', ids))
      .execute();
    for (const [position, parameter] of category.parameters.entries()) {
      const values = {
        category_id: category.id,
        name: parameter.name,
        value_type: parameter.valueType,
        multi_value_allowed: parameter.multiValueAllowed,
        display_type: parameter.displayType,
        required: parameter.required,
        unit: parameter.unit ?? null,
        position,
      };
      await trx
        .insertInto('market_parameter')
        .values({ id: parameter.id, ...values })
        .onConflict((conflict) => conflict.column('id').doUpdateSet(values))
        .execute();
      await trx.deleteFrom('market_parameter_option').where('parameter_id', '=', parameter.id).execute();
      const options = parameter.options ?? [];
      for (let start = 0; start < options.length; start += 5_000)
        await trx
          .insertInto('market_parameter_option')
          .values(
            options.slice(start, start + 5_000).map((option) => ({ parameter_id: parameter.id, ...option })),
          )
          .execute();
      result.parameters += 1;
      result.options += options.length;
    }
    result.categories += 1;
  }
  return result;
}

/** The parameter definitions of a marketplace category, in the dictionary's order (empty when unknown). */
export async function parametersOfCategory(
  db: Kysely<DB>,
  categoryId: number,
): Promise<ParameterDefinition[]> {
  const rows = await db
    .selectFrom('market_parameter')
    .selectAll()
    .where('category_id', '=', categoryId)
    .orderBy('position')
    .orderBy('id')
    .execute();
  return rows.map((row) => ({
    id: row.id,
    name: row.name,
    valueType: row.value_type,
    multiValueAllowed: row.multi_value_allowed,
    displayType: row.display_type,
    required: row.required,
    unit: row.unit,
  }));
}

/** Up to `limit` options of a parameter whose value contains `query` (case-insensitive), by id. */
export function optionsOf(db: Kysely<DB>, parameterId: number, query: string, limit: number) {
  return db
    .selectFrom('market_parameter_option')
    .select(['id', 'value'])
    .where('parameter_id', '=', parameterId)
    .$if(query !== '', (qb) => qb.where('value', 'ilike', likeContains(query)))
    .orderBy('id')
    .limit(limit)
    .execute();
}

/**
 * The sample dictionary shipped with the service (a few apparel and home categories with their parameters and
 * options), loaded for the demo account on first start.
 */
export function sampleDictionary(): DictionaryFile {
  return JSON.parse(
    readFileSync(new URL('./sample-dictionary.json', import.meta.url), 'utf8'),
  ) as DictionaryFile;
}
