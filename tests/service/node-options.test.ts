/**
 * The service's Node options (P218): `npm start` passes them to Node, and `serve` started without them says so in
 * its log.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { testDatabaseUrl } from '../helpers/test-app.ts';
import { spawnService, stopService, waitUntilReady } from '../helpers/service-process.ts';
import { SERVICE_NODE_OPTIONS } from '../../src/node-options.ts';

const root = path.resolve(import.meta.dirname, '../..');
const bin = path.join(root, 'bin/seller-ops.js');
const warning = 'started without the service';
const env = { DATABASE_URL: testDatabaseUrl(), SEED_DEMO: 'false', WEBHOOK_WORKERS: '0' };

/** Starts Node with `args`, waits until the service is ready, stops it and returns what it wrote. */
async function serveOutput(args: string[]): Promise<string> {
  const service = await spawnService(env, args);
  try {
    await waitUntilReady(service);
  } finally {
    await stopService(service);
  }
  return service.output();
}

describe("the service's Node options (P218)", () => {
  it('are on the command line of npm start', async () => {
    const packageJson = JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(packageJson.scripts.start).toBe(`node ${SERVICE_NODE_OPTIONS.join(' ')} bin/seller-ops.js serve`);
  });

  it('keep serve quiet; without them it warns', async () => {
    expect(await serveOutput([...SERVICE_NODE_OPTIONS, bin, 'serve'])).not.toContain(warning);
    expect(await serveOutput([bin, 'serve'])).toContain(warning);
  }, 120_000);
});
