/**
 * Compressed answers (P136) with `@fastify/compress`: a JSON or text answer of at least
 * `COMPRESSION_THRESHOLD_BYTES` is sent `br` or `gzip` when the request's `Accept-Encoding` allows it (the
 * client's preference first; brotli at quality 4, gzip at zlib's default level 6), with `Vary: accept-encoding`.
 * Everything else — smaller answers, XLSX and other binary files, a request without `Accept-Encoding` — goes
 * as it is. Request bodies are not decompressed: a `Content-Encoding` on a request is refused like any body
 * that is not JSON (P136).
 *
 * The compression runs last, as a route-level `onSend` hook: the `/api` scope's hooks (the idempotency store
 * above all) see the plain JSON, and a replayed answer is compressed for the repeat's own `Accept-Encoding`.
 * A compressed answer is another representation, so its strong `ETag` gets the coding appended (`"…-gzip"`,
 * RFC 9110 §8.8.3; `conditional.ts` ignores the suffix when comparing).
 */
import compress from '@fastify/compress';
import type { FastifyInstance, FastifyReply, FastifyRequest, onSendHookHandler } from 'fastify';
import { TAG_CODINGS } from './conditional.ts';
import { hooksOf } from './route-hooks.ts';

/** Smallest answer that is compressed (1 KiB): below it the headers outweigh the saving. */
export const COMPRESSION_THRESHOLD_BYTES = 1024;

/** JSON (`application/json`, `+json`), text (not event streams) and JavaScript are compressed. */
const COMPRESSIBLE =
  /^(?:application\/(?:[a-z0-9.-]+\+)?json|text\/(?!event-stream)|application\/javascript)(?:;|$)/;

/** Appends the answer's content coding to a strong ETag of a compressed answer. */
const tagWithCoding: onSendHookHandler = (
  _request: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
  done: (error: null, payload: unknown) => void,
) => {
  const coding = reply.getHeader('content-encoding');
  const tag = reply.getHeader('etag');
  if (typeof tag === 'string' && tag.startsWith('"') && (TAG_CODINGS as readonly unknown[]).includes(coding))
    reply.header('etag', `${tag.slice(0, -1)}-${String(coding)}"`);
  done(null, payload);
};

/**
 * Registers the compression on `app`; call it before any route is added (it applies to routes added later).
 */
export async function installCompression(app: FastifyInstance): Promise<void> {
  await app.register(compress, {
    encodings: ['br', 'gzip'],
    threshold: COMPRESSION_THRESHOLD_BYTES,
    customTypes: COMPRESSIBLE,
    globalDecompression: false,
  });
  // Added after the plugin's own onRoute hook, so this onSend runs after the compression.
  app.addHook('onRoute', (route) => {
    route.onSend = [...hooksOf(route.onSend), tagWithCoding];
  });
}
