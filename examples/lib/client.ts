/**
 * What every example needs from a running seller-ops service: its address, a wait until it is ready, the
 * credentials, and the typed client of `@seller-ops/client` (clients/typescript) with a `call` that ends the
 * example with the service's error.
 *
 * Settings (environment):
 *   SELLER_OPS_URL              service address, default http://127.0.0.1:8080
 *   SELLER_OPS_TOKEN            a WRITE token
 *   SELLER_OPS_ORGANIZATION_ID  the organization to work with
 * When SELLER_OPS_TOKEN is not set, the demo credentials of a local service are read from
 * `${DATA_DIR:-./data}/demo-credentials.json` (written on the service's first start).
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { ApiError, createSellerOpsClient, ok, type SellerOpsClient } from '@seller-ops/client';

/** A connected example. */
export interface Connection {
  baseUrl: string;
  token: string;
  organizationId: number;
  /** The typed client: `api.GET('/api/inbound/{orderId}', {params: {path: {orderId}}})`. */
  api: SellerOpsClient;
  /** The data of a call of `api`; on an error answer or a network failure, prints it and exits with status 1. */
  call<Data>(request: Promise<{ data?: Data; error?: unknown; response: Response }>): Promise<Data>;
  /** Finds a brand or category by its name (case-insensitive), or creates it from `body`. */
  findOrCreate(
    kind: 'brand' | 'category',
    body: { name: string; market1CategoryId?: number },
  ): Promise<{ id: number; name: string }>;
  /** Prints the failure and exits with status 1. */
  fail(message: string): never;
}

/**
 * Waits up to 60 s for the service's `GET /ready` (so `npm start & npx tsx examples/….ts` works on a fresh
 * machine: the first start initialises the embedded database and writes the demo credentials), then reads the
 * credentials.
 * @param name the example's name, which starts every failure message
 */
export async function connect(name: string): Promise<Connection> {
  const baseUrl = (process.env.SELLER_OPS_URL ?? 'http://127.0.0.1:8080').replace(/\/+$/, '');

  const fail = (message: string): never => {
    console.error(`${name} failed: ${message}`);
    process.exit(1);
  };

  const deadline = Date.now() + 60_000;
  let told = false;
  while (!(await isReady(baseUrl))) {
    if (Date.now() > deadline) fail(`the service at ${baseUrl} did not become ready within 60 s`);
    if (!told) console.log(`Waiting for the service at ${baseUrl} …`);
    told = true;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }

  const { token, organizationId } = await loadCredentials(fail);
  const api = createSellerOpsClient({ baseUrl, token });

  const call = async <Data>(request: Promise<{ data?: Data; error?: unknown; response: Response }>) => {
    try {
      return await ok(request);
    } catch (error) {
      if (error instanceof ApiError) return fail(error.message);
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      return fail(`cannot reach the service (${cause?.code ?? cause?.message ?? String(error)})`);
    }
  };

  const findOrCreate: Connection['findOrCreate'] = async (kind, body) => {
    const query = { query: body.name, limit: 500 };
    const found =
      kind === 'brand'
        ? await call(api.GET('/api/brand/find', { params: { query } }))
        : await call(api.GET('/api/category/find', { params: { query } }));
    return (
      found.rows.find((row) => row.name.toLowerCase() === body.name.toLowerCase()) ??
      (kind === 'brand'
        ? await call(api.POST('/api/brand', { body: { name: body.name } }))
        : await call(api.POST('/api/category', { body })))
    );
  };

  return { baseUrl, token, organizationId, api, call, findOrCreate, fail };
}

/** Whether the service answers `GET /ready` with 200. */
async function isReady(baseUrl: string): Promise<boolean> {
  try {
    return (await fetch(`${baseUrl}/ready`)).ok;
  } catch {
    return false; // not listening yet
  }
}

/** Token and organization from the environment, else from a local service's demo credentials. */
async function loadCredentials(
  fail: (message: string) => never,
): Promise<{ token: string; organizationId: number }> {
  if (process.env.SELLER_OPS_TOKEN) {
    const organizationId = Number(process.env.SELLER_OPS_ORGANIZATION_ID);
    if (!Number.isSafeInteger(organizationId) || organizationId <= 0)
      fail('set SELLER_OPS_ORGANIZATION_ID to an organization id with SELLER_OPS_TOKEN');
    return { token: process.env.SELLER_OPS_TOKEN, organizationId };
  }
  const file = path.resolve(process.env.DATA_DIR ?? './data', 'demo-credentials.json');
  let demo: { writeToken: string; organizationId: number };
  try {
    demo = JSON.parse(await readFile(file, 'utf8')) as typeof demo;
  } catch {
    return fail(`set SELLER_OPS_TOKEN and SELLER_OPS_ORGANIZATION_ID (no demo credentials at ${file})`);
  }
  console.log(`(SELLER_OPS_TOKEN not set: using the demo account from ${file})`);
  return { token: demo.writeToken, organizationId: demo.organizationId };
}
