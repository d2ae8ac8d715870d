/**
 * Application errors: services throw `AppError` with a catalog code; the error handler renders
 * `{error, localMessage, params}` (spec §7). Factories below cover the codes shared by every group.
 */
import { errorCatalog, type ErrorCode } from './error-catalog.ts';

/** An error with a catalog code and the params of its message. */
export class AppError extends Error {
  readonly statusCode: number;

  constructor(
    readonly code: ErrorCode,
    readonly params: Record<string, unknown> = {},
    /** Extra response headers (for example `Retry-After`). */
    readonly headers: Record<string, string> = {},
  ) {
    super(code);
    this.statusCode = errorCatalog[code].status;
  }
}

/** 404 `error_not_found` for an id that does not exist or belongs to another client (D2.5). */
export function notFound(entity: string, id: number | string | bigint): AppError {
  return new AppError('error_not_found', { entity, id: String(id) });
}

/** 400 `error_validation` naming the dotted path of the offending field (D3.2). */
export function validationError(field: string, reason: string): AppError {
  return new AppError('error_validation', { field, reason });
}
