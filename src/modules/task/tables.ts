/** Kysely table types of background tasks (migration 0009, D10.3), added to `DB` by augmentation. */
import type { ColumnType, Generated } from 'kysely';
import type { CreatedAt, Json, Timestamp } from '../../db/schema.ts';

/** Statuses a task takes (spec §3 "Task status"; meanings in P81). STOPPED and EXCEPTION are never used. */
export type TaskStatus =
  'CREATED' | 'RUNNING' | 'FINISHED' | 'ERROR' | 'RESTARTING' | 'INTERRUPTING' | 'INTERRUPTED';

/** A task (columns explained in migration 0009). */
export interface TaskTable {
  id: Generated<number>;
  client_id: number;
  organization_id: number | null;
  user_id: number;
  type: string;
  name: string | null;
  entity_id: number | null;
  service: string | null;
  lang: 'ru' | 'en';
  properties: Json<object | null>;
  status: ColumnType<TaskStatus, TaskStatus | undefined, TaskStatus>;
  progress: Generated<number>;
  processed_quantity: Generated<number>;
  attempt: Generated<number>;
  retry_number: Generated<number>;
  retry_date: Timestamp;
  message: string | null;
  message_params: Json<object | null>;
  failure: string | null;
  job_id: string;
  heartbeat_date: Timestamp;
  file_name: string | null;
  file_content_type: string | null;
  file_size: number | null;
  file_attempt: number | null;
  created_date: CreatedAt;
  start_date: Timestamp;
  finish_date: Timestamp;
}

/** One chunk of a task's file, per run (P86). */
export interface TaskFileChunkTable {
  client_id: number;
  task_id: number;
  attempt: number;
  number: number;
  data: Buffer;
}

declare module '../../db/schema.ts' {
  interface DB {
    task: TaskTable;
    task_file_chunk: TaskFileChunkTable;
  }
}
