import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

/**
 * Files that run one at a time after the others: those whose tests start several service processes at once and
 * wait for all of them within a time limit (no other file competes with them for the cores), and the dictionary
 * refresh, whose refresh of every stored category rewrites the sample categories (from Market1's sandbox, with
 * its parameter names) that other files read while they run.
 */
const ONE_AT_A_TIME = [
  'tests/service/concurrent-start.test.ts',
  'tests/webhook/processes.test.ts',
  'tests/webhook/slow-receiver.test.ts',
  'tests/knowledge/refresh.test.ts',
];

/**
 * How many of the other files run at once. A file mostly waits (on PostgreSQL, timers, child processes), so
 * more run than there are cores: three on two cores, where Vitest's default would be one. `TEST_MAX_WORKERS`
 * sets it (CI lowers it for the machine's server, whose connection limit is 100): Vitest's own `--maxWorkers`
 * does not reach a project's setting.
 */
const filesAtOnce = Number(process.env.TEST_MAX_WORKERS) || Math.max(3, availableParallelism() - 1);

/**
 * Settings of both projects. They do not extend the root config (`extends: true`): in Vitest 4.1 that would run
 * the root's global setup once more for every project, each with a database of its own.
 */
const eachProject = { testTimeout: 60_000, hookTimeout: 120_000, pool: 'forks' } as const;

export default defineConfig({
  test: {
    // Once for the run: the one database every file uses (embedded, or the server of DATABASE_URL).
    globalSetup: ['tests/global-setup.ts'],
    // Every test builds its own client through the factories, so files share one database safely; what every
    // client shares (the marketplace dictionaries) only the files of `ONE_AT_A_TIME` rewrite.
    projects: [
      {
        test: {
          ...eachProject,
          name: 'files',
          include: ['tests/**/*.test.ts'],
          exclude: ONE_AT_A_TIME,
          maxWorkers: filesAtOnce,
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: {
          ...eachProject,
          name: 'one at a time',
          include: ONE_AT_A_TIME,
          fileParallelism: false,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
