/**
 * Sandbox servers: small HTTP services in this project that speak the protocol of an external system we cannot
 * reach from here (cash-register providers, the Market1 marketplace), so connectors are exercised over real HTTP
 * (STYLE §9). Each system's folder under `src/connectors/` exports its sandbox's definition; this module lists
 * them and starts them for:
 *
 * - `npm run sandbox` (`seller-ops sandbox`): every sandbox on fixed loopback ports, until interrupted;
 * - the service on its embedded default: a sandbox for each provider whose URL setting is unset, on a free
 *   loopback port, so an organization configured without `baseUrl` works out of the box (issue 8, issue 9);
 * - tests, which start the ones they need through `startSandbox`.
 */
import type { Config } from '../config.ts';
import { market1Sandbox } from './market1/sandbox.ts';
import { providerASandbox } from './cash-register/provider-a/sandbox.ts';
import { providerBSandbox } from './cash-register/provider-b/sandbox.ts';

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

/** How to start one system's sandbox. */
export interface SandboxDefinition {
  /** Short name: `npm run sandbox -- <name>` starts only that one; also in logs. */
  name: string;
  /** The setting with the system's URL: the embedded default starts this sandbox when it is unset. */
  urlSetting: ProviderUrlSetting;
  /** Port of `npm run sandbox` (tests and the embedded default use a free port). */
  defaultPort: number;
  /** Starts the server on `host`:`port` (0 = any free port). */
  start(options: { host: string; port: number }): Promise<SandboxServer>;
}

/** Every sandbox of the project, in start order. */
export const SANDBOXES: readonly SandboxDefinition[] = [providerASandbox, providerBSandbox, market1Sandbox];

/**
 * Starts the sandbox named `name` on a free loopback port.
 * @throws Error when there is no sandbox of that name
 */
export async function startSandbox(name: string, port = 0): Promise<SandboxServer> {
  const definition = SANDBOXES.find((candidate) => candidate.name === name);
  if (!definition)
    throw new Error(`no sandbox named ${name}; known: ${SANDBOXES.map((s) => s.name).join(', ')}`);
  return definition.start({ host: '127.0.0.1', port });
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
      const server = await definition.start({ host: '127.0.0.1', port: 0 });
      servers.push(server);
      resolved[definition.urlSetting] = server.url;
    }
  } catch (error) {
    await Promise.all(servers.map((server) => server.close()));
    throw error;
  }
  return { config: resolved, servers };
}
