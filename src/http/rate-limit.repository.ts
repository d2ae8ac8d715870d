/**
 * SQL of the rate-limit counters (migration 0014, P126–P127): one atomic upsert per counted request and the purge
 * of ended windows. Times are the database's clock, so processes with skewed clocks agree on windows.
 */
import { sql, type ColumnType, type Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';

/** Kysely table type of `rate_limit_counter`. */
export interface RateLimitCounterTable {
  /** `token:<SHA-256 of the token, base64url>` or `ip:<address>` (P125). */
  key: string;
  /** Requests counted in the current window. */
  count: ColumnType<string, number, number>;
  window_ends_at: ColumnType<Date, Date | string, Date | string>;
}

declare module '../db/schema.ts' {
  interface DB {
    rate_limit_counter: RateLimitCounterTable;
  }
}

/** A counter after one increment. */
export interface CounterState {
  /** Requests counted in the window, this one included. */
  current: number;
  /** Milliseconds until the window ends (≥ 0). */
  ttl: number;
}

/** SQL of `rate_limit_counter`. */
export const rateLimitRepository = {
  /**
   * Counts one request of `key`: a new window of `windowMs` when there is none or the last one ended, else one
   * more in the current window. One statement, atomic under concurrency (the row lock serialises increments).
   */
  async increment(db: Kysely<DB>, key: string, windowMs: number): Promise<CounterState> {
    const { rows } = await sql<{ current: string; ttl: number }>`
      INSERT INTO rate_limit_counter AS counter (key, count, window_ends_at)
      VALUES (${key}, 1, now() + ${windowMs} * interval '1 millisecond')
      ON CONFLICT (key) DO UPDATE SET
        count = CASE WHEN counter.window_ends_at <= now() THEN 1 ELSE counter.count + 1 END,
        window_ends_at = CASE
          WHEN counter.window_ends_at <= now() THEN excluded.window_ends_at
          ELSE counter.window_ends_at
        END
      RETURNING count AS current,
        greatest(0, ceil(extract(epoch FROM window_ends_at - now()) * 1000))::float8 AS ttl`.execute(db);
    const row = rows[0] as { current: string; ttl: number };
    return { current: Number(row.current), ttl: row.ttl };
  },

  /** Deletes at most `limit` counters whose window ended. @returns how many were deleted */
  async purgeEnded(db: Kysely<DB>, limit: number): Promise<number> {
    const result = await sql`
      DELETE FROM rate_limit_counter WHERE key IN (
        SELECT key FROM rate_limit_counter WHERE window_ends_at < now() LIMIT ${limit} FOR UPDATE SKIP LOCKED
      )`.execute(db);
    return Number(result.numAffectedRows ?? 0);
  },
};
