/**
 * Parameter values of a card (spec §4.7 rules 4–5, decision D11.2): values are set at the category, model,
 * view or product level; the most specific level that has values for a parameter wins (product > view > model
 * > category, per parameter). A multi-value parameter takes several values with the same `paramId`; the value's
 * JSON type follows the parameter's `valueType`, and a `SUGGEST` parameter's value must be one of its options.
 */
import { Type, type Static } from 'typebox';
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { idRows } from '../../db/id-rows.ts';
import { validationError } from '../../http/errors.ts';
import { Int64 } from '../../http/schemas.ts';
import type { ParameterLevel, ValueType } from './tables.ts';

/** One parameter value in a request or an answer. */
export const ParamValue = Type.Object(
  {
    paramId: Int64({ description: 'Marketplace parameter id (getParams)' }),
    // A type list, not anyOf: with Ajv's coercion an anyOf would turn 180 into "180" through its first branch.
    value: Type.Unsafe<string | number | boolean>({
      type: ['string', 'number', 'boolean'],
      maxLength: 2000,
      description: 'Typed by the parameter valueType; for SUGGEST one of the options (fetchOption)',
    }),
  },
  { title: 'ParamValue' },
);
export type ParamValue = Static<typeof ParamValue>;

/** The optional `params` of a card level in a request. */
export const ParamValues = Type.Optional(Type.Array(ParamValue, { maxItems: 1_000 }));

const typeMatches: Record<ValueType, (value: unknown) => boolean> = {
  STRING: (value) => typeof value === 'string',
  NUMBER: (value) => typeof value === 'number' && Number.isFinite(value),
  INTEGER: (value) => typeof value === 'number' && Number.isSafeInteger(value),
  BOOLEAN: (value) => typeof value === 'boolean',
};

/**
 * Checks `values` against the parameters of marketplace category `marketCategoryId`.
 * @throws 400 `error_validation` naming `<field>.<i>.paramId` (not a parameter of the category, or repeated
 *   without multiValueAllowed) or `<field>.<i>.value` (wrong type, unknown SUGGEST option)
 */
export async function checkValues(
  db: Kysely<DB>,
  marketCategoryId: number | null,
  values: readonly ParamValue[],
  field: string,
): Promise<void> {
  if (values.length === 0) return;
  if (marketCategoryId === null)
    throw validationError(
      field,
      'the category has no marketplace category (market1CategoryId), so no parameters',
    );
  const ids = [...new Set(values.map((value) => value.paramId))];
  const definitions = new Map(
    (
      await db
        .selectFrom('market_parameter')
        .selectAll()
        .where('category_id', '=', marketCategoryId)
        .where('id', 'in', ids)
        .execute()
    ).map((row) => [row.id, row]),
  );
  const seen = new Set<number>();
  for (const [index, value] of values.entries()) {
    const definition = definitions.get(value.paramId);
    if (!definition) throw validationError(`${field}.${index}.paramId`, 'not a parameter of the category');
    if (seen.has(value.paramId) && !definition.multi_value_allowed)
      throw validationError(
        `${field}.${index}.paramId`,
        'the parameter takes one value (multiValueAllowed is false)',
      );
    seen.add(value.paramId);
    if (!typeMatches[definition.value_type](value.value))
      throw validationError(`${field}.${index}.value`, `must be of type ${definition.value_type}`);
    if (definition.display_type === 'SUGGEST') {
      const option = await db
        .selectFrom('market_parameter_option')
        .select('id')
        .where('parameter_id', '=', definition.id)
        .where('value', '=', String(value.value))
        .executeTakeFirst();
      if (!option)
        throw validationError(`${field}.${index}.value`, 'not one of the options of this SUGGEST parameter');
    }
  }
}

/** Replaces the values of one entity at one level (inside the change's transaction). */
export async function replaceValues(
  trx: Transaction<DB>,
  clientId: number,
  level: ParameterLevel,
  entityId: number,
  values: readonly ParamValue[],
): Promise<void> {
  await trx
    .deleteFrom('parameter_value')
    .where('client_id', '=', clientId)
    .where('level', '=', level)
    .where('entity_id', '=', entityId)
    .execute();
  if (values.length === 0) return;
  await trx
    .insertInto('parameter_value')
    .values(
      values.map((value, position) => ({
        client_id: clientId,
        level,
        entity_id: entityId,
        parameter_id: value.paramId,
        position,
        value: JSON.stringify(value.value),
      })),
    )
    .execute();
}

/** The stored values of the given entities, by level and entity id. */
export async function storedValues(
  db: Kysely<DB>,
  clientId: number,
  entities: Array<{ level: ParameterLevel; ids: number[] }>,
): Promise<Map<string, ParamValue[]>> {
  const byEntity = new Map<string, ParamValue[]>();
  for (const { level, ids } of entities) {
    if (ids.length === 0) continue;
    // each entity's values looked up by its key (P197)
    const rows = await db
      .selectFrom(idRows(ids, 't'))
      .innerJoinLateral(
        (eb) =>
          eb
            .selectFrom('parameter_value')
            .select(['entity_id', 'parameter_id', 'value', 'position'])
            .where('client_id', '=', clientId)
            .where('level', '=', level)
            .whereRef('entity_id', '=', 't.id')
            .offset(0)
            .as('v'),
        (join) => join.onTrue(),
      )
      .select(['v.entity_id', 'v.parameter_id', 'v.value'])
      .orderBy('v.entity_id')
      .orderBy('v.parameter_id')
      .orderBy('v.position')
      .execute();
    for (const row of rows) {
      const key = `${level}:${row.entity_id}`;
      const list = byEntity.get(key) ?? [];
      list.push({ paramId: row.parameter_id, value: row.value });
      byEntity.set(key, list);
    }
  }
  return byEntity;
}

/** `general` overridden per parameter by `specific` (all of a parameter's values come from one level). */
export function overlay(general: readonly ParamValue[], specific: readonly ParamValue[]): ParamValue[] {
  const overridden = new Set(specific.map((value) => value.paramId));
  return [...general.filter((value) => !overridden.has(value.paramId)), ...specific].sort(
    (a, b) => a.paramId - b.paramId,
  );
}
