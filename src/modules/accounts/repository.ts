/** SQL of the accounts group (D1): clients, organizations, users, tokens, integrations, cash registers. */
import type { Insertable, Kysely } from 'kysely';
import type { CashRegisterSettingTable, DB, PreparedIntegrationTable } from '../../db/schema.ts';
import { acrossClients } from '../../db/cross-tenant.ts';

/** Clients. */
export const clientRepository = {
  insert: (db: Kysely<DB>, values: { name: string; subscription_expires_at: string | null }) =>
    db.insertInto('client').values(values).returningAll().executeTakeFirstOrThrow(),
  update: (db: Kysely<DB>, id: number, values: { name?: string; subscription_expires_at?: string | null }) =>
    db.updateTable('client').set(values).where('id', '=', id).returningAll().executeTakeFirst(),
  findById: (db: Kysely<DB>, id: number) =>
    db.selectFrom('client').selectAll().where('id', '=', id).where('deleted', '=', false).executeTakeFirst(),
  /** Any client at all (the demo seed's question): spans clients (P176). */
  any: (db: Kysely<DB>) =>
    acrossClients(db, (trx) => trx.selectFrom('client').select('id').limit(1).executeTakeFirst()),
};

/** Organizations, always looked up within one client. */
export const organizationRepository = {
  insert: (db: Kysely<DB>, values: { client_id: number; name: string; inn: string | null }) =>
    db.insertInto('organization').values(values).returningAll().executeTakeFirstOrThrow(),
  /** The organization with this id, whatever its client: an admin lookup spanning clients (P176). */
  findById: (db: Kysely<DB>, id: number) =>
    acrossClients(db, (trx) =>
      trx.selectFrom('organization').selectAll().where('id', '=', id).executeTakeFirst(),
    ),
  /** The organization if it belongs to `clientId`. */
  findOfClient: (db: Kysely<DB>, clientId: number, id: number) =>
    db
      .selectFrom('organization')
      .selectAll()
      .where('id', '=', id)
      .where('client_id', '=', clientId)
      .executeTakeFirst(),
};

/** Users. */
export const userRepository = {
  insert: (
    db: Kysely<DB>,
    values: {
      client_id: number;
      name: string;
      lang: 'ru' | 'en' | null;
      role: 'OWNER' | 'ADMIN' | 'MANAGER' | 'SUPPORT';
    },
  ) => db.insertInto('app_user').values(values).returningAll().executeTakeFirstOrThrow(),
  /** The user with this id, whatever its client: an admin lookup spanning clients (P176). */
  findById: (db: Kysely<DB>, id: number) =>
    acrossClients(db, (trx) =>
      trx.selectFrom('app_user').selectAll().where('id', '=', id).executeTakeFirst(),
    ),
};

/** API tokens (hashes only). */
export const tokenRepository = {
  /** Stores a token and its hash's entry in `api_token_lookup` (how authentication finds the client); pass a transaction. */
  insert: async (
    db: Kysely<DB>,
    values: {
      client_id: number;
      user_id: number;
      token_hash: Buffer;
      access: 'READ' | 'WRITE';
      name: string | null;
    },
  ) => {
    await db
      .insertInto('api_token_lookup')
      .values({ token_hash: values.token_hash, client_id: values.client_id })
      .execute();
    return db
      .insertInto('api_token')
      .values(values)
      .returning(['id', 'access', 'name'])
      .executeTakeFirstOrThrow();
  },
  revoke: (db: Kysely<DB>, clientId: number, id: number) =>
    db
      .updateTable('api_token')
      .set({ revoked_at: new Date() })
      .where('client_id', '=', clientId)
      .where('id', '=', id)
      .where('revoked_at', 'is', null)
      .returning('id')
      .executeTakeFirst(),
  /** The client of the token with this id: an admin lookup spanning clients (P176). */
  clientOf: async (db: Kysely<DB>, id: number): Promise<number | undefined> =>
    (
      await acrossClients(db, (trx) =>
        trx.selectFrom('api_token').select('client_id').where('id', '=', id).executeTakeFirst(),
      )
    )?.client_id,
};

/** Prepared integrations: one per organization and service, replaced on repeat. */
export const integrationRepository = {
  upsert: (db: Kysely<DB>, values: Insertable<PreparedIntegrationTable> & { base_url: string | null }) =>
    db
      .insertInto('prepared_integration')
      .values(values)
      .onConflict((conflict) =>
        conflict
          .columns(['client_id', 'organization_id', 'service'])
          .doUpdateSet({ api_key: values.api_key, base_url: values.base_url }),
      )
      .returningAll()
      .executeTakeFirstOrThrow(),
};

/** Cash-register settings: one per organization, replaced on repeat. */
export const cashRegisterRepository = {
  upsert: (
    db: Kysely<DB>,
    values: Insertable<CashRegisterSettingTable> & {
      base_url: string | null;
      group_code: string | null;
      inn: string | null;
      company_email: string | null;
      payment_address: string | null;
      taxation_system: CashRegisterSettingTable['taxation_system'];
    },
  ) =>
    db
      .insertInto('cash_register_setting')
      .values(values)
      .onConflict((conflict) =>
        conflict.columns(['client_id', 'organization_id']).doUpdateSet({
          service: values.service,
          login: values.login,
          password: values.password,
          base_url: values.base_url,
          group_code: values.group_code,
          inn: values.inn,
          company_email: values.company_email,
          payment_address: values.payment_address,
          taxation_system: values.taxation_system,
        }),
      )
      .returningAll()
      .executeTakeFirstOrThrow(),
};
