/**
 * The database-path ceiling of the benchmark: a bare `node:http` + `pg` server that answers each recorded GET by
 * running the SQL statements the service runs for it (captured from the repository code, with their values) and
 * sending `JSON.stringify` of the rows. The gap to the service is what the service does besides the database
 * round trips: routing, hooks, presenting and serializing.
 *
 * Started by `startDatabaseCeiling` in bench/lib.ts, which sends the database URL, the pool size and the
 * statements by request over IPC and gets the port back. Each request runs its steps in order and the
 * statements of one step concurrently (as the service does, e.g. a model's views and sizes); statements are
 * named, so `pg` prepares them once per connection, as the service's `PreparingClient` does (P149). Unknown
 * requests get 404.
 */
import http from 'node:http';
import pg from 'pg';

/** One captured statement: its text and values, as Kysely compiled them. */
interface Statement {
  text: string;
  values: unknown[];
}

interface Setup {
  databaseUrl: string;
  poolSize: number;
  /** by `GET <path and query>`: steps in order, each a list of statements run concurrently */
  routes: Record<string, Statement[][]>;
}

process.once('message', (setup: Setup) => {
  const pool = new pg.Pool({ connectionString: setup.databaseUrl, max: setup.poolSize });
  // a statement's name is its place: route, step, position (pg prepares each name once per connection)
  const routes = new Map(
    Object.entries(setup.routes).map(([key, steps], route) => [
      key,
      steps.map((step, stepIndex) =>
        step.map((statement, index) => ({ name: `ceiling_${route}_${stepIndex}_${index}`, ...statement })),
      ),
    ]),
  );
  const server = http.createServer((request, reply) => {
    request.resume();
    request.on('end', () => {
      const steps = routes.get(`${request.method} ${request.url}`);
      if (!steps) {
        reply.writeHead(404).end();
        return;
      }
      void (async () => {
        const rows: unknown[] = [];
        for (const step of steps) {
          const results = await Promise.all(step.map((query) => pool.query(query)));
          for (const result of results) rows.push(result.rows);
        }
        return JSON.stringify(rows);
      })().then(
        (body) => {
          reply.writeHead(200, {
            'content-type': 'application/json; charset=utf-8',
            'content-length': Buffer.byteLength(body),
          });
          reply.end(body);
        },
        (error: unknown) => {
          reply.writeHead(500).end(String(error));
        },
      );
    });
  });
  server.keepAliveTimeout = 72_000;
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    process.send?.({ port: typeof address === 'object' && address ? address.port : 0 });
  });
  process.once('SIGTERM', () => server.close(() => void pool.end().then(() => process.exit(0))));
});
