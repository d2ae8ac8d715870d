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

/**
 * A sandbox named `name` whose builds are counted (`builds`) and whose closes are counted (`closes`); its app
 * answers `GET /who` with `name`, and `GET /hold` never (calling `held`). `fails(build)` makes that build throw.
 */
function countingSandbox(name: string, held = () => {}, fails = (_build: number) => false) {
  const counts = { builds: 0, closes: 0 };
  const build = (): SandboxApp => {
    counts.builds += 1;
    if (fails(counts.builds)) throw new Error(`build ${counts.builds} fails`);
    const app = Fastify({ logger: false });
    app.get('/who', async () => ({ label: name }));
    app.get('/hold', () => {
      held();
      return new Promise(() => undefined);
    });
    return {
      app,
      close: async () => {
        counts.closes += 1;
        await app.close();
      },
    };
  };
  return { name, build, counts };
}

describe('serveSandbox', () => {
  it('builds a lazy sandbox at its first request, once for concurrent requests, and closes it', async () => {
    let arrived = () => {};
    const holding = new Promise<void>((resolve) => (arrived = resolve));
    const sandbox = countingSandbox('first', () => arrived());
    const served = await serveSandbox(sandbox, { host: '127.0.0.1', port: 0, lazy: true });
    expect(sandbox.counts.builds).toBe(0);
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => fetch(`${served.url}/who`).then((response) => response.json())),
    );
    expect(answers).toEqual(Array.from({ length: 5 }, () => ({ label: 'first' })));
    expect(sandbox.counts.builds).toBe(1);
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
    expect(sandbox.counts.closes).toBe(1);
  });

  it('answers 502 when the build fails and builds again at the next request', async () => {
    const sandbox = countingSandbox('second', undefined, (build) => build === 1);
    const served = await serveSandbox(sandbox, { host: '127.0.0.1', port: 0, lazy: true });
    try {
      const failed = await fetch(`${served.url}/who`);
      expect(failed.status).toBe(502);
      expect(await failed.text()).toContain('build 1 fails');
      expect(await (await fetch(`${served.url}/who`)).json()).toEqual({ label: 'second' });
      expect(sandbox.counts.builds).toBe(2);
    } finally {
      await served.close();
    }
  });

  it('builds an eager sandbox before it listens and refuses a taken port', async () => {
    const sandbox = countingSandbox('eager');
    const twin = countingSandbox('twin');
    const served = await serveSandbox(sandbox, { host: '127.0.0.1', port: 0 });
    try {
      expect(sandbox.counts.builds).toBe(1);
      const port = Number(new URL(served.url).port);
      await expect(serveSandbox(twin, { host: '127.0.0.1', port })).rejects.toThrow(/EADDRINUSE/);
    } finally {
      await served.close();
    }
    expect(sandbox.counts.closes + twin.counts.closes).toBe(2);
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
