/**
 * In-memory cache of serialized `GET /api/inbound/{orderId}` bodies (the fast read path of the inbound group).
 *
 * Each entry keeps the owning client id, so another client's request misses and gets the database's 404 like a
 * missing id (D2.5). Entries are evicted least-recently-used beyond `maxEntries`. Invalidation: the service
 * calls `invalidate` right after its commit, and `notifyChange(trx, 'order', key)` inside the transaction for
 * the other processes (keys from `changeKeys`: `<origin>/<id>,<id>,…`; a cache ignores its own origin, whose
 * entries it already dropped); a lost listener connection drops everything.
 *
 * Race guard: a reader takes `beginRead()` before its query and `store()` keeps the body only if the key was not
 * invalidated since (per-key invalidation epochs), so a read that saw pre-commit data never lands after the
 * invalidation of that commit.
 */
import { randomUUID } from 'node:crypto';
import type { ChangeNotifier } from '../../db/notifications.ts';

interface Entry {
  clientId: number;
  body: string;
}

/** Separator of several ids in one `order` change notification key. */
const ID_SEPARATOR = ',';
/** Separator of the origin from the ids in a key. */
const ORIGIN_SEPARATOR = '/';

/** Maximum length of one notification key (PostgreSQL allows < 8000 bytes per payload). */
const MAX_KEY_LENGTH = 7_000;

/** Joins ids into as few `<origin>/<ids>` notification keys as fit the payload limit. */
export function orderChangeKeys(ids: readonly number[], origin: string): string[] {
  const keys: string[] = [];
  let current = '';
  for (const id of ids) {
    const text = String(id);
    if (current !== '' && current.length + 1 + text.length > MAX_KEY_LENGTH) {
      keys.push(`${origin}${ORIGIN_SEPARATOR}${current}`);
      current = '';
    }
    current = current === '' ? text : `${current}${ID_SEPARATOR}${text}`;
  }
  if (current !== '') keys.push(`${origin}${ORIGIN_SEPARATOR}${current}`);
  return keys;
}

/** LRU cache of serialized documents with invalidation epochs. */
export class OrderCache {
  private readonly entries = new Map<number, Entry>();
  /** Epoch at which each recently changed id was last invalidated. */
  private readonly invalidatedAt = new Map<number, number>();
  private epoch = 0;
  /** Reads that began before this epoch may not store (set when everything is dropped). */
  private floor = 0;
  /** Identifies this cache's own notifications (their entries were dropped at commit already). */
  readonly origin = randomUUID();

  constructor(
    private readonly maxEntries = 20_000,
    private readonly maxTracked = 100_000,
  ) {}

  /** Subscribes to `order` changes of other origins and to listener resets. */
  attach(notifier: ChangeNotifier): void {
    notifier.on('order', (key) => {
      const separator = key.indexOf(ORIGIN_SEPARATOR);
      if (separator >= 0 && key.slice(0, separator) === this.origin) return;
      for (const part of key.slice(separator + 1).split(ID_SEPARATOR)) {
        const id = Number(part);
        if (Number.isSafeInteger(id)) this.invalidate(id);
      }
    });
    notifier.onReset(() => this.clear());
  }

  /** Notification keys announcing that `ids` changed (see `orderChangeKeys`). */
  changeKeys(ids: readonly number[]): string[] {
    return orderChangeKeys(ids, this.origin);
  }

  /** The cached body of `id` if it belongs to `clientId`; refreshes its recency. */
  get(id: number, clientId: number): string | undefined {
    const entry = this.entries.get(id);
    if (!entry || entry.clientId !== clientId) return undefined;
    this.entries.delete(id);
    this.entries.set(id, entry);
    return entry.body;
  }

  /** A token to pass to `store` for a read that starts now. */
  beginRead(): number {
    return this.epoch;
  }

  /**
   * Caches `body` unless `id` was invalidated (or everything dropped) after `readStartedAt`.
   * @returns whether the body was stored
   */
  store(id: number, clientId: number, body: string, readStartedAt: number): boolean {
    if (readStartedAt < this.floor || (this.invalidatedAt.get(id) ?? -1) > readStartedAt) return false;
    this.entries.delete(id);
    this.entries.set(id, { clientId, body });
    if (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    return true;
  }

  /** Drops `id` and refuses stores of reads that began before now. */
  invalidate(id: number): void {
    this.epoch += 1;
    this.entries.delete(id);
    this.invalidatedAt.set(id, this.epoch);
    if (this.invalidatedAt.size > this.maxTracked) {
      // Forgetting the epochs is safe only if every read in flight is refused too.
      this.invalidatedAt.clear();
      this.floor = this.epoch;
    }
  }

  /** Drops everything (notifications may have been missed). */
  clear(): void {
    this.epoch += 1;
    this.floor = this.epoch;
    this.entries.clear();
    this.invalidatedAt.clear();
  }

  /** Number of cached bodies. */
  get size(): number {
    return this.entries.size;
  }
}
