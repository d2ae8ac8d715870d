/**
 * The service at its edge (P164): how long a request may take to arrive, how long an idle kept-alive connection
 * stays open, which reverse proxies are trusted, and how many connections the process accepts from one source and
 * in total. The total is derived from the process's limit of open files, with headroom for the database pool,
 * webhook deliveries, connectors and files, so a flood of connections can never take the descriptors the service
 * needs to work.
 *
 * Over a cap a new connection is closed as soon as it is accepted (nothing is read from it or written to it): over
 * its source's cap it is reset before Node makes a socket of it (P191), over the total cap Node closes it, also
 * before a socket is made. Counted in `seller_ops_http_connections_refused_total{limit}` and logged at `info` at
 * most once per source per `REFUSAL_LOG_INTERVAL_MILLISECONDS`. A source is an IPv4 address or an IPv6 /64 (one
 * subscriber's network).
 * Connections from a trusted proxy are not capped per source: the proxy speaks for many clients, and caps each of
 * them itself (docs/operations.md).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { isIPv4, type DropArgument, type Server, type Socket } from 'node:net';
import { createServer, type RequestListener, type Server as HttpServer, type ServerOptions } from 'node:http';
import type { FastifyInstance } from 'fastify';
import proxyAddr from '@fastify/proxy-addr';
import ipaddr from 'ipaddr.js';
import type { Config } from '../config.ts';
import type { ServiceMetrics } from '../metrics/service-metrics.ts';
import type { CachedAnswers } from './cached-answers.ts';

/** A refused source is logged at most once per this interval (1 minute). */
export const REFUSAL_LOG_INTERVAL_MILLISECONDS = 60_000;
/** Sources remembered for the log interval; beyond, the oldest is forgotten (it may be logged again early). */
const REMEMBERED_SOURCES = 10_000;
/** Descriptors kept for files (task files, exports), pipes, standard streams and the event loop itself. */
const FILES_RESERVE = 256;
/** Descriptors kept for connections to marketplaces and cash-register providers. */
const CONNECTORS_RESERVE = 256;
/** Assumed limit of open files when the process's own cannot be read. */
const FALLBACK_DESCRIPTOR_LIMIT = 1024;

/** The connection caps of one process. */
export interface ConnectionLimits {
  /** Open connections accepted in total (`MAX_CONNECTIONS`, or derived). */
  total: number;
  /** Open connections accepted from one source (`MAX_CONNECTIONS_PER_SOURCE`); 0 = no cap. */
  perSource: number;
  /** The process's limit of open files the total was derived from; undefined when `MAX_CONNECTIONS` is set. */
  descriptorLimit: number | undefined;
  /** Descriptors kept out of the total for the database pool, webhook deliveries, connectors and files. */
  headroom: number;
}

/**
 * The soft limit of open files of this process (Node raises it to the hard limit at start): from
 * `/proc/self/limits` on Linux, else from the shell's `ulimit -n`; undefined when neither answers or it is
 * unlimited.
 */
export function descriptorLimit(): number | undefined {
  let text: string;
  try {
    text = /^Max open files\s+(\S+)/m.exec(readFileSync('/proc/self/limits', 'utf8'))?.[1] ?? '';
  } catch {
    try {
      text = execFileSync('/bin/sh', ['-c', 'ulimit -n'], { encoding: 'utf8', timeout: 2_000 }).trim();
    } catch {
      return undefined;
    }
  }
  const limit = Number(text);
  return Number.isInteger(limit) && limit > 0 ? limit : undefined;
}

/**
 * The caps of `config`: `MAX_CONNECTIONS` when set, else the descriptor limit less the headroom — the database
 * pool, every webhook delivery in flight (workers × batch size), `CONNECTORS_RESERVE` and `FILES_RESERVE` — but
 * never less than half the limit.
 * @param limit the process's limit of open files (default: read with `descriptorLimit()`)
 */
export function connectionLimits(config: Config, limit = descriptorLimit()): ConnectionLimits {
  const headroom =
    config.databasePoolSize +
    config.webhookWorkers * config.webhookBatchSize +
    CONNECTORS_RESERVE +
    FILES_RESERVE;
  const perSource = config.maxConnectionsPerSource;
  if (config.maxConnections !== undefined)
    return { total: config.maxConnections, perSource, descriptorLimit: undefined, headroom };
  const descriptors = limit ?? FALLBACK_DESCRIPTOR_LIMIT;
  return {
    total: Math.max(Math.floor(descriptors / 2), descriptors - headroom),
    perSource,
    descriptorLimit: descriptors,
    headroom,
  };
}

/**
 * The Fastify options of the edge: request and headers time limits, keep-alive timeout and trusted proxies, and
 * the one server they apply to. Node checks the time limits every `connectionsCheckingInterval`; it is a quarter
 * of the smaller bound (within 0.1–1 s), so a request is cut at most that long after its bound.
 *
 * The server comes from a factory of ours so that the service has exactly one (P204): without one, Fastify opens
 * a second server for each further address `HOST=localhost` resolves to (`::1` beside `127.0.0.1`), and that
 * server would have none of the connection limits, the client-error answer or the refusal metrics installed on
 * `app.server`. Its request listener asks `cachedAnswers` first and hands Fastify what they do not answer (P223).
 */
export function edgeServerOptions(
  config: Config,
  cachedAnswers: CachedAnswers,
): {
  trustProxy: string[] | false;
  serverFactory: (handler: RequestListener) => HttpServer;
} {
  const bounds = [config.headersTimeoutMs, config.requestTimeoutMs].filter((bound) => bound > 0);
  const checkingInterval = Math.max(100, Math.min(1_000, Math.floor(Math.min(...bounds) / 4)));
  const http: ServerOptions = {
    requestTimeout: config.requestTimeoutMs,
    headersTimeout: config.headersTimeoutMs,
    keepAliveTimeout: config.keepAliveTimeoutMs,
    connectionsCheckingInterval: checkingInterval,
  };
  return {
    trustProxy: config.trustProxy.length > 0 ? config.trustProxy : false,
    serverFactory: (handler) =>
      createServer(http, (request, response) => {
        if (!cachedAnswers.answer(request, response)) handler(request, response);
      }),
  };
}

/**
 * The source a connection from `address` is counted under: the IPv4 address (also when written IPv4-mapped), or
 * the IPv6 /64 network (`2001:db8:1:2::/64`) — one subscriber gets a whole /64, so single IPv6 addresses cost an
 * abuser nothing. A dotted IPv4 address, what most connections carry, is its own source without being parsed.
 */
export function sourceOf(address: string): string {
  if (isIPv4(address)) return address;
  if (!ipaddr.isValid(address)) return address;
  const parsed = ipaddr.process(address);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  return `${ipaddr.IPv6.networkAddressFromCIDR(`${parsed.toString()}/64`).toString()}/64`;
}

/**
 * Installs `limits` on the server of `app`: `maxConnections` for the total (Node closes a connection beyond it
 * and emits `drop`) and a count of open connections per source, resetting a source's connection beyond its cap
 * before the server's `connection` listeners run (P191).
 * Connections from `trustProxy` are counted in the total only. Logs the limits once the server listens.
 */
export function installConnectionLimits(
  app: FastifyInstance,
  limits: ConnectionLimits,
  config: Pick<Config, 'trustProxy' | 'requestTimeoutMs' | 'headersTimeoutMs' | 'keepAliveTimeoutMs'>,
  metrics: ServiceMetrics,
): void {
  const server = app.server;
  server.maxConnections = limits.total;
  metrics.httpConnections.set({ state: 'open' }, 0);
  metrics.httpConnections.set({ state: 'limit_total' }, limits.total);
  metrics.httpConnections.set({ state: 'limit_per_source' }, limits.perSource);
  const trusted = config.trustProxy.length > 0 ? proxyAddr.compile(config.trustProxy) : () => false;
  const openBySource = new Map<string, number>();
  const lastLogged = new Map<string, number>();

  /** Whether a refusal of `source` is logged now: the first in its interval. Oldest entries are forgotten. */
  const logNow = (source: string): boolean => {
    const now = Date.now();
    const last = lastLogged.get(source);
    if (last !== undefined && now - last < REFUSAL_LOG_INTERVAL_MILLISECONDS) return false;
    lastLogged.delete(source);
    for (const [oldest, at] of lastLogged) {
      if (now - at < REFUSAL_LOG_INTERVAL_MILLISECONDS && lastLogged.size < REMEMBERED_SOURCES) break;
      lastLogged.delete(oldest);
    }
    lastLogged.set(source, now);
    return true;
  };
  const refused = (limit: 'per_source' | 'total', source: string, cap: number) => {
    metrics.httpConnectionsRefused.inc({ limit });
    if (logNow(source))
      app.log.info(
        { source, limit, cap, intervalSeconds: REFUSAL_LOG_INTERVAL_MILLISECONDS / 1000 },
        'connection refused: over the cap (logged once per source per interval)',
      );
  };

  server.on('drop', (data?: DropArgument) =>
    refused('total', sourceOf(data?.remoteAddress ?? 'unknown'), limits.total),
  );
  /** The source `address` is capped under, or undefined when it is not capped (no cap, or a trusted proxy). */
  const cappedSource = (address: string | undefined): string | undefined =>
    limits.perSource > 0 && address !== undefined && !trusted(address, 0) ? sourceOf(address) : undefined;
  /** Whether a new connection of `source` is over its cap; then it is counted and logged as refused. */
  const overCap = (source: string | undefined): boolean => {
    if (source === undefined || (openBySource.get(source) ?? 0) < limits.perSource) return false;
    refused('per_source', source, limits.perSource);
    return true;
  };
  /** Counts an admitted `socket` under its source until it closes, or resets it when over the source's cap. */
  const admit = (socket: Socket): boolean => {
    const source = cappedSource(socket.remoteAddress);
    if (overCap(source)) {
      socket.resetAndDestroy();
      return false;
    }
    if (source !== undefined) openBySource.set(source, (openBySource.get(source) ?? 0) + 1);
    metrics.httpConnections.inc({ state: 'open' });
    socket.once('close', () => {
      metrics.httpConnections.dec({ state: 'open' });
      if (source === undefined) return;
      const left = (openBySource.get(source) ?? 1) - 1;
      if (left > 0) openBySource.set(source, left);
      else openBySource.delete(source);
    });
    return true;
  };
  // A refused connection never reaches the HTTP layer (P191): it is reset in the listening handle's
  // `onconnection`, before Node makes a socket object of it, as Node itself closes one over `maxConnections`.
  // The check in the server's `emit`, before Node's own `connection` listener allocates a parser and wires its
  // handlers, counts every admitted connection, and refuses one itself where the handle offers no such hook.
  const emit = server.emit.bind(server) as (event: string | symbol, ...args: unknown[]) => boolean;
  server.emit = ((event: string | symbol, ...args: unknown[]) =>
    event === 'connection' && !admit(args[0] as Socket) ? true : emit(event, ...args)) as typeof server.emit;
  server.on('listening', () => refuseBeforeSockets(server, (address) => overCap(cappedSource(address))));
  server.once('listening', () =>
    app.log.info(
      {
        maxConnections: limits.total,
        maxConnectionsPerSource: limits.perSource,
        descriptorLimit: limits.descriptorLimit,
        headroom: limits.headroom,
        requestTimeoutMs: config.requestTimeoutMs,
        headersTimeoutMs: config.headersTimeoutMs,
        keepAliveTimeoutMs: config.keepAliveTimeoutMs,
        trustProxy: config.trustProxy,
      },
      'connection limits',
    ),
  );
}

/** A TCP handle of a connection not yet made a socket (Node's `TCPWrap`). */
interface ConnectionHandle {
  getpeername?(out: { address?: string }): number;
  reset?(onClose: () => void): number;
}

/** The listening TCP handle of a server (Node's `TCPWrap`), with libuv's callback per accepted connection. */
interface ListeningHandle {
  onconnection?: (this: ListeningHandle, status: number, connection?: ConnectionHandle) => unknown;
}

/**
 * Makes the listening handle of `server` reset a connection for which `refuse(peer address)` holds before any
 * socket object is made of it (P191). Node's handle is internal (`server._handle`): where it or a connection's
 * `getpeername` or `reset` is missing, nothing changes and the `emit` check refuses instead.
 */
function refuseBeforeSockets(server: Server, refuse: (address: string | undefined) => boolean): void {
  const handle = (server as unknown as { _handle?: ListeningHandle })._handle;
  const accept = handle?.onconnection;
  if (handle === undefined || typeof accept !== 'function') return;
  handle.onconnection = function (status, connection) {
    if (
      status === 0 &&
      typeof connection?.getpeername === 'function' &&
      typeof connection.reset === 'function'
    ) {
      const peer: { address?: string } = {};
      connection.getpeername(peer);
      if (refuse(peer.address)) return void connection.reset(() => undefined);
    }
    return accept.call(this, status, connection);
  };
}
