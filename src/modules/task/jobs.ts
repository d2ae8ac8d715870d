/**
 * The jobs of the task group: one pg-boss queue per task kind (`task-<type in kebab case>`), whose job
 * `{taskId}` runs the task once (P80). Jobs are never retried by pg-boss: the runner schedules retries as new jobs
 * and the sweep replaces the job of a run whose process died (P83, P84), so expiry only ends a forgotten job.
 */
import { defineJob, type JobDefinition } from '../../jobs/job.ts';
import type { TaskDefinition } from './definition.ts';

/** Payload of a task's job. */
export interface TaskJobPayload {
  taskId: number;
}

/**
 * pg-boss expiry of a task's job: a day. A live run is known by its heartbeat (P83), not by this, so it only lets
 * pg-boss close the job of a run that died (the sweep has already given the task a new job).
 */
const TASK_JOB_EXPIRE_SECONDS = 24 * 3600;

/** The queue of a task kind: `CAMPAIGN_STATS_FILE_TASK` → `task-campaign-stats-file-task`. */
export const taskQueueName = (type: string) => `task-${type.toLowerCase().replaceAll('_', '-')}`;

/** The job that runs tasks of `kind`; `run` performs one task given its id and the job's id. */
export function taskJob(
  kind: TaskDefinition<never>,
  run: (taskId: number, jobId: string) => Promise<void>,
): JobDefinition<TaskJobPayload> {
  return defineJob<TaskJobPayload>({
    name: taskQueueName(kind.type),
    // pg-boss never retries a task's job (the runner and the sweep do): its backoff is never used.
    attempts: 1,
    backoffSeconds: 0,
    expireSeconds: TASK_JOB_EXPIRE_SECONDS,
    perform: (payload, job) => run(payload.taskId, job.id),
  });
}
