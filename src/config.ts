/**
 * Service settings, read once from the environment (decision D12.3).
 * Every setting has a default that runs the service on the embedded database.
 */
import os from 'node:os';
import path from 'node:path';
import proxyAddr from '@fastify/proxy-addr';
import { loadBackupSettings, type BackupSettings } from './backup/settings.ts';

/** Resolved settings of one service process. */
export interface Config {
  /** TCP port of the HTTP API (`PORT`, default 8080). */
  port: number;
  /** Interface to bind (`HOST`, default 127.0.0.1; use 0.0.0.0 in containers). */
  host: string;
  /** External PostgreSQL URL (`DATABASE_URL`); undefined = embedded PostgreSQL in `dataDir`. */
  databaseUrl: string | undefined;
  /** Data directory of the embedded PostgreSQL and its credentials (`DATA_DIR`, default ./data). */
  dataDir: string;
  /** Operator token for /admin (`ADMIN_TOKEN`); undefined disables the admin API (D1.4). */
  adminToken: string | undefined;
  /** Base URL used in `_links` and download URLs (`PUBLIC_BASE_URL`); empty = relative links. */
  publicBaseUrl: string;
  /** pino level (`LOG_LEVEL`, default info). */
  logLevel: string;
  /** Base URL of Market1 (`MARKET1_API_URL`), used by campaign and catalog connectors. */
  market1ApiUrl: string | undefined;
  /** Base URLs of the cash-register providers (`CASH_REGISTER_A_URL`, `CASH_REGISTER_B_URL`). */
  cashRegisterAUrl: string | undefined;
  cashRegisterBUrl: string | undefined;
  /** Allow webhook targets in private networks (`WEBHOOK_ALLOW_PRIVATE=true`, D9.4). */
  webhookAllowPrivate: boolean;
  /**
   * Delays in seconds before each webhook retry (`WEBHOOK_RETRY_SCHEDULE`, comma-separated, decimals allowed;
   * default `1,5,30,120,600,1800,3600,7200,14400,28800,28800` ≈ 24 h). Each delay gets ±20 % jitter; after the
   * last one the delivery is FAILED (D9.3).
   */
  webhookRetrySchedule: number[];
  /** Time a receiver has to answer a delivery, in ms (`WEBHOOK_TIMEOUT_MS`, default 10000; D9.3). */
  webhookTimeoutMs: number;
  /** Delivery workers per process (`WEBHOOK_WORKERS`, default 4; 0 = this process delivers nothing). */
  webhookWorkers: number;
  /** Deliveries each worker fetches and sends concurrently (`WEBHOOK_BATCH_SIZE`, default 50). */
  webhookBatchSize: number;
  /**
   * How long a worker waits for its batch's sends, in ms (`WEBHOOK_SLOW_AFTER_MS`, default 1000). Sends still in
   * flight then finish in the background, covered by watchdog jobs (P29), and the worker takes the next batch, so a
   * slow receiver delays only its own deliveries. 0 = wait for the whole batch (a slow receiver holds the worker
   * up to `webhookTimeoutMs`).
   */
  webhookSlowAfterMs: number;
  /** Seconds before an unfinished delivery job of a crashed process is retried (`WEBHOOK_JOB_EXPIRE_SECONDS`, default 60). */
  webhookJobExpireSeconds: number;
  /** Seconds between the queue's checks for due retries and expired jobs (`WEBHOOK_POLL_SECONDS`, default 2). */
  webhookPollSeconds: number;
  /** Create the demo account on first start (`SEED_DEMO`; default true on embedded, false otherwise; D1.5). */
  /**
   * `SECRET_KEY`: the operator key sealing stored secrets (P160), 32 bytes as hex or base64; unset = the file
   * `<DATA_DIR>/secret-key`, created on first start.
   */
  secretKey: string | undefined;
  /** `LISTEN_RECONNECT_MS`: delay before the change listener reconnects after losing its connection. */
  listenReconnectMs: number;
  /**
   * `SHUTDOWN_DRAIN_MS`: on SIGTERM, how long requests on open connections get 503 (new connections are refused at
   * once) before the service stops (P35).
   */
  shutdownDrainMs: number;
  seedDemo: boolean;
  /** Maximum request body in bytes (`BODY_LIMIT_BYTES`, default 4 MiB). */
  bodyLimitBytes: number;
  /** Size of the PostgreSQL connection pool (`DATABASE_POOL_SIZE`, default 10). */
  databasePoolSize: number;
  /**
   * How many statements of the campaign statistics reads (`getStatCampaigns`, `getTotalStatCampaigns`,
   * `getCampaigns`) run at once in this process (`STATISTICS_CONCURRENCY`, at least 1; default twice the number
   * of CPUs, PostgreSQL's rule of thumb for busy connections); the others wait their turn in arrival order (P156).
   */
  statisticsConcurrency: number;
  /**
   * How many text searches (a list page with `query`, or inbound's `product` or `containsArticle`) run at once in
   * this process (`SEARCH_CONCURRENCY`, at least 1; default twice the number of CPUs, as for the statistics); the
   * others wait their turn in arrival order (P211).
   */
  searchConcurrency: number;
  /**
   * Time limit of one HTTP exchange with a cash-register provider, in ms (`CASH_REGISTER_TIMEOUT_MS`, default
   * 10000). A request that gets no answer in time leaves the receipt as it is, to be refreshed (P75).
   */
  cashRegisterTimeoutMs: number;
  /**
   * Delays in seconds before each background refresh of a receipt that is not settled yet
   * (`RECEIPT_REFRESH_SCHEDULE`, comma-separated, decimals allowed; default `1,2,5,10,30,60,120,300,600,1800,3600`).
   * The first delay counts from the receipt's commit; after the last one that delay repeats until the receipt is
   * COMPLETED, FAILED or CANCELLED (P76).
   */
  receiptRefreshSchedule: number[];
  /**
   * `TASK_HEARTBEAT_SECONDS` (default 10): how often a process stamps the tasks it runs; a running task whose
   * stamp is older than three times this is taken as lost with its process and retried or ended (P83).
   */
  taskHeartbeatSeconds: number;
  /** `TASK_SWEEP_SECONDS` (default 15): how often each worker process looks for lost and expired tasks (P83). */
  taskSweepSeconds: number;
  /** `TASK_RETENTION_DAYS` (default 7): days a finished task and its file are kept after `finishDate` (P87). */
  taskRetentionDays: number;
  /** `TASK_PROGRESS_WRITE_MS` (default 1000): a task's progress is written at most this often (P82). */
  taskProgressWriteMs: number;
  /**
   * Seconds an idempotency key and its stored answer are kept (`IDEMPOTENCY_RETENTION_SECONDS`, default 86400 =
   * 24 h, D3.2); expired keys count as unused and are purged by a job (P123).
   */
  idempotencyRetentionSeconds: number;
  /**
   * Lease of an idempotency key's claim in seconds (`IDEMPOTENCY_LOCK_SECONDS`, default 60, P121): a repeat of a
   * request whose process died before answering runs again once the lease has passed. While the request holds a
   * transaction its claim is locked in the database, however long it runs.
   */
  idempotencyLockSeconds: number;
  /**
   * Requests one token (or, without a live token, one IP address) may make per window (`RATE_LIMIT_MAX`, default
   * 6000; 0 = no rate limit). Admin, health, readiness, metrics and documentation routes are exempt (P125).
   */
  rateLimitMax: number;
  /** Length of a rate-limit window in seconds (`RATE_LIMIT_WINDOW_SECONDS`, default 60, P125). */
  rateLimitWindowSeconds: number;
  /**
   * Where rate-limit counters live (`RATE_LIMIT_STORE`: `memory`, `database` or `redis`, P126). Default: `redis`
   * when `REDIS_URL` is set, else `database` with an external `DATABASE_URL` (counters shared by every process
   * on it), else `memory` (the embedded database serves a single process).
   */
  rateLimitStore: 'memory' | 'database' | 'redis';
  /** Redis URL for the rate-limit counters (`REDIS_URL`, e.g. `redis://127.0.0.1:6379`). */
  redisUrl: string | undefined;
  /**
   * `METRICS_TOKEN`: when set, `GET /metrics` answers only `Authorization: Bearer <token>` (P129); unset = open
   * (bind the service to a private interface or put it behind a proxy).
   */
  metricsToken: string | undefined;
  /**
   * `TRUST_PROXY`: comma-separated addresses or CIDR ranges of the reverse proxies in front of the service (also
   * `loopback`, `linklocal`, `uniquelocal`, as Fastify's `trustProxy` takes them); empty = none (the default).
   * A request from one of them is taken to come from the address its `X-Forwarded-For` names: in logs, rate
   * limits and the per-source request count; connections from them are exempt from the per-source cap (P164).
   */
  trustProxy: string[];
  /**
   * `REQUEST_TIMEOUT_MS` (default 30000): time a request has to arrive whole, headers and body, from its first
   * byte; a slower one gets 408 `error_request_timeout` and its connection is closed. 0 = no bound (P164).
   */
  requestTimeoutMs: number;
  /**
   * `HEADERS_TIMEOUT_MS` (default 10000, at most `requestTimeoutMs`): time the headers of a request, or the first
   * request of a new connection, have to arrive (P164).
   */
  headersTimeoutMs: number;
  /** `KEEP_ALIVE_TIMEOUT_MS` (default 5000): an idle kept-alive connection is closed after this long (P164). */
  keepAliveTimeoutMs: number;
  /**
   * `MAX_CONNECTIONS`: open connections the process accepts in total; unset = derived from the process's limit of
   * open files with headroom for the database pool, webhook deliveries, connectors and files
   * (`src/http/connections.ts`, P164). Beyond it a new connection is closed at once.
   */
  maxConnections: number | undefined;
  /**
   * `MAX_CONNECTIONS_PER_SOURCE` (default 128; 0 = no cap): open connections accepted from one source, an IPv4
   * address or an IPv6 /64; connections from a trusted proxy are not capped per source (P164).
   */
  maxConnectionsPerSource: number;
  /** Scheduled backups: `BACKUP_SCHEDULE`, `BACKUP_DIR`, `BACKUP_KEEP` (`src/backup/settings.ts`). */
  backup: BackupSettings;
}

function flag(value: string | undefined): boolean | undefined {
  if (value === undefined || value === '') return undefined;
  return ['1', 'true', 'yes', 'on'].includes(value.toLowerCase());
}

function integer(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0)
    throw new Error(`${name} must be a non-negative integer, got "${value}"`);
  return parsed;
}

const RATE_LIMIT_STORES = ['memory', 'database', 'redis'] as const;

function rateLimitStore(env: NodeJS.ProcessEnv, databaseUrl: string | undefined): Config['rateLimitStore'] {
  const value = env.RATE_LIMIT_STORE;
  if (value === undefined || value === '')
    return env.REDIS_URL ? 'redis' : databaseUrl ? 'database' : 'memory';
  const store = RATE_LIMIT_STORES.find((name) => name === value);
  if (!store)
    throw new Error(`RATE_LIMIT_STORE must be one of ${RATE_LIMIT_STORES.join(', ')}, got "${value}"`);
  if (store === 'redis' && !env.REDIS_URL) throw new Error('RATE_LIMIT_STORE=redis needs REDIS_URL');
  return store;
}

/**
 * `TRUST_PROXY` as a list; every entry must be an address, a CIDR range or one of proxy-addr's names.
 * @throws Error naming the first entry proxy-addr cannot compile
 */
function trustedProxies(value: string | undefined): string[] {
  const entries = (value ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  for (const entry of entries) {
    try {
      proxyAddr.compile(entry);
    } catch {
      throw new Error(`TRUST_PROXY must list addresses or CIDR ranges, got "${entry}"`);
    }
  }
  return entries;
}

/** `HEADERS_TIMEOUT_MS`: at most the request bound (Node refuses a larger one). */
function headersTimeout(env: NodeJS.ProcessEnv, requestTimeoutMs: number): number {
  const given = env.HEADERS_TIMEOUT_MS;
  const bound = requestTimeoutMs === 0 ? Infinity : requestTimeoutMs;
  if (given === undefined || given === '') return Math.min(10_000, bound);
  const value = Math.max(1, integer('HEADERS_TIMEOUT_MS', given, 10_000));
  if (value > bound)
    throw new Error(`HEADERS_TIMEOUT_MS (${value}) must not exceed REQUEST_TIMEOUT_MS (${requestTimeoutMs})`);
  return value;
}

function seconds(name: string, value: string | undefined, fallback: number[]): number[] {
  if (value === undefined || value.trim() === '') return fallback;
  const parsed = value.split(',').map((part) => Number(part.trim()));
  if (parsed.some((delay) => !Number.isFinite(delay) || delay < 0))
    throw new Error(`${name} must be comma-separated non-negative seconds, got "${value}"`);
  return parsed;
}

/**
 * Reads the settings from `env`.
 * @throws Error when a numeric setting is not a non-negative integer, `RATE_LIMIT_STORE` is unknown (or
 *   `redis` without `REDIS_URL`), `TRUST_PROXY` lists something else than addresses, or `HEADERS_TIMEOUT_MS`
 *   exceeds `REQUEST_TIMEOUT_MS`.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const databaseUrl = env.DATABASE_URL || undefined;
  const requestTimeoutMs = integer('REQUEST_TIMEOUT_MS', env.REQUEST_TIMEOUT_MS, 30_000);
  const dataDir = path.resolve(env.DATA_DIR || './data');
  return {
    port: integer('PORT', env.PORT, 8080),
    host: env.HOST || '127.0.0.1',
    databaseUrl,
    dataDir,
    adminToken: env.ADMIN_TOKEN || undefined,
    publicBaseUrl: (env.PUBLIC_BASE_URL || '').replace(/\/+$/, ''),
    logLevel: env.LOG_LEVEL || 'info',
    market1ApiUrl: env.MARKET1_API_URL || undefined,
    cashRegisterAUrl: env.CASH_REGISTER_A_URL || undefined,
    cashRegisterBUrl: env.CASH_REGISTER_B_URL || undefined,
    webhookAllowPrivate: flag(env.WEBHOOK_ALLOW_PRIVATE) ?? false,
    webhookRetrySchedule: seconds(
      'WEBHOOK_RETRY_SCHEDULE',
      env.WEBHOOK_RETRY_SCHEDULE,
      [1, 5, 30, 120, 600, 1800, 3600, 7200, 14400, 28800, 28800],
    ),
    webhookTimeoutMs: integer('WEBHOOK_TIMEOUT_MS', env.WEBHOOK_TIMEOUT_MS, 10_000),
    webhookWorkers: integer('WEBHOOK_WORKERS', env.WEBHOOK_WORKERS, 4),
    webhookBatchSize: Math.max(1, integer('WEBHOOK_BATCH_SIZE', env.WEBHOOK_BATCH_SIZE, 50)),
    webhookSlowAfterMs: integer('WEBHOOK_SLOW_AFTER_MS', env.WEBHOOK_SLOW_AFTER_MS, 1000),
    webhookJobExpireSeconds: Math.max(
      1,
      integer('WEBHOOK_JOB_EXPIRE_SECONDS', env.WEBHOOK_JOB_EXPIRE_SECONDS, 60),
    ),
    webhookPollSeconds: Math.max(1, integer('WEBHOOK_POLL_SECONDS', env.WEBHOOK_POLL_SECONDS, 2)),
    secretKey: env.SECRET_KEY || undefined,
    listenReconnectMs: integer('LISTEN_RECONNECT_MS', env.LISTEN_RECONNECT_MS, 500),
    shutdownDrainMs: integer('SHUTDOWN_DRAIN_MS', env.SHUTDOWN_DRAIN_MS, 1000),
    seedDemo: flag(env.SEED_DEMO) ?? databaseUrl === undefined,
    bodyLimitBytes: integer('BODY_LIMIT_BYTES', env.BODY_LIMIT_BYTES, 4 * 1024 * 1024),
    databasePoolSize: integer('DATABASE_POOL_SIZE', env.DATABASE_POOL_SIZE, 10),
    statisticsConcurrency: Math.max(
      1,
      integer('STATISTICS_CONCURRENCY', env.STATISTICS_CONCURRENCY, 2 * os.availableParallelism()),
    ),
    searchConcurrency: Math.max(
      1,
      integer('SEARCH_CONCURRENCY', env.SEARCH_CONCURRENCY, 2 * os.availableParallelism()),
    ),
    cashRegisterTimeoutMs: Math.max(
      1,
      integer('CASH_REGISTER_TIMEOUT_MS', env.CASH_REGISTER_TIMEOUT_MS, 10_000),
    ),
    receiptRefreshSchedule: seconds(
      'RECEIPT_REFRESH_SCHEDULE',
      env.RECEIPT_REFRESH_SCHEDULE,
      [1, 2, 5, 10, 30, 60, 120, 300, 600, 1800, 3600],
    ),
    taskHeartbeatSeconds: Math.max(1, integer('TASK_HEARTBEAT_SECONDS', env.TASK_HEARTBEAT_SECONDS, 10)),
    taskSweepSeconds: Math.max(1, integer('TASK_SWEEP_SECONDS', env.TASK_SWEEP_SECONDS, 15)),
    taskRetentionDays: integer('TASK_RETENTION_DAYS', env.TASK_RETENTION_DAYS, 7),
    taskProgressWriteMs: integer('TASK_PROGRESS_WRITE_MS', env.TASK_PROGRESS_WRITE_MS, 1000),
    idempotencyRetentionSeconds: Math.max(
      1,
      integer('IDEMPOTENCY_RETENTION_SECONDS', env.IDEMPOTENCY_RETENTION_SECONDS, 86_400),
    ),
    idempotencyLockSeconds: Math.max(
      1,
      integer('IDEMPOTENCY_LOCK_SECONDS', env.IDEMPOTENCY_LOCK_SECONDS, 60),
    ),
    rateLimitMax: integer('RATE_LIMIT_MAX', env.RATE_LIMIT_MAX, 6000),
    rateLimitWindowSeconds: Math.max(
      1,
      integer('RATE_LIMIT_WINDOW_SECONDS', env.RATE_LIMIT_WINDOW_SECONDS, 60),
    ),
    rateLimitStore: rateLimitStore(env, databaseUrl),
    redisUrl: env.REDIS_URL || undefined,
    metricsToken: env.METRICS_TOKEN || undefined,
    trustProxy: trustedProxies(env.TRUST_PROXY),
    requestTimeoutMs,
    headersTimeoutMs: headersTimeout(env, requestTimeoutMs),
    keepAliveTimeoutMs: Math.max(1, integer('KEEP_ALIVE_TIMEOUT_MS', env.KEEP_ALIVE_TIMEOUT_MS, 5_000)),
    maxConnections: env.MAX_CONNECTIONS
      ? Math.max(1, integer('MAX_CONNECTIONS', env.MAX_CONNECTIONS, 0))
      : undefined,
    maxConnectionsPerSource: integer('MAX_CONNECTIONS_PER_SOURCE', env.MAX_CONNECTIONS_PER_SOURCE, 128),
    backup: loadBackupSettings(env, dataDir),
  };
}
