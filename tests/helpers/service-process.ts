/**
 * Runs the real service as a child process (`bin/seller-ops.js serve`) for tests that need a process boundary:
 * crash recovery, graceful shutdown, several processes on one database, a fresh machine's first start and the
 * examples run against it. Only loopback is used.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll } from 'vitest';
import { TEST_SECRET_KEY } from './test-app.ts';
import { SERVICE_NODE_OPTIONS } from '../../src/node-options.ts';

const binPath = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bin/seller-ops.js');
const examplesPath = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../examples');
const execFileAsync = promisify(execFile);

/** A service child process. */
export interface ServiceProcess {
  child: ChildProcess;
  url: string;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /** Resolves with the exit code (or signal name) once the process has exited. */
  exited: Promise<number | string>;
}

/** Whether `port` can be bound on loopback now. */
function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * Picks a free loopback TCP port below Linux's ephemeral range (32768–60999): a port the system hands out to
 * `listen(0)` could be taken by the child's own sandboxes before the child binds it.
 * @throws when 100 random ports of that range are all taken
 */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if (await bindable(port)) return port;
  }
  throw new Error('no free loopback port between 20000 and 32000');
}

/**
 * Starts the service with `env` added to this process's environment (and the test operator key, so it opens
 * what test apps sealed); does not wait for readiness.
 * @param args the node arguments that run the service (default: as `npm start` runs it, the service's Node
 *   options (P218) and `bin/seller-ops.js serve`)
 */
export async function spawnService(
  env: Record<string, string>,
  args: string[] = [...SERVICE_NODE_OPTIONS, binPath, 'serve'],
): Promise<ServiceProcess> {
  const port = env.PORT ?? String(await freePort());
  const child = spawn(process.execPath, args, {
    env: {
      ...process.env,
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      SECRET_KEY: TEST_SECRET_KEY,
      ...env,
      PORT: port,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | string>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')),
  );
  return { child, url: `http://127.0.0.1:${port}`, output: () => output, exited };
}

/**
 * Polls `/ready` until the service answers 200.
 * @throws when the process exits first or `timeoutMs` passes (with the process output in the message)
 */
export async function waitUntilReady(service: ServiceProcess, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exitedWith: number | string | undefined;
  void service.exited.then((code) => (exitedWith = code));
  while (Date.now() < deadline) {
    if (exitedWith !== undefined) throw new Error(`service exited (${exitedWith}):\n${service.output()}`);
    try {
      const response = await fetch(`${service.url}/ready`);
      if (response.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`service not ready after ${timeoutMs} ms:\n${service.output()}`);
}

/** Sends SIGTERM and waits for the exit code. */
export async function stopService(service: ServiceProcess): Promise<number | string> {
  if (service.child.exitCode === null && service.child.signalCode === null) service.child.kill('SIGTERM');
  return service.exited;
}

/** A service as `npm start` runs it on a fresh machine: embedded PostgreSQL in a new DATA_DIR, the demo account. */
export interface FreshService {
  /** The service's address (set once `beforeAll` ran). */
  readonly url: string;
  /** Its DATA_DIR, holding `demo-credentials.json`. */
  readonly dataDir: string;
  /** Everything it wrote to stdout and stderr so far. */
  readonly output: string;
}

/**
 * Starts a fresh demo service before this file's tests and stops it (and removes its DATA_DIR) after them.
 * @param name part of the temporary directory's name
 * @param env settings added to the defaults (e.g. `MARKET1_API_URL: ''`)
 */
export function useFreshService(name: string, env: Record<string, string> = {}): FreshService {
  let dataDir = '';
  let service: ServiceProcess | undefined;
  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), `seller-ops-${name}-`));
    service = await spawnService({ DATA_DIR: dataDir, DATABASE_URL: '', SEED_DEMO: 'true', ...env });
    await waitUntilReady(service);
  });
  afterAll(async () => {
    if (service) await stopService(service);
    await rm(dataDir, { recursive: true, force: true });
  });
  return {
    get url() {
      return service?.url ?? '';
    },
    get dataDir() {
      return dataDir;
    },
    get output() {
      return service?.output() ?? '';
    },
  };
}

/**
 * Runs `examples/<file>` against `service` with its demo credentials (DATA_DIR) and `env`.
 * @returns the example's standard output
 * @throws when the example exits with a status other than 0 (its output in the error)
 */
export async function runExample(
  file: string,
  service: FreshService,
  env: Record<string, string> = {},
): Promise<string> {
  // As the README runs them: TypeScript through tsx, from the repository (where @seller-ops/client resolves).
  const { stdout } = await execFileAsync(
    process.execPath,
    ['--import', 'tsx', path.join(examplesPath, file)],
    {
      cwd: path.dirname(examplesPath),
      env: { ...process.env, SELLER_OPS_URL: service.url, DATA_DIR: service.dataDir, ...env },
    },
  );
  return stdout;
}
