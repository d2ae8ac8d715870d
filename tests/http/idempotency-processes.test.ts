/**
 * Idempotency keys across two real service processes sharing one database (D3.2, P121): a replay through the
 * other process; a request in flight in one process answered 409 by the other; the process dying between its
 * claim and its commit (SIGKILL while its create waits for a lock): nothing of it committed, and once its claim's
 * lease has passed a repeat through the other process runs the create, exactly once.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  spawnService,
  stopService,
  waitUntilReady,
  type ServiceProcess,
} from '../helpers/service-process.ts';
import { buildTestApp, type TestApp } from '../helpers/test-app.ts';
import { createAccount, type TestAccount } from '../helpers/factories.ts';
import { createOwnDatabase, waitFor, type OwnDatabase } from '../fixtures/webhook-kit.ts';
import { openBlockingTransaction, waitUntilBlockedBy } from '../helpers/blocking-transaction.ts';

let database: OwnDatabase;
let t: TestApp;
let account: TestAccount;
let first: ServiceProcess;
let second: ServiceProcess;

// A database of its own: these processes run background workers with default settings (see webhook-kit.ts).
beforeAll(async () => {
  database = await createOwnDatabase('idempotency_processes');
  t = await buildTestApp({}, database.url, { workers: false });
  account = await createAccount(t.runtime);
  const env = { DATABASE_URL: database.url, SEED_DEMO: 'false', IDEMPOTENCY_LOCK_SECONDS: '1' };
  [first, second] = await Promise.all([spawnService(env), spawnService(env)]);
  await Promise.all([waitUntilReady(first), waitUntilReady(second)]);
});
afterAll(async () => {
  for (const service of [first, second]) if (service) await stopService(service);
  await t?.close();
  await database?.drop();
});

/** Sends a JSON request with the account's WRITE token and an idempotency key to a service process. */
async function post(service: ServiceProcess, path: string, key: string, body: unknown) {
  const response = await fetch(`${service.url}${path}`, {
    method: 'POST',
    headers: {
      authorization: account.writeToken,
      'content-type': 'application/json',
      'Idempotency-Key': key,
    },
    body: JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

const tagCount = async (name: string) =>
  Number(
    (
      await t.runtime.database.db
        .selectFrom('product_tag')
        .select((eb) => eb.fn.countAll().as('count'))
        .where('client_id', '=', account.clientId)
        .where('name', '=', name)
        .executeTakeFirstOrThrow()
    ).count,
  );

describe('idempotency keys across service processes', () => {
  it('replays through one process the answer stored by the other', async () => {
    const key = `processes ${randomUUID()}`;
    const name = `Across processes ${randomUUID()}`;
    const created = await post(first, '/api/tag', key, { name });
    expect(created.status, created.text).toBe(200);
    const replayed = await post(second, '/api/tag', key, { name });
    expect(replayed.status).toBe(200);
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(replayed.text).toBe(created.text);
    expect(await tagCount(name)).toBe(1);
  });

  it('answers 409 in one process while the other runs the request; after a SIGKILL a repeat runs it once', async () => {
    const key = `crash ${randomUUID()}`;
    const name = `Crash ${randomUUID()}`;
    // An uncommitted tag of the same name holds the unique key: the create of `first` waits for it.
    const blocker = await openBlockingTransaction(
      database.url,
      'insert into product_tag (client_id, name) values ($1, $2)',
      [account.clientId, name],
    );
    let lost: Promise<unknown> | undefined;
    try {
      lost = post(first, '/api/tag', key, { name }).catch((error: unknown) => error);
      await waitUntilBlockedBy(t.runtime.database.db, blocker.pid);
      const meanwhile = await post(second, '/api/tag', key, { name });
      expect(meanwhile.status, meanwhile.text).toBe(409);
      expect(JSON.parse(meanwhile.text)).toMatchObject({ error: 'error_idempotency_in_progress' });
      first.child.kill('SIGKILL');
      await first.exited;
    } finally {
      await blocker.release();
    }
    expect(await lost).toBeInstanceOf(Error);
    // The dead process's transaction never commits; its claim is free once its backend is gone and the lease passed.
    let repeated: Awaited<ReturnType<typeof post>> | undefined;
    await waitFor('the repeat runs', async () => {
      repeated = await post(second, '/api/tag', key, { name });
      if (repeated.status === 409) return false;
      expect(repeated.status, repeated.text).toBe(200);
      return true;
    });
    expect(repeated?.headers.get('idempotent-replayed')).toBeNull();
    expect(await tagCount(name)).toBe(1);
    const replayed = await post(second, '/api/tag', key, { name });
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(replayed.text).toBe(repeated?.text);
  });
});
