/**
 * One shape for every mutation of every group ("every mutation is a single transaction"): `ChangeRunner.run`
 * opens a transaction, lets the group's work write its rows and describe its side effects on a `ChangeSet`, then —
 * still inside the transaction — records the change's events in the outbox (spec §6, D9.3), sends its
 * cross-process notifications (`NOTIFY` is delivered only on commit) and runs the `beforeCommit` steps (jobs,
 * stored answers); after the commit it runs the `afterCommit` steps (local cache invalidation). A rolled-back
 * change leaves no event, notification, job or cache change behind.
 *
 * Groups register how the entities of their event kinds are rendered (`registerRenderer`); the webhook group
 * installs the outbox (`installRecorder`). Without a recorder, events are dropped (a runtime with no webhook group).
 *
 * In a request with an idempotency key the commit is deferred to the answer, which is stored in the same
 * transaction (`request-commit.ts`, P121); everything above still holds, only the commit and the after-commit steps
 * happen when the reply is sent. `RunOptions.commitNow` commits at once for code that must make its change durable
 * before it calls an external system.
 */
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../db/schema.ts';
import { notifyChange, type ChangeKind } from '../db/notifications.ts';
import type { EventCandidate, EventRecorder, EventType, RenderEntities } from '../events/outbox.ts';
import { RequestCommit, type TransactionStep } from './request-commit.ts';

export type { TransactionStep } from './request-commit.ts';

/** Options of one change (`ChangeRunner.run`). */
export interface RunOptions<T> {
  /**
   * Commit this change (with the request's earlier ones) before `run` returns, even in a request with an
   * idempotency key, whose changes otherwise commit with its stored answer (P122). For a change that must be
   * durable before an external call (e.g. a fiscal receipt row before the provider is asked to print it). If the
   * request is interrupted after this commit and before its answer is stored, a repeat with the same key runs the
   * request again, and `resumedCheckpoint()` then returns what `checkpoint` made of this change's result.
   * Outside such a request every change commits before `run` returns anyway.
   */
  commitNow?: boolean;
  /** With `commitNow`: the JSON value a repeat of an interrupted request resumes from (ids, not secrets). */
  checkpoint?: (result: T) => unknown;
}

/** What one change does besides its own rows, collected while it runs. */
export class ChangeSet {
  /** Events to record (spec §6). */
  readonly events: EventCandidate[] = [];
  /** Cross-process notifications to send on commit. */
  readonly notifications: Array<{ kind: ChangeKind; key: string | number }> = [];
  /** Steps run in the transaction after the work (before the commit). */
  readonly beforeCommitSteps: TransactionStep[] = [];
  /** Steps run after the commit (never after a rollback). */
  readonly afterCommitSteps: Array<() => void> = [];

  /** Raises event `type` for the changed entity. */
  event(type: EventType, entity: { id: number; clientId: number; organizationId: number }): void {
    this.events.push({
      type,
      clientId: entity.clientId,
      organizationId: entity.organizationId,
      entityId: entity.id,
    });
  }

  /** Announces `key` on channel `kind` to every process when the change commits. */
  notify(kind: ChangeKind, key: string | number): void {
    this.notifications.push({ kind, key });
  }

  /** Runs `step` inside the transaction once the work is done. */
  beforeCommit(step: TransactionStep): void {
    this.beforeCommitSteps.push(step);
  }

  /** Runs `step` after the commit (e.g. drop this process's cached copies). */
  afterCommit(step: () => void): void {
    this.afterCommitSteps.push(step);
  }
}

/** Runs changes; one per process (`runtime.changes`). */
export class ChangeRunner {
  private recorder: EventRecorder | undefined;
  private readonly renderers = new Map<EventType, RenderEntities>();

  constructor(private readonly db: Kysely<DB>) {}

  /** Installs the outbox that records events (the webhook group does it at startup). */
  installRecorder(recorder: EventRecorder | undefined): void {
    this.recorder = recorder;
  }

  /** The outbox in use, if any. */
  get eventRecorder(): EventRecorder | undefined {
    return this.recorder;
  }

  /**
   * Registers how entities of the given event kinds are rendered for event bodies (D9.2).
   * @throws Error when a kind already has a renderer (two groups claiming one kind is a wiring bug)
   */
  registerRenderer(types: readonly EventType[], render: RenderEntities): void {
    for (const type of types) {
      if (this.renderers.has(type)) throw new Error(`event kind ${type} already has a renderer`);
      this.renderers.set(type, render);
    }
  }

  /**
   * Runs `work` as one transaction with its events, notifications and steps (see the module comment).
   * Errors thrown by `work` roll everything back and propagate unchanged.
   * @throws Error when an event kind raised by `work` has no renderer (wiring bug)
   * @throws 409 `error_idempotency_in_progress` when the request's idempotency key was taken over by a repeat
   */
  async run<T>(
    work: (trx: Transaction<DB>, change: ChangeSet) => Promise<T>,
    options: RunOptions<T> = {},
  ): Promise<T> {
    const change = new ChangeSet();
    const perform = async (trx: Transaction<DB>) => {
      const value = await work(trx, change);
      await this.recordEvents(trx, change.events);
      for (const { kind, key } of change.notifications) await notifyChange(trx, kind, key);
      for (const step of change.beforeCommitSteps) await step(trx);
      return value;
    };
    const request = RequestCommit.current();
    if (request) return request.run(this.db, perform, change.afterCommitSteps, options);
    const result = await this.db.transaction().execute(perform);
    for (const step of change.afterCommitSteps) step();
    return result;
  }

  /**
   * In a repeat of an idempotent request that was interrupted after a `commitNow` change: the checkpoint that
   * change recorded (see `RunOptions.checkpoint`); undefined otherwise.
   */
  resumedCheckpoint(): unknown {
    return RequestCommit.current()?.checkpoint;
  }

  private async recordEvents(trx: Transaction<DB>, events: EventCandidate[]): Promise<void> {
    if (events.length === 0 || !this.recorder) return;
    const byRenderer = new Map<RenderEntities, EventCandidate[]>();
    for (const event of events) {
      const render = this.renderers.get(event.type);
      if (!render) throw new Error(`event kind ${event.type} has no renderer`);
      const group = byRenderer.get(render) ?? [];
      group.push(event);
      byRenderer.set(render, group);
    }
    for (const [render, group] of byRenderer) await this.recorder.record(trx, group, render);
  }
}
