/**
 * The ceiling of the benchmark: a bare `node:http` server that answers recorded requests with the service's
 * own bytes from memory (same status, content type and body, and an `x-request-id` of the same size), so the
 * gap to the service is what the service does per request. Started by `startCeiling` in bench/lib.ts, which
 * sends the responses over IPC and gets the port back; unknown requests get 404.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';

interface Recorded {
  key: string;
  status: number;
  contentType: string | undefined;
  body: string;
}

process.once('message', (recorded: Recorded[]) => {
  const responses = new Map(
    recorded.map((response) => [response.key, { ...response, body: Buffer.from(response.body, 'base64') }]),
  );
  const server = http.createServer((request, reply) => {
    // read the whole request body, as the service does, before answering
    request.resume();
    request.on('end', () => {
      const response = responses.get(`${request.method} ${request.url}`);
      if (!response) {
        reply.writeHead(404).end();
        return;
      }
      reply.writeHead(response.status, {
        ...(response.contentType === undefined ? {} : { 'content-type': response.contentType }),
        'content-length': response.body.length,
        'x-request-id': randomUUID(),
      });
      reply.end(response.body);
    });
  });
  server.keepAliveTimeout = 72_000;
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    process.send?.({ port: typeof address === 'object' && address ? address.port : 0 });
  });
  process.once('SIGTERM', () => server.close(() => process.exit(0)));
});
