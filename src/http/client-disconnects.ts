/**
 * Clients that hang up, stall or send what is not HTTP (P164): none of it is a fault of the service, so none of it
 * is logged at `error` or with a stack.
 *
 * - A request the client hangs up on before its answer (`aborted`) is logged at `info` and counted in
 *   `seller_ops_http_incomplete_requests_total{reason="aborted"}`; the failed read of its body that follows is
 *   logged at `debug` (`isClientGone`).
 * - A request that does not arrive whole within `REQUEST_TIMEOUT_MS` (or its headers within `HEADERS_TIMEOUT_MS`)
 *   gets 408 `error_request_timeout` and its connection is closed; counted as `reason="timeout"`, logged at `info`
 *   when a request had begun and at `debug` for a connection that never sent a request (a browser's preconnect).
 * - Errors of the HTTP parser (headers or URL too large, malformed request) get 431 or 400 in the error model;
 *   resets and such are logged at `debug`.
 */
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ServiceMetrics } from '../metrics/service-metrics.ts';
import { renderMessage } from './error-catalog.ts';
import { AppError, validationError } from './errors.ts';

/** Longest time a connection stays open after its error answer was written (the client may not read it). */
const ANSWER_LINGER_MILLISECONDS = 1_000;

/** Sockets closed for a timeout: the abort of their request that follows is not counted a second time. */
const timedOut = new WeakSet<Socket>();

/** Error codes of a connection the client closed or reset. */
const CLIENT_GONE_CODES = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'ERR_STREAM_PREMATURE_CLOSE']);

/**
 * Whether `error` only says that the client of `request` is gone (it hung up, or its connection was closed for a
 * timeout): the request's body could not be read to its end and no answer can reach the client.
 */
export function isClientGone(request: FastifyRequest, error: { code?: string }): boolean {
  return (
    error.code !== undefined &&
    CLIENT_GONE_CODES.has(error.code) &&
    (request.raw.destroyed || request.raw.socket.destroyed)
  );
}

/** Writes `error` in the error model as the connection's last answer, then closes the connection. */
function answerAndClose(socket: Socket, error: AppError, reason: string): void {
  const body = JSON.stringify({
    error: error.code,
    localMessage: renderMessage(error.code, 'ru', error.params),
    params: error.params,
  });
  const timer = setTimeout(() => socket.destroy(), ANSWER_LINGER_MILLISECONDS);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
  // The server keeps half-open connections (allowHalfOpen): destroy once the answer is handed to the kernel.
  socket.end(
    `HTTP/1.1 ${error.statusCode} ${reason}\r\n` +
      `content-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
      `connection: close\r\n\r\n${body}`,
    () => socket.destroy(),
  );
}

/**
 * The `clientErrorHandler` of the app (`this` is the Fastify instance): answers errors Node's HTTP server raises
 * before or instead of a request — timeouts with 408, oversized headers with 431, malformed requests with 400 —
 * and closes the connection; a socket that is already gone is just destroyed.
 */
export function clientErrorHandler(
  metrics: ServiceMetrics,
): (this: FastifyInstance, error: Error & { code?: string }, socket: Socket) => void {
  return function answerClientError(error, socket) {
    const response = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
    if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
      timedOut.add(socket);
      metrics.httpIncompleteRequests.inc({ reason: 'timeout' });
      const details = { remoteAddress: socket.remoteAddress, reason: 'timeout' };
      if (response) this.log.info(details, 'request did not arrive in time; connection closed');
      else this.log.debug(details, 'no request arrived in time; connection closed');
    } else {
      this.log.debug({ remoteAddress: socket.remoteAddress, code: error.code }, 'client error');
    }
    // Nothing can be written after an answer has begun, nor to a socket that is gone.
    if (!socket.writable || response?.headersSent) {
      socket.destroy();
      return;
    }
    if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT')
      answerAndClose(socket, new AppError('error_request_timeout'), 'Request Timeout');
    else if (error.code === 'HPE_HEADER_OVERFLOW')
      answerAndClose(socket, new AppError('error_headers_too_large'), 'Request Header Fields Too Large');
    else answerAndClose(socket, validationError('request', 'malformed HTTP request'), 'Bad Request');
  };
}

/**
 * Counts and logs (at `info`, no stack) every request of `app` whose client hung up before its answer; a
 * request cut for a timeout was counted by `clientErrorHandler` and is only noted at `debug`.
 */
export function installRequestAborts(app: FastifyInstance, metrics: ServiceMetrics): void {
  app.addHook('onRequestAbort', async (request) => {
    if (timedOut.has(request.raw.socket)) {
      request.log.debug({ reason: 'timeout' }, 'request cut for a timeout');
      return;
    }
    metrics.httpIncompleteRequests.inc({ reason: 'aborted' });
    request.log.info({ reason: 'aborted' }, 'client hung up before the answer');
  });
}
