/**
 * The service the fuzzer talks to (P144): the whole app over a runtime on a given database, built as the
 * service builds it, with what keeps its traffic on this machine — no background workers (webhook deliveries
 * stay queued, nothing is sent to their URLs), `WEBHOOK_ALLOW_PRIVATE` so a webhook URL is never resolved
 * through DNS, and every external system (cash registers, Market1) served by the project's sandboxes on
 * loopback whatever the environment says. Requests go through `app.inject`: nothing listens.
 */
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../../src/config.ts';
import { buildApp } from '../../src/app.ts';
import { openRuntime, type Runtime } from '../../src/runtime.ts';
import { createGroups, startGroupWorkers } from '../../src/modules/index.ts';
import { startMissingSandboxes } from '../../src/connectors/sandboxes.ts';

/** The app under fuzzing and how to close it. */
export interface FuzzTarget {
  app: FastifyInstance;
  runtime: Runtime;
  close(): Promise<void>;
}

/**
 * Opens the app on `databaseUrl` (migrations applied).
 * @param secretKey the operator key (`SECRET_KEY`, 64 hex digits) sealing the fixture's secrets
 * @param dataDir the `DATA_DIR` setting (nothing is written there when `secretKey` is given)
 */
export async function openFuzzTarget(
  databaseUrl: string,
  secretKey: string,
  dataDir: string,
): Promise<FuzzTarget> {
  const { config, servers } = await startMissingSandboxes(
    loadConfig({
      DATABASE_URL: databaseUrl,
      DATA_DIR: dataDir,
      SECRET_KEY: secretKey,
      LOG_LEVEL: 'silent',
      SEED_DEMO: 'false',
      WEBHOOK_ALLOW_PRIVATE: 'true',
      // The fuzzer exercises the operations: 10,000 requests of one token would meet the rate limit (which has
      // its own tests) and turn the rest into 429s.
      RATE_LIMIT_MAX: '0',
    }),
  );
  const closeSandboxes = async () => void (await Promise.all(servers.map((server) => server.close())));
  let runtime: Runtime | undefined;
  try {
    runtime = await openRuntime(config, databaseUrl, { workers: false });
    runtime.onClose(closeSandboxes);
    const groups = createGroups(runtime);
    const app = await buildApp(runtime, groups, { logger: false });
    await app.ready();
    await startGroupWorkers(runtime, groups);
    const opened = runtime;
    return {
      app,
      runtime,
      async close() {
        await app.close();
        await opened.close();
      },
    };
  } catch (error) {
    if (runtime) await runtime.close();
    else await closeSandboxes();
    throw error;
  }
}
