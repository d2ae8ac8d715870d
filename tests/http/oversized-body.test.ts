/**
 * A client that keeps sending a body far beyond the limit still reads the 413 answer (P137):
 * the server answers `error_payload_too_large` with `Connection: close` and drains the rest of the body before
 * closing, so a raw `node:http` client writing 64 MiB sees the status and the error body, not EPIPE or ECONNRESET.
 */
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp, type TestApp } from '../helpers/test-app.ts';
import { createAccount, type TestAccount } from '../helpers/factories.ts';

let t: TestApp;
let account: TestAccount;
let port: number;
useTestApp(
  async (app) => {
    t = app;
    account = await createAccount(app.runtime);
  },
  {},
  { workers: false },
);

beforeAll(async () => {
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  port = (t.app.server.address() as AddressInfo).port;
});

/** 64 MiB: a hostile client's body, far over the limit. */
const HUGE = 64 * 1024 * 1024;
const CHUNK = Buffer.alloc(64 * 1024, 0x20);

interface Outcome {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** Bytes the client managed to write before the answer ended. */
  written: number;
  /** An error the request raised while writing (EPIPE, ECONNRESET), if any. */
  writeError: string | undefined;
}

/**
 * POSTs `HUGE` bytes of JSON-looking text to `path`, with a Content-Length or chunked, writing as fast as the
 * socket takes them; resolves once the answer has been read to its end and the request has closed.
 */
function sendHuge(path: string, framing: 'content-length' | 'chunked'): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    let written = 0;
    let writeError: string | undefined;
    let answer: Omit<Outcome, 'written' | 'writeError'> | undefined;
    const request = http.request({
      host: '127.0.0.1',
      port,
      path,
      method: 'POST',
      agent: false,
      headers: {
        authorization: account.writeToken,
        'content-type': 'application/json',
        ...(framing === 'content-length' ? { 'content-length': String(HUGE + 2) } : {}),
      },
    });
    request.on('error', (error: NodeJS.ErrnoException) => (writeError = error.code ?? error.message));
    request.on('response', (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on(
        'end',
        () => (answer = { status: response.statusCode ?? 0, headers: response.headers, body }),
      );
    });
    request.on('close', () => {
      if (answer) resolve({ ...answer, written, writeError });
      else reject(new Error(`no answer read (${writeError ?? 'closed'}) after ${written} bytes`));
    });
    const pump = () => {
      if (written === 0) request.write('"');
      while (written < HUGE && writeError === undefined) {
        written += CHUNK.length;
        if (!request.write(CHUNK)) return void request.once('drain', pump);
      }
      request.end('"');
    };
    pump();
  });
}

describe('a 64 MiB body', () => {
  for (const framing of ['content-length', 'chunked'] as const)
    it(`answers 413 error_payload_too_large that the client reads (${framing})`, async () => {
      const outcome = await sendHuge('/api/inbound/', framing);
      expect(outcome.status, outcome.writeError).toBe(413);
      expect(outcome.headers.connection).toBe('close');
      // The connection was not reset under the client's writes.
      expect(outcome.writeError).toBeUndefined();
      expect(JSON.parse(outcome.body)).toMatchObject({
        error: 'error_payload_too_large',
        params: { limit: t.config.bodyLimitBytes },
      });
    });
});

/**
 * Writes a whole 64 MiB request over a plain socket whatever comes back (as curl or a proxy does), then reads
 * everything the server sent until it closes.
 */
function writeWholeBody(
  framing: 'content-length' | 'chunked',
): Promise<{ written: number; received: string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    let written = 0;
    let received = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (received += chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve({ written, received }));
    const head =
      `POST /api/inbound/ HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: ${account.writeToken}\r\n` +
      'content-type: application/json\r\n' +
      (framing === 'content-length'
        ? `content-length: ${HUGE}\r\n\r\n`
        : 'transfer-encoding: chunked\r\n\r\n');
    const chunkHead = `${CHUNK.length.toString(16)}\r\n`;
    socket.write(head);
    const pump = () => {
      while (written < HUGE) {
        written += CHUNK.length;
        const more =
          framing === 'content-length'
            ? socket.write(CHUNK)
            : socket.write(Buffer.concat([Buffer.from(chunkHead), CHUNK, Buffer.from('\r\n')]));
        if (!more) return void socket.once('drain', pump);
      }
      socket.end(framing === 'chunked' ? '0\r\n\r\n' : '');
    };
    pump();
  });
}

describe('a client that writes all 64 MiB before reading', () => {
  for (const framing of ['content-length', 'chunked'] as const)
    it(`writes it all without a reset and then reads the 413 (${framing})`, async () => {
      const { written, received } = await writeWholeBody(framing);
      expect(written).toBe(HUGE);
      const [head = '', body = ''] = received.split('\r\n\r\n');
      expect(head).toMatch(/^HTTP\/1\.1 413 /);
      expect(head.toLowerCase()).toContain('connection: close');
      expect(JSON.parse(body)).toMatchObject({ error: 'error_payload_too_large' });
    });
});
