/**
 * Caches and a lost change listener (P36), across two service processes on one database:
 * while this process's LISTEN connection is down (its backend terminated), nothing is served from or stored in
 * its caches, so a change or a token revocation committed by the other process in that gap is seen at once; once
 * LISTEN is back the caches start empty. A document GET that asks to revalidate (`Cache-Control: no-cache`,
 * P198) right after another process's 200 is never stale.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildTestApp, testDatabaseUrl, TEST_ADMIN_TOKEN, type TestApp } from '../helpers/test-app.ts';
import {
  spawnService,
  stopService,
  waitUntilReady,
  type ServiceProcess,
} from '../helpers/service-process.ts';
import { createAccount, type TestAccount } from '../helpers/factories.ts';
import { createOrder, expectHal, getOrder, send } from '../helpers/inbound.ts';
import type { Order } from '../../src/modules/inbound/schemas.ts';

let t: TestApp;
let other: ServiceProcess;
let account: TestAccount;
beforeAll(async () => {
  // A 3 s reconnect gap leaves time for the other process's changes to land inside it.
  t = await buildTestApp({ LISTEN_RECONNECT_MS: '3000' }, undefined, { workers: false });
  account = await createAccount(t.runtime);
  other = await spawnService({
    DATABASE_URL: testDatabaseUrl(),
    ADMIN_TOKEN: TEST_ADMIN_TOKEN,
    SEED_DEMO: 'false',
    WEBHOOK_WORKERS: '0',
  });
  await waitUntilReady(other);
});
afterAll(async () => {
  await stopService(other);
  await t.close();
});

/** Calls the other process over HTTP. */
async function callOther(method: string, path: string, token: string, body?: unknown) {
  const response = await fetch(`${other.url}${path}`, {
    method,
    headers: { authorization: token, 'content-type': 'application/json' },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  expect(response.status, await response.clone().text()).toBe(200);
  return response.text();
}

/** Terminates this process's LISTEN backend and waits until the notifier knows it. */
async function dropListener(): Promise<void> {
  const notifier = t.runtime.notifier;
  await sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = ${notifier.applicationName}`.execute(
    t.runtime.database.db,
  );
  await vi.waitFor(() => expect(notifier.listening).toBe(false), { timeout: 5_000, interval: 2 });
}

describe('a lost change listener', () => {
  it('serves no stale document and no revoked token while LISTEN is down, then starts empty', async () => {
    const token = (
      await t.app.inject({
        method: 'POST',
        url: `/admin/users/${account.userId}/tokens`,
        headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
        payload: { access: 'WRITE' },
      })
    ).json<{ id: number; token: string }>();
    const order = await createOrder(t.app, token.token, {
      organizationId: account.organizationId,
      type: 'INCOME',
    });
    await getOrder(t.app, token.token, order.id); // cached while listening

    await dropListener();
    // In the gap: a read (which must not fill the cache), then a change and a revocation in the other process.
    expect((await getOrder(t.app, token.token, order.id)).versionId).toBe(1);
    await callOther('PATCH', '/api/inbound/', token.token, { id: order.id, name: 'changed in the gap' });
    await fetch(`${other.url}/admin/tokens/${token.id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
    });
    const inGap = !t.runtime.notifier.listening;

    const answer = await send(t.app, account.writeToken, { method: 'GET', url: `/api/inbound/${order.id}` });
    expect(answer.json()).toMatchObject({ name: 'changed in the gap', versionId: 2 });
    expect(
      (await send(t.app, token.token, { method: 'GET', url: `/api/inbound/${order.id}` })).statusCode,
    ).toBe(401);

    await vi.waitFor(() => expect(t.runtime.notifier.listening).toBe(true), {
      timeout: 10_000,
      interval: 20,
    });
    expect((await getOrder(t.app, account.writeToken, order.id)).name).toBe('changed in the gap');
    expect(
      (await send(t.app, token.token, { method: 'GET', url: `/api/inbound/${order.id}` })).statusCode,
    ).toBe(401);
    // The changes above landed inside the reconnect gap, so the test exercised it.
    expect(inGap).toBe(true);
  });

  it('shows another process’s committed change at the next GET that asks to revalidate, before any notification', async () => {
    const order = await createOrder(t.app, account.writeToken, {
      organizationId: account.organizationId,
      type: 'FBS',
    });
    for (let round = 1; round <= 50; round++) {
      await getOrder(t.app, account.writeToken, order.id); // cached
      await callOther('PATCH', '/api/inbound/', account.writeToken, { id: order.id, name: `round ${round}` });
      const seen = expectHal<Order>(
        await send(t.app, account.writeToken, {
          method: 'GET',
          url: `/api/inbound/${order.id}`,
          headers: { 'cache-control': 'no-cache' },
        }),
      );
      expect({ name: seen.name, versionId: seen.versionId }).toEqual({
        name: `round ${round}`,
        versionId: round + 1,
      });
    }
  });
});
