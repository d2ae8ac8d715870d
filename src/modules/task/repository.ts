/**
 * SQL of the task group (D10.3). API queries are scoped by the caller's `client_id`; the runner's writes go by
 * the client and task id its job carries and are fenced by the run's `attempt` (a run that lost its task changes
 * nothing, P82); the sweep spans clients (P176) and reads pg-boss's `pgboss.job` table (pg-boss 10 schema:
 * `name`, `id`, `state`) to find tasks whose job is gone (P83).
 */
import { sql, type Insertable, type Kysely, type Updateable } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { pageBounds } from '../../db/page-bounds.ts';
import { keysetAfter, keysetValue, type KeysetOrder } from '../../db/keyset.ts';
import type { CursorPosition } from '../../http/cursor.ts';
import { acrossClients } from '../../db/cross-tenant.ts';
import type { DateRange } from '../inbound/find-filter.ts';
import type { TaskSortField } from './schemas.ts';
import type { TaskStatus, TaskTable } from './tables.ts';

/** Statuses of a task whose run holds it (its writes are fenced by `attempt`). */
const RUNNING: readonly TaskStatus[] = ['RUNNING', 'INTERRUPTING'];

/** Filters of `findTask`, resolved. */
export interface TaskCriteria {
  clientId: number;
  id?: number;
  types?: string[];
  status?: string;
  organizationId?: number;
  entityId?: number;
  userId?: number;
  created: DateRange;
}

const SORT_COLUMNS = {
  ID: 'id',
  CREATED_DATE: 'created_date',
  START_DATE: 'start_date',
  FINISH_DATE: 'finish_date',
  STATUS: 'status',
  TYPE: 'type',
} as const satisfies Record<TaskSortField, keyof TaskTable>;

function filtered(db: Kysely<DB>, criteria: TaskCriteria) {
  const { created } = criteria;
  return db
    .selectFrom('task')
    .where('client_id', '=', criteria.clientId)
    .$if(criteria.id !== undefined, (qb) => qb.where('id', '=', criteria.id as number))
    .$if(criteria.types !== undefined, (qb) => qb.where('type', 'in', criteria.types as string[]))
    .$if(criteria.status !== undefined, (qb) => qb.where('status', '=', criteria.status as TaskStatus))
    .$if(criteria.organizationId !== undefined, (qb) =>
      qb.where('organization_id', '=', criteria.organizationId as number),
    )
    .$if(criteria.entityId !== undefined, (qb) => qb.where('entity_id', '=', criteria.entityId as number))
    .$if(criteria.userId !== undefined, (qb) => qb.where('user_id', '=', criteria.userId as number))
    .$if(created.from !== undefined, (qb) => qb.where('created_date', '>=', created.from as Date))
    .$if(created.to !== undefined, (qb) =>
      qb.where('created_date', created.toExclusive ? '<' : '<=', created.to as Date),
    );
}

/** Whether `criteria` filters beyond the client. */
const isFiltered = ({ clientId: _clientId, created, ...filters }: TaskCriteria) =>
  created.from !== undefined ||
  created.to !== undefined ||
  Object.values(filters).some((value) => value !== undefined);

/** The database's time `ms` milliseconds ago. */
const silentSince = (ms: number) => sql<Date>`now() - ${ms}::double precision * interval '1 millisecond'`;

/** A task as the sweep sees it. */
export interface SweptTask {
  id: number;
  client_id: number;
  type: string;
  status: TaskStatus;
  attempt: number;
  job_id: string;
  lang: 'ru' | 'en';
}

/** Task rows: the API's reads and changes, the runner's fenced writes, the sweep's queries. */
export const taskRepository = {
  insert: (db: Kysely<DB>, values: Insertable<TaskTable>) =>
    db.insertInto('task').values(values).returningAll().executeTakeFirstOrThrow(),

  /** The client of task `id`, for a job queued before jobs carried their client: spans clients (P176). */
  clientOf: async (db: Kysely<DB>, id: number): Promise<number | undefined> =>
    (
      await acrossClients(db, (trx) =>
        trx.selectFrom('task').select('client_id').where('id', '=', id).executeTakeFirst(),
      )
    )?.client_id,

  /** The task if it belongs to `clientId`; `lock` takes a row lock for a change. */
  findOfClient: (db: Kysely<DB>, clientId: number, id: number, lock = false) =>
    db
      .selectFrom('task')
      .selectAll()
      .where('id', '=', id)
      .where('client_id', '=', clientId)
      .$if(lock, (qb) => qb.forUpdate())
      .executeTakeFirst(),

  /**
   * A page of tasks: `limit + 1` rows when there is a next page, after `offset` rows or after the row of a cursor
   * (P172); null sort values count as the smallest; each row carries its sort value as text (`keyset_value`).
   */
  page: (
    db: Kysely<DB>,
    criteria: TaskCriteria,
    sortBy: TaskSortField,
    ascending: boolean,
    limit: number,
    from: { offset: number } | { after: CursorPosition },
  ) => {
    const direction = ascending ? 'asc' : 'desc';
    const nulls = ascending ? sql`nulls first` : sql`nulls last`;
    const order: KeysetOrder = {
      column: sortBy === 'ID' ? undefined : sql.ref(`task.${SORT_COLUMNS[sortBy]}`),
      id: sql.ref('task.id'),
      ascending,
      nullsFirst: ascending,
    };
    return filtered(db, criteria)
      .selectAll()
      .select(keysetValue(order).as('keyset_value'))
      .$if('after' in from, (qb) => qb.where(keysetAfter(order, (from as { after: CursorPosition }).after)))
      .$if(sortBy !== 'ID', (qb) =>
        qb.orderBy(sql`${sql.ref(SORT_COLUMNS[sortBy])} ${sql.raw(direction)} ${nulls}`),
      )
      .orderBy('id', direction)
      .$call((qb) => pageBounds(qb, limit + 1, 'offset' in from ? from.offset : 0, isFiltered(criteria)))
      .execute();
  },

  count: async (db: Kysely<DB>, criteria: TaskCriteria) =>
    Number(
      (
        await filtered(db, criteria)
          .select((eb) => eb.fn.countAll<string>().as('total'))
          .executeTakeFirstOrThrow()
      ).total,
    ),

  /**
   * Sets `values` on a task still as it was seen (same status, run and job; with `silentMs`, a heartbeat still
   * older than that): a change decided on a row read earlier never overwrites a newer state.
   */
  updateIf: (
    db: Kysely<DB>,
    task: { client_id: number; id: number },
    seen: { status: TaskStatus; attempt: number; job_id: string; silentMs?: number },
    values: Updateable<TaskTable>,
  ) =>
    db
      .updateTable('task')
      .set(values)
      .where('client_id', '=', task.client_id)
      .where('id', '=', task.id)
      .where('status', '=', seen.status)
      .where('attempt', '=', seen.attempt)
      .where('job_id', '=', seen.job_id)
      .$if(seen.silentMs !== undefined, (qb) =>
        qb.where('heartbeat_date', '<', silentSince(seen.silentMs ?? 0)),
      )
      .returningAll()
      .executeTakeFirst(),

  /**
   * Starts run number `attempt + 1` of a queued task, if `jobId` is still its job: RUNNING, stamped. Undefined
   * for a stale job or a task that is no longer queued (cancelled meanwhile).
   */
  claim: (db: Kysely<DB>, clientId: number, id: number, jobId: string) =>
    db
      .updateTable('task')
      .set({
        status: 'RUNNING',
        attempt: sql`attempt + 1`,
        retry_number: sql`attempt`,
        start_date: sql`now()`,
        heartbeat_date: sql`now()`,
        progress: 0,
        processed_quantity: 0,
        file_name: null,
        file_content_type: null,
        file_size: null,
        file_attempt: null,
      })
      .where('client_id', '=', clientId)
      .where('id', '=', id)
      .where('job_id', '=', jobId)
      .where('status', 'in', ['CREATED', 'RESTARTING'])
      .returningAll()
      .executeTakeFirst(),

  /**
   * Writes `values` for run `attempt` while it still holds the task (P82) and stamps its heartbeat.
   * @returns the task's status, or undefined when the run lost the task
   */
  updateRun: async (
    db: Kysely<DB>,
    run: { clientId: number; id: number; attempt: number },
    values: Updateable<TaskTable> = {},
  ) =>
    (
      await db
        .updateTable('task')
        .set({ ...values, heartbeat_date: sql`now()` })
        .where('client_id', '=', run.clientId)
        .where('id', '=', run.id)
        .where('attempt', '=', run.attempt)
        .where('status', 'in', RUNNING)
        .returning('status')
        .executeTakeFirst()
    )?.status,

  /** The status while run `attempt` holds the task (`lock`: row-locked for its end); undefined once it lost it. */
  statusOfRun: async (db: Kysely<DB>, run: { clientId: number; id: number; attempt: number }, lock = false) =>
    (
      await db
        .selectFrom('task')
        .select('status')
        .where('client_id', '=', run.clientId)
        .where('id', '=', run.id)
        .where('attempt', '=', run.attempt)
        .where('status', 'in', RUNNING)
        .$if(lock, (qb) => qb.forUpdate())
        .executeTakeFirst()
    )?.status,

  /** Ends run `attempt` with `values` (a final status or RESTARTING); undefined when the run lost the task. */
  endRun: (
    db: Kysely<DB>,
    run: { clientId: number; id: number; attempt: number },
    values: Updateable<TaskTable>,
  ) =>
    db
      .updateTable('task')
      .set(values)
      .where('client_id', '=', run.clientId)
      .where('id', '=', run.id)
      .where('attempt', '=', run.attempt)
      .where('status', 'in', RUNNING)
      .returningAll()
      .executeTakeFirst(),

  /**
   * Runs of the given kinds whose heartbeat is older than `silentMs` (their process died, P83); measured on the
   * database's clock, which stamps the heartbeats. A sweep spanning clients (P176).
   */
  staleRuns: (db: Kysely<DB>, types: string[], silentMs: number, limit: number): Promise<SweptTask[]> =>
    acrossClients(db, (trx) =>
      trx
        .selectFrom('task')
        .select(['id', 'client_id', 'type', 'status', 'attempt', 'job_id', 'lang'])
        .where('status', 'in', RUNNING)
        .where('type', '=', sql<string>`any(${types}::text[])`)
        .where('heartbeat_date', '<', silentSince(silentMs))
        .orderBy('id')
        .limit(limit)
        .execute(),
    ),

  /**
   * Queued tasks (CREATED, RESTARTING) of the given kinds whose job is no longer waiting or running in pg-boss
   * (failed, completed, cancelled, archived unstarted, deleted): nothing would ever run them. A sweep spanning
   * clients (P176): the queued tasks first, then which of their jobs pg-boss (local to the coordinator on Citus)
   * still holds.
   * @param queues each kind and its queue
   */
  lostQueued: async (
    db: Kysely<DB>,
    queues: Array<{ type: string; queue: string }>,
    limit: number,
  ): Promise<SweptTask[]> => {
    const queued = await acrossClients(db, (trx) =>
      trx
        .selectFrom('task')
        .select(['id', 'client_id', 'type', 'status', 'attempt', 'job_id', 'lang'])
        .where('status', 'in', ['CREATED', 'RESTARTING'])
        .where('type', '=', sql<string>`any(${queues.map((q) => q.type)}::text[])`)
        .orderBy('id')
        .execute(),
    );
    if (queued.length === 0) return [];
    const queueOf = new Map(queues.map((q) => [q.type, q.queue]));
    const live = await sql<{ id: string }>`
      SELECT j.id FROM pgboss.job j
      JOIN unnest(${queued.map((task) => queueOf.get(task.type))}::text[], ${queued.map((task) => task.job_id)}::uuid[])
        AS wanted(name, id) ON j.name = wanted.name AND j.id = wanted.id
      WHERE j.state IN ('created', 'retry', 'active')`.execute(db);
    const liveIds = new Set(live.rows.map((row) => row.id));
    return queued.filter((task) => !liveIds.has(task.job_id)).slice(0, limit);
  },

  /**
   * Deletes up to `limit` tasks that ended before `finishedBefore`, with their files (retention, P87): a purge
   * spanning clients (P176), the expired keys read first, then deleted by key.
   */
  deleteFinished: (db: Kysely<DB>, finishedBefore: Date, limit: number) =>
    acrossClients(db, async (trx) => {
      const expired = await trx
        .selectFrom('task')
        .select(['client_id', 'id'])
        .where('status', 'in', ['FINISHED', 'ERROR', 'INTERRUPTED'])
        .where('finish_date', '<', finishedBefore)
        .orderBy('finish_date')
        .limit(limit)
        .execute();
      if (expired.length === 0) return 0n;
      return (
        (
          await sql`
            DELETE FROM task t USING unnest(${expired.map((row) => row.client_id)}::bigint[],
              ${expired.map((row) => row.id)}::bigint[]) AS expired(client_id, id)
            WHERE t.client_id = expired.client_id AND t.id = expired.id`.execute(trx)
        ).numAffectedRows ?? 0n
      );
    }),
};

/** The chunks of task files (P86). */
export const taskFileRepository = {
  insertChunk: (
    db: Kysely<DB>,
    clientId: number,
    taskId: number,
    attempt: number,
    number: number,
    data: Buffer,
  ) =>
    db
      .insertInto('task_file_chunk')
      .values({ client_id: clientId, task_id: taskId, attempt, number, data })
      .execute(),

  /** Deletes the task's chunks, except those of run `keepAttempt` when given. */
  deleteChunks: (db: Kysely<DB>, clientId: number, taskId: number, keepAttempt?: number) =>
    db
      .deleteFrom('task_file_chunk')
      .where('client_id', '=', clientId)
      .where('task_id', '=', taskId)
      .$if(keepAttempt !== undefined, (qb) => qb.where('attempt', '<>', keepAttempt as number))
      .execute(),

  /** One chunk's bytes; undefined past the last one. */
  chunk: async (db: Kysely<DB>, clientId: number, taskId: number, attempt: number, number: number) =>
    (
      await db
        .selectFrom('task_file_chunk')
        .select('data')
        .where('client_id', '=', clientId)
        .where('task_id', '=', taskId)
        .where('attempt', '=', attempt)
        .where('number', '=', number)
        .executeTakeFirst()
    )?.data,
};
