/**
 * In-memory caches of serialized inbound responses: one document per `GET /api/inbound/{orderId}` and one page
 * per `GET /api/inbound/find` query (the fast read paths of the inbound group).
 *
 * Each entry keeps its owner (the client id), so another client's request misses and gets the database's 404
 * like a missing id (D2.5). Entries belong to an invalidation group (a document: its id; a find page: its
 * client id) and are evicted least-recently-used beyond a size bound in bytes. Bodies are kept as UTF-8 bytes,
 * encoded once when stored: a hit is written to the socket without encoding its text again.
 *
 * Invalidation: the service calls `InboundCaches.invalidate` right after its commit, and
 * `notifyChange(trx, 'order', key)` inside the transaction with keys from `changeKeys`
 * (`<origin>/<clientId>/<id>,<id>,…`) for the other processes; a cache set ignores its own origin (already
 * dropped at commit). A lost listener connection drops everything.
 *
 * Race guard: a reader takes `beginRead()` before its query and `store()` keeps the body only if its group was
 * not invalidated since (per-group invalidation epochs), so a read that saw pre-commit data never lands after
 * the invalidation of that commit.
 */
import { randomUUID } from 'node:crypto';
import type { ChangeNotifier } from '../../db/notifications.ts';

interface Entry {
  owner: number;
  group: number;
  body: Buffer;
  /** The entity's `versionId` when the body was read, for a check against the database on a hit. */
  version: number | undefined;
}

/** A cached body and the version it was read at. */
export interface CachedBody {
  /** the serialized answer, UTF-8 */
  body: Buffer;
  version: number | undefined;
}

/** LRU cache of serialized bodies with per-group invalidation epochs. */
export class ResponseCache<K extends string | number> {
  private readonly entries = new Map<K, Entry>();
  private readonly keysOfGroup = new Map<number, Set<K>>();
  /** Epoch at which each recently changed group was last invalidated. */
  private readonly invalidatedAt = new Map<number, number>();
  private epoch = 0;
  /** Reads that began before this epoch may not store (set when everything is dropped). */
  private floor = 0;
  private bytes = 0;
  /** While false the cache neither serves nor stores (the change listener is down, P36). */
  private active: () => boolean = () => true;

  /**
   * @param maxBytes bound of the bodies' total size
   * @param maxTracked bound of remembered invalidation epochs (beyond it, reads in flight are refused)
   */
  constructor(
    private readonly maxBytes = 64 * 1024 * 1024,
    private readonly maxTracked = 100_000,
  ) {}

  /** Makes the cache serve and store only while `active()` is true (e.g. while LISTEN is active). */
  setActivity(active: () => boolean): void {
    this.active = active;
  }

  /** The cached body of `key` if it belongs to `owner` and the cache is active; refreshes its recency. */
  get(key: K, owner: number): CachedBody | undefined {
    if (!this.active()) return undefined;
    const entry = this.entries.get(key);
    if (!entry || entry.owner !== owner) return undefined;
    this.entries.delete(key);
    this.entries.set(key, entry);
    return { body: entry.body, version: entry.version };
  }

  /** A token to pass to `store` for a read that starts now. */
  beginRead(): number {
    return this.epoch;
  }

  /**
   * Caches `body` unless `group` was invalidated (or everything dropped) after `readStartedAt`.
   * @returns whether the body was stored
   */
  store(
    key: K,
    group: number,
    owner: number,
    body: Buffer,
    readStartedAt: number,
    version?: number,
  ): boolean {
    if (!this.active()) return false;
    if (readStartedAt < this.floor || (this.invalidatedAt.get(group) ?? -1) > readStartedAt) return false;
    if (body.length > this.maxBytes / 4) return false;
    this.remove(key);
    this.entries.set(key, { owner, group, body, version });
    this.bytes += body.length;
    const keys = this.keysOfGroup.get(group);
    if (keys) keys.add(key);
    else this.keysOfGroup.set(group, new Set([key]));
    while (this.bytes > this.maxBytes) {
      const oldest = this.entries.keys().next();
      if (oldest.done) break;
      this.remove(oldest.value);
    }
    return true;
  }

  /** Drops every entry of `group` and refuses stores of reads that began before now. */
  invalidate(group: number): void {
    this.epoch += 1;
    for (const key of this.keysOfGroup.get(group) ?? []) this.remove(key);
    this.invalidatedAt.set(group, this.epoch);
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
    this.keysOfGroup.clear();
    this.invalidatedAt.clear();
    this.bytes = 0;
  }

  /** Number of cached bodies. */
  get size(): number {
    return this.entries.size;
  }

  private remove(key: K): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.bytes -= entry.body.length;
    const keys = this.keysOfGroup.get(entry.group);
    keys?.delete(key);
    if (keys?.size === 0) this.keysOfGroup.delete(entry.group);
  }
}

/** Separator of the parts of an `order` change notification key. */
const PART_SEPARATOR = '/';
/** Separator of several ids in a key. */
const ID_SEPARATOR = ',';
/** Maximum length of one notification key (PostgreSQL allows < 8000 bytes per payload). */
const MAX_KEY_LENGTH = 7_000;

/** Joins ids into as few `<origin>/<clientId>/<ids>` notification keys as fit the payload limit. */
export function orderChangeKeys(origin: string, clientId: number, ids: readonly number[]): string[] {
  const prefix = `${origin}${PART_SEPARATOR}${clientId}${PART_SEPARATOR}`;
  const keys: string[] = [];
  let current = '';
  for (const id of ids) {
    const text = String(id);
    if (current !== '' && current.length + 1 + text.length > MAX_KEY_LENGTH) {
      keys.push(prefix + current);
      current = '';
    }
    current = current === '' ? text : `${current}${ID_SEPARATOR}${text}`;
  }
  if (current !== '') keys.push(prefix + current);
  return keys;
}

/** The document and find-page caches of one process, invalidated together. */
export class InboundCaches {
  /** Serialized documents by id; group = the document id. */
  readonly documents = new ResponseCache<number>(32 * 1024 * 1024);
  /** Serialized find pages by `<clientId> <url>`; group = the client id. */
  readonly lists = new ResponseCache<string>(16 * 1024 * 1024);
  /** Identifies this process's own notifications. */
  readonly origin = randomUUID();

  /**
   * Subscribes to `order` changes of other origins and to listener resets; both caches serve and store only
   * while the listener is active (P36).
   */
  attach(notifier: ChangeNotifier): void {
    this.documents.setActivity(() => notifier.listening);
    this.lists.setActivity(() => notifier.listening);
    notifier.on('order', (key) => {
      const [origin, client, list] = key.split(PART_SEPARATOR);
      if (origin === this.origin || client === undefined || list === undefined) return;
      const ids = list
        .split(ID_SEPARATOR)
        .map(Number)
        .filter((id) => Number.isSafeInteger(id));
      this.invalidate(Number(client), ids);
    });
    notifier.onReset(() => {
      this.documents.clear();
      this.lists.clear();
    });
  }

  /** Drops the given documents of `clientId` and every cached find page of that client. */
  invalidate(clientId: number, ids: readonly number[]): void {
    for (const id of ids) this.documents.invalidate(id);
    this.lists.invalidate(clientId);
  }

  /** Notification keys announcing that these documents of `clientId` changed. */
  changeKeys(clientId: number, ids: readonly number[]): string[] {
    return orderChangeKeys(this.origin, clientId, ids);
  }
}
