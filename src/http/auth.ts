/**
 * API token authentication and role checks (spec §5, decisions D1.2, D2).
 *
 * `Authorization: <token>` or `Authorization: Bearer <token>`. Tokens are looked up by their SHA-256 (only the
 * hash is stored) and cached in memory for `TOKEN_CACHE_TTL_MS`; a revocation drops the cache entry in this
 * process at once and in every other process through a database notification.
 */
import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest, onRequestHookHandler } from 'fastify';
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';
import type { ChangeNotifier } from '../db/notifications.ts';
import { AppError } from './errors.ts';
import type { Lang } from './error-catalog.ts';
import { hooksOf } from './route-hooks.ts';

/** Who is calling: the token's user, client and access level. */
export interface Principal {
  tokenId: number;
  userId: number;
  /** The user's name, recorded as `createdUser` of what the token creates. */
  userName: string;
  clientId: number;
  access: 'READ' | 'WRITE';
  role: 'OWNER' | 'ADMIN' | 'MANAGER' | 'SUPPORT';
  lang: Lang;
  /**
   * When the client's subscription ends (D1.3; null = no end), as of the token's lookup: a change of the client
   * drops its cached principals (P152).
   */
  subscriptionExpiresAt: Date | null;
}

/** Access an operation needs (D2.3): `read` for GET unless stated, `write` for every other method. */
export type Access = 'read' | 'write';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the authentication hook on every `/api` route. */
    principal: Principal;
    /**
     * The resolution of the request's `Authorization` header once a hook asked for it (`authenticateRequest`):
     * null before, undefined for no live token.
     */
    authentication: Resolution | null;
  }
  interface FastifyContextConfig {
    /** Overrides the access derived from the HTTP method (spec Access column). */
    access?: Access;
  }
}

const TOKEN_CACHE_TTL_MS = 60_000;
const TOKEN_CACHE_MAX_ENTRIES = 50_000;

/** Creates a new random API token (256 bits, base64url, `so_` prefix). Shown once, never stored. */
export function generateToken(): string {
  return `so_${randomBytes(32).toString('base64url')}`;
}

/** SHA-256 of a token: the only form in which tokens are stored. */
export function hashToken(token: string): Buffer {
  return hash('sha256', token, 'buffer');
}

/** Compares two secrets in constant time (lengths are hidden by hashing first). */
export function secretsEqual(given: string, expected: string): boolean {
  return timingSafeEqual(hashToken(given), hashToken(expected));
}

const BEARER = /^bearer\s+/i;

/**
 * Extracts the token from an `Authorization` header value: the bare token (spec §5) or `Bearer <token>` with the
 * scheme in any case (D2.1, RFC 9110 §11.1); undefined when missing or empty.
 */
export function tokenFromHeader(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const token = BEARER.test(header) ? header.replace(BEARER, '').trim() : header.trim();
  return token === '' ? undefined : token;
}

/** A cached answer, handed out as it is to every request of its token until it expires. */
interface CacheEntry {
  authenticated: Authenticated;
  expiresAt: number;
}

/** The token of `Authorization: Bearer <token>` (scheme in any case); undefined for any other form (D1.4). */
export function bearerToken(header: string | undefined): string | undefined {
  if (!header || !BEARER.test(header)) return undefined;
  const token = header.replace(BEARER, '').trim();
  return token === '' ? undefined : token;
}

/** A live token's principal and the token's SHA-256 in base64url (the rate limit's key, P125). */
export interface Authenticated {
  principal: Principal;
  tokenKey: string;
}

/**
 * A request's authentication: settled at once for a request without a token or with a cached one, a promise
 * while the token is read from the database. Hooks on every request stay synchronous for the usual case.
 */
export type Resolution = Authenticated | undefined | Promise<Authenticated | undefined>;

/**
 * Declares the request fields that authentication sets (`principal`, `authentication`) on `app`, so every
 * request object is created with them (Fastify's `decorateRequest`) instead of growing them per request.
 */
export function decorateAuthentication(app: FastifyInstance): void {
  app.decorateRequest<Principal | null>('principal', null);
  app.decorateRequest('authentication', null);
}

/**
 * Resolves tokens to principals, with a cache kept correct by change notifications. A request's token is
 * hashed and resolved once (`authenticateRequest`), however many hooks ask (rate-limit key, authentication).
 */
export class TokenAuthenticator {
  private readonly cache = new Map<string, CacheEntry>();
  /** Grows on every eviction and reset; a read that overlapped one does not fill the cache. */
  private generation = 0;

  constructor(
    private readonly db: Kysely<DB>,
    private readonly notifier: ChangeNotifier,
  ) {
    notifier.on('token', (tokenId) => this.evict((principal) => String(principal.tokenId) === tokenId));
    notifier.on('client', (clientId) => this.evict((principal) => String(principal.clientId) === clientId));
    notifier.onReset(() => {
      this.generation += 1;
      this.cache.clear();
    });
  }

  /**
   * The live token of `request`'s `Authorization` header (`tokenFromHeader`) and its principal, resolved once per
   * request: later calls for the same request share the first one's answer.
   * @returns undefined without a token, or for an unknown or revoked token, or a token of a deleted client;
   *   settled at once without a token or for a cached one
   */
  authenticateRequest(request: FastifyRequest): Resolution {
    // A request without a token is looked at again (no header is quick to see); any other keeps its resolution.
    return (request.authentication ??= this.authenticate(tokenFromHeader(request.headers.authorization)));
  }

  /**
   * The principal of the token in an `Authorization` header while the cache holds it (P223): undefined without a
   * token and for one the cache does not hold, which `authenticateRequest` then reads.
   */
  cachedAuthentication(header: string | undefined): Authenticated | undefined {
    const token = tokenFromHeader(header);
    return token === undefined ? undefined : this.cached(hash('sha256', token, 'base64url'), Date.now());
  }

  /** Finds the live token's principal: from the cache while it holds it, else from the database (`read`). */
  private authenticate(token: string | undefined): Resolution {
    if (token === undefined) return undefined;
    // One-shot hashing straight to text: the cache key of every request, and the only form kept in memory.
    const key = hash('sha256', token, 'base64url');
    const now = Date.now();
    return this.cached(key, now) ?? this.read(key, now);
  }

  /** The cached principal of the token whose SHA-256 is `key` while its entry lives at `now`. */
  private cached(key: string, now: number): Authenticated | undefined {
    // While the change listener is down a revocation could be missed: no cache is read or filled (P36).
    const entry = this.notifier.listening ? this.cache.get(key) : undefined;
    return entry && entry.expiresAt > now ? entry.authenticated : undefined;
  }

  /**
   * Reads the principal of the token whose SHA-256 is `key` (base64url) and caches it.
   * @returns undefined for an unknown or revoked token, or a token of a deleted client
   */
  private async read(key: string, now: number): Promise<Authenticated | undefined> {
    const generation = this.generation;
    const tokenHash = Buffer.from(key, 'base64url');

    // The hash names the client first (a reference table on Citus), so the token's own row is read on its
    // client's shard.
    const lookup = await this.db
      .selectFrom('api_token_lookup')
      .select('client_id')
      .where('token_hash', '=', tokenHash)
      .executeTakeFirst();
    const row =
      lookup &&
      (await this.db
        .selectFrom('api_token')
        .innerJoin('app_user', (join) =>
          join
            .onRef('app_user.client_id', '=', 'api_token.client_id')
            .onRef('app_user.id', '=', 'api_token.user_id'),
        )
        .innerJoin('client', 'client.id', 'api_token.client_id')
        .select([
          'api_token.id as tokenId',
          'api_token.user_id as userId',
          'app_user.name as userName',
          'api_token.client_id as clientId',
          'api_token.access',
          'app_user.role',
          'app_user.lang',
          'client.subscription_expires_at as subscriptionExpiresAt',
        ])
        .where('api_token.client_id', '=', lookup.client_id)
        .where('client.id', '=', lookup.client_id)
        .where('api_token.token_hash', '=', tokenHash)
        .where('api_token.revoked_at', 'is', null)
        .where('client.deleted', '=', false)
        .executeTakeFirst());
    if (!row) {
      this.cache.delete(key);
      return undefined;
    }
    const authenticated: Authenticated = { principal: { ...row, lang: row.lang ?? 'ru' }, tokenKey: key };
    // A revocation that arrived while the row was read may concern it: then it is not cached.
    if (this.notifier.listening && generation === this.generation) {
      if (this.cache.size >= TOKEN_CACHE_MAX_ENTRIES) this.cache.clear();
      this.cache.set(key, { authenticated, expiresAt: now + TOKEN_CACHE_TTL_MS });
    }
    return authenticated;
  }

  private evict(matches: (principal: Principal) => boolean): void {
    this.generation += 1;
    for (const [key, entry] of this.cache) if (matches(entry.authenticated.principal)) this.cache.delete(key);
  }
}

/**
 * Authenticates every route `scope` registers from now on: each gets an `onRequest` hook, first of its own, that
 * answers 401 `auth_required` without a live token (D2.2) and 400 `error_access_denied` when a READ token calls a
 * write operation (D2.3). A route's access is its `config.access`, else `read` for GET and HEAD (a GET without
 * its body) and `write` for every other method; it is settled when the route is added, so no request reads its
 * route's options.
 */
export function installAuthentication(scope: FastifyInstance, authenticator: TokenAuthenticator): void {
  scope.addHook('onRoute', (route) => {
    const access = route.config?.access ?? methodAccess(route.method);
    route.onRequest = [authenticationHook(authenticator, access), ...hooksOf(route.onRequest)];
  });
}

/** `read` for a route of GET or HEAD only, `write` for one that takes any other method (D2.3). */
function methodAccess(method: string | string[]): Access {
  const methods = Array.isArray(method) ? method : [method];
  return methods.every((name) => name === 'GET' || name === 'HEAD') ? 'read' : 'write';
}

function authenticationHook(authenticator: TokenAuthenticator, access: Access): onRequestHookHandler {
  const refusal = (
    request: FastifyRequest,
    authenticated: Authenticated | undefined,
  ): AppError | undefined => {
    if (!authenticated) return new AppError('auth_required');
    request.principal = authenticated.principal;
    if (access === 'write' && authenticated.principal.access !== 'WRITE')
      return new AppError('error_access_denied');
    return undefined;
  };
  return function authenticate(request, _reply, done) {
    const resolution = authenticator.authenticateRequest(request);
    if (resolution instanceof Promise)
      resolution.then((authenticated) => done(refusal(request, authenticated)), done);
    else done(refusal(request, resolution));
  };
}
