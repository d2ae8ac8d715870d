/**
 * The jobs of the task group: one pg-boss queue per task kind (`task-<type in kebab case>`), whose job
 * `{taskId, clientId}` runs the task once (P80); the client routes the run's statements to one shard on Citus. Jobs are never retried by pg-boss: the runner schedules retries as new jobs
 * and the sweep replaces the job of a run whose process died (P83, P84).
 */
import { defineJob, type JobDefinition } from '../../jobs/job.ts';
import type { TaskDefinition } from './definition.ts';

/** Payload of a task's job. */
export interface TaskJobPayload {
  taskId: number;
  /** The task's client; absent only in jobs queued by versions before jobs carried it. */
  clientId?: number;
}

/** A run's time limit when its kind sets none (`TaskDefinition.timeoutSeconds`). */
export const DEFAULT_TASK_TIMEOUT_SECONDS = 3600;

/**
 * How much longer than the run's time limit pg-boss waits for a job: the runner ends an overlong run itself, so
 * pg-boss's own limit (its worker stops waiting and fails the job) only closes the job of a process that died
 * between fetching the job and starting the run; the sweep then gives the task a new job (P83).
 */
const JOB_EXPIRY_MARGIN_SECONDS = 60;

/** The queue of a task kind: `CAMPAIGN_STATS_FILE_TASK` → `task-campaign-stats-file-task`. */
export const taskQueueName = (type: string) => `task-${type.toLowerCase().replaceAll('_', '-')}`;

/** The job that runs tasks of `kind`; `run` performs one task given its payload and the job's id. */
export function taskJob(
  kind: TaskDefinition<never>,
  run: (payload: TaskJobPayload, jobId: string) => Promise<void>,
): JobDefinition<TaskJobPayload> {
  return defineJob<TaskJobPayload>({
    name: taskQueueName(kind.type),
    // pg-boss never retries a task's job (the runner and the sweep do): its backoff is never used.
    attempts: 1,
    backoffSeconds: 0,
    expireSeconds: Math.ceil(kind.timeoutSeconds ?? DEFAULT_TASK_TIMEOUT_SECONDS) + JOB_EXPIRY_MARGIN_SECONDS,
    perform: (payload, job) => run(payload, job.id),
  });
}
