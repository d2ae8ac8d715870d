/**
 * The service at its edge (P164), over real sockets on loopback; `127.0.0.2` and `127.0.0.3` are other sources
 * than `127.0.0.1` (the client binds to them). A slow body is cut after `REQUEST_TIMEOUT_MS` with 408 and its
 * connection closed; connections beyond a source's cap or the total cap are closed at once while other sources are
 * served; refusals and incomplete requests are counted in `/metrics`; a client hanging up writes no error-level
 * line; behind `TRUST_PROXY` logs and rate limits see the forwarded address and the proxy is not capped per source.
 */
import dns from 'node:dns';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { connectionLimits, sourceOf } from '../../src/http/connections.ts';
import { useTestApp, type TestApp } from '../helpers/test-app.ts';
import { createAccount, type TestAccount } from '../helpers/factories.ts';

/** Log lines of an app, parsed. */
class LogLines {
  readonly lines: { level: number; msg: string; [key: string]: unknown }[] = [];
  write(line: string): void {
    this.lines.push(JSON.parse(line) as LogLines['lines'][number]);
  }
  withMessage(text: string) {
    return this.lines.filter((line) => line.msg.includes(text));
  }
  /** Lines at `error` (50) or above. */
  errors() {
    return this.lines.filter((line) => line.level >= 50);
  }
}

const REQUEST_TIMEOUT_MS = 1_000;
const PER_SOURCE = 3;
const TOTAL = 6;

let t: TestApp;
let account: TestAccount;
let port: number;
const logs = new LogLines();
useTestApp(
  async (app) => {
    t = app;
    account = await createAccount(app.runtime);
  },
  {
    REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
    HEADERS_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
    KEEP_ALIVE_TIMEOUT_MS: '30000',
    MAX_CONNECTIONS_PER_SOURCE: String(PER_SOURCE),
    MAX_CONNECTIONS: String(TOTAL),
    RATE_LIMIT_MAX: '0',
  },
  { workers: false, log: logs },
);

let proxied: TestApp;
let proxiedPort: number;
const proxiedLogs = new LogLines();
useTestApp(
  (app) => {
    proxied = app;
  },
  {
    TRUST_PROXY: '127.0.0.1',
    MAX_CONNECTIONS_PER_SOURCE: '2',
    RATE_LIMIT_MAX: '2',
    RATE_LIMIT_STORE: 'memory',
  },
  { workers: false, log: proxiedLogs },
);

beforeAll(async () => {
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  port = (t.app.server.address() as AddressInfo).port;
  await proxied.app.listen({ port: 0, host: '127.0.0.1' });
  proxiedPort = (proxied.app.server.address() as AddressInfo).port;
});

/** Sockets a test opened; destroyed after it, and the server has seen them close. */
const opened: net.Socket[] = [];
afterEach(async () => {
  for (const socket of opened.splice(0)) socket.destroy();
  await vi.waitFor(async () => expect(await openConnections(t)).toBe(0), { timeout: 5_000, interval: 10 });
  await vi.waitFor(async () => expect(await openConnections(proxied)).toBe(0), {
    timeout: 5_000,
    interval: 10,
  });
});

/** Connections the server of `app` holds open. */
function openConnections(app: TestApp): Promise<number> {
  return new Promise((resolve, reject) =>
    app.app.server.getConnections((error, count) => (error ? reject(error) : resolve(count))),
  );
}

/** A raw connection to `targetPort` from `source`, with what it received and whether it closed. */
interface Connection {
  socket: net.Socket;
  received(): string;
  closed: Promise<void>;
}

function connect(source: string, targetPort = port): Promise<Connection> {
  return new Promise((resolve, reject) => {
    let data = '';
    const socket = net.connect({ host: '127.0.0.1', port: targetPort, localAddress: source });
    opened.push(socket);
    const closed = new Promise<void>((done) => socket.once('close', () => done()));
    socket.on('data', (chunk: Buffer) => (data += chunk.toString('latin1')));
    socket.on('error', () => undefined);
    socket.once('connect', () => resolve({ socket, received: () => data, closed }));
    socket.once('error', reject);
  });
}

/** A connection from `source` the server refuses: what it received and the error it ended with, once closed. */
function refusedConnection(
  source: string,
  targetPort = port,
): Promise<{ received: string; code: string | undefined }> {
  return new Promise((resolve) => {
    let data = '';
    let code: string | undefined;
    const socket = net.connect({ host: '127.0.0.1', port: targetPort, localAddress: source });
    opened.push(socket);
    socket.once('connect', () => socket.write('GET /health HTTP/1.1\r\nhost: test\r\n\r\n'));
    socket.on('data', (chunk: Buffer) => (data += chunk.toString('latin1')));
    socket.on('error', (error: NodeJS.ErrnoException) => (code ??= error.code));
    socket.once('close', () => resolve({ received: data, code }));
  });
}

/** Sends a keep-alive GET on `connection` and waits for its whole answer (status line returned). */
async function get(
  connection: Connection,
  path: string,
  headers: Record<string, string> = {},
): Promise<string> {
  const before = connection.received().length;
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
  connection.socket.write(`GET ${path} HTTP/1.1\r\nhost: test\r\n${lines.join('')}\r\n`);
  await vi.waitFor(
    () => {
      const answer = connection.received().slice(before);
      const length = /content-length: (\d+)/i.exec(answer);
      const bodyStart = answer.indexOf('\r\n\r\n');
      expect(length && bodyStart >= 0 && answer.length - bodyStart - 4 >= Number(length[1])).toBe(true);
    },
    { timeout: 5_000, interval: 5 },
  );
  return connection.received().slice(before).split('\r\n', 1)[0] as string;
}

/** The value of one sample of `/metrics`, e.g. `seller_ops_http_connections_refused_total{limit="total"}`. */
async function metric(app: TestApp, sample: string): Promise<number> {
  const response = await app.app.inject({ method: 'GET', url: '/metrics' });
  const line = response.body.split('\n').find((text) => text.startsWith(`${sample} `));
  if (!line) throw new Error(`no sample ${sample} in /metrics`);
  return Number(line.slice(sample.length + 1));
}

const refusedPerSource = 'seller_ops_http_connections_refused_total{limit="per_source"}';
const refusedTotal = 'seller_ops_http_connections_refused_total{limit="total"}';
const timedOut = 'seller_ops_http_incomplete_requests_total{reason="timeout"}';
const aborted = 'seller_ops_http_incomplete_requests_total{reason="aborted"}';

describe('request time limit', () => {
  it('cuts a body arriving one byte at a time after REQUEST_TIMEOUT_MS with 408 and closes the connection', async () => {
    const before = await metric(t, timedOut);
    const slow = await connect('127.0.0.2');
    const started = performance.now();
    slow.socket.write(
      `POST /api/inbound/ HTTP/1.1\r\nhost: test\r\nauthorization: ${account.writeToken}\r\n` +
        'content-type: application/json\r\ncontent-length: 1000000\r\n\r\n{',
    );
    const trickle = setInterval(() => slow.socket.writable && slow.socket.write(' '), 100);
    try {
      await slow.closed;
    } finally {
      clearInterval(trickle);
    }
    expect(performance.now() - started).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS);
    const [head, body] = slow.received().split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 408 /);
    expect(head).toMatch(/connection: close/i);
    expect(JSON.parse(body as string)).toMatchObject({ error: 'error_request_timeout', params: {} });
    expect(await metric(t, timedOut)).toBe(before + 1);
    expect(logs.withMessage('request did not arrive in time')[0]).toMatchObject({ level: 30 });
    expect(logs.errors()).toEqual([]);
  });

  it('closes a connection that sends nothing after HEADERS_TIMEOUT_MS', async () => {
    const idle = await connect('127.0.0.2');
    await idle.closed;
    expect(idle.received()).toMatch(/^HTTP\/1\.1 408 /);
    expect(logs.errors()).toEqual([]);
  });
});

describe('connection caps', () => {
  it('refuses connections beyond a source cap while another source is served', async () => {
    const before = await metric(t, refusedPerSource);
    const logged = logs.withMessage('connection refused').length;
    const held = await Promise.all(Array.from({ length: PER_SOURCE }, () => connect('127.0.0.2')));
    for (const connection of held) expect(await get(connection, '/health')).toBe('HTTP/1.1 200 OK');

    // reset at once: the client sees ECONNRESET, nothing was read or answered
    expect(await refusedConnection('127.0.0.2')).toEqual({ received: '', code: 'ECONNRESET' });
    const other = await connect('127.0.0.1');
    expect(await get(other, '/health')).toBe('HTTP/1.1 200 OK');

    await refusedConnection('127.0.0.2');
    expect(await metric(t, refusedPerSource)).toBe(before + 2);
    // logged once per source per interval
    const lines = logs.withMessage('connection refused').slice(logged);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 30, source: '127.0.0.2', limit: 'per_source', cap: PER_SOURCE });

    // a closed connection frees its place
    held[0]?.socket.destroy();
    // the two left from 127.0.0.2 and the one from 127.0.0.1
    await vi.waitFor(async () => expect(await openConnections(t)).toBe(PER_SOURCE), {
      timeout: 5_000,
      interval: 10,
    });
    expect(await get(await connect('127.0.0.2'), '/health')).toBe('HTTP/1.1 200 OK');
    expect(logs.errors()).toEqual([]);
  });

  it('refuses a connection over its source cap before the HTTP layer sees it', async () => {
    const held = await Promise.all(Array.from({ length: PER_SOURCE }, () => connect('127.0.0.2')));
    // answered: the server has accepted them
    for (const connection of held) expect(await get(connection, '/health')).toBe('HTTP/1.1 200 OK');
    const seen: (string | undefined)[] = [];
    const listener = (socket: net.Socket) => seen.push(socket.remoteAddress);
    t.app.server.on('connection', listener);
    try {
      expect((await refusedConnection('127.0.0.2')).code).toBe('ECONNRESET');
      expect(seen).toEqual([]);
      expect(await get(await connect('127.0.0.1'), '/health')).toBe('HTTP/1.1 200 OK');
      expect(seen).toEqual(['127.0.0.1']);
      expect(await get(held[0] as Connection, '/health')).toBe('HTTP/1.1 200 OK');
    } finally {
      t.app.server.off('connection', listener);
    }
  });

  it("refuses in the server's emit where the listening handle offers no hook (the fallback of P191)", async () => {
    // Node's own `onconnection`, taken from a plain server, put back on the app's listening handle.
    type ListeningHandle = { onconnection: unknown };
    const handleOf = (server: net.Server) => (server as unknown as { _handle: ListeningHandle })._handle;
    const plain = net.createServer();
    await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
    const server = t.app.server;
    const ours = handleOf(server).onconnection;
    handleOf(server).onconnection = handleOf(plain).onconnection;
    plain.close();
    const installedEmit = Object.getOwnPropertyDescriptor(server, 'emit') as PropertyDescriptor;
    const emit = server.emit.bind(server) as (event: string | symbol, ...args: unknown[]) => boolean;
    const emitted: (string | undefined)[] = [];
    server.emit = ((event: string | symbol, ...args: unknown[]) => {
      if (event === 'connection') emitted.push((args[0] as net.Socket).remoteAddress);
      return emit(event, ...args);
    }) as typeof server.emit;
    try {
      const before = await metric(t, refusedPerSource);
      const held = await Promise.all(Array.from({ length: PER_SOURCE }, () => connect('127.0.0.2')));
      for (const connection of held) expect(await get(connection, '/health')).toBe('HTTP/1.1 200 OK');
      expect((await refusedConnection('127.0.0.2')).code).toBe('ECONNRESET');
      // The refused connection was made a socket (the handle path makes none) and refused in `emit`.
      expect(emitted).toEqual(Array.from({ length: PER_SOURCE + 1 }, () => '127.0.0.2'));
      expect(await metric(t, refusedPerSource)).toBe(before + 1);
      expect(await get(held[0] as Connection, '/health')).toBe('HTTP/1.1 200 OK');
    } finally {
      Object.defineProperty(server, 'emit', installedEmit);
      handleOf(server).onconnection = ours;
    }
  });

  it('refuses connections beyond the total cap', async () => {
    const before = await metric(t, refusedTotal);
    const held = [
      ...(await Promise.all(Array.from({ length: PER_SOURCE }, () => connect('127.0.0.2')))),
      ...(await Promise.all(Array.from({ length: TOTAL - PER_SOURCE }, () => connect('127.0.0.3')))),
    ];
    for (const connection of held) expect(await get(connection, '/health')).toBe('HTTP/1.1 200 OK');
    expect((await refusedConnection('127.0.0.1')).received).toBe('');
    expect(await metric(t, refusedTotal)).toBe(before + 1);
    expect(await metric(t, 'seller_ops_http_connections{state="limit_total"}')).toBe(TOTAL);
  });
});

describe('clients that hang up', () => {
  for (const hangUp of ['end', 'reset'] as const)
    it(`logs an aborted request (${hangUp}) at info, counts it, and writes no error-level line`, async () => {
      const before = await metric(t, aborted);
      const connection = await connect('127.0.0.1');
      connection.socket.write(
        `POST /api/inbound/ HTTP/1.1\r\nhost: test\r\nauthorization: ${account.writeToken}\r\n` +
          'content-type: application/json\r\ncontent-length: 1000\r\nx-request-id: abort-' +
          `${hangUp}\r\n\r\n{"name":`,
      );
      await vi.waitFor(
        () =>
          expect(
            logs.lines.some((line) => line.reqId === `abort-${hangUp}` && line.msg === 'incoming request'),
          ).toBe(true),
        { timeout: 5_000, interval: 5 },
      );
      if (hangUp === 'reset') connection.socket.resetAndDestroy();
      else connection.socket.destroy();
      await vi.waitFor(async () => expect(await metric(t, aborted)).toBe(before + 1), {
        timeout: 5_000,
        interval: 10,
      });
      const mine = logs.lines.filter((line) => line.reqId === `abort-${hangUp}`);
      expect(mine.find((line) => line.msg === 'client hung up before the answer')).toMatchObject({
        level: 30,
      });
      expect(logs.errors()).toEqual([]);
      expect(JSON.stringify(mine)).not.toContain('stack');
    });
});

describe('behind a trusted proxy (TRUST_PROXY)', () => {
  it('rate-limits and logs the forwarded client address', async () => {
    const fromProxy = await connect('127.0.0.1', proxiedPort);
    const as = (client: string) => ({ 'x-forwarded-for': client, 'x-request-id': `proxied-${client}` });
    expect(await get(fromProxy, '/api/inbound/1', as('203.0.113.7'))).toBe('HTTP/1.1 401 Unauthorized');
    expect(await get(fromProxy, '/api/inbound/1', as('203.0.113.7'))).toBe('HTTP/1.1 401 Unauthorized');
    expect(await get(fromProxy, '/api/inbound/1', as('203.0.113.7'))).toBe('HTTP/1.1 429 Too Many Requests');
    expect(await get(fromProxy, '/api/inbound/1', as('203.0.113.8'))).toBe('HTTP/1.1 401 Unauthorized');
    const incoming = proxiedLogs.lines.find(
      (line) => line.reqId === 'proxied-203.0.113.8' && line.msg === 'incoming request',
    );
    expect(incoming).toMatchObject({ req: { remoteAddress: '203.0.113.8' } });
  });

  it('does not cap the proxy per source, but caps other sources', async () => {
    const fromProxy = await Promise.all([1, 2, 3].map(() => connect('127.0.0.1', proxiedPort)));
    for (const connection of fromProxy) expect(await get(connection, '/health')).toBe('HTTP/1.1 200 OK');
    const direct = await Promise.all([1, 2].map(() => connect('127.0.0.2', proxiedPort)));
    expect((await refusedConnection('127.0.0.2', proxiedPort)).code).toBe('ECONNRESET');
    expect(await get(direct[0] as Connection, '/health')).toBe('HTTP/1.1 200 OK');
  });

  it('ignores X-Forwarded-For from a source that is not a trusted proxy', async () => {
    const direct = await connect('127.0.0.2', proxiedPort);
    await get(direct, '/health', { 'x-forwarded-for': '198.51.100.1', 'x-request-id': 'spoofed' });
    const incoming = proxiedLogs.lines.find(
      (line) => line.reqId === 'spoofed' && line.msg === 'incoming request',
    );
    expect(incoming).toMatchObject({ req: { remoteAddress: '127.0.0.2' } });
  });
});

describe('a host name of several addresses', () => {
  let local: TestApp;
  useTestApp(
    (app) => {
      local = app;
    },
    { MAX_CONNECTIONS_PER_SOURCE: '1' },
    { workers: false },
  );

  it('listens on one server only, the one the limits are installed on (P204)', async () => {
    // `localhost` made to resolve to two loopback addresses, as `127.0.0.1` and `::1` do on a dual-stack machine.
    const lookup = dns.lookup;
    const spy = vi.spyOn(dns, 'lookup').mockImplementation(((
      host: string,
      options: dns.LookupOptions | ((...args: unknown[]) => void),
      callback?: (...args: unknown[]) => void,
    ) => {
      const done = (typeof options === 'function' ? options : callback) as (...args: unknown[]) => void;
      if (host !== 'localhost') return (lookup as (...args: unknown[]) => void)(host, options, callback);
      if (typeof options === 'object' && options.all)
        return done(null, [
          { address: '127.0.0.1', family: 4 },
          { address: '127.0.0.2', family: 4 },
        ]);
      return done(null, '127.0.0.1', 4);
    }) as typeof dns.lookup);
    try {
      await local.app.listen({ port: 0, host: 'localhost' });
    } finally {
      spy.mockRestore();
    }
    const localPort = (local.app.server.address() as AddressInfo).port;
    expect(local.app.addresses()).toEqual([{ address: '127.0.0.1', family: 'IPv4', port: localPort }]);
    const other = await new Promise<string | undefined>((resolve) => {
      const socket = net.connect({ host: '127.0.0.2', port: localPort });
      socket.once('connect', () => resolve(undefined));
      socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code));
    });
    expect(other).toBe('ECONNREFUSED');
  });
});

describe('settings of the edge', () => {
  it('counts an IPv6 client under its /64 and an IPv4-mapped one as IPv4', () => {
    expect(sourceOf('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(sourceOf('2001:db8:1:2:bbbb::9')).toBe('2001:db8:1:2::/64');
    expect(sourceOf('::ffff:127.0.0.2')).toBe('127.0.0.2');
    expect(sourceOf('127.0.0.2')).toBe('127.0.0.2');
  });

  it('derives the total cap from the descriptor limit, less the headroom', () => {
    const config = loadConfig({ DATABASE_POOL_SIZE: '10', WEBHOOK_WORKERS: '4', WEBHOOK_BATCH_SIZE: '50' });
    const limits = connectionLimits(config, 20_000);
    expect(limits.headroom).toBe(10 + 4 * 50 + 256 + 256);
    expect(limits.total).toBe(20_000 - limits.headroom);
    expect(connectionLimits(config, 1_024).total).toBe(512);
    expect(connectionLimits(loadConfig({ MAX_CONNECTIONS: '100' }), 20_000).total).toBe(100);
  });

  it('refuses settings Node or the proxy list cannot take', () => {
    expect(() => loadConfig({ TRUST_PROXY: '127.0.0.1,not-an-address' })).toThrow(
      /TRUST_PROXY.*not-an-address/,
    );
    expect(() => loadConfig({ REQUEST_TIMEOUT_MS: '5000', HEADERS_TIMEOUT_MS: '6000' })).toThrow(
      /HEADERS_TIMEOUT_MS/,
    );
    expect(loadConfig({ REQUEST_TIMEOUT_MS: '5000' }).headersTimeoutMs).toBe(5000);
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8, loopback' }).trustProxy).toEqual([
      '10.0.0.0/8',
      'loopback',
    ]);
  });
});
