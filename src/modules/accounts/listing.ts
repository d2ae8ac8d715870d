/**
 * Read-only listings of the operator's accounts for the CLI (`seller-ops client list`, …): clients,
 * a client's organizations and users, a user's tokens. Tokens are listed without any secret (only their ids,
 * access, names and dates; the token itself was shown once at creation, P7).
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { acrossClients } from '../../db/cross-tenant.ts';
import { presentClient, presentOrganization, presentUser } from './presenter.ts';
import type { Client, Organization, User } from './schemas.ts';

/** A token as listed: never the token itself. */
export interface ListedToken {
  id: number;
  userId: number;
  access: 'READ' | 'WRITE';
  name: string | null;
  createdAt: string;
  /** ISO 8601 UTC, or null while the token is live. */
  revokedAt: string | null;
}

/** Every client that is not deleted, by id: the admin listing spanning clients (P176). */
export async function listClients(db: Kysely<DB>): Promise<Client[]> {
  const rows = await acrossClients(db, (trx) =>
    trx.selectFrom('client').selectAll().where('deleted', '=', false).orderBy('id').execute(),
  );
  return rows.map(presentClient);
}

/** The organizations of `clientId`, by id. */
export async function listOrganizations(db: Kysely<DB>, clientId: number): Promise<Organization[]> {
  const rows = await db
    .selectFrom('organization')
    .selectAll()
    .where('client_id', '=', clientId)
    .orderBy('id')
    .execute();
  return rows.map(presentOrganization);
}

/** The users of `clientId`, by id. */
export async function listUsers(db: Kysely<DB>, clientId: number): Promise<User[]> {
  const rows = await db
    .selectFrom('app_user')
    .selectAll()
    .where('client_id', '=', clientId)
    .orderBy('id')
    .execute();
  return rows.map(presentUser);
}

/** The tokens of `userId`, revoked ones included, by id: an admin listing by a bare user id (P176). */
export async function listTokens(db: Kysely<DB>, userId: number): Promise<ListedToken[]> {
  const rows = await acrossClients(db, (trx) =>
    trx
      .selectFrom('api_token')
      .select(['id', 'user_id', 'access', 'name', 'created_at', 'revoked_at'])
      .where('user_id', '=', userId)
      .orderBy('id')
      .execute(),
  );
  return rows.map((row) => ({
    id: row.id,
    userId: row.user_id,
    access: row.access,
    name: row.name,
    createdAt: row.created_at.toISOString(),
    revokedAt: row.revoked_at?.toISOString() ?? null,
  }));
}
