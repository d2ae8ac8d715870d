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
        products: [{ productId: 1000 + index, quantity: index + 1, price: 10.5 }],
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
    const demo = JSON.parse(await readFile(path.join(dataDir, 'demo-credentials.json'), 'utf8')) as Demo;

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
