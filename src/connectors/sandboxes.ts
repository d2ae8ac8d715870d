/**
 * Sandbox servers: small HTTP services in this project that speak the protocol of an external system we cannot
 * reach from here (cash-register providers, the Market1 marketplace), so connectors are exercised over real HTTP
 * (STYLE §9). Each system's folder under `src/connectors/` builds its sandbox (a Fastify app); this module lists
 * them, loading a sandbox's modules only when it is built, and serves them for:
 *
 * - `npm run sandbox` (`seller-ops sandbox`): every sandbox on fixed loopback ports, until interrupted;
 * - the service on its embedded default: a sandbox for each provider whose URL setting is unset, on a free
 *   loopback port, so an organization configured without `baseUrl` works out of the box (D12.1). The port
 *   listens at start; the sandbox is built at its first connection, so a service whose sandboxes are never
 *   called does not hold them in memory (`docs/performance.md` "Memory at idle");
 * - tests, which start the ones they need through `startSandbox`.
 */
import { createServer, type Server } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.ts';

/** A running sandbox server. */
export interface SandboxServer {
  /** The sandbox's name (`SandboxDefinition.name`). */
  name: string;
  /** Base URL the connector uses, e.g. `http://127.0.0.1:40123` (no trailing slash). */
  url: string;
  /** Stops accepting connections and closes the open ones. */
  close(): Promise<void>;
}

/** The config settings that hold an external system's base URL. */
export type ProviderUrlSetting = 'cashRegisterAUrl' | 'cashRegisterBUrl' | 'market1ApiUrl';

/** The environment variable of each URL setting (`src/config.ts`), as operators type it. */
export const PROVIDER_URL_VARIABLES: Readonly<Record<ProviderUrlSetting, string>> = {
  cashRegisterAUrl: 'CASH_REGISTER_A_URL',
  cashRegisterBUrl: 'CASH_REGISTER_B_URL',
  market1ApiUrl: 'MARKET1_API_URL',
};

/** A built sandbox, not listening: its Fastify app and what ends it (the app and the sandbox's timers). */
export interface SandboxApp {
  app: FastifyInstance;
  close(): Promise<void>;
}

/** One system's sandbox in the registry. */
export interface SandboxDefinition {
  /** Short name: `npm run sandbox -- <name>` starts only that one; also in logs. */
  name: string;
  /** The setting with the system's URL: the embedded default starts this sandbox when it is unset. */
  urlSetting: ProviderUrlSetting;
  /** Port of `npm run sandbox` (tests and the embedded default use a free port). */
  defaultPort: number;
  /** Loads the sandbox's modules and builds it with new, empty state. */
  build(): Promise<SandboxApp>;
}

/** Every sandbox of the project, in start order. */
export const SANDBOXES: readonly SandboxDefinition[] = [
  {
    name: 'cash-register-a',
    urlSetting: 'cashRegisterAUrl',
    defaultPort: 8091,
    build: async () => (await import('./cash-register/provider-a/sandbox.ts')).buildProviderASandbox(),
  },
  {
    name: 'cash-register-b',
    urlSetting: 'cashRegisterBUrl',
    defaultPort: 8092,
    build: async () => (await import('./cash-register/provider-b/sandbox.ts')).buildProviderBSandbox(),
  },
  {
    name: 'market1',
    urlSetting: 'market1ApiUrl',
    defaultPort: 8093,
    build: async () => (await import('./market1/sandbox.ts')).buildServedMarket1Sandbox(),
  },
];

/**
 * Serves the sandbox `sandbox.build` makes on `host`:`port` (0 = any free port) with a `node:http` server that
 * hands every request to the app's router, and resolves once it listens. `lazy`: `build` runs at the first
 * request instead of before listening (a failed build answers that request 502 and is tried again at the next).
 * Closing ends every open connection (also answers a fault holds back), then the sandbox.
 * @param sandbox a registry entry (`SANDBOXES`) or any name with its build
 * @throws Error when the port is taken or (not lazy) the build fails
 */
export async function serveSandbox(
  { name, build }: { name: string; build: () => SandboxApp | Promise<SandboxApp> },
  options: { host: string; port: number; lazy?: boolean },
): Promise<SandboxServer> {
  let built: Promise<SandboxApp> | undefined;
  const sandbox = (): Promise<SandboxApp> => {
    if (built) return built;
    const attempt = (async () => {
      const made = await build();
      await made.app.ready();
      return made;
    })();
    built = attempt;
    attempt.catch(() => {
      if (built === attempt) built = undefined;
    });
    return attempt;
  };
  if (!options.lazy) await sandbox();
  const server = createServer((request, response) => {
    sandbox().then(
      ({ app }) => app.routing(request, response),
      (error: unknown) => {
        response.writeHead(502, { 'content-type': 'text/plain; charset=utf-8' });
        response.end(`sandbox ${name} could not be built: ${(error as Error).message}`);
      },
    );
  });
  const closeSandbox = () =>
    built?.then(
      (made) => made.close(),
      () => undefined,
    );
  try {
    await listen(server, options.host, options.port);
  } catch (error) {
    await closeSandbox();
    throw error;
  }
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    name,
    url: `http://${host}:${port}`,
    close: async () => {
      const closed = new Promise((resolve) => server.close(resolve));
      server.closeAllConnections();
      await closed;
      await closeSandbox();
    },
  };
}

/** Listens on `host`:`port`, rejecting when the port is taken. */
function listen(server: Server, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/**
 * Starts the sandbox named `name` on a free loopback port.
 * @throws Error when there is no sandbox of that name
 */
export async function startSandbox(name: string, port = 0): Promise<SandboxServer> {
  const definition = SANDBOXES.find((candidate) => candidate.name === name);
  if (!definition)
    throw new Error(`no sandbox named ${name}; known: ${SANDBOXES.map((s) => s.name).join(', ')}`);
  return serveSandbox(definition, { host: '127.0.0.1', port });
}

/**
 * For the embedded default (D12.1): starts a loopback sandbox for every provider whose URL setting is unset and
 * returns `config` with those settings pointing at them, plus the servers to close on shutdown.
 */
export async function startMissingSandboxes(
  config: Config,
): Promise<{ config: Config; servers: SandboxServer[] }> {
  const servers: SandboxServer[] = [];
  const resolved: Config = { ...config };
  try {
    for (const definition of SANDBOXES) {
      if (resolved[definition.urlSetting] !== undefined) continue;
      const server = await serveSandbox(definition, { host: '127.0.0.1', port: 0, lazy: true });
      servers.push(server);
      resolved[definition.urlSetting] = server.url;
    }
  } catch (error) {
    await Promise.all(servers.map((server) => server.close()));
    throw error;
  }
  return { config: resolved, servers };
}
