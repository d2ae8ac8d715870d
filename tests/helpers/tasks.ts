/**
 * The test kit of background tasks (D10.3): a group that lists task kinds a test defines and creates their tasks
 * through HTTP the way a real group does (`POST /api/test-task/{type}` → `TaskService.create` inside
 * `runtime.changes.run`), polling a task until it reaches a state (in-process or against a service's URL), the
 * download of a task's file, and a turnstile that holds a running task at a step until the test lets it go on.
 */
import { expect } from 'vitest';
import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { FastifyPluginCallbackTypebox } from '@fastify/type-provider-typebox';
import type { GroupFactory } from '../../src/modules/index.ts';
import type { TaskDefinition } from '../../src/modules/task/definition.ts';
import type { TaskGroup } from '../../src/modules/task/group.ts';
import type { ResourceGroup } from '../../src/modules/group.ts';
import type { TmsTask } from '../../src/modules/task/schemas.ts';
import { send } from './http.ts';

/** Body of `POST /api/test-task/{type}`: what a group passes to `TaskService.create`. */
const CreateBody = Type.Object({
  organizationId: Type.Optional(Type.Integer({ minimum: 0 })),
  name: Type.Optional(Type.String()),
  entityId: Type.Optional(Type.Integer({ minimum: 0 })),
  properties: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
});

/**
 * A group listing `kinds` whose `POST /api/test-task/{type}` creates a task of that kind for the token's client
 * and answers the TmsTask. Pass it in `useTestApp`'s `groups` option.
 */
export function taskKindsGroup(kinds: TaskDefinition<never>[]): GroupFactory {
  return (runtime, tasks): ResourceGroup => {
    const routes: FastifyPluginCallbackTypebox = (app, _options, done) => {
      app.post(
        '/:type',
        { schema: { params: Type.Object({ type: Type.String() }), body: CreateBody } },
        async (request) => {
          const kind = kinds.find((candidate) => candidate.type === request.params.type);
          if (!kind) throw new Error(`no test kind ${request.params.type}`);
          return runtime.changes.run((trx) =>
            tasks.create(
              trx,
              request.principal,
              kind as TaskDefinition<Record<string, unknown>>,
              request.body,
            ),
          );
        },
      );
      done();
    };
    return { name: 'test tasks', scope: 'api', prefix: '/test-task', routes, tasks: kinds };
  };
}

/** The task group of a test app. */
export function taskGroupOf(groups: readonly ResourceGroup[]): TaskGroup {
  const group = groups.find((candidate) => candidate.name === 'task');
  if (!group) throw new Error('no task group');
  return group as TaskGroup;
}

/** Creates a task of test kind `type` through HTTP and returns it. */
export async function createTask(
  app: FastifyInstance,
  token: string,
  type: string,
  body: { organizationId?: number; name?: string; entityId?: number; properties?: object } = {},
): Promise<TmsTask> {
  const response = await send(app, token, { method: 'POST', url: `/api/test-task/${type}`, payload: body });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<TmsTask>();
}

/** `GET /api/task/getTask?id=` that must answer 200. */
export async function getTask(app: FastifyInstance, token: string, id: number): Promise<TmsTask> {
  const response = await send(app, token, { method: 'GET', url: '/api/task/getTask', query: { id } });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<TmsTask>();
}

/** A condition on a task: a list of statuses or a predicate. */
export type TaskCondition = readonly string[] | ((task: TmsTask) => boolean);

/**
 * Reads a task with `read` until it meets `until`.
 * @throws when `timeoutMs` passes first (with the last state in the message)
 */
export async function pollTask(
  read: () => Promise<TmsTask>,
  until: TaskCondition,
  timeoutMs = 30_000,
): Promise<TmsTask> {
  const meets = typeof until === 'function' ? until : (task: TmsTask) => until.includes(task.status);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const task = await read();
    if (meets(task)) return task;
    if (Date.now() > deadline) throw new Error(`task ${task.id} did not get there: ${JSON.stringify(task)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Polls `getTask` in-process until the task meets `until`. */
export const waitForTask = (app: FastifyInstance, token: string, id: number, until: TaskCondition) =>
  pollTask(() => getTask(app, token, id), until);

/** Polls `getTask` of a running service (process tests) until the task meets `until`. */
export const waitForTaskAt = (baseUrl: string, token: string, id: number, until: TaskCondition) =>
  pollTask(async () => {
    const response = await fetch(`${baseUrl}/api/task/getTask?id=${id}`, {
      headers: { authorization: token },
    });
    expect(response.status).toBe(200);
    return (await response.json()) as TmsTask;
  }, until);

/**
 * Holds running tasks at their steps: `perform` awaits `enter(key)` before each step; it returns once the test
 * allowed that many steps (`allow`). `reached(key, n)` resolves when the n-th `enter` happened.
 */
export class Turnstile {
  private readonly allowed = new Map<number, number>();
  private readonly entered = new Map<number, number>();
  private readonly waiters = new Set<{ condition: () => boolean; resolve: () => void }>();

  /** Waits until step number (entries so far + 1) of `key` is allowed. */
  async enter(key: number): Promise<void> {
    const step = (this.entered.get(key) ?? 0) + 1;
    this.entered.set(key, step);
    this.notify();
    await this.until(() => (this.allowed.get(key) ?? 0) >= step);
  }

  /** Allows `steps` more steps of `key` (all of them by default). */
  allow(key: number, steps = Number.POSITIVE_INFINITY): void {
    this.allowed.set(key, (this.allowed.get(key) ?? 0) + steps);
    this.notify();
  }

  /** Resolves once `key` entered `steps` times. */
  reached(key: number, steps: number): Promise<void> {
    return this.until(() => (this.entered.get(key) ?? 0) >= steps);
  }

  private until(condition: () => boolean): Promise<void> {
    if (condition()) return Promise.resolve();
    return new Promise((resolve) => this.waiters.add({ condition, resolve }));
  }

  private notify(): void {
    for (const waiter of this.waiters)
      if (waiter.condition()) {
        this.waiters.delete(waiter);
        waiter.resolve();
      }
  }
}
