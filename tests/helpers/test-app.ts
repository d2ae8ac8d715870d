/**
 * Builds the app for a test file on the run's database (see global-setup.ts); close it in `afterAll`.
 * Outbound HTTP from tests goes only to servers the tests start on loopback.
 */
import { afterAll, beforeAll, inject } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { loadConfig, type Config } from '../../src/config.ts';
import { buildApp } from '../../src/app.ts';
import { openRuntime, type Runtime, type RuntimeOptions } from '../../src/runtime.ts';
import { createGroups, startGroupWorkers, type GroupFactory } from '../../src/modules/index.ts';
import type { ResourceGroup } from '../../src/modules/group.ts';

/** The admin token every test app is configured with. */
export const TEST_ADMIN_TOKEN = 'test-admin-token';

/** The operator key (SECRET_KEY) of every test app and test service process: they share one database. */
export const TEST_SECRET_KEY = '00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff';

/** An app over a runtime, and how to close both. */
export interface TestApp {
  app: FastifyInstance;
  runtime: Runtime;
  /** The groups built over `runtime` (e.g. the webhook group's dispatcher). */
  groups: ResourceGroup[];
  config: Config;
  close(): Promise<void>;
}

/** Options of a test app: the runtime's, plus groups of the test's own (e.g. a group with test task kinds). */
export interface TestAppOptions extends RuntimeOptions {
  groups?: GroupFactory[];
  /** Receives the app's log lines from `debug` up (default: no logs). */
  log?: { write(line: string): void };
}

/** URL of the database of this test run. */
export function testDatabaseUrl(): string {
  return inject('databaseUrl');
}

/**
 * Creates a runtime and app; `env` overrides settings (e.g. WEBHOOK_ALLOW_PRIVATE).
 * @param databaseUrl the database to use (default: this run's test database)
 * @param options runtime options (e.g. `workers: false`) and the test's own groups
 */
export async function buildTestApp(
  env: Record<string, string> = {},
  databaseUrl = testDatabaseUrl(),
  options: TestAppOptions = {},
): Promise<TestApp> {
  const config = loadConfig({
    DATABASE_URL: databaseUrl,
    ADMIN_TOKEN: TEST_ADMIN_TOKEN,
    SECRET_KEY: TEST_SECRET_KEY,
    LOG_LEVEL: 'silent',
    ...env,
  });
  const runtime = await openRuntime(config, databaseUrl, options);
  const groups = createGroups(runtime, options.groups);
  const app = await buildApp(runtime, groups, {
    logger: options.log ? { level: 'debug', stream: options.log } : false,
  });
  await app.ready();
  await startGroupWorkers(runtime, groups);
  return {
    app,
    runtime,
    groups,
    config,
    async close() {
      await app.close();
      await runtime.close();
    },
  };
}

/**
 * Builds this file's test app before its tests and closes it after them (the one setup every test file shares);
 * `ready` receives the app, e.g. to keep it and create accounts.
 */
export function useTestApp(
  ready: (t: TestApp) => Promise<void> | void,
  env: Record<string, string> = {},
  options: TestAppOptions = {},
): void {
  let t: TestApp | undefined;
  beforeAll(async () => {
    t = await buildTestApp(env, testDatabaseUrl(), options);
    await ready(t);
  });
  afterAll(async () => {
    await t?.close();
  });
}
