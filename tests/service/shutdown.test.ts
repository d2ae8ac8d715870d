/**
 * Graceful shutdown under load (P35): while a service process stops on SIGTERM, clients on
 * kept-alive connections get either their normal answer or 503 `error_service_unavailable` in the error model —
 * never a connection reset — and the process exits 0. A request already running when the shutdown begins gets
 * its answer with `connection: close`.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { testDatabaseUrl } from '../helpers/test-app.ts';
import {
  spawnService,
  stopService,
  waitUntilReady,
  type ServiceProcess,
} from '../helpers/service-process.ts';
import { createAccount, type TestAccount } from '../helpers/factories.ts';
import { buildTestApp, type TestApp } from '../helpers/test-app.ts';

let t: TestApp;
let account: TestAccount;
let service: ServiceProcess;
beforeAll(async () => {
  t = await buildTestApp({}, undefined, { workers: false });
  account = await createAccount(t.runtime);
  service = await spawnService({ DATABASE_URL: testDatabaseUrl(), SEED_DEMO: 'false', WEBHOOK_WORKERS: '0' });
  await waitUntilReady(service);
});
afterAll(async () => {
  await stopService(service);
  await t.close();
});

interface Outcome {
  status?: number;
  body?: string;
  error?: string;
}

describe('SIGTERM under load', () => {
  it('answers every request on an open connection with its result or a 503 in the error model', async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
    const outcomes: Outcome[] = [];
    const request = () =>
      new Promise<Outcome>((resolve) => {
        const outgoing = http.get(
          `${service.url}/api/inbound/find?limit=5`,
          { agent, headers: { authorization: account.readToken } },
          (response) => {
            let body = '';
            response.on('data', (chunk: Buffer) => (body += chunk.toString()));
            response.on('end', () => resolve({ status: response.statusCode, body }));
            response.on('error', (error: NodeJS.ErrnoException) =>
              resolve({ error: error.code ?? error.message }),
            );
          },
        );
        outgoing.on('error', (error: NodeJS.ErrnoException) =>
          resolve({ error: error.code ?? error.message }),
        );
      });
    let running = true;
    // SIGTERM only once every client's connection is open and answered: one still waiting in the listener's
    // backlog when the listener closes is reset by the kernel, before the service ever sees it.
    let connected = 0;
    let allConnected: () => void = () => {};
    const connections = new Promise<void>((resolve) => (allConnected = resolve));
    const clients = Array.from({ length: 8 }, async () => {
      let first = true;
      while (running) {
        const outcome = await request();
        outcomes.push(outcome);
        if (first && ++connected === 8) allConnected();
        first = false;
        // Once the listening socket is closed, new connections are refused: the client is done.
        if (outcome.error === 'ECONNREFUSED') return;
      }
    });
    await connections;
    await new Promise((resolve) => setTimeout(resolve, 100));
    const exitCode = stopService(service);
    expect(await exitCode).toBe(0);
    running = false;
    await Promise.all(clients);
    agent.destroy();

    const answered = outcomes.filter((outcome) => outcome.status !== undefined);
    expect(answered.length).toBeGreaterThan(0);
    for (const outcome of answered) {
      if (outcome.status === 200) continue;
      expect(outcome.status).toBe(503);
      expect(JSON.parse(outcome.body ?? '')).toMatchObject({
        error: 'error_service_unavailable',
        params: {},
      });
    }
    expect(answered.some((outcome) => outcome.status === 503)).toBe(true);
    const failures = outcomes
      .filter((outcome) => outcome.error !== undefined)
      .map((outcome) => outcome.error);
    expect(failures.filter((code) => code !== 'ECONNREFUSED')).toEqual([]);
  });
});

describe('a request running when the shutdown begins', () => {
  it('gets its answer with connection: close, so its connection is not left idle for the close to reset', async () => {
    const app = await buildTestApp({}, undefined, { workers: false });
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const owner = await createAccount(app.runtime);
      await app.app.listen({ port: 0, host: '127.0.0.1' });
      const { port } = app.app.server.address() as AddressInfo;
      const get = () =>
        new Promise<{ status?: number; connection?: string }>((resolve, reject) => {
          http
            .get(
              `http://127.0.0.1:${port}/api/inbound/find?limit=5`,
              { agent, headers: { authorization: owner.readToken } },
              (response) => {
                response.resume();
                response.on('end', () =>
                  resolve({ status: response.statusCode, connection: response.headers.connection }),
                );
              },
            )
            .on('error', reject);
        });
      expect(await get()).toEqual({ status: 200, connection: 'keep-alive' });

      // Hold the next request at its authentication, past the hook that refuses requests during a shutdown.
      const authenticator = app.runtime.authenticator;
      const authenticate = authenticator.authenticateRequest.bind(authenticator);
      let release: () => void = () => {};
      const held = new Promise<void>((resolve) => (release = resolve));
      let entered: () => void = () => {};
      const arrived = new Promise<void>((resolve) => (entered = resolve));
      vi.spyOn(authenticator, 'authenticateRequest').mockImplementationOnce((request) => {
        entered();
        return held.then(() => authenticate(request));
      });
      const running = get();
      await arrived;
      app.app.beginShutdown();
      release();
      expect(await running).toEqual({ status: 200, connection: 'close' });
      // A request arriving now is refused, on the same terms.
      const late = await app.app.inject({
        url: '/api/inbound/find?limit=5',
        headers: { authorization: owner.readToken },
      });
      expect(late.statusCode).toBe(503);
      expect(late.headers.connection).toBe('close');
    } finally {
      vi.restoreAllMocks();
      agent.destroy();
      await app.close();
    }
  });
});
