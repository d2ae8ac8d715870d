/**
 * One error handler for the whole API (STYLE §5): renders every failure as `{error, localMessage, params}`
 * (spec §7, D3.1) in the caller's language, maps framework errors to catalog codes and hides anything
 * unexpected behind `error_unknown` (never a stack trace or SQL).
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, validationError } from './errors.ts';
import { renderMessage, type Lang } from './error-catalog.ts';

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
    default:
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

/** Installs the error and not-found handlers on `app`. */
export function installErrorHandlers(app: FastifyInstance, bodyLimitBytes: number): void {
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
    if (!appError) {
      request.log.error({ err: error }, 'unexpected error');
      appError = new AppError('error_unknown');
    }
    return sendAppError(reply, appError, lang);
  });
  app.setNotFoundHandler((request, reply) =>
    sendAppError(
      reply,
      new AppError('error_route_not_found', { method: request.method, url: request.url.split('?')[0] }),
      'ru',
    ),
  );
}
