/**
 * The start-up set-up lock (P166, `docs/operations.md` "Several replicas"): everything a start does once per
 * database — our migrations, pg-boss's schema and queues, the sealing of legacy secrets, the demo account — runs
 * while holding one PostgreSQL session-level advisory lock. Concurrent starts queue behind each other and the
 * later ones find nothing left to do. The lock belongs to a connection of its own, so it is released when that
 * connection ends, also when the process is killed. On Citus advisory locks live on the coordinator, where the
 * service connects, so the plain `pg_advisory_lock` is right there too.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';

/**
 * Key of the set-up lock: the ASCII bytes of `sellerop` read as a big-endian signed 64-bit integer. Operators see
 * it as `pg_locks` rows with `locktype = 'advisory'`, `classid = 1936026732`, `objid = 1701998448`, `objsubid = 1`.
 */
export const SET_UP_LOCK_KEY = 8315171499823755120n;

/** SQLSTATEs of a set-up step that may succeed when run again: deadlock detected, serialization failure. */
const RETRIED_CODES = new Set(['40P01', '40001']);

/** Backoff before the retries of a set-up step: 100 ms doubling up to 5 s, with ±50 % jitter. */
const backoffMs = (attempt: number) => Math.min(5_000, 100 * 2 ** attempt) * (0.5 + Math.random());

/** Whether `error` (or the error it wraps) is a deadlock or serialization failure. */
export function isRetriedSetUpError(error: unknown): boolean {
  for (let cause = error; cause instanceof Error; cause = cause.cause)
    if (RETRIED_CODES.has((cause as { code?: string }).code ?? '')) return true;
  return false;
}

/** Options of `withSetUpLock`. */
export interface SetUpLockOptions {
  /** Told about every retry (the error's message; never a secret). */
  log?: (message: string) => void;
}

/**
 * Runs `work` while holding the set-up lock on the database of `databaseUrl`, waiting for the lock as long as
 * another process holds it. A deadlock or serialization failure of `work` runs it again after a backoff (it is
 * idempotent: every step checks what is already done), still holding the lock, as often as it happens.
 * @returns what `work` returns
 * @throws the first other error of `work`, or the error of connecting
 */
export async function withSetUpLock<T>(
  databaseUrl: string,
  work: () => Promise<T>,
  options: SetUpLockOptions = {},
): Promise<T> {
  const client = new pg.Client({ connectionString: databaseUrl, application_name: 'seller-ops set-up' });
  // A lost connection ends the lock; the work's own queries run on the pool and fail on their own.
  client.on('error', () => undefined);
  await client.connect();
  try {
    await client.query('select pg_advisory_lock($1)', [SET_UP_LOCK_KEY.toString()]);
    for (let attempt = 0; ; attempt++) {
      try {
        return await work();
      } catch (error) {
        if (!isRetriedSetUpError(error)) throw error;
        options.log?.(`start-up set-up: ${(error as Error).message}; retrying (attempt ${attempt + 2})`);
        await sleep(backoffMs(attempt));
      }
    }
  } finally {
    // Ending the session releases the lock (also when the unlock itself cannot be sent).
    await client.end().catch(() => undefined);
  }
}
