/**
 * Write workloads of the growth and Citus parts (bench/growth.ts, bench/citus.ts): a number of units of work
 * (one document created and moved through three statuses; one model created and a product patched; one receipt)
 * spread over a few connections, each unit's completion time recorded, and the completion rate per window of
 * units. Also the client account a workload runs as, created through the accounts service on the database.
 */
import { randomBytes } from 'node:crypto';
import { createDatabase } from '../src/db/database.ts';
import { AccountService } from '../src/modules/accounts/service.ts';
import { SecretBox } from '../src/security/secret-box.ts';
import { callApi, formatNumber } from './lib.ts';

/** The client a workload runs as. */
export interface Account {
  clientId: number;
  organizationId: number;
  readToken: string;
  writeToken: string;
}

/**
 * Creates a client with one organization, one OWNER user and a READ and a WRITE token on `databaseUrl` (the
 * operations of the admin API and CLI, D1.4); the running service finds the tokens on their first use.
 */
export async function createAccount(databaseUrl: string, name: string): Promise<Account> {
  const database = createDatabase(databaseUrl, 1);
  try {
    // the key seals marketplace and cash-register secrets, which an account without them never stores
    const accounts = new AccountService(database.db, new SecretBox(randomBytes(32)));
    const client = await accounts.createClient({ name });
    const organization = await accounts.createOrganization(client.id, { name: `${name} organization` });
    const user = await accounts.createUser(client.id, { name: `${name} user`, lang: 'en', role: 'OWNER' });
    const read = await accounts.createToken(user.id, { access: 'READ', name: 'bench read' });
    const write = await accounts.createToken(user.id, { access: 'WRITE', name: 'bench write' });
    return {
      clientId: client.id,
      organizationId: organization.id,
      readToken: read.token,
      writeToken: write.token,
    };
  } finally {
    await database.close();
  }
}

/**
 * Creates `count` catalog products (one model, one view) through the API; returns their ids.
 * @param label names the brand, category and model (unique per call: names and articles are unique)
 */
export async function createCatalogProducts(
  serviceUrl: string,
  account: Pick<Account, 'writeToken' | 'organizationId'>,
  label: string,
  count: number,
): Promise<number[]> {
  const post = <T>(pathname: string, body: unknown) =>
    callApi<T>(serviceUrl, account.writeToken, 'POST', pathname, body);
  const brand = await post<{ id: number }>('/api/brand', { name: `${label} bench brand` });
  const category = await post<{ id: number }>('/api/category', { name: `${label} bench category` });
  const model = await post<{ views: Array<{ sizes: Array<{ id: number }> }> }>('/api/model', {
    article: `${label.toUpperCase().replaceAll(' ', '-')}-BENCH`,
    title: `${label} bench products`,
    brandId: brand.id,
    categoryId: category.id,
    organizationId: account.organizationId,
    views: [
      {
        sizes: Array.from({ length: count }, (_, index) => ({
          name: `Benchmark product ${index + 1}`,
          size: String(index + 1),
        })),
      },
    ],
  });
  return model.views[0]?.sizes.map((size) => size.id) ?? [];
}

/** One unit of work, given its number (0-based); rejects when a request fails. */
export type Unit = (index: number) => Promise<void>;

/** A run stops after this many failed units (the service is refusing the workload, not slowing down). */
const MAX_FAILURES = 50;

/** What a run of units did: completion times in ms from the start, in order, and the units that failed. */
export interface UnitRun {
  completedAt: number[];
  failures: number;
  /** the first failure's message */
  firstFailure?: string;
  elapsedMs: number;
}

/**
 * Runs units 0…count−1 over `connections` loops, each taking the next unit number when it finishes one; stops
 * early after `limitSeconds` or `MAX_FAILURES` failed units. A failed unit is counted and the run goes on.
 */
export async function runUnits(
  count: number,
  connections: number,
  unit: Unit,
  limitSeconds: number,
): Promise<UnitRun> {
  const started = performance.now();
  const deadline = started + limitSeconds * 1000;
  const completedAt: number[] = [];
  let next = 0;
  let failures = 0;
  let firstFailure: string | undefined;
  const loop = async () => {
    while (next < count && performance.now() < deadline && failures < MAX_FAILURES) {
      const index = next++;
      try {
        await unit(index);
        completedAt.push(performance.now() - started);
      } catch (error) {
        failures += 1;
        firstFailure ??= error instanceof Error ? error.message : String(error);
      }
    }
  };
  await Promise.all(Array.from({ length: connections }, loop));
  return {
    completedAt,
    failures,
    elapsedMs: performance.now() - started,
    ...(firstFailure && { firstFailure }),
  };
}

/** A window of units: how many were done at its end, and its rate. */
export interface RateWindow {
  /** units completed at the end of the window */
  done: number;
  /** units per second within the window */
  rate: number;
}

/** The completion rate per window of `size` units (the last window may be shorter). */
export function rateWindows(completedAt: number[], size: number): RateWindow[] {
  const windows: RateWindow[] = [];
  for (let start = 0; start < completedAt.length; start += size) {
    const end = Math.min(start + size, completedAt.length);
    const from = start === 0 ? 0 : (completedAt[start - 1] as number);
    const to = completedAt[end - 1] as number;
    windows.push({ done: end, rate: ((end - start) * 1000) / Math.max(to - from, 1) });
  }
  return windows;
}

/** The statuses every workload document goes through after its creation (the last records its stock, D5.8). */
const DOCUMENT_STATUSES = ['PACKING', 'READY_TO_SUPPLY', 'FINISHED'];

/** Catalog products the workload documents' positions refer to (two per document, taken in turn). */
const WORKLOAD_PRODUCTS = 50;

/**
 * The inbound write unit: an INCOME document with two positions (products of a catalog model created first, as
 * positions must name the client's products) is created (`POST /api/inbound/`), then moved through PACKING,
 * READY_TO_SUPPLY and FINISHED (`POST /api/inbound/{id}/status`); `created` receives its id.
 */
export async function inboundUnit(
  serviceUrl: string,
  account: Account,
  created?: (id: number) => void,
): Promise<Unit> {
  const productIds = await createCatalogProducts(serviceUrl, account, 'Workload', WORKLOAD_PRODUCTS);
  return async (index) => {
    const order = await callApi<{ id: number }>(serviceUrl, account.writeToken, 'POST', '/api/inbound/', {
      organizationId: account.organizationId,
      type: 'INCOME',
      name: `Workload receipt ${index + 1}`,
      externalOrderId: `WL-${String(index + 1).padStart(7, '0')}`,
      warehouseId: 1,
      products: [0, 1].map((position) => ({
        productId: productIds[(index * 2 + position) % productIds.length],
        quantity: 1 + ((index + position) % 9),
        price: 120.5 + ((index * 37 + position * 11) % 900),
      })),
    });
    created?.(order.id);
    for (const status of DOCUMENT_STATUSES)
      await callApi(
        serviceUrl,
        account.writeToken,
        'POST',
        `/api/inbound/${order.id}/status?status=${status}`,
      );
  };
}

/** A window table as Markdown: one row per window (units done at its end, rate), `unit` naming the units. */
export function windowTable(windows: RateWindow[], unit: string): string {
  const lines = [`| ${unit} done | ${unit} per second |`, '|---:|---:|'];
  for (const window of windows)
    lines.push(`| ${formatNumber(window.done)} | ${formatNumber(window.rate, 1)} |`);
  return lines.join('\n');
}
