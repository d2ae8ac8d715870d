/**
 * Starts a service process: resolves the database (external `DATABASE_URL` or the embedded PostgreSQL in
 * `DATA_DIR`, D12), opens the runtime (migrations applied), seeds the demo account on a fresh embedded
 * database (D1.5), listens, and shuts down gracefully on SIGTERM/SIGINT.
 */
import type { FastifyInstance } from 'fastify';
import type { Config } from './config.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import { buildApp } from './app.ts';
import { createGroups, startGroupWorkers } from './modules/index.ts';
import { loadDictionary, sampleDictionary } from './modules/catalog/dictionary.ts';
import { openRuntime, type Runtime } from './runtime.ts';
import { startEmbeddedPostgres, type EmbeddedPostgresHandle } from './db/embedded-postgres.ts';
import type { SandboxServer } from './connectors/sandboxes.ts';
import { AccountService } from './modules/accounts/service.ts';

/** The demo organization's Market1 API key on the sandbox (any key is an account of its own there, P96). */
const DEMO_MARKET1_KEY = 'demo';

/** A database URL and how to release it. */
export interface ResolvedDatabase {
  databaseUrl: string;
  embedded: EmbeddedPostgresHandle | undefined;
}

/**
 * Uses `config.databaseUrl`, or starts the embedded PostgreSQL in `config.dataDir`.
 * @throws DataDirInUseError when another live service owns the data directory
 */
export async function resolveDatabase(
  config: Config,
  log: (message: string) => void,
): Promise<ResolvedDatabase> {
  if (config.databaseUrl) return { databaseUrl: config.databaseUrl, embedded: undefined };
  const embedded = await startEmbeddedPostgres({ dataDir: config.dataDir, log });
  return { databaseUrl: embedded.databaseUrl, embedded };
}

/** A listening service. */
export interface RunningService {
  app: FastifyInstance;
  runtime: Runtime;
  /** `http://host:port` the service listens on. */
  url: string;
  /** Stops accepting requests, waits for the ones in flight, then closes the database. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Starts the whole service described by `config`. On the embedded default, external systems whose URL is not
 * configured are served by the project's sandboxes on loopback (`src/connectors/sandboxes.ts`).
 */
export async function startService(givenConfig: Config): Promise<RunningService> {
  let config = givenConfig;
  // PostgreSQL's own output is only interesting when debugging.
  const verbose = config.logLevel === 'debug' || config.logLevel === 'trace';
  const log = (message: string) => {
    if (verbose) process.stderr.write(`${JSON.stringify({ level: 20, time: Date.now(), msg: message })}\n`);
  };
  const { databaseUrl, embedded } = await resolveDatabase(config, log);
  let runtime: Runtime | undefined;
  let sandboxes: SandboxServer[] = [];
  const closeSandboxes = () => Promise.all(sandboxes.map((server) => server.close()));
  try {
    // The sandboxes (and their modules) are loaded only by an embedded start that serves them.
    const sandboxKit = embedded ? await loadSandboxKit() : undefined;
    if (sandboxKit) ({ config, servers: sandboxes } = await sandboxKit.startMissingSandboxes(config));
    runtime = await openRuntime(config, databaseUrl);
    runtime.onClose(async () => void (await closeSandboxes()));
    if (config.seedDemo) {
      const accounts = new AccountService(runtime.database.db, runtime.secrets);
      const demo = await accounts.seedDemoAccount(config.dataDir);
      if (demo) {
        // The demo account gets the sample marketplace dictionaries (D11.3) until a refresh replaces them.
        await runtime.changes.run((trx) => loadDictionary(trx, sampleDictionary()));
        // ... and, when this process serves provider A's sandbox, an account there, so receipts work out of
        // the box (P77); without baseUrl it follows the sandbox to whatever port it gets on each start.
        if (sandboxKit && sandboxes.some((server) => server.name === sandboxKit.providerASandbox.name))
          await accounts.setCashRegister(demo.organizationId, {
            service: 'CASH_REGISTER_A',
            login: 'demo',
            password: sandboxKit.SANDBOX_PASSWORD,
          });
        // ... and, when it serves the Market1 sandbox, a Market1 integration, so the campaign operations work
        // out of the box (P109); without baseUrl it follows MARKET1_API_URL, the sandbox's URL of this start.
        if (sandboxKit && sandboxes.some((server) => server.name === sandboxKit.market1Sandbox.name))
          await accounts.setIntegration(demo.organizationId, {
            service: 'SERVICE_01',
            apiKey: DEMO_MARKET1_KEY,
          });
        printDemoCredentials(demo, config.dataDir);
      }
    }
    const groups = createGroups(runtime);
    const app = await buildApp(runtime, groups);
    await startGroupWorkers(runtime, groups);
    await app.listen({ port: config.port, host: config.host });
    const address = app.server.address();
    const url =
      typeof address === 'object' && address ? `http://${config.host}:${address.port}` : String(address);
    let stopping: Promise<void> | undefined;
    const openedRuntime = runtime;
    return {
      app,
      runtime,
      url,
      stop: () =>
        (stopping ??= (async () => {
          await app.close();
          await openedRuntime.close();
          await embedded?.stop();
        })()),
    };
  } catch (error) {
    if (runtime) await runtime.close();
    else await closeSandboxes();
    await embedded?.stop();
    throw error;
  }
}

/** The sandbox modules an embedded start needs: starting the missing ones, and the demo account's settings. */
async function loadSandboxKit() {
  const [{ startMissingSandboxes }, { providerASandbox }, { SANDBOX_PASSWORD }, { market1Sandbox }] =
    await Promise.all([
      import('./connectors/sandboxes.ts'),
      import('./connectors/cash-register/provider-a/sandbox.ts'),
      import('./connectors/cash-register/sandbox-kit.ts'),
      import('./connectors/market1/sandbox.ts'),
    ]);
  return { startMissingSandboxes, providerASandbox, SANDBOX_PASSWORD, market1Sandbox };
}

function printDemoCredentials(
  demo: { organizationId: number; readToken: string; writeToken: string },
  dataDir: string,
): void {
  process.stdout.write(
    [
      '',
      'Demo account created (printed once; also saved to ' + `${dataDir}/demo-credentials.json):`,
      `  organizationId: ${demo.organizationId}`,
      `  READ token:     ${demo.readToken}`,
      `  WRITE token:    ${demo.writeToken}`,
      '',
    ].join('\n') + '\n',
  );
}

/** Runs the service until SIGTERM or SIGINT, then stops it gracefully and exits. */
export async function runUntilSignalled(config: Config): Promise<void> {
  const service = await startService(config);
  service.app.log.info({ url: service.url }, 'seller-ops listening');
  const shutdown = (signal: string) => {
    service.app.log.info({ signal }, 'shutting down');
    // Drain first: kept-alive clients get 503 + connection: close, then the listener closes (P35).
    service.app.beginShutdown();
    sleep(config.shutdownDrainMs)
      .then(() => service.stop())
      .then(
        () => process.exit(0),
        (error: unknown) => {
          service.app.log.error({ err: error }, 'shutdown failed');
          process.exit(1);
        },
      );
  };
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
}
