/**
 * Lingering close (RFC 9112 §9.6; P137): an answer that closes the connection while the
 * request body is still arriving — 413 `error_payload_too_large` above all, also 415 or a 400 on a malformed
 * body — is sent with `Connection: close`, then the server half-closes its side and keeps reading (and
 * discarding) the rest of the body before it closes the socket. Closing at once would leave unread bytes in the
 * kernel's buffer, so the socket would be reset and a client still writing would see EPIPE or ECONNRESET instead
 * of the answer already on its way.
 *
 * Draining is bounded: at most `LINGER_BYTES` more bytes and `LINGER_MILLISECONDS` of time, then the socket is
 * destroyed as before.
 */
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';

/** Most bytes of an unwanted body read after the answer (256 MiB). */
export const LINGER_BYTES = 256 * 1024 * 1024;
/** Longest time an unwanted body is read after the answer (30 s). */
export const LINGER_MILLISECONDS = 30_000;

/**
 * Installs the lingering close on `app`: an `onSend` hook that, for an answer carrying `Connection: close` to
 * a request whose body has not been read to its end, makes the socket drain that body before it closes.
 */
export function installLingeringClose(app: FastifyInstance): void {
  app.addHook('onSend', (request, reply, payload, done) => {
    const raw = request.raw;
    if (!raw.complete && String(reply.getHeader('connection') ?? '').toLowerCase() === 'close')
      lingerOnClose(raw);
    done(null, payload);
  });
}

/**
 * Replaces the `destroySoon` that Node's HTTP server calls on `request`'s socket once a `Connection: close`
 * answer is written: the socket ends its writing side (the client reads the answer and end of stream), reads
 * and discards the rest of the request body, and is destroyed when the body ends or a bound is reached.
 */
function lingerOnClose(request: IncomingMessage): void {
  const socket = request.socket as Socket & { destroySoon?: () => void };
  if (typeof socket.destroySoon !== 'function') return;
  socket.destroySoon = () => {
    socket.end();
    if (request.complete) return void socket.destroy();
    let drained = 0;
    const close = () => socket.destroy();
    const timer = setTimeout(close, LINGER_MILLISECONDS);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
    request.on('data', (chunk: Buffer) => {
      drained += chunk.length;
      if (drained > LINGER_BYTES) close();
    });
    request.once('end', close);
    request.once('error', close);
    request.resume();
  };
}
