/**
 * Factory of the task group (D10.3, P80): the runner and the sweep over the runtime's database and job queue,
 * the `TaskService` other groups create tasks with, and the routes under `/api/task`.
 *
 * Kinds come from the groups: each lists its kinds in `ResourceGroup.tasks`, and `createGroups` hands them to
 * `registerKinds` once every group is built; each kind adds its job to this group's `jobs`, so
 * `startGroupWorkers` creates its queue and starts its worker like any job. In processes that run workers, the
 * group's background worker wakes the task workers when a task is committed anywhere, sweeps for lost and
 * expired tasks, and marks this process's runs lost when its job queue stops.
 */
import type { Runtime } from '../../runtime.ts';
import type { JobDefinition } from '../../jobs/job.ts';
import type { ResourceGroup } from '../group.ts';
import type { TaskDefinition } from './definition.ts';
import { taskRoutes } from './routes.ts';
import { TaskRunner } from './runner.ts';
import { TaskService } from './service.ts';
import { TaskSweeper } from './sweeper.ts';

/** The task group, with what other groups and tests use. */
export interface TaskGroup extends ResourceGroup {
  /** Creates tasks (for the groups whose operations return a TmsTask) and serves the API. */
  service: TaskService;
  /** Runs this process's tasks. */
  runner: TaskRunner;
  /** The watchdog; `sweeper.sweep()` runs one pass. */
  sweeper: TaskSweeper;
  /**
   * Registers task kinds (call once, after every group is built).
   * @throws Error for a kind whose type is malformed or taken
   */
  registerKinds(kinds: readonly TaskDefinition<never>[]): void;
}

/** Builds the task group over `runtime`. */
export function createTaskGroup(runtime: Runtime): TaskGroup {
  const { config } = runtime;
  const db = runtime.database.db;
  const runner = new TaskRunner(db, runtime.jobs, {
    progressWriteMs: config.taskProgressWriteMs,
    heartbeatMs: config.taskHeartbeatSeconds * 1000,
  });
  const sweeper = new TaskSweeper(db, runner, {
    heartbeatMs: config.taskHeartbeatSeconds * 1000,
    sweepMs: config.taskSweepSeconds * 1000,
    retentionDays: config.taskRetentionDays,
  });
  const service = new TaskService(db, runtime.changes, runner, config.publicBaseUrl, runtime.cursors);
  const jobs: JobDefinition<never>[] = [];
  const wake = () => runtime.jobs.wake();
  const abandon = () => runner.abandonAll();
  return {
    name: 'task',
    scope: 'api',
    prefix: '/task',
    routes: taskRoutes(service),
    jobs,
    service,
    runner,
    sweeper,
    registerKinds(kinds) {
      for (const kind of kinds) jobs.push(runner.register(kind));
    },
    workers: [
      {
        start: async () => {
          runtime.notifier.on('task', wake);
          // Notifications may have been missed while the listener reconnected.
          runtime.notifier.onReset(wake);
          runtime.jobs.boss.on('stopped', abandon);
          sweeper.start();
        },
        stop: async () => {
          await sweeper.stop();
          runner.abandonAll();
        },
      },
    ],
  };
}
