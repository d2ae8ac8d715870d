/**
 * The changes of one HTTP request whose commit waits for its answer (an idempotent request, D3.2, P121): the
 * answer has to be stored in the same transaction as the change, and it exists only once the service has returned
 * and the response is serialized. So `ChangeRunner.run` does not commit such a change: the request's
 * `RequestCommit` keeps the transaction open (a Kysely controlled transaction), and the reply commits it together
 * with the stored answer (`commit`) right before the bytes go out, or rolls it back (`rollback`).
 *
 * The request's `RequestCommit` is found through `AsyncLocalStorage` (`RequestCommit.current()`), so services keep
 * calling `changes.run` and need not know whether a request is idempotent. On Node 20 a live `AsyncLocalStorage`
 * keeps async hooks on for the whole process, which doubles the cost of every promise and tick of every request; so
 * the storage is live only while an entered request commit is open, and is disabled when the last one closes (P217).
 * Within one request:
 * - the first change opens the transaction; its guard runs first in it (locks the request's idempotency key);
 * - a later change joins that transaction behind a savepoint: it commits with the answer too, and its failure rolls
 *   back only its own work, as if it had been a transaction of its own;
 * - `commitNow` commits what the request changed so far at once (for a change that must be durable before an
 *   external call), recording a checkpoint through the guard; the next change opens a new transaction.
 * Changes of one request run one after another, never concurrently.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { ControlledTransaction, Kysely, Transaction } from 'kysely';
import type { DB } from '../db/schema.ts';

/** A step run inside a transaction. */
export type TransactionStep = (trx: Transaction<DB>) => Promise<void>;

/** What the owner of a request's deferred commit (the idempotency key hooks) does inside its transactions. */
export interface CommitGuard {
  /**
   * Runs first in every transaction the request opens: locks what the request holds (its idempotency key).
   * @throws to refuse the change (e.g. 409 when the key is no longer this request's); nothing is written then
   */
  begin(trx: Transaction<DB>): Promise<void>;
  /** Runs last in a transaction committed before the answer (`commitNow`), with the change's checkpoint. */
  beforeEarlyCommit(trx: Transaction<DB>, checkpoint: unknown): Promise<void>;
}

/** Options of one change in a request with a deferred commit (see `RunOptions` of the change runner). */
export interface DeferredRunOptions<T> {
  commitNow?: boolean;
  checkpoint?: (result: T) => unknown;
}

const SAVEPOINT = 'request_change';
const requests = new AsyncLocalStorage<RequestCommit>();
/** Entered request commits not yet closed; the storage is disabled when it falls to 0 (P217). */
let openEntered = 0;

/** The deferred commit of one request's changes. */
export class RequestCommit {
  private open: ControlledTransaction<DB> | undefined;
  private readonly afterCommitSteps: Array<() => void> = [];
  private started = false;
  private early: boolean;
  private closed = false;
  private entered = false;
  /** What an interrupted earlier attempt of this request committed early (its checkpoint, JSON), if any. */
  readonly checkpoint: unknown;

  /**
   * @param guard runs inside each of the request's transactions
   * @param resumed set when an earlier attempt of the same request committed a change early and was interrupted
   *   before its answer: that change's checkpoint
   */
  constructor(
    private readonly guard: CommitGuard,
    resumed?: { checkpoint: unknown },
  ) {
    this.early = resumed !== undefined;
    this.checkpoint = resumed?.checkpoint ?? undefined;
  }

  /** The deferred commit of the request being handled, while it still takes changes. */
  static current(): RequestCommit | undefined {
    const current = requests.getStore();
    return current && !current.closed ? current : undefined;
  }

  /**
   * Runs `callback` (the rest of the request's handling) with this as the current request commit, until `commit` or
   * `rollback` closes it. Entered once per request.
   */
  enter<R>(callback: () => R): R {
    if (!this.entered && !this.closed) {
      this.entered = true;
      openEntered += 1;
    }
    return requests.run(this, callback);
  }

  /** Whether a change of the request began (its guard passed), whether or not it was kept. */
  get changeStarted(): boolean {
    return this.started;
  }

  /** Whether a change of the request (or of an interrupted earlier attempt) was committed before its answer. */
  get committedEarly(): boolean {
    return this.early;
  }

  /** Whether changes wait for `commit`. */
  get pending(): boolean {
    return this.open !== undefined;
  }

  /**
   * Runs one change (`perform`: the work with its events, notifications and steps) in the request's transaction.
   * @param afterCommitSteps the change's after-commit steps, run once its work is committed
   * @throws what `perform` or the guard throws, after rolling back this change's work
   */
  async run<T>(
    db: Kysely<DB>,
    perform: (trx: Transaction<DB>) => Promise<T>,
    afterCommitSteps: Array<() => void>,
    options: DeferredRunOptions<T>,
  ): Promise<T> {
    const value = this.open ? await this.joined(this.open, perform) : await this.first(db, perform);
    this.afterCommitSteps.push(...afterCommitSteps);
    if (options.commitNow) {
      const trx = this.open as ControlledTransaction<DB>;
      this.open = undefined;
      await this.commitOrRollback(trx, (open) =>
        this.guard.beforeEarlyCommit(open, options.checkpoint?.(value)),
      );
      this.early = true;
    }
    return value;
  }

  /**
   * Runs `final` (stores the answer) in the pending transaction and commits it, then runs the after-commit steps;
   * the request takes no more changes. Without pending changes it only closes.
   * @throws when `final` or the commit fails; everything is rolled back then
   */
  async commit(final: TransactionStep): Promise<void> {
    this.close();
    const trx = this.open;
    this.open = undefined;
    if (trx) await this.commitOrRollback(trx, final);
  }

  /** Rolls back the pending changes, if any; the request takes no more changes. */
  async rollback(): Promise<void> {
    this.close();
    const trx = this.open;
    this.open = undefined;
    this.afterCommitSteps.length = 0;
    await trx?.rollback().execute();
  }

  /** Takes no more changes; the last open entered commit to close turns the storage (and async hooks) off. */
  private close(): void {
    if (this.closed) return;
    this.closed = true;
    if (!this.entered) return;
    openEntered -= 1;
    if (openEntered === 0) requests.disable();
  }

  private async first<T>(db: Kysely<DB>, perform: (trx: Transaction<DB>) => Promise<T>): Promise<T> {
    const trx = await db.startTransaction().execute();
    try {
      await this.guard.begin(trx);
      this.started = true;
      const value = await perform(trx);
      this.open = trx;
      return value;
    } catch (error) {
      await trx
        .rollback()
        .execute()
        .catch(() => undefined);
      throw error;
    }
  }

  private async joined<T>(
    trx: ControlledTransaction<DB>,
    perform: (trx: Transaction<DB>) => Promise<T>,
  ): Promise<T> {
    const saved = await trx.savepoint(SAVEPOINT).execute();
    try {
      const value = await perform(trx);
      await saved.releaseSavepoint(SAVEPOINT).execute();
      return value;
    } catch (error) {
      await saved.rollbackToSavepoint(SAVEPOINT).execute();
      throw error;
    }
  }

  private async commitOrRollback(trx: ControlledTransaction<DB>, last: TransactionStep): Promise<void> {
    try {
      await last(trx);
      await trx.commit().execute();
    } catch (error) {
      this.afterCommitSteps.length = 0;
      // After a failed COMMIT the connection is still checked out; ROLLBACK releases it.
      await trx
        .rollback()
        .execute()
        .catch(() => undefined);
      throw error;
    }
    for (const step of this.afterCommitSteps.splice(0)) step();
  }
}
