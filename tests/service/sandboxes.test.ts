/**
 * Serving the sandboxes (`src/connectors/sandboxes.ts`): the embedded default listens for every provider whose URL
 * is unset and builds a sandbox only at its first request; a lazily built sandbox is built once, a failed build is
 * answered 502 and tried again, and closing ends the connections a fault holds.
 */
import { request as httpRequest } from 'node:http';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { serveSandbox, startMissingSandboxes, type SandboxApp } from '../../src/connectors/sandboxes.ts';

/** A sandbox app answering `GET /who` with `label`, and `GET /hold` never (calling `held`); counts its closes. */
function countingSandbox(label: string, closes: { count: number }, held = () => {}): SandboxApp {
  const app = Fastify({ logger: false });
  app.get('/who', async () => ({ label }));
  app.get('/hold', () => {
    held();
    return new Promise(() => undefined);
  });
  return {
    app,
    close: async () => {
      closes.count += 1;
      await app.close();
    },
  };
}

describe('serveSandbox', () => {
  it('builds a lazy sandbox at its first request, once for concurrent requests, and closes it', async () => {
    let builds = 0;
    const closes = { count: 0 };
    let arrived = () => {};
    const holding = new Promise<void>((resolve) => (arrived = resolve));
    const served = await serveSandbox(
      'counting',
      () => {
        builds += 1;
        return countingSandbox('first', closes, () => arrived());
      },
      { host: '127.0.0.1', port: 0, lazy: true },
    );
    expect(builds).toBe(0);
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => fetch(`${served.url}/who`).then((response) => response.json())),
    );
    expect(answers).toEqual(Array.from({ length: 5 }, () => ({ label: 'first' })));
    expect(builds).toBe(1);
    expect((await fetch(`${served.url}/missing`)).status).toBe(404);

    // A request the sandbox never answers does not keep the server from closing.
    const held = new Promise<string>((resolve) => {
      const pending = httpRequest(`${served.url}/hold`);
      pending.on('error', (error) => resolve(error.message));
      pending.end();
    });
    await holding;
    await served.close();
    expect(await held).toMatch(/socket hang up|ECONNRESET/);
    expect(closes.count).toBe(1);
  });

  it('answers 502 when the build fails and builds again at the next request', async () => {
    let builds = 0;
    const closes = { count: 0 };
    const served = await serveSandbox(
      'flaky',
      () => {
        builds += 1;
        if (builds === 1) throw new Error('first build fails');
        return countingSandbox('second', closes);
      },
      { host: '127.0.0.1', port: 0, lazy: true },
    );
    try {
      const failed = await fetch(`${served.url}/who`);
      expect(failed.status).toBe(502);
      expect(await failed.text()).toContain('first build fails');
      expect(await (await fetch(`${served.url}/who`)).json()).toEqual({ label: 'second' });
      expect(builds).toBe(2);
    } finally {
      await served.close();
    }
  });

  it('builds an eager sandbox before it listens and refuses a taken port', async () => {
    let builds = 0;
    const closes = { count: 0 };
    const served = await serveSandbox(
      'eager',
      () => {
        builds += 1;
        return countingSandbox('eager', closes);
      },
      { host: '127.0.0.1', port: 0 },
    );
    try {
      expect(builds).toBe(1);
      const port = Number(new URL(served.url).port);
      await expect(
        serveSandbox('twin', () => countingSandbox('twin', closes), { host: '127.0.0.1', port }),
      ).rejects.toThrow(/EADDRINUSE/);
    } finally {
      await served.close();
    }
    expect(closes.count).toBe(2);
  });
});

describe('startMissingSandboxes', () => {
  it('serves every provider whose URL is unset, leaves a configured one alone, and each answers its protocol', async () => {
    const configured = 'http://127.0.0.1:9';
    const { config, servers } = await startMissingSandboxes(loadConfig({ CASH_REGISTER_B_URL: configured }));
    try {
      expect(servers.map((server) => server.name)).toEqual(['cash-register-a', 'market1']);
      expect(config.cashRegisterBUrl).toBe(configured);
      expect(config.cashRegisterAUrl).toBe(servers[0]?.url);
      expect(config.market1ApiUrl).toBe(servers[1]?.url);
      const exchanges = await fetch(`${config.cashRegisterAUrl}/__sandbox/exchanges`);
      expect(await exchanges.json()).toEqual({ exchanges: [] });
      const requests = await fetch(`${config.market1ApiUrl}/__sandbox/requests`);
      expect(await requests.json()).toEqual({ requests: [] });
    } finally {
      await Promise.all(servers.map((server) => server.close()));
    }
  });
});
