/**
 * Starts a service process: resolves the database (external `DATABASE_URL` or the embedded PostgreSQL in
 * `DATA_DIR`, D12), listens at once (`/health` answers, `/ready` says 503 `starting`), then sets the database up
 * under the set-up lock (migrations, pg-boss, sealing, the demo account on a fresh embedded database, D1.5, and
 * the queues; P166), starts the workers and becomes ready; shuts down gracefully on SIGTERM/SIGINT.
 */
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { Config } from './config.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import { buildApp } from './app.ts';
import { missingServiceNodeOptions } from './node-options.ts';
import { createGroups, startGroupWorkers } from './modules/index.ts';
import { loadDictionary, sampleDictionary } from './modules/catalog/dictionary.ts';
import { createRuntime, type Runtime } from './runtime.ts';
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

/** Options of `startService`. */
export interface ServiceOptions {
  /** Folders of further migrations run after ours (a test's pending migration). */
  extraMigrationFolders?: string[];
}

/**
 * Starts the whole service described by `config` and resolves once it is ready (it listens before, answering
 * 503 while it sets the database up). On the embedded default, external systems whose URL is not configured
 * are served by the project's sandboxes on loopback (`src/connectors/sandboxes.ts`).
 * @throws when the database cannot be reached or set up (a deadlock there is retried, never thrown)
 */
export async function startService(
  givenConfig: Config,
  options: ServiceOptions = {},
): Promise<RunningService> {
  let config = givenConfig;
  // PostgreSQL's own output is only interesting when debugging.
  const verbose = config.logLevel === 'debug' || config.logLevel === 'trace';
  const log = (message: string) => {
    if (verbose) process.stderr.write(`${JSON.stringify({ level: 20, time: Date.now(), msg: message })}\n`);
  };
  const { databaseUrl, embedded } = await resolveDatabase(config, log);
  let runtime: Runtime | undefined;
  let app: FastifyInstance | undefined;
  let sandboxes: SandboxServer[] = [];
  const closeSandboxes = () => Promise.all(sandboxes.map((server) => server.close()));
  try {
    // The sandboxes (and their modules) are loaded only by an embedded start that serves them.
    const sandboxKit = embedded ? await loadSandboxKit() : undefined;
    if (sandboxKit) ({ config, servers: sandboxes } = await sandboxKit.startMissingSandboxes(config));
    if (sandboxKit && sandboxes.length > 0) printSandboxes(sandboxKit, sandboxes);
    const opened = await createRuntime(config, databaseUrl, {
      extraMigrationFolders: options.extraMigrationFolders,
      onSetUpRetry: (message) => app?.log.warn(message),
    });
    runtime = opened;
    opened.onClose(async () => void (await closeSandboxes()));
    const groups = createGroups(opened);
    const listening = await buildApp(opened, groups);
    app = listening;
    await listening.listen({ port: config.port, host: config.host });
    await opened.setUp();
    if (config.seedDemo) await opened.setUpOnce(() => seedDemo(opened, sandboxes));
    await startGroupWorkers(opened, groups);
    const address = listening.server.address();
    const url =
      typeof address === 'object' && address ? `http://${config.host}:${address.port}` : String(address);
    let stopping: Promise<void> | undefined;
    return {
      app: listening,
      runtime: opened,
      url,
      stop: () =>
        (stopping ??= (async () => {
          await listening.close();
          await opened.close();
          await embedded?.stop();
        })()),
    };
  } catch (error) {
    await app?.close();
    if (runtime) await runtime.close();
    else await closeSandboxes();
    await embedded?.stop();
    throw error;
  }
}

/** The sandbox registry an embedded start needs (each sandbox's own modules load when it is first called). */
async function loadSandboxKit() {
  return import('./connectors/sandboxes.ts');
}

type SandboxKit = Awaited<ReturnType<typeof loadSandboxKit>>;

/**
 * Prints the URLs of the sandboxes this process started: they live as long as the process, on ports chosen at
 * start, and another instance of the service reaches the same ones only through these variables.
 */
function printSandboxes(kit: SandboxKit, servers: SandboxServer[]): void {
  const lines = servers.map((server) => {
    const definition = kit.SANDBOXES.find((candidate) => candidate.name === server.name);
    const variable = definition
      ? `  (${kit.PROVIDER_URL_VARIABLES[definition.urlSetting]}=${server.url})`
      : '';
    return `  ${server.name}: ${server.url}${variable}`;
  });
  process.stdout.write(
    [
      '',
      'Sandboxes started by this process (loopback, in memory, gone when it stops; other instances need the',
      "same ones: run `npm run sandbox` once and set these variables in every instance's environment):",
      ...lines,
      '',
    ].join('\n') + '\n',
  );
}

/**
 * Creates the demo account when the database has no client yet (D1.5), with the sample dictionaries and, for
 * the sandboxes this process serves, a cash register and a Market1 integration; prints its credentials once.
 */
async function seedDemo(runtime: Runtime, sandboxes: readonly SandboxServer[]): Promise<void> {
  const accounts = new AccountService(runtime.database.db, runtime.secrets);
  const demo = await accounts.seedDemoAccount(runtime.config.dataDir);
  if (!demo) return;
  // The demo account gets the sample marketplace dictionaries (D11.3) until a refresh replaces them.
  await runtime.changes.run((trx) => loadDictionary(trx, sampleDictionary()));
  // ... and, when this process serves provider A's sandbox, an account there, so receipts work out of the box
  // (P77); without baseUrl it follows the sandbox to whatever port it gets on each start.
  const served = (url: string | undefined) => sandboxes.some((server) => server.url === url);
  if (served(runtime.config.cashRegisterAUrl))
    await accounts.setCashRegister(demo.organizationId, {
      service: 'CASH_REGISTER_A',
      login: 'demo',
      password: 'demo',
      email: 'receipts@example.com',
      paymentAddress: 'https://shop.example.com',
      taxationSystem: 'SIMPLIFIED_INCOME',
    });
  // ... and, when it serves the Market1 sandbox, a Market1 integration, so the campaign operations work out of
  // the box (P109); without baseUrl it follows MARKET1_API_URL, the sandbox's URL of this start.
  if (served(runtime.config.market1ApiUrl))
    await accounts.setIntegration(demo.organizationId, { service: 'SERVICE_01', apiKey: DEMO_MARKET1_KEY });
  printDemoCredentials(demo, runtime.config.dataDir);
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

/** How long after the service is ready its start-up garbage is collected: its asynchronous tails (the workers'
 * first polls, the change listener's connection) have run by then. */
const START_UP_GARBAGE_DELAY_MS = 5_000;

/**
 * How many full collections end start-up (P200): V8 flushes the bytecode of a function not run for more collections
 * than `--bytecode-old-age` (5 by default), so the eighth drops what only start-up ran.
 */
const START_UP_COLLECTIONS = 8;

/**
 * Collects the garbage start-up leaves (parsed bundle chunks, route schemas compiled into validators, the
 * migration check, the bytecode of what only start-up ran) with `START_UP_COLLECTIONS` full garbage collections in
 * a row, so an idle service holds what it uses (decision P200): V8's own memory reducer does part of it only 25–45 s
 * later. `expose-gc` reaches V8's `gc` without a command-line flag. A failure is logged as a warning and leaves the
 * heap to V8.
 */
async function collectStartUpGarbage(log: FastifyBaseLogger): Promise<void> {
  try {
    const { default: collectGarbage } = await import('expose-gc/function.js');
    for (let collection = 0; collection < START_UP_COLLECTIONS; collection++) collectGarbage();
  } catch (error) {
    log.warn({ err: error }, 'start-up garbage collection failed');
  }
}

/** Runs the service until SIGTERM or SIGINT, then stops it gracefully and exits. */
export async function runUntilSignalled(config: Config, options: ServiceOptions = {}): Promise<void> {
  const service = await startService(config, options);
  service.app.log.info({ url: service.url }, 'seller-ops listening');
  const missingOptions = missingServiceNodeOptions();
  if (missingOptions.length > 0)
    service.app.log.warn(
      { missingOptions },
      'Node was started without the service options (npm start passes them): after a quiet spell V8 collects a busy ' +
        "service's young objects several times as often (decision P218)",
    );
  setTimeout(() => void collectStartUpGarbage(service.app.log), START_UP_GARBAGE_DELAY_MS).unref();
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
