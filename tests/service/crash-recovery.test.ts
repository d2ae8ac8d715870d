/**
 * The embedded database survives what a user does to it (D12.2): the service is SIGKILLed while it writes, starts
 * again on the same DATA_DIR and still has every acknowledged write; a second service on a DATA_DIR in use exits
 * with a clear message; SIGTERM shuts down gracefully.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  spawnService,
  stopService,
  waitUntilReady,
  type ServiceProcess,
} from '../helpers/service-process.ts';

let dataDir: string;
const started: ServiceProcess[] = [];

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'seller-ops-crash-'));
});

afterAll(async () => {
  for (const service of started) await stopService(service);
  await rm(dataDir, { recursive: true, force: true });
});

async function start(): Promise<ServiceProcess> {
  const service = await spawnService({ DATA_DIR: dataDir, SEED_DEMO: 'true', DATABASE_URL: '' });
  started.push(service);
  return service;
}

interface Demo {
  organizationId: number;
  writeToken: string;
  /** A product of the demo catalog, created before the writers start (positions need catalog products). */
  productId: number;
}

/** Creates a brand, a category and a one-size model in the demo catalog; returns the product's id. */
async function createProduct(service: ServiceProcess, demo: Omit<Demo, 'productId'>): Promise<number> {
  const post = async (path: string, body: object) => {
    const response = await fetch(`${service.url}${path}`, {
      method: 'POST',
      headers: { authorization: demo.writeToken, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(response.status, await response.clone().text()).toBe(200);
    return (await response.json()) as { id: number; views: Array<{ sizes: Array<{ id: number }> }> };
  };
  const brand = await post('/api/brand', { name: 'Crash brand' });
  const category = await post('/api/category', { name: 'Crash category' });
  const model = await post('/api/model', {
    article: 'CRASH-1',
    title: 'Crash test product',
    brandId: brand.id,
    categoryId: category.id,
    organizationId: demo.organizationId,
    views: [{ sizes: [{ name: 'Crash test product', size: 'OS' }] }],
  });
  return model.views[0]?.sizes[0]?.id as number;
}

async function createDocument(
  service: ServiceProcess,
  demo: Demo,
  index: number,
): Promise<number | undefined> {
  try {
    const response = await fetch(`${service.url}/api/inbound/`, {
      method: 'POST',
      headers: { authorization: demo.writeToken, 'content-type': 'application/json' },
      body: JSON.stringify({
        organizationId: demo.organizationId,
        type: 'INCOME',
        name: `crash test ${index}`,
        products: [{ productId: demo.productId, quantity: index + 1, price: 10.5 }],
      }),
    });
    if (response.status !== 200) return undefined;
    return ((await response.json()) as { id: number }).id;
  } catch {
    return undefined; // the process was killed mid-request: not acknowledged
  }
}

describe('embedded database crash recovery', () => {
  it('keeps every acknowledged write across a SIGKILL and refuses a second service on the same DATA_DIR', async () => {
    const first = await start();
    await waitUntilReady(first);
    const credentials = JSON.parse(
      await readFile(path.join(dataDir, 'demo-credentials.json'), 'utf8'),
    ) as Omit<Demo, 'productId'>;
    const demo: Demo = { ...credentials, productId: await createProduct(first, credentials) };

    const second = await start();
    const secondExit = await second.exited;
    expect(secondExit).not.toBe(0);
    expect(second.output()).toMatch(/in use by another seller-ops process/);

    // Four writers in parallel; kill the service once enough writes were acknowledged, while writes are in flight.
    const acknowledged: number[] = [];
    let index = 0;
    let killed = false;
    const writer = async () => {
      while (!killed) {
        const id = await createDocument(first, demo, index++);
        if (id !== undefined) acknowledged.push(id);
        if (acknowledged.length >= 120 && !killed) {
          killed = true;
          first.child.kill('SIGKILL');
        }
      }
    };
    await Promise.all([writer(), writer(), writer(), writer()]);
    await first.exited;

    const restarted = await start();
    await waitUntilReady(restarted);
    for (const id of acknowledged) {
      const response = await fetch(`${restarted.url}/api/inbound/${id}`, {
        headers: { authorization: demo.writeToken },
      });
      expect(response.status, `document ${id}`).toBe(200);
    }
    const after = await createDocument(restarted, demo, index);
    expect(after).toBeGreaterThan(Math.max(...acknowledged));

    expect(await stopService(restarted)).toBe(0);
  });
});
