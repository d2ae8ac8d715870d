/**
 * Cross-process change notifications over PostgreSQL LISTEN/NOTIFY, used to keep in-memory caches (tokens,
 * rendered documents) correct when several service processes share one database.
 *
 * A notification sent inside a transaction is delivered only when it commits. When the listening connection is
 * lost, `listening` turns false and every `onReset` handler runs (caches drop everything); the listener
 * reconnects, and once LISTEN is active again `listening` turns true and the `onReset` handlers run once more
 * (whatever a cache took in between is dropped). Caches must neither serve nor fill while `listening` is
 * false (P36): a notification missed in the gap would leave them stale with no end.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { Kysely } from 'kysely';
import { sql } from 'kysely';

const CHANNEL = 'seller_ops_changes';

/** Kinds of change announced on the channel; the key identifies what changed. */
export type ChangeKind = 'token' | 'client' | 'order' | 'webhook' | 'task';

type Handler = (key: string) => void;

/** Listens for change notifications and dispatches them to handlers by kind. */
export class ChangeNotifier {
  private readonly handlers = new Map<ChangeKind, Handler[]>();
  private readonly resetHandlers: Array<() => void> = [];
  private client: pg.Client | undefined;
  private closed = false;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private active = false;
  /** Connection losses so far; a LISTEN after one runs the reset handlers again. */
  private resetsSinceStart = 0;
  /** `application_name` of the listening connection (unique per process; operators and tests find it by it). */
  readonly applicationName = `seller-ops-listener-${randomUUID().slice(0, 8)}`;

  /** @param reconnectDelayMs wait before reconnecting after the connection was lost */
  constructor(
    private readonly connectionString: string,
    private readonly reconnectDelayMs = 500,
  ) {}

  /** Whether LISTEN is active now, so no change notification can be missed. */
  get listening(): boolean {
    return this.active;
  }

  /** Registers a handler for one kind of change. */
  on(kind: ChangeKind, handler: Handler): void {
    const list = this.handlers.get(kind) ?? [];
    list.push(handler);
    this.handlers.set(kind, list);
  }

  /** Registers a handler run when notifications may have been missed (connection lost). */
  onReset(handler: () => void): void {
    this.resetHandlers.push(handler);
  }

  /** Connects and starts listening. Resolves once LISTEN is active. */
  async start(): Promise<void> {
    const client = new pg.Client({
      connectionString: this.connectionString,
      application_name: this.applicationName,
    });
    client.on('notification', (message) => this.dispatch(message.payload ?? ''));
    client.on('error', () => this.reconnect());
    client.on('end', () => this.reconnect());
    await client.connect();
    await client.query(`LISTEN ${CHANNEL}`);
    this.client = client;
    const reconnected = this.resetsSinceStart > 0;
    this.active = true;
    if (reconnected) for (const handler of this.resetHandlers) handler();
  }

  /** Stops listening and closes the connection. */
  async close(): Promise<void> {
    this.closed = true;
    this.active = false;
    clearTimeout(this.reconnectTimer);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  /** Delivers a change to this process's handlers at once (the NOTIFY reaches the other processes). */
  dispatchLocal(kind: ChangeKind, key: string): void {
    this.dispatch(`${kind}:${key}`);
  }

  private dispatch(payload: string): void {
    const separator = payload.indexOf(':');
    if (separator < 0) return;
    const kind = payload.slice(0, separator) as ChangeKind;
    const key = payload.slice(separator + 1);
    for (const handler of this.handlers.get(kind) ?? []) handler(key);
  }

  private reconnect(): void {
    if (this.closed || this.reconnectTimer) return;
    this.active = false;
    this.resetsSinceStart += 1;
    this.client = undefined;
    for (const handler of this.resetHandlers) handler();
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      this.start().catch(() => this.reconnect());
    }, this.reconnectDelayMs);
  }
}

/**
 * Announces a change inside the caller's transaction; it reaches every process's listener on commit.
 * @param db a transaction (or the pool for an immediate notification)
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- works on any schema: it only calls pg_notify
export async function notifyChange(db: Kysely<any>, kind: ChangeKind, key: string | number): Promise<void> {
  await sql`select pg_notify(${CHANNEL}, ${`${kind}:${key}`})`.execute(db);
}
