/**
 * `SEARCH_CONCURRENCY` (P211): with 1, the process runs one text search at a time; the others wait their turn,
 * then answer, while reads without a text go at once. The running search is held by a lock on `product` taken in
 * another connection; the app's connections carry their own `application_name`, so statements of other test files
 * are not counted.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildTestApp, testDatabaseUrl, type TestApp } from '../helpers/test-app.ts';
import { createAccount, type TestAccount } from '../helpers/factories.ts';
import { send } from '../helpers/http.ts';
import { lockWaits, namedDatabaseUrl, openBlockingTransaction } from '../helpers/blocking-transaction.ts';
import { waitFor } from '../fixtures/webhook-kit.ts';

const APPLICATION_NAME = 'search-turns-test';

let t: TestApp;
let account: TestAccount;

beforeAll(async () => {
  t = await buildTestApp({ SEARCH_CONCURRENCY: '1' }, namedDatabaseUrl(testDatabaseUrl(), APPLICATION_NAME), {
    workers: false,
  });
  account = await createAccount(t.runtime);
  for (const name of ['Summer sale', 'Winter sale']) {
    const created = await send(t.app, account.writeToken, {
      method: 'POST',
      url: '/api/tag',
      payload: { name },
    });
    expect(created.statusCode, created.body).toBe(200);
  }
});

afterAll(async () => {
  await t?.close();
});

/** Statements of the app's connections waiting for a lock. */
const waitingStatements = () => lockWaits(t.runtime.database.db, APPLICATION_NAME);

const get = (url: string, query: Record<string, string>) =>
  send(t.app, account.readToken, { method: 'GET', url, query });

it('runs one text search at a time with SEARCH_CONCURRENCY=1; reads without a text go at once', async () => {
  const blocker = await openBlockingTransaction(
    testDatabaseUrl(),
    'lock table product in access exclusive mode',
    [],
  );
  const held = get('/api/product/find', { query: 'shirt' });
  let waitingSearchAnswered = false;
  let waiting: ReturnType<typeof get> | undefined;
  try {
    await waitFor('the product search waiting for the lock', async () => (await waitingStatements()) > 0);
    waiting = get('/api/tag/find', { query: 'sale' }).then((response) => {
      waitingSearchAnswered = true;
      return response;
    });
    const plain = await get('/api/tag/find', {});
    expect(plain.statusCode, plain.body).toBe(200);
    expect(plain.json<{ rows: unknown[] }>().rows).toHaveLength(2);
    // the tag search reads no locked table: without its turn it would have answered by now
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(waitingSearchAnswered).toBe(false);
    expect(await waitingStatements()).toBe(1);
  } finally {
    await blocker.release();
  }
  const [product, tag] = await Promise.all([held, waiting]);
  if (tag === undefined) throw new Error('the tag search was not sent');
  expect(product.statusCode, product.body).toBe(200);
  expect(product.json<{ rows: unknown[] }>().rows).toEqual([]);
  expect(tag.statusCode, tag.body).toBe(200);
  expect(tag.json<{ rows: Array<{ name: string }> }>().rows.map((row) => row.name)).toEqual([
    'Winter sale',
    'Summer sale',
  ]);
});
