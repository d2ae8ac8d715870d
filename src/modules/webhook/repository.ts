/**
 * SQL of the webhook group (D9): subscriptions, outbox events and the delivery log. Every query an API call makes
 * is scoped by the caller's `client_id`; the dispatcher's by the client its delivery jobs carry (one client's shard on
 * Citus, P176).
 */
import { sql, type Insertable, type Kysely } from 'kysely';
import type { DB, WebhookTable } from '../../db/schema.ts';
import { acrossClients } from '../../db/cross-tenant.ts';
import { pageBounds } from '../../db/page-bounds.ts';

/** Terminal and pending states of a delivery. */
export type DeliveryStatus = 'PENDING' | 'DELIVERED' | 'FAILED' | 'CANCELLED';

/** Subscriptions. A deleted one (`deleted_at`) is invisible to the API; a disabled one gets no deliveries. */
export const webhookRepository = {
  insert: (db: Kysely<DB>, values: Insertable<WebhookTable>) =>
    db.insertInto('webhook').values(values).returningAll().executeTakeFirstOrThrow(),

  /** The client's subscriptions that are not deleted, oldest first. */
  listOfClient: (db: Kysely<DB>, clientId: number) =>
    db
      .selectFrom('webhook')
      .selectAll()
      .where('client_id', '=', clientId)
      .where('deleted_at', 'is', null)
      .orderBy('id')
      .execute(),

  /** The subscription if it belongs to `clientId` and is not deleted. */
  findOfClient: (db: Kysely<DB>, clientId: number, id: number) =>
    db
      .selectFrom('webhook')
      .selectAll()
      .where('id', '=', id)
      .where('client_id', '=', clientId)
      .where('deleted_at', 'is', null)
      .executeTakeFirst(),

  /** Marks the subscription deleted; undefined when it is unknown, foreign or already deleted. */
  softDelete: (db: Kysely<DB>, clientId: number, id: number) =>
    db
      .updateTable('webhook')
      .set({ deleted_at: sql<Date>`now()` })
      .where('id', '=', id)
      .where('client_id', '=', clientId)
      .where('deleted_at', 'is', null)
      .returning('id')
      .executeTakeFirst(),

  /** Live (not deleted, not disabled) subscriptions of the client: the outbox's hot-path query. */
  liveOfClient: (db: Kysely<DB>, clientId: number) =>
    db
      .selectFrom('webhook')
      .select(['id', 'client_id', 'organization_id', 'types'])
      .where('client_id', '=', clientId)
      .where('deleted_at', 'is', null)
      .where('disabled_at', 'is', null)
      .execute(),

  /**
   * Replaces the secret with `sealedSecret`; the replaced one keeps signing for `graceSeconds` (none when 0).
   * @returns the updated row; undefined when the subscription is unknown, foreign or deleted
   */
  rotateSecret: (db: Kysely<DB>, clientId: number, id: number, sealedSecret: string, graceSeconds: number) =>
    db
      .updateTable('webhook')
      .set({
        secret: sealedSecret,
        previous_secret: graceSeconds > 0 ? sql<string>`secret` : null,
        previous_secret_expires_at:
          graceSeconds > 0 ? sql<Date>`now() + make_interval(secs => ${graceSeconds})` : null,
      })
      .where('id', '=', id)
      .where('client_id', '=', clientId)
      .where('deleted_at', 'is', null)
      .returningAll()
      .executeTakeFirst(),

  /** Records that the endpoint answered 429/502/503/504: no delivery before `until`, at `level` such answers in a row. */
  throttle: (db: Kysely<DB>, clientId: number, id: number, until: Date, level: number) =>
    db
      .updateTable('webhook')
      .set({ throttled_until: until, throttle_level: level })
      .where('client_id', '=', clientId)
      .where('id', '=', id)
      .execute(),

  /** Ends the throttling of an endpoint that accepted a delivery. */
  endThrottle: (db: Kysely<DB>, clientId: number, id: number) =>
    db
      .updateTable('webhook')
      .set({ throttled_until: null, throttle_level: 0 })
      .where('client_id', '=', clientId)
      .where('id', '=', id)
      .execute(),

  /** Stops deliveries to a subscription whose receiver answered 410 Gone. */
  disable: (db: Kysely<DB>, clientId: number, id: number, reason: string) =>
    db
      .updateTable('webhook')
      .set({ disabled_at: sql<Date>`now()`, disabled_reason: reason })
      .where('client_id', '=', clientId)
      .where('id', '=', id)
      .where('disabled_at', 'is', null)
      .execute(),
};

/** One outbox event row. */
export interface EventInsert {
  id: string;
  client_id: number;
  organization_id: number;
  type: string;
  entity_id: number;
  payload: string;
}

/** A delivery loaded for sending, with what the request needs. */
export interface DispatchRow {
  id: number;
  client_id: number;
  status: DeliveryStatus;
  attempts: number;
  webhook_id: number;
  url: string;
  /** The URL's password, sealed (P221), or null. */
  url_password: string | null;
  secret: string;
  /** The secret before the last rotation while its grace period lasts (P167), else null. */
  previous_secret: string | null;
  /** Set while the endpoint is throttled (P168): no attempt before it. */
  throttled_until: Date | null;
  throttle_level: number;
  webhook_live: boolean;
  event_id: string;
  type: string;
  payload: string;
}

/** The outcome of one attempt, as stored on the delivery row. */
export interface AttemptRecord {
  id: number;
  /** `attempts` the job expected; a row that moved on meanwhile is left alone (stale job). */
  expectedAttempts: number;
  status: DeliveryStatus;
  statusCode: number | null;
  error: string | null;
  nextAttemptAt: Date | null;
  deliveredAt: Date | null;
}

/** Events and deliveries. */
/**
 * Plans the rest of the caller's transaction's statements for their values (`plan_cache_mode`), for an update
 * joined to `unnest()` of its rows: on Citus such a statement reaches one shard only in a plan made for its
 * values, and a prepared statement's generic plan would need every shard (refused by the multi-shard guard,
 * docs/scale-out.md). On plain PostgreSQL it only skips the generic plan of these statements.
 */
async function customPlans(db: Kysely<DB>): Promise<void> {
  await sql`set local plan_cache_mode = force_custom_plan`.execute(db);
}

export const deliveryRepository = {
  insertEvents: (db: Kysely<DB>, rows: EventInsert[]) =>
    db.insertInto('webhook_event').values(rows).execute(),

  /** Inserts PENDING deliveries due now; returns their ids. */
  insertDeliveries: async (
    db: Kysely<DB>,
    rows: Array<{ client_id: number; webhook_id: number; event_id: string }>,
  ) => (await db.insertInto('webhook_delivery').values(rows).returning('id').execute()).map((row) => row.id),

  /** Cancels the subscription's pending deliveries (deleted or disabled subscription). */
  cancelPending: (db: Kysely<DB>, clientId: number, webhookId: number, reason: string) =>
    db
      .updateTable('webhook_delivery')
      .set({ status: 'CANCELLED', next_attempt_at: null, last_error: reason })
      .where('client_id', '=', clientId)
      .where('webhook_id', '=', webhookId)
      .where('status', '=', 'PENDING')
      .execute(),

  /**
   * Loads deliveries of `clientId` with their subscription and event for the dispatcher: each subscription and
   * event looked up by its key (lateral probes, `OFFSET 0` keeps them so), never a scan of the client's rows.
   * Each probe names the client as a value too, so Citus routes the whole statement to the client's shard.
   */
  loadForDispatch: async (db: Kysely<DB>, clientId: number, ids: number[]): Promise<DispatchRow[]> =>
    (
      await sql<DispatchRow>`
        select d.id, d.client_id, d.status, d.attempts, d.webhook_id, w.url, w.url_password, w.secret,
          case when w.previous_secret_expires_at > now() then w.previous_secret end as previous_secret,
          case when w.throttled_until > now() then w.throttled_until end as throttled_until,
          w.throttle_level,
          w.deleted_at is null and w.disabled_at is null as webhook_live, e.id as event_id, e.type, e.payload
        from webhook_delivery d
        cross join lateral (
          select url, url_password, secret, previous_secret, previous_secret_expires_at, throttled_until,
            throttle_level, deleted_at, disabled_at
          from webhook
          where client_id = ${clientId} and client_id = d.client_id and id = d.webhook_id offset 0
        ) w
        cross join lateral (
          select id, type, payload from webhook_event
          where client_id = ${clientId} and client_id = d.client_id and id = d.event_id offset 0
        ) e
        where d.client_id = ${clientId} and d.id = any(${ids}::bigint[])`.execute(db)
    ).rows,

  /**
   * The clients of deliveries by id, for delivery jobs queued before jobs carried their client: spans clients
   * (P176).
   */
  clientsOf: (db: Kysely<DB>, ids: number[]) =>
    acrossClients(db, (trx) =>
      trx.selectFrom('webhook_delivery').select(['id', 'client_id']).where('id', 'in', ids).execute(),
    ),

  /**
   * Stores attempt outcomes (one statement); a row is updated only while it is PENDING with the expected attempt
   * count, so a stale or concurrent job never records twice.
   * @returns the rows updated, with their new attempt count
   */
  recordAttempts: async (db: Kysely<DB>, clientId: number, records: AttemptRecord[]) => {
    if (records.length === 0) return [];
    await customPlans(db);
    const result = await sql<{ id: number; attempts: number; status: DeliveryStatus }>`
      update webhook_delivery d set
        attempts = d.attempts + 1,
        status = v.status,
        last_status_code = v.status_code,
        last_error = v.error,
        last_attempt_at = now(),
        next_attempt_at = v.next_attempt_at,
        delivered_at = v.delivered_at
      from unnest(
        ${records.map((r) => r.id)}::bigint[],
        ${records.map((r) => r.expectedAttempts)}::int[],
        ${records.map((r) => r.status)}::text[],
        ${records.map((r) => r.statusCode)}::int[],
        ${records.map((r) => r.error)}::text[],
        ${records.map((r) => r.nextAttemptAt?.toISOString() ?? null)}::timestamptz[],
        ${records.map((r) => r.deliveredAt?.toISOString() ?? null)}::timestamptz[]
      ) as v(id, expected_attempts, status, status_code, error, next_attempt_at, delivered_at)
      where d.client_id = ${clientId} and d.id = v.id and d.attempts = v.expected_attempts and d.status = 'PENDING'
      returning d.id, d.attempts, d.status`.execute(db);
    return result.rows;
  },

  /**
   * Moves the next attempt of pending deliveries to `until` without counting an attempt (a throttled endpoint);
   * a row that moved on meanwhile is left alone.
   * @returns the rows moved, with their attempt count
   */
  defer: async (
    db: Kysely<DB>,
    clientId: number,
    rows: Array<{ id: number; expectedAttempts: number; until: Date }>,
  ) => {
    if (rows.length === 0) return [];
    await customPlans(db);
    const result = await sql<{ id: number; client_id: number; attempts: number; next_attempt_at: Date }>`
      update webhook_delivery d set next_attempt_at = v.until
      from unnest(
        ${rows.map((r) => r.id)}::bigint[],
        ${rows.map((r) => r.expectedAttempts)}::int[],
        ${rows.map((r) => r.until.toISOString())}::timestamptz[]
      ) as v(id, expected_attempts, until)
      where d.client_id = ${clientId} and d.id = v.id and d.attempts = v.expected_attempts
        and d.status = 'PENDING'
      returning d.id, d.client_id, d.attempts, d.next_attempt_at`.execute(db);
    return result.rows;
  },

  /**
   * A page of a subscription's deliveries, newest first, with the event kind and entity: `limit + 1` rows when
   * there is a next page, after `offset` rows or below the id of a cursor's row (P172).
   */
  pageOfWebhook: (
    db: Kysely<DB>,
    clientId: number,
    webhookId: number,
    limit: number,
    from: { offset: number } | { afterId: number },
  ) =>
    db
      .selectFrom('webhook_delivery as d')
      .innerJoin('webhook_event as e', (join) =>
        join.onRef('e.client_id', '=', 'd.client_id').onRef('e.id', '=', 'd.event_id'),
      )
      .selectAll('d')
      .select(['e.type', 'e.entity_id'])
      .where('d.client_id', '=', clientId)
      .where('d.webhook_id', '=', webhookId)
      .$if('afterId' in from, (qb) => qb.where('d.id', '<', (from as { afterId: number }).afterId))
      .orderBy('d.id', 'desc')
      // The subscription is part of the key, not a filter (P202).
      .$call((qb) => pageBounds(qb, limit + 1, 'offset' in from ? from.offset : 0, false))
      .execute(),

  countOfWebhook: async (db: Kysely<DB>, clientId: number, webhookId: number) =>
    Number(
      (
        await db
          .selectFrom('webhook_delivery')
          .select((eb) => eb.fn.countAll<string>().as('count'))
          .where('client_id', '=', clientId)
          .where('webhook_id', '=', webhookId)
          .executeTakeFirstOrThrow()
      ).count,
    ),

  /** One delivery with its event, if it belongs to that client's subscription. */
  findOfWebhook: (db: Kysely<DB>, clientId: number, webhookId: number, deliveryId: number) =>
    db
      .selectFrom('webhook_delivery as d')
      .innerJoin('webhook_event as e', (join) =>
        join.onRef('e.client_id', '=', 'd.client_id').onRef('e.id', '=', 'd.event_id'),
      )
      .selectAll('d')
      .select(['e.type', 'e.entity_id'])
      .where('d.id', '=', deliveryId)
      .where('d.client_id', '=', clientId)
      .where('d.webhook_id', '=', webhookId)
      .executeTakeFirst(),

  /** Makes a delivery PENDING and due now (manual redelivery); returns the row. */
  reopen: (db: Kysely<DB>, clientId: number, deliveryId: number) =>
    db
      .updateTable('webhook_delivery')
      .set({ status: 'PENDING', next_attempt_at: sql<Date>`now()` })
      .where('client_id', '=', clientId)
      .where('id', '=', deliveryId)
      .returningAll()
      .executeTakeFirstOrThrow(),
};
