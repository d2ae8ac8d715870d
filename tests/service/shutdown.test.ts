/**
 * Graceful shutdown under load (P35): while a service process stops on SIGTERM, clients on
 * kept-alive connections get either their normal answer or 503 `error_service_unavailable` in the error model —
 * never a connection reset — and the process exits 0.
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
    const clients = Array.from({ length: 8 }, async () => {
      while (running) {
        const outcome = await request();
        outcomes.push(outcome);
        // Once the listening socket is closed, new connections are refused: the client is done.
        if (outcome.error === 'ECONNREFUSED') return;
      }
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
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
