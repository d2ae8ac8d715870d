/**
 * The ceiling of the benchmark: a bare `node:http` server that answers recorded requests with the service's
 * own bytes from memory (same status, header fields and body, and an `x-request-id` of the same size), so the
 * gap to the service is what the service does per request. With `framework: 'fastify'` the same answers come
 * from a Fastify instance without plugins or hooks (one static route per recorded path): the share of the gap
 * that is the framework itself. Started by `startCeiling` in bench/lib.ts, which sends the setup over IPC and
 * gets the port back; unknown requests get 404.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import Fastify from 'fastify';

interface Recorded {
  key: string;
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** What `startCeiling` sends: the recorded answers and the server that gives them. */
interface Setup {
  framework: 'node:http' | 'fastify';
  recorded: Recorded[];
}

type Answer = Omit<Recorded, 'body'> & { body: Buffer };

function nodeServer(responses: Map<string, Answer>): http.Server {
  return http.createServer((request, reply) => {
    // read the whole request body, as the service does, before answering
    request.resume();
    request.on('end', () => {
      const response = responses.get(`${request.method} ${request.url}`);
      if (!response) {
        reply.writeHead(404).end();
        return;
      }
      reply.writeHead(response.status, {
        ...response.headers,
        'content-length': response.body.length,
        'x-request-id': randomUUID(),
      });
      reply.end(response.body);
    });
  });
}

async function fastifyServer(responses: Map<string, Answer>): Promise<http.Server> {
  const app = Fastify({ logger: false });
  for (const response of responses.values()) {
    const [method, url] = response.key.split(' ') as [string, string];
    app.route({
      method,
      url: url.split('?')[0] as string,
      handler: (request, reply) => {
        const answer = responses.get(`${request.method} ${request.url}`);
        if (!answer) return reply.code(404).send();
        return reply
          .code(answer.status)
          .headers(answer.headers)
          .header('x-request-id', randomUUID())
          .send(answer.body);
      },
    });
  }
  await app.ready();
  return app.server;
}

async function serve({ framework, recorded }: Setup): Promise<void> {
  const responses = new Map(
    recorded.map((response) => [response.key, { ...response, body: Buffer.from(response.body, 'base64') }]),
  );
  const server = framework === 'fastify' ? await fastifyServer(responses) : nodeServer(responses);
  server.keepAliveTimeout = 72_000;
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    process.send?.({ port: typeof address === 'object' && address ? address.port : 0 });
  });
  process.once('SIGTERM', () => server.close(() => process.exit(0)));
}

process.once('message', (setup: Setup) => void serve(setup));
