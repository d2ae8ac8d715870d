/**
 * Schemas of the task group: `TmsTask` with every field of spec §2 (names exact), the status values of spec §3,
 * `FindResponseTmsTask` (D4) and the query parameters of `/api/task/getTask`, `/findTask` and `/cancelTask` as the
 * reference names them (D10.3).
 */
import { CursorQuery, KeysetPage } from '../../http/cursor.ts';
import { Type, type Static } from 'typebox';
import { ServiceSchema, StringEnum } from '../../domain/enums.ts';
import {
  DateTime as DateTimeSchema,
  Int32,
  Int64,
  Int64String,
  Nullable,
  PagingQuery,
  RepeatedQuery,
} from '../../http/schemas.ts';

const DateTime = DateTimeSchema();

/** Every task status of spec §3; the service never sets STOPPED or EXCEPTION (P81). */
export const TASK_STATUSES = [
  'CREATED',
  'RUNNING',
  'FINISHED',
  'ERROR',
  'RESTARTING',
  'INTERRUPTING',
  'INTERRUPTED',
  'STOPPED',
  'EXCEPTION',
] as const;

/** A task status (spec §3) with the meaning of each (P81). */
export const TaskStatusSchema = StringEnum(TASK_STATUSES, {
  description:
    'CREATED (queued), RUNNING, RESTARTING (waiting for a retry at retryDate), INTERRUPTING (cancel asked; stops at ' +
    'its next step), FINISHED, ERROR (see message), INTERRUPTED (cancelled); STOPPED and EXCEPTION are never set',
});

/** A task kind code: upper snake case (spec §2 TmsTask.type). */
export const TaskTypeSchema = Type.String({
  pattern: '^[A-Z][A-Z0-9_]{0,99}$',
  description: 'Task kind, e.g. CAMPAIGN_STATS_FILE_TASK',
});

/** A background task (spec §2 TmsTask; D10.3). */
export const TmsTask = Type.Object(
  {
    id: Int64(),
    status: TaskStatusSchema,
    type: Type.String({ description: 'Task kind (upper snake case)' }),
    name: Nullable(Type.String()),
    clientId: Int64(),
    entityId: Nullable(Int64({ description: 'The entity the task works on, if any' })),
    organizationId: Nullable(Int64({ description: 'null when the task concerns the whole client' })),
    progress: Int32({ maximum: 100, description: 'Percent done, 0..100' }),
    processedQuantity: Int32({ description: 'Items processed so far' }),
    priority: Int32({ description: 'Always 0: tasks of one kind run in creation order' }),
    retryNumber: Int32({ description: 'Earlier runs of this task (0 on the first run)' }),
    userId: Int32({ description: 'The user whose token created the task' }),
    properties: Nullable(Type.String({ description: 'The task parameters as JSON text' })),
    message: Nullable(
      Type.String({ description: "Why the task ended in ERROR, in the creating user's language" }),
    ),
    messageParams: Nullable(
      Type.String({
        description: 'JSON text {"error": code, "params": {...}} of the ERROR (the error model, D3.1)',
      }),
    ),
    url: Nullable(
      Type.String({
        description: "Download address of a FINISHED task's file (GET with the same client's token)",
      }),
    ),
    inputFileUrl: Nullable(Type.String({ description: 'Always null: no task takes an uploaded file yet' })),
    lang: Type.String({ description: 'Language of message: ru or en' }),
    createdDate: DateTime,
    startDate: Nullable(DateTime),
    finishDate: Nullable(DateTime),
    retryDate: Nullable(DateTimeSchema({ description: 'When the latest retry was (or is) due' })),
    debug: Type.Boolean({ description: 'Always false' }),
    forcedStart: Type.Boolean({ description: 'Always false' }),
    service: Nullable(ServiceSchema),
  },
  { $id: 'TmsTask', title: 'TmsTask' },
);
export type TmsTask = Static<typeof TmsTask>;

/** A page of tasks (D4.2). */
export const FindResponseTmsTask = KeysetPage(Type.Ref('TmsTask'), { title: 'FindResponseTmsTask' });
export type FindResponseTmsTask = { rows: TmsTask[]; page: number; total?: number; nextCursor?: string };

/** Sort fields of `findTask` (ties break by id, D4.4). */
export const TASK_SORT_FIELDS = [
  'ID',
  'CREATED_DATE',
  'START_DATE',
  'FINISH_DATE',
  'STATUS',
  'TYPE',
] as const;
/** A `findTask` sort field. */
export type TaskSortField = (typeof TASK_SORT_FIELDS)[number];

const LooseDate = Type.String({ maxLength: 40, description: 'ISO 8601 date or date-time (UTC)' });

/** Query of `GET /api/task/findTask` (D4; the reference's filters plus `createdDateFrom/To`). */
export const FindTaskQuery = Type.Object({
  ...PagingQuery,
  ...CursorQuery,
  id: Type.Optional(Int64()),
  type: Type.Optional(TaskTypeSchema),
  types: RepeatedQuery(TaskTypeSchema, { maxItems: 100 }),
  status: Type.Optional(TaskStatusSchema),
  organizationId: Type.Optional(Int64()),
  entityId: Type.Optional(Int64()),
  own: Type.Optional(Type.Boolean({ description: "Only the token user's tasks" })),
  createdDateFrom: Type.Optional(LooseDate),
  createdDateTo: Type.Optional(
    Type.String({ maxLength: 40, description: 'ISO 8601 date (the whole day, UTC) or date-time' }),
  ),
  sortBy: Type.Optional(StringEnum(TASK_SORT_FIELDS, { description: 'Default ID' })),
  ascending: Type.Optional(Type.Boolean({ description: 'Default false (newest first)' })),
});
export type FindTaskQuery = Static<typeof FindTaskQuery>;

/** Query of `GET /api/task/getTask` (the reference's `id`). */
export const GetTaskQuery = Type.Object({ id: Int64String });
/** Query of `POST /api/task/cancelTask` (the reference's `taskId`). */
export const CancelTaskQuery = Type.Object({ taskId: Int64String });
/** Path of the download `GET /api/task/{taskId}/file`. */
export const TaskFileParams = Type.Object({ taskId: Int64String });
