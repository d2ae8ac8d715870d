/**
 * SQL of the idempotency keys (migration 0011, D3.2, P120–P124). Every query names the caller's client or a claim
 * (row id and the claiming request's token); times are compared on the database's clock, so processes with
 * skewed clocks agree on leases and expiry.
 */
import { sql, type ColumnType, type Generated, type Kysely } from 'kysely';
import type { CreatedAt, DB } from '../db/schema.ts';
import { acrossClients } from '../db/cross-tenant.ts';

/** Kysely table type of `idempotency_key`. */
export interface IdempotencyKeyTable {
  id: Generated<number>;
  client_id: number;
  key: string;
  /** SHA-256 of method, path, query string and body. */
  fingerprint: Buffer;
  claim_token: string;
  /** Lease of the claim; null once the answer is stored. */
  locked_until: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  /** What the request committed before its answer (JSON), set with that early commit (P122). */
  checkpoint: ColumnType<unknown, string | null | undefined, string | null>;
  response_status: number | null;
  response_content_type: string | null;
  response_body: Buffer | null;
  created_at: CreatedAt;
  expires_at: ColumnType<Date, Date | string, Date | string>;
}

declare module '../db/schema.ts' {
  interface DB {
    idempotency_key: IdempotencyKeyTable;
  }
}

/** A stored answer: status, content type and exact body bytes (sealed in the table, plain elsewhere). */
export interface StoredAnswer {
  status: number;
  contentType: string | null;
  body: Buffer;
}

/** The claim a request holds on its key. */
export interface Claim {
  clientId: number;
  id: number;
  token: string;
}

/** A key's row as a repeat finds it; times already compared with the database's `now()`. */
export interface KeyState {
  id: number;
  token: string;
  fingerprint: Buffer;
  answer: StoredAnswer | undefined;
  /** The claim's lease has not passed yet. */
  leased: boolean;
  /** The key is past its retention and counts as unused. */
  expired: boolean;
}

const seconds = (count: number) => sql<Date>`now() + make_interval(secs => ${count})`;

export const idempotencyRepository = {
  /**
   * Inserts the claim of a new key; undefined when the client already has this key.
   *
   * Committed asynchronously (`synchronous_commit` off for this statement's own transaction): the claim needs no
   * WAL flush of its own. Every transaction that changes something under the claim updates its row and commits
   * synchronously later in the WAL, which flushes the claim with it; a claim lost in a database crash belonged to
   * a request whose transaction was lost too, so a repeat just claims again (P121).
   */
  claim: async (
    db: Kysely<DB>,
    values: {
      clientId: number;
      key: string;
      fingerprint: Buffer;
      token: string;
      leaseSeconds: number;
      retentionSeconds: number;
    },
  ): Promise<number | undefined> =>
    (
      await sql<{ id: number }>`
        with async_commit as (select set_config('synchronous_commit', 'off', true))
        insert into idempotency_key (client_id, key, fingerprint, claim_token, locked_until, expires_at)
        select ${values.clientId}, ${values.key}, ${values.fingerprint}, ${values.token},
               ${seconds(values.leaseSeconds)}, ${seconds(values.retentionSeconds)}
        from async_commit
        on conflict (client_id, key) do nothing
        returning id`.execute(db)
    ).rows[0]?.id,

  /** The client's row of `key`, if any. */
  find: async (db: Kysely<DB>, clientId: number, key: string): Promise<KeyState | undefined> => {
    const row = await db
      .selectFrom('idempotency_key')
      .select([
        'id',
        'claim_token',
        'fingerprint',
        'response_status',
        'response_content_type',
        'response_body',
        sql<boolean>`coalesce(locked_until > now(), false)`.as('leased'),
        sql<boolean>`expires_at <= now()`.as('expired'),
      ])
      .where('client_id', '=', clientId)
      .where('key', '=', key)
      .executeTakeFirst();
    if (!row) return undefined;
    return {
      id: row.id,
      token: row.claim_token,
      fingerprint: row.fingerprint,
      answer:
        row.response_status === null
          ? undefined
          : {
              status: row.response_status,
              contentType: row.response_content_type,
              body: row.response_body ?? Buffer.alloc(0),
            },
      leased: row.leased,
      expired: row.expired,
    };
  },

  /** Deletes the row `id` if it is past its retention. */
  deleteExpired: async (db: Kysely<DB>, clientId: number, id: number): Promise<void> => {
    await db
      .deleteFrom('idempotency_key')
      .where('client_id', '=', clientId)
      .where('id', '=', id)
      .where('expires_at', '<=', sql<Date>`now()`)
      .execute();
  },

  /**
   * Takes over the claim `previous` of a request that died: only while it has no answer, its lease has passed and
   * no transaction locks it (a request still running holds the lock).
   * @returns the new claim's early-commit state, or undefined when the claim could not be taken
   */
  takeOver: async (
    db: Kysely<DB>,
    previous: Claim,
    token: string,
    leaseSeconds: number,
  ): Promise<{ committedEarly: boolean; checkpoint: unknown } | undefined> => {
    const row = await db
      .updateTable('idempotency_key')
      .set({ claim_token: token, locked_until: seconds(leaseSeconds) })
      .where('client_id', '=', previous.clientId)
      .where('id', '=', (eb) =>
        eb
          .selectFrom('idempotency_key')
          .select('id')
          .where('client_id', '=', previous.clientId)
          .where('id', '=', previous.id)
          .where('claim_token', '=', previous.token)
          .where('response_status', 'is', null)
          .where('locked_until', '<=', sql<Date>`now()`)
          .forUpdate()
          .skipLocked(),
      )
      .returning(['checkpoint', sql<boolean>`checkpoint is not null`.as('committed_early')])
      .executeTakeFirst();
    return row && { committedEarly: row.committed_early, checkpoint: row.checkpoint };
  },

  /** Locks the claim for the rest of the transaction; false when it is no longer `claim`'s. */
  lock: async (db: Kysely<DB>, claim: Claim): Promise<boolean> =>
    (await db
      .selectFrom('idempotency_key')
      .select('id')
      .where('client_id', '=', claim.clientId)
      .where('id', '=', claim.id)
      .where('claim_token', '=', claim.token)
      .forUpdate()
      .executeTakeFirst()) !== undefined,

  /** Records the checkpoint of an early commit and renews the claim's lease (P122). */
  recordCheckpoint: async (
    db: Kysely<DB>,
    claim: Claim,
    checkpoint: unknown,
    leaseSeconds: number,
  ): Promise<boolean> =>
    (
      await db
        .updateTable('idempotency_key')
        .set({ checkpoint: JSON.stringify(checkpoint ?? null), locked_until: seconds(leaseSeconds) })
        .where('client_id', '=', claim.clientId)
        .where('id', '=', claim.id)
        .where('claim_token', '=', claim.token)
        .executeTakeFirst()
    ).numUpdatedRows > 0n,

  /** Stores the answer of `claim`'s request; false when the claim is no longer its. */
  storeAnswer: async (db: Kysely<DB>, claim: Claim, answer: StoredAnswer): Promise<boolean> =>
    (
      await db
        .updateTable('idempotency_key')
        .set({
          response_status: answer.status,
          response_content_type: answer.contentType,
          response_body: answer.body,
          locked_until: null,
        })
        .where('client_id', '=', claim.clientId)
        .where('id', '=', claim.id)
        .where('claim_token', '=', claim.token)
        .executeTakeFirst()
    ).numUpdatedRows > 0n,

  /** Deletes `claim` unless an answer or an early commit was stored under it (the key is free again). */
  release: async (db: Kysely<DB>, claim: Claim): Promise<void> => {
    await db
      .deleteFrom('idempotency_key')
      .where('client_id', '=', claim.clientId)
      .where('id', '=', claim.id)
      .where('claim_token', '=', claim.token)
      .where('response_status', 'is', null)
      .where('checkpoint', 'is', null)
      .execute();
  },

  /**
   * Deletes up to `limit` keys past their retention (rows locked by a running request are skipped): a purge
   * spanning clients (P176) that finds the expired keys first, then deletes them client by client (each delete on
   * one client's shard, where `FOR UPDATE SKIP LOCKED` is allowed).
   * @returns how many were deleted
   */
  purgeExpired: async (db: Kysely<DB>, limit: number): Promise<number> => {
    const expired = await acrossClients(db, (trx) =>
      trx
        .selectFrom('idempotency_key')
        .select(['client_id', 'id'])
        .where('expires_at', '<=', sql<Date>`now()`)
        .limit(limit)
        .execute(),
    );
    const byClient = new Map<number, number[]>();
    for (const row of expired) byClient.set(row.client_id, [...(byClient.get(row.client_id) ?? []), row.id]);
    let deleted = 0;
    for (const [clientId, ids] of byClient) {
      const result = await db
        .deleteFrom('idempotency_key')
        .where('client_id', '=', clientId)
        .where('id', 'in', (eb) =>
          eb
            .selectFrom('idempotency_key')
            .select('id')
            .where('client_id', '=', clientId)
            .where('id', 'in', ids)
            .where('expires_at', '<=', sql<Date>`now()`)
            .forUpdate()
            .skipLocked(),
        )
        .executeTakeFirst();
      deleted += Number(result.numDeletedRows);
    }
    return deleted;
  },
};
