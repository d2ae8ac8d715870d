/**
 * Seals the secrets stored in plain text before secrets at rest existed (P160): prepared-integration API keys,
 * cash-register passwords and webhook secrets. Runs at every start after the migrations, in one transaction;
 * sealed values are left alone, so it is idempotent and concurrent starts are harmless (row locks serialize them).
 */
import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';
import { SecretBox } from './secret-box.ts';

/** The columns that hold secrets, by table. */
const SECRET_COLUMNS = [
  { table: 'prepared_integration', key: 'id', column: 'api_key' },
  { table: 'cash_register_setting', key: 'organization_id', column: 'password' },
  { table: 'webhook', key: 'id', column: 'secret' },
] as const;

/**
 * Seals every plain secret value.
 * @returns how many values were sealed
 */
export async function sealLegacySecrets(db: Kysely<DB>, box: SecretBox): Promise<number> {
  return db.transaction().execute(async (trx) => {
    let sealed = 0;
    for (const { table, key, column } of SECRET_COLUMNS) {
      const rows = await sql<{ id: number; value: string }>`
        SELECT ${sql.ref(key)} AS id, ${sql.ref(column)} AS value FROM ${sql.table(table)}
        WHERE ${sql.ref(column)} NOT LIKE 'sealed:v1:%' FOR UPDATE`.execute(trx);
      for (const row of rows.rows) {
        await sql`UPDATE ${sql.table(table)} SET ${sql.ref(column)} = ${box.seal(row.value)} WHERE ${sql.ref(key)} = ${row.id}`.execute(
          trx,
        );
        sealed += 1;
      }
    }
    return sealed;
  });
}
