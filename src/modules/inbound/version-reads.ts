/**
 * The version check of cached documents (P36), coalesced (P185): concurrent checks share one query per client,
 * each id looked up by the primary key in one statement (`orderRepository.versionsOf`), instead of one read each.
 *
 * A check joins the next query that has not started yet: it starts once the query in flight (if any) has
 * answered. So every check is answered by a read that began after the check was asked, and a change committed
 * (and answered) by another process before a GET arrived is seen by that GET, exactly as with a read of its own.
 */

/** Reads the current `versionId` of the given documents of one client (missing ids are left out). */
export type ReadVersions = (clientId: number, ids: number[]) => Promise<Map<number, number>>;

interface Waiter {
  resolve: (version: number | undefined) => void;
  reject: (error: unknown) => void;
}

/** Coalesces version reads: at most one query per client in flight, the checks asked meanwhile in the next. */
export class VersionReads {
  /** Checks waiting for the next query, by client and document id. */
  private waiting = new Map<number, Map<number, Waiter[]>>();
  /** Whether a query is running or about to start (then new checks wait for the one after it). */
  private busy = false;

  constructor(private readonly read: ReadVersions) {}

  /**
   * The stored `versionId` of document `id` of `clientId`, read after this call.
   * @returns undefined for a missing or foreign id
   * @throws what the database read throws
   */
  versionOf(clientId: number, id: number): Promise<number | undefined> {
    return new Promise((resolve, reject) => {
      let ofClient = this.waiting.get(clientId);
      if (!ofClient) {
        ofClient = new Map();
        this.waiting.set(clientId, ofClient);
      }
      const waiters = ofClient.get(id);
      if (waiters) waiters.push({ resolve, reject });
      else ofClient.set(id, [{ resolve, reject }]);
      if (!this.busy) {
        this.busy = true;
        queueMicrotask(() => void this.flush());
      }
    });
  }

  /** Runs the waiting checks (one query per client), then the ones asked meanwhile. */
  private async flush(): Promise<void> {
    const batch = this.waiting;
    this.waiting = new Map();
    await Promise.all(
      [...batch].map(async ([clientId, ofClient]) => {
        try {
          const versions = await this.read(clientId, [...ofClient.keys()]);
          for (const [id, waiters] of ofClient)
            for (const waiter of waiters) waiter.resolve(versions.get(id));
        } catch (error) {
          for (const waiters of ofClient.values()) for (const waiter of waiters) waiter.reject(error);
        }
      }),
    );
    if (this.waiting.size > 0) void this.flush();
    else this.busy = false;
  }
}
