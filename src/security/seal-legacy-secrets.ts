/**
 * Seals the secrets stored in plain text before secrets at rest existed (P160): prepared-integration API keys,
 * cash-register passwords, webhook secrets and the passwords in webhook URLs (P221, moved to `url_password`). Runs at every start after the migrations, in one transaction that
 * spans clients (P176); sealed values are left alone, so it is idempotent. Each value is replaced only while it is
 * still the plain value read (compare and set, no row locks: Citus refuses `FOR UPDATE` across shards), so
 * concurrent starts are harmless: a value another start sealed first is skipped.
 */
import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';
import { acrossClients } from '../db/cross-tenant.ts';
import { SecretBox } from './secret-box.ts';
import { splitUrlPassword } from '../modules/webhook/url-password.ts';

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
  return acrossClients(db, async (trx) => {
    let sealed = 0;
    for (const { table, key, column } of SECRET_COLUMNS) {
      const rows = await sql<{ client_id: number; id: number; value: string }>`
        SELECT client_id, ${sql.ref(key)} AS id, ${sql.ref(column)} AS value FROM ${sql.table(table)}
        WHERE ${sql.ref(column)} NOT LIKE 'sealed:v1:%'`.execute(trx);
      for (const row of rows.rows) {
        const result = await sql`
          UPDATE ${sql.table(table)} SET ${sql.ref(column)} = ${box.seal(row.value)}
          WHERE client_id = ${row.client_id} AND ${sql.ref(key)} = ${row.id} AND ${sql.ref(column)} = ${row.value}`.execute(
          trx,
        );
        sealed += Number(result.numAffectedRows ?? 0n);
      }
    }
    return sealed + (await sealWebhookUrlPasswords(trx, box));
  });
}

/** Moves a password still in a webhook URL into `url_password`, sealed; returns how many were moved. */
async function sealWebhookUrlPasswords(trx: Kysely<DB>, box: SecretBox): Promise<number> {
  const rows = await trx
    .selectFrom('webhook')
    .select(['client_id', 'id', 'url'])
    .where('url_password', 'is', null)
    .where('url', 'like', '%@%')
    .execute();
  let sealed = 0;
  for (const row of rows) {
    const { url, password } = splitUrlPassword(row.url);
    if (password === null) continue;
    const result = await trx
      .updateTable('webhook')
      .set({ url, url_password: box.seal(password) })
      .where('client_id', '=', row.client_id)
      .where('id', '=', row.id)
      .where('url', '=', row.url)
      .where('url_password', 'is', null)
      .executeTakeFirst();
    sealed += Number(result.numUpdatedRows);
  }
  return sealed;
}
