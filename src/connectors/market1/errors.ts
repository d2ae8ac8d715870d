/**
 * Errors of the Market1 connector (P92). They are connector errors, not `AppError`s: background tasks record
 * them as they are, and the campaign group turns them into the error model with `toAppError` — 401/403 →
 * `error_token_expired_or_revoked`, another 4xx → `error_market1_api` with the marketplace's message
 * (D10.1), throttling and outages → `error_market1_unavailable`. No message ever holds the API key.
 */
import { AppError } from '../../http/errors.ts';

/** The base of every connector error; `kind` tells them apart without `instanceof`. */
export abstract class Market1Error extends Error {
  abstract readonly kind: 'auth' | 'api' | 'rate_limited' | 'unavailable';
}

/** Market1 answered 401 or 403: the API key is revoked, wrong, or may not do this (read-only key). */
export class Market1AuthError extends Market1Error {
  readonly kind = 'auth';
  constructor(
    /** 401 or 403. */
    readonly status: number,
    /** The marketplace's message. */
    readonly marketplaceMessage: string,
  ) {
    super(`Market1 refused the API key (${status}): ${marketplaceMessage}`);
    this.name = 'Market1AuthError';
  }
}

/**
 * Market1 answered another 4xx (bad ids, a status that cannot change, insufficient funds…), or a 2xx we cannot
 * read (`status` is then the 2xx). `marketplaceMessage` is shown to the integrator as `params.message`.
 */
export class Market1ApiError extends Market1Error {
  readonly kind = 'api';
  constructor(
    readonly status: number,
    readonly marketplaceMessage: string,
  ) {
    super(`Market1 answered ${status}: ${marketplaceMessage}`);
    this.name = 'Market1ApiError';
  }
}

/** Market1 kept answering 429 beyond the connector's bounds (count, longest wait, total time; P93). */
export class Market1RateLimitError extends Market1Error {
  readonly kind = 'rate_limited';
  constructor(
    /** Seconds the marketplace asked to wait in its last answer. */
    readonly retryAfterSeconds: number,
  ) {
    super(`Market1 rate limit: retry in ${retryAfterSeconds} s`);
    this.name = 'Market1RateLimitError';
  }
}

/**
 * No usable answer: 5xx or a transport failure (time-out, refused or reset connection) after the bounded
 * retries, or no Market1 URL configured (`reason: not_configured`).
 */
export class Market1UnavailableError extends Market1Error {
  readonly kind = 'unavailable';
  constructor(
    /** `http_5xx`, `timeout`, `network` or `not_configured`. */
    readonly reason: 'http_5xx' | 'timeout' | 'network' | 'not_configured',
    detail: string,
    /** True when a mutation may have been applied even so (a create that timed out or got a 5xx). */
    readonly maybeApplied = false,
  ) {
    super(`Market1 unavailable (${reason}): ${detail}`);
    this.name = 'Market1UnavailableError';
  }
}

/**
 * The error-model answer of a connector error (spec §7, D10.1): `error_token_expired_or_revoked`,
 * `error_market1_api` `{message}`, or `error_market1_unavailable` `{reason}` (with `Retry-After` when the
 * marketplace throttled us).
 */
export function toAppError(error: Market1Error): AppError {
  if (error instanceof Market1AuthError) return new AppError('error_token_expired_or_revoked');
  if (error instanceof Market1ApiError)
    return new AppError('error_market1_api', { message: error.marketplaceMessage });
  if (error instanceof Market1RateLimitError)
    return new AppError(
      'error_market1_unavailable',
      { reason: 'rate_limited', retryAfter: error.retryAfterSeconds },
      { 'retry-after': String(error.retryAfterSeconds) },
    );
  if (error instanceof Market1UnavailableError)
    return new AppError('error_market1_unavailable', { reason: error.reason });
  throw new TypeError(`not a Market1 error: ${error.name}`);
}
