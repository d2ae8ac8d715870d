/**
 * Background tasks (D10.3): other groups create tasks inside their change's transaction (`create`); integrators
 * poll, list and cancel them and download their files. Every query is scoped by the caller's client; another
 * client's task answers exactly like a missing one (404 `error_not_found`, D2.5).
 */
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/schema.ts';
import type { ChangeRunner } from '../../changes/change-runner.ts';
import { notifyChange } from '../../db/notifications.ts';
import type { Service } from '../../domain/enums.ts';
import type { Principal } from '../../http/auth.ts';
import { AppError, notFound } from '../../http/errors.ts';
import { cutPage, resolvePaging, type CursorCodec } from '../../http/cursor.ts';
import { organizationRepository } from '../accounts/repository.ts';
import { range } from '../inbound/find-filter.ts';
import type { TaskDefinition } from './definition.ts';
import { hasFile, presentTask, type TaskRow } from './presenter.ts';
import { taskFileRepository, taskRepository, type TaskCriteria } from './repository.ts';
import type { TaskRunner } from './runner.ts';
import type { FindResponseTmsTask, FindTaskQuery, TmsTask } from './schemas.ts';

/** What a group says about a task it creates (TmsTask fields, spec §2). */
export interface NewTask<P extends object> {
  /** An organization of the caller's client, or null/absent for a task of the whole client. */
  organizationId?: number | null;
  /** A human-readable name, e.g. `Campaign statistics 2024-09`. */
  name?: string | null;
  /** The entity the task works on (a campaign, a document), if any. */
  entityId?: number | null;
  service?: Service | null;
  /** The kind's parameters, given back to `perform` as `context.properties` (JSON). */
  properties?: P;
}

/** A task's file, ready to stream. */
export interface TaskFile {
  fileName: string;
  contentType: string;
  /** Bytes, for `Content-Length`. */
  size: number;
  /** The bytes, read chunk by chunk from the database. */
  stream: Readable;
}

/** Operations of the task group. */
export class TaskService {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly changes: ChangeRunner,
    private readonly runner: TaskRunner,
    /** `PUBLIC_BASE_URL` (empty = relative download URLs). */
    private readonly baseUrl: string,
    private readonly cursors: CursorCodec,
  ) {}

  /**
   * Creates a task of `kind` inside the caller's change transaction `trx` (`runtime.changes.run`): the task row
   * and its job commit together, so a task exists exactly when its job does (P80). Processes running workers
   * are woken on commit.
   * @returns the new task (status CREATED)
   * @throws 400 `error_organization_not_found` when `organizationId` is not an organization of the caller's client
   * @throws Error when `kind` is not listed by a group (`ResourceGroup.tasks`): no worker would run it
   */
  async create<P extends object>(
    trx: Transaction<DB>,
    principal: Principal,
    kind: TaskDefinition<P>,
    input: NewTask<P> = {},
  ): Promise<TmsTask> {
    if (this.runner.kindOf(kind.type) !== (kind as TaskDefinition<object>))
      throw new Error(`task type ${kind.type} is not listed by any group`);
    const organizationId = input.organizationId ?? null;
    if (
      organizationId !== null &&
      !(await organizationRepository.findOfClient(trx, principal.clientId, organizationId))
    )
      throw new AppError('error_organization_not_found', { organizationId });
    const jobId = randomUUID();
    const row = await taskRepository.insert(trx, {
      client_id: principal.clientId,
      organization_id: organizationId,
      user_id: principal.userId,
      type: kind.type,
      name: input.name ?? null,
      entity_id: input.entityId ?? null,
      service: input.service ?? null,
      lang: principal.lang,
      ...(input.properties !== undefined && { properties: JSON.stringify(input.properties) }),
      job_id: jobId,
    });
    await this.runner.schedule(trx, kind.type, { clientId: row.client_id, id: row.id }, jobId);
    await notifyChange(trx, 'task', row.id);
    return presentTask(row, this.baseUrl);
  }

  /** The caller's task `id`. @throws 404 `error_not_found` `{entity: 'task'}` */
  async get(principal: Principal, id: number): Promise<TmsTask> {
    return presentTask(await this.require(this.db, principal, id), this.baseUrl);
  }

  /**
   * A page of the caller's tasks (D4): filters `id`, `type`/`types` (any of them), `status`, `organizationId`,
   * `entityId`, `own` (the token user's), `createdDateFrom/To` (UTC; a date-only upper bound covers its day);
   * `sortBy` (default ID) and `ascending` (default false), ties by id; by `page` or after a `cursor` (P172).
   * @throws 400 `error_validation` for a malformed date or cursor
   */
  async find(principal: Principal, query: FindTaskQuery): Promise<FindResponseTmsTask> {
    const limit = query.limit ?? 100;
    const sortBy = query.sortBy ?? 'ID';
    const ascending = query.ascending ?? false;
    const scope = { list: 'task.findTask', clientId: principal.clientId, sortBy, ascending };
    const { page, after } = resolvePaging(this.cursors, query, scope);
    const types = [...(query.type === undefined ? [] : [query.type]), ...(query.types ?? [])];
    const criteria: TaskCriteria = {
      clientId: principal.clientId,
      id: query.id,
      types: types.length > 0 ? types : undefined,
      status: query.status,
      organizationId: query.organizationId,
      entityId: query.entityId,
      userId: query.own === true ? principal.userId : undefined,
      created: range(query, 'createdDateFrom', 'createdDateTo', 0),
    };
    const read = await taskRepository.page(
      this.db,
      criteria,
      sortBy,
      ascending,
      limit,
      after === undefined ? { offset: (page - 1) * limit } : { after },
    );
    const { rows, nextCursor } = cutPage(this.cursors, scope, read, limit, page, (row) => ({
      value: row.keyset_value,
      id: row.id,
    }));
    return {
      rows: rows.map((row) => presentTask(row, this.baseUrl)),
      page,
      ...(query.count && { total: await taskRepository.count(this.db, criteria) }),
      ...(nextCursor !== undefined && { nextCursor }),
    };
  }

  /**
   * Cancels a task (P81): a queued one (CREATED, RESTARTING) becomes INTERRUPTED at once and never runs; a
   * RUNNING one becomes INTERRUPTING and stops at its next step; INTERRUPTING stays as it is.
   * @throws 404 `error_not_found` `{entity: 'task'}`
   * @throws 400 `error_task_not_cancellable` `{id, status}` for a task that has ended
   */
  async cancel(principal: Principal, id: number): Promise<TmsTask> {
    const row = await this.changes.run(async (trx) => {
      const task = await this.require(trx, principal, id, true);
      switch (task.status) {
        case 'CREATED':
        case 'RESTARTING': {
          const interrupted = await taskRepository.updateIf(trx, task, task, {
            status: 'INTERRUPTED',
            finish_date: new Date(),
          });
          await this.runner.cancelJob(trx, task.type, task.job_id);
          return interrupted ?? task;
        }
        case 'RUNNING':
          return (await taskRepository.updateIf(trx, task, task, { status: 'INTERRUPTING' })) ?? task;
        case 'INTERRUPTING':
          return task;
        case 'FINISHED':
        case 'ERROR':
        case 'INTERRUPTED':
          throw new AppError('error_task_not_cancellable', { id: String(id), status: task.status });
      }
    });
    return presentTask(row, this.baseUrl);
  }

  /**
   * The file of the caller's FINISHED task, streamed chunk by chunk (P86).
   * @throws 404 `error_not_found` `{entity: 'task'}` for an unknown or foreign task, `{entity: 'taskFile'}` when
   *   the task has no file (yet)
   */
  async file(principal: Principal, id: number): Promise<TaskFile> {
    const task = await this.require(this.db, principal, id);
    if (!hasFile(task)) throw notFound('taskFile', id);
    const { db } = this;
    const attempt = task.file_attempt as number;
    const size = Number(task.file_size);
    async function* chunks() {
      let sent = 0;
      for (let number = 0; sent < size; number++) {
        const data = await taskFileRepository.chunk(db, principal.clientId, id, attempt, number);
        // Deleted meanwhile (retention): fail the download rather than end it short.
        if (!data) throw new Error(`chunk ${number} of the file of task ${id} is missing`);
        sent += data.length;
        yield data;
      }
    }
    return {
      fileName: task.file_name as string,
      contentType: task.file_content_type as string,
      size,
      stream: Readable.from(chunks(), { objectMode: false }),
    };
  }

  private async require(db: Kysely<DB>, principal: Principal, id: number, lock = false): Promise<TaskRow> {
    const task = await taskRepository.findOfClient(db, principal.clientId, id, lock);
    if (!task) throw notFound('task', id);
    return task;
  }
}
