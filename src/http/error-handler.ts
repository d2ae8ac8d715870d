/**
 * One error handler for the whole API (STYLE §5): renders every failure as `{error, localMessage, params}`
 * (spec §7, D3.1) in the caller's language, maps framework errors to catalog codes and hides anything
 * unexpected behind `error_unknown` (never a stack trace or SQL). Only faults of the service are logged at
 * `error`; a client that hung up is not one (`src/http/client-disconnects.ts`).
 */
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, validationError } from './errors.ts';
import { renderMessage, type Lang } from './error-catalog.ts';
import { isClientGone } from './client-disconnects.ts';
import type { TokenAuthenticator } from './auth.ts';

interface AjvError {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
}

/** Turns the first Ajv error into the dotted path of the field (D3.2), e.g. `products.0.quantity`. */
function fieldOf(error: AjvError, context: string | undefined): string {
  const segments = error.instancePath.split('/').filter(Boolean);
  if (error.keyword === 'required' && typeof error.params.missingProperty === 'string') {
    segments.push(error.params.missingProperty);
  }
  if (error.keyword === 'additionalProperties' && typeof error.params.additionalProperty === 'string') {
    segments.push(error.params.additionalProperty);
  }
  if (segments.length > 0) return segments.join('.');
  return context === 'querystring' || context === 'params' ? context : 'body';
}

function reasonOf(error: AjvError): string {
  if (error.keyword === 'enum' && Array.isArray(error.params.allowedValues)) {
    return `must be one of ${(error.params.allowedValues as string[]).join(', ')}`;
  }
  return error.message ?? error.keyword;
}

/**
 * PostgreSQL errors that can only come from input our schemas let through (a safety net, P34): numeric out of
 * range (22003), string too long (22001), invalid text representation (22P02), untranslatable character
 * (22P05), invalid byte sequence (22021), datetime out of range (22008).
 */
const DATABASE_INPUT_ERRORS = new Set(['22003', '22001', '22P02', '22P05', '22021', '22008']);

/** Converts any thrown value to an AppError; `undefined` means an unexpected failure. */
function toAppError(error: FastifyError & { validationContext?: string }): AppError | undefined {
  if (error instanceof AppError) return error;
  const firstValidation = error.validation?.[0] as AjvError | undefined;
  if (firstValidation)
    return validationError(fieldOf(firstValidation, error.validationContext), reasonOf(firstValidation));
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError('error_payload_too_large', { limit: undefined });
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError('error_unsupported_media_type', { contentType: undefined });
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return validationError('body', error.message);
    case 'FST_ERR_CTP_INVALID_TYPE':
      return validationError('body', error.message);
    default:
      if (error.code !== undefined && DATABASE_INPUT_ERRORS.has(error.code))
        return validationError('body', 'a value or a total computed from it is out of range or not storable');
      if (error.statusCode === 400 && error instanceof SyntaxError)
        return validationError('body', 'malformed JSON');
      return undefined;
  }
}

/** Sends an AppError in the spec's error model. */
export function sendAppError(reply: FastifyReply, error: AppError, lang: Lang): FastifyReply {
  return reply
    .code(error.statusCode)
    .headers(error.headers)
    .type('application/json; charset=utf-8')
    .send({
      error: error.code,
      localMessage: renderMessage(error.code, lang, error.params),
      params: error.params,
    });
}

/**
 * Installs the error and not-found handlers on `app`. An unknown route answers in the language of the token's user
 * when the request carries a live token (`authenticator`), like every other answer (spec §7).
 */
export function installErrorHandlers(
  app: FastifyInstance,
  bodyLimitBytes: number,
  authenticator: TokenAuthenticator,
): void {
  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const lang: Lang = request.principal?.lang ?? 'ru';
    let appError = toAppError(error);
    if (appError?.code === 'error_payload_too_large') {
      appError = new AppError('error_payload_too_large', { limit: bodyLimitBytes });
    }
    if (appError?.code === 'error_unsupported_media_type') {
      appError = new AppError('error_unsupported_media_type', {
        contentType: request.headers['content-type'] ?? '',
      });
    }
    if (!appError && isClientGone(request, error)) {
      // The client hung up or was cut for a timeout (counted and logged in client-disconnects.ts); the answer
      // below reaches no one.
      request.log.debug({ code: error.code }, 'request body not read to its end: the client is gone');
      appError = validationError('body', 'the request body did not arrive whole');
    }
    if (!appError) {
      request.log.error({ err: error }, 'unexpected error');
      appError = new AppError('error_unknown');
    }
    return sendAppError(reply, appError, lang);
  });
  app.setNotFoundHandler(async (request, reply) => {
    // No route, so no authentication hook ran: the token only chooses the language here.
    const authenticated = await authenticator.authenticateRequest(request);
    return sendAppError(
      reply,
      new AppError('error_route_not_found', { method: request.method, url: request.url.split('?')[0] }),
      authenticated?.principal.lang ?? 'ru',
    );
  });
}

const REQUEST_ID = /^[\x21-\x7e]{1,128}$/;

/** The caller's `x-request-id` when it is 1–128 printable ASCII characters (P33); else undefined. */
function callerRequestId(header: string | string[] | undefined): string | undefined {
  return typeof header === 'string' && REQUEST_ID.test(header) ? header : undefined;
}

/** The id of a request: the caller's `x-request-id` when it is acceptable (P33), else a new UUID. */
export const requestIdOf = (header: string | string[] | undefined): string =>
  callerRequestId(header) ?? randomUUID();

declare module 'fastify' {
  interface FastifyInstance {
    /** Starts draining before `close()`: new requests get 503 with `connection: close` (P35). */
    beginShutdown(): void;
  }
}

/**
 * While the app shuts down (from `beginShutdown()` or `close()`), requests still arriving get 503
 * `error_service_unavailable`; requests already running finish normally. Every answer sent meanwhile carries
 * `connection: close` (the app's `onSend` hook asks the returned function), so kept-alive clients are told to go
 * instead of having their connection reset (P35).
 * @returns whether the app is shutting down
 */
export function installShutdownAnswer(app: FastifyInstance): () => boolean {
  let closing = false;
  app.decorate('beginShutdown', () => {
    closing = true;
    // Stop accepting connections without closing idle ones (http.Server.close would, racing a client that is
    // sending on them at that moment): open connections get their 503 and close themselves.
    if (app.server.listening) net.Server.prototype.close.call(app.server);
  });
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onRequest', (_request, reply, done) => {
    if (!closing) return done();
    done(new AppError('error_service_unavailable', {}, { 'retry-after': '1' }));
  });
  return () => closing;
}

/** Routes that answer before the start-up set-up is done: liveness and readiness. */
const ANSWERED_WHILE_STARTING = new Set(['/health', '/ready']);

/**
 * Until `isReady()` holds (the start-up set-up is done, P166), requests get 503 `error_service_unavailable` with
 * `Retry-After: 1`, except `/health` (the process is alive) and `/ready` (which says it is starting).
 */
export function installStartUpAnswer(app: FastifyInstance, isReady: () => boolean): void {
  app.addHook('onRequest', (request, _reply, done) => {
    if (isReady() || ANSWERED_WHILE_STARTING.has(request.routeOptions.url ?? '')) return done();
    done(new AppError('error_service_unavailable', {}, { 'retry-after': '1' }));
  });
}
