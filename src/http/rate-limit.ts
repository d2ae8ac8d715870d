/**
 * Rate limits per token (decisions P125–P128) on `@fastify/rate-limit`: a fixed window of
 * `RATE_LIMIT_WINDOW_SECONDS` allowing `RATE_LIMIT_MAX` requests per key, where the key is the SHA-256 of a live
 * token (never the token itself) or, without one, the caller's IP address. Every counted answer carries the IETF
 * header fields of draft-ietf-httpapi-ratelimit-headers-10 (P127):
 *
 *   RateLimit-Policy: "default";q=6000;w=60      the quota and its window in seconds
 *   RateLimit: "default";r=5999;t=60             requests remaining and seconds until the window ends
 *
 * Beyond the quota: 429 `error_rate_limited` with `Retry-After` (seconds). Counters live in memory, in PostgreSQL
 * (`rate_limit_counter`, shared by every process on the database) or in Redis (`REDIS_URL`), see
 * `config.rateLimitStore`. Admin, health, readiness, metrics and documentation routes are never counted. A store
 * that fails lets the request through (logged): an outage of the counters must not become an outage of the API.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import rateLimit, { type FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import type { Redis } from 'ioredis';
import type { Kysely } from 'kysely';
import { LruMap } from 'toad-cache';
import type { Config } from '../config.ts';
import type { DB } from '../db/schema.ts';
import type { Runtime } from '../runtime.ts';
import type { Authenticated, TokenAuthenticator } from './auth.ts';
import { AppError } from './errors.ts';
import { rateLimitRepository } from './rate-limit.repository.ts';

/** Path prefixes never counted (P125): operator, probe, scrape and documentation routes. */
export const EXEMPT_PATHS = ['/admin', '/health', '/ready', '/metrics', '/docs', '/openapi.json'] as const;

/** Name of the single quota policy in the header fields. */
const POLICY = 'default';

/** Redis key prefix of the counters. */
const REDIS_NAMESPACE = 'seller-ops:rate-limit:';

/** `text` matched literally in a regular expression. */
const literally = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** An exempt prefix as a whole path, or followed by a path segment or the query. */
const EXEMPT_URL = new RegExp(`^(?:${EXEMPT_PATHS.map(literally).join('|')})(?:[/?]|$)`);

/**
 * Whether `url` (path and query) falls under an exempt prefix, matched on whole path segments. Called on every
 * request, so one regular expression and no string made.
 */
export function isExempt(url: string): boolean {
  return EXEMPT_URL.test(url);
}

/** The counter key of a live token (P125): `token:<SHA-256 of the token, base64url>`. */
export const tokenRateLimitKey = (authenticated: Authenticated) => `token:${authenticated.tokenKey}`;

/**
 * The counter key of a request (P125): `token:<SHA-256 of the token, base64url>` for a live token, else
 * `ip:<address>`. A wrong token counts against its IP address, so guessing tokens is limited too. Settled at once
 * when the request's authentication is (no token, or a cached one).
 */
export function rateLimitKey(
  request: FastifyRequest,
  authenticator: TokenAuthenticator,
): string | Promise<string> {
  const resolution = authenticator.authenticateRequest(request);
  const keyOf = (authenticated: Authenticated | undefined) =>
    authenticated ? tokenRateLimitKey(authenticated) : `ip:${request.ip}`;
  return resolution instanceof Promise ? resolution.then(keyOf) : keyOf(resolution);
}

/** The `RateLimit-Policy` field: the quota and its window in seconds (P127). */
export const rateLimitPolicy = (config: Config) =>
  `"${POLICY}";q=${config.rateLimitMax};w=${config.rateLimitWindowSeconds}`;

/** The `RateLimit` field: requests remaining and seconds until the window ends (P127). */
const rateLimitField = (remaining: number, seconds: number) => `"${POLICY}";r=${remaining};t=${seconds}`;

/** Keys the memory store keeps, the least recently counted dropped first (`@fastify/rate-limit`'s default). */
const MEMORY_STORE_KEYS = 5_000;

/** One key's count in its fixed window. */
interface WindowCount {
  current: number;
  /** When the window began (epoch milliseconds). */
  startedAt: number;
}

/**
 * The memory store's counts (P125): a fixed window of `RATE_LIMIT_WINDOW_SECONDS` per key, in a least-recently-used
 * map of `MEMORY_STORE_KEYS` keys, counted as `@fastify/rate-limit`'s own memory store counts. One instance serves
 * the plugin (`store`) and the answers from cache (`countWithinQuota`, P223), so both count against one quota.
 */
export class MemoryCounts {
  private readonly counts = new LruMap<WindowCount>(MEMORY_STORE_KEYS);
  private readonly windowMs: number;
  private readonly max: number;

  /** The counts of `config`'s quota, or undefined unless the rate limit is on and counts in memory. */
  static of(config: Config): MemoryCounts | undefined {
    return config.rateLimitMax > 0 && config.rateLimitStore === 'memory'
      ? new MemoryCounts(config)
      : undefined;
  }

  private constructor(config: Config) {
    this.max = config.rateLimitMax;
    this.windowMs = config.rateLimitWindowSeconds * 1000;
  }

  /** Counts one request of `key`: its count in the window and the milliseconds left of the window. */
  increment(key: string, now = Date.now()): { current: number; ttl: number } {
    const count = this.counted(this.openCount(key, now), key, now);
    return { current: count.current, ttl: this.millisecondsLeft(count, now) };
  }

  /**
   * Counts one request of `key` and gives its `RateLimit` field, or gives undefined and counts nothing when the
   * quota of the window is used up: the rate limit's hook then counts the request and refuses it.
   */
  countWithinQuota(key: string): string | undefined {
    const now = Date.now();
    const open = this.openCount(key, now);
    if (open !== undefined && open.current >= this.max) return undefined;
    const count = this.counted(open, key, now);
    return rateLimitField(this.max - count.current, Math.ceil(this.millisecondsLeft(count, now) / 1000));
  }

  /** The milliseconds left at `now` of the window that `count` counts in. */
  private millisecondsLeft(count: WindowCount, now: number): number {
    return count.startedAt + this.windowMs - now;
  }

  /** The count of `key` when its window is still open at `now` (the look-up marks the key as recently used). */
  private openCount(key: string, now: number): WindowCount | undefined {
    const count = this.counts.get(key);
    return count && this.millisecondsLeft(count, now) > 0 ? count : undefined;
  }

  /** `open` (the open window's count of `key`) with one more request, or a new window's count of one. */
  private counted(open: WindowCount | undefined, key: string, now: number): WindowCount {
    if (open !== undefined) {
      open.current += 1;
      return open;
    }
    const count = { current: 1, startedAt: now };
    this.counts.set(key, count);
    return count;
  }

  /** The `@fastify/rate-limit` store class over these counts. */
  store(): FastifyRateLimitStoreCtor {
    const increment = (key: string) => this.increment(key);
    return class MemoryStore {
      incr(
        key: string,
        callback: (error: Error | null, result?: { current: number; ttl: number }) => void,
      ): void {
        callback(null, increment(key));
      }

      child(): MemoryStore {
        return new MemoryStore();
      }
    };
  }
}

/** The `@fastify/rate-limit` store class over the `rate_limit_counter` table of `db` (P126). */
export function databaseStore(db: Kysely<DB>): FastifyRateLimitStoreCtor {
  return class DatabaseStore {
    incr(
      key: string,
      callback: (error: Error | null, result?: { current: number; ttl: number }) => void,
      timeWindow: number,
    ): void {
      rateLimitRepository.increment(db, key, timeWindow).then(
        (state) => callback(null, state),
        (error: unknown) => callback(error instanceof Error ? error : new Error(String(error))),
      );
    }

    child(): DatabaseStore {
      return new DatabaseStore();
    }
  };
}

/**
 * Registers the rate limit on `app` (all routes, exempt ones skipped) unless `config.rateLimitMax` is 0. The
 * `memory` store counts in `memoryCounts` (`MemoryCounts.of`); with the `redis` store it connects to
 * `config.redisUrl` first and disconnects when the app closes.
 * @throws when Redis cannot be reached at start
 */
export async function installRateLimit(
  app: FastifyInstance,
  runtime: Runtime,
  memoryCounts: MemoryCounts | undefined,
): Promise<void> {
  const { config } = runtime;
  if (config.rateLimitMax === 0) return;
  let redis: Redis | undefined;
  if (config.rateLimitStore === 'redis') {
    // Loaded only with the redis store: a process on the database store never holds the client.
    const { Redis } = await import('ioredis');
    redis = new Redis(config.redisUrl as string, { lazyConnect: true, maxRetriesPerRequest: 1 });
    // Connection errors surface as failed increments (logged per request); the client reconnects by itself.
    redis.on('error', () => undefined);
    try {
      await redis.connect();
    } catch (error) {
      redis.disconnect();
      throw new Error(
        `REDIS_URL cannot be reached: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    const client = redis;
    app.addHook('onClose', async () => void (await client.quit()));
  }
  await app.register(rateLimit, {
    global: false,
    max: config.rateLimitMax,
    timeWindow: config.rateLimitWindowSeconds * 1000,
    keyGenerator: (request) => rateLimitKey(request, runtime.authenticator),
    ...(config.rateLimitStore === 'database' ? { store: databaseStore(runtime.database.db) } : {}),
    ...(memoryCounts ? { store: memoryCounts.store() } : {}),
    ...(redis ? { redis, nameSpace: REDIS_NAMESPACE } : {}),
  });
  const limiter = app.createRateLimit();
  const policy = rateLimitPolicy(config);

  app.addHook('onRequest', async (request, reply) => {
    if (isExempt(request.url)) return;
    let result: Awaited<ReturnType<typeof limiter>>;
    try {
      result = await limiter(request);
    } catch (error) {
      request.log.warn({ err: error }, 'rate-limit store failed; request not counted');
      return;
    }
    if (result.isAllowed) return;
    const seconds = Math.max(result.isExceeded ? 1 : 0, result.ttlInSeconds);
    reply.header('ratelimit-policy', policy);
    reply.header('ratelimit', rateLimitField(result.remaining, seconds));
    if (result.isExceeded)
      throw new AppError('error_rate_limited', { retryAfter: seconds }, { 'retry-after': String(seconds) });
  });
}
