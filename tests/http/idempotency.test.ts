/**
 * Idempotency keys through HTTP (D3.2, P120–P124): replays of creates, PUT, PATCH and DELETE; reuse with another
 * request; a request in flight; what is stored and what is not; per-client keys; expiry and the purge; rollback and
 * a failed commit; a client that disconnects; a request that commits early and is resumed by a repeat.
 *
 * The claim lease is 1 s here (IDEMPOTENCY_LOCK_SECONDS) so a repeat of an interrupted request can take over
 * quickly; a request that holds a transaction keeps its key locked however long it runs.
 */
import { executionAsyncId } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { useTestApp, testDatabaseUrl, type TestApp } from '../helpers/test-app.ts';
import { createAccount, type TestAccount } from '../helpers/factories.ts';
import {
  expectEmpty,
  expectError,
  expectNotFound,
  expectValidation,
  send,
  MISSING_ID,
} from '../helpers/http.ts';
import { idempotencyFixture, type IdempotencyFixture } from '../fixtures/idempotency-routes.ts';
import { waitFor } from '../fixtures/webhook-kit.ts';
import { openBlockingTransaction, waitUntilBlockedBy } from '../helpers/blocking-transaction.ts';
import { idempotencyPurgeJob } from '../../src/http/idempotency-purge.ts';
import { RequestCommit } from '../../src/changes/request-commit.ts';

let t: TestApp;
let account: TestAccount;
let stranger: TestAccount;
let fixture: IdempotencyFixture;
useTestApp(
  async (app) => {
    t = app;
    account = await createAccount(app.runtime);
    stranger = await createAccount(app.runtime);
  },
  { IDEMPOTENCY_LOCK_SECONDS: '1' },
  {
    workers: false,
    groups: [
      (runtime) => {
        fixture = idempotencyFixture(runtime);
        return fixture.group;
      },
    ],
  },
);

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
interface Call {
  key?: string;
  token?: string;
  payload?: unknown;
  query?: Record<string, string | boolean>;
  headers?: Record<string, string>;
}
const call = (method: Method, url: string, options: Call = {}) =>
  send(t.app, options.token ?? account.writeToken, {
    method,
    url,
    payload: options.payload,
    query: options.query,
    headers: { ...options.headers, ...(options.key === undefined ? {} : { 'Idempotency-Key': options.key }) },
  });
const newKey = () => `key ${randomUUID()}`;
const db = () => t.runtime.database.db;

/** Asserts a replay: the first answer's status, content type and body, marked `Idempotent-Replayed: true`. */
function expectReplay(replayed: LightMyRequestResponse, first: LightMyRequestResponse): void {
  expect(replayed.statusCode, replayed.body).toBe(first.statusCode);
  expect(replayed.headers['idempotent-replayed']).toBe('true');
  expect(replayed.headers['content-type']).toBe(first.headers['content-type']);
  expect(replayed.body).toBe(first.body);
}

const tagCount = async (clientId: number, name: string) =>
  Number(
    (
      await db()
        .selectFrom('product_tag')
        .select((eb) => eb.fn.countAll().as('count'))
        .where('client_id', '=', clientId)
        .where('name', '=', name)
        .executeTakeFirstOrThrow()
    ).count,
  );
const documentCount = async (name: string) =>
  (
    await call('GET', '/api/inbound/find', {
      token: account.readToken,
      query: { query: name, count: 'true' },
    })
  ).json<{ total: number }>().total;
const keyRow = (clientId: number, key: string) =>
  db()
    .selectFrom('idempotency_key')
    .selectAll()
    .where('client_id', '=', clientId)
    .where('key', '=', key)
    .executeTakeFirst();
const newTag = async (name: string) => {
  const response = await call('POST', '/api/tag', { payload: { name } });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<{ id: number; name: string }>();
};
const newDocument = async (name: string) => {
  const response = await call('POST', '/api/inbound/', {
    payload: { organizationId: account.organizationId, type: 'INCOME', name },
  });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<{ id: number; name: string; versionId: number }>();
};

/** Locks a tag row from a transaction of the test's own. */
const lockTag = (id: number) =>
  openBlockingTransaction(
    testDatabaseUrl(),
    'select id from product_tag where client_id = $1 and id = $2 for update',
    [account.clientId, id],
  );

describe('replays', () => {
  it('answers a repeated create from the store and creates nothing more', async () => {
    const key = newKey();
    const name = `Replayed ${randomUUID()}`;
    const payload = { organizationId: account.organizationId, type: 'INCOME', name };
    const first = await call('POST', '/api/inbound/', { key, payload });
    expect(first.statusCode, first.body).toBe(200);
    expect(first.headers['content-type']).toMatch(/^application\/hal\+json/);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const replayed = await call('POST', '/api/inbound/', {
      key,
      payload,
      headers: { 'x-request-id': 'the-repeat' },
    });
    expectReplay(replayed, first);
    expect(replayed.headers['x-request-id']).toBe('the-repeat');
    expect(await documentCount(name)).toBe(1);
  });

  it('treats the same JSON written differently as the same request', async () => {
    const key = newKey();
    const name = `Spacing ${randomUUID()}`;
    const first = await call('POST', '/api/tag', { key, payload: `{"name":"${name}"}` });
    expect(first.statusCode).toBe(200);
    expectReplay(await call('POST', '/api/tag', { key, payload: `{ "name" : "${name}" }\n` }), first);
    expect(await tagCount(account.clientId, name)).toBe(1);
  });

  it('replays PATCH and PUT without changing what was changed since', async () => {
    const document = await newDocument(`Patched ${randomUUID()}`);
    const key = newKey();
    const patch = { id: document.id, name: 'first name' };
    const patched = await call('PATCH', '/api/inbound/', { key, payload: patch });
    expect(patched.json()).toMatchObject({ name: 'first name', versionId: 2 });
    await call('PATCH', '/api/inbound/', { payload: { id: document.id, name: 'later name' } });
    expectReplay(await call('PATCH', '/api/inbound/', { key, payload: patch }), patched);
    expect(
      (await call('GET', `/api/inbound/${document.id}`, { token: account.readToken })).json(),
    ).toMatchObject({ name: 'later name', versionId: 3 });

    const tag = await newTag(`Put ${randomUUID()}`);
    const putKey = newKey();
    const renamed = await call('PUT', `/api/tag/${tag.id}`, {
      key: putKey,
      payload: { name: `${tag.name} A` },
    });
    expect(renamed.statusCode).toBe(200);
    await call('PUT', `/api/tag/${tag.id}`, { payload: { name: `${tag.name} B` } });
    expectReplay(
      await call('PUT', `/api/tag/${tag.id}`, { key: putKey, payload: { name: `${tag.name} A` } }),
      renamed,
    );
    expect(await tagCount(account.clientId, `${tag.name} B`)).toBe(1);
  });

  it('replays a DELETE (an empty answer) where a repeat without the key finds nothing', async () => {
    const webhook = (
      await call('POST', '/api/webhook/', {
        payload: {
          name: `Deleted ${randomUUID()}`,
          url: 'https://93.184.216.34/hook',
          organizationId: account.organizationId,
          types: ['ORDER'],
        },
      })
    ).json<{ id: number }>();
    const key = newKey();
    const deleted = await call('DELETE', `/api/webhook/${webhook.id}`, { key });
    expectEmpty(deleted);
    const replayed = await call('DELETE', `/api/webhook/${webhook.id}`, { key });
    expectEmpty(replayed);
    expectReplay(replayed, deleted);
    expectNotFound(await call('DELETE', `/api/webhook/${webhook.id}`), webhook.id);
  });

  it('replays a webhook create with its secret, which the store holds sealed', async () => {
    const key = newKey();
    const payload = {
      name: 'Sealed answer',
      url: 'https://93.184.216.34/hook',
      organizationId: account.organizationId,
      types: ['ORDER'],
    };
    const created = await call('POST', '/api/webhook/', { key, payload });
    const { secret } = created.json<{ secret: string }>();
    expect(secret).toMatch(/^whsec_/);
    expectReplay(await call('POST', '/api/webhook/', { key, payload }), created);
    const stored = (await keyRow(account.clientId, key))?.response_body;
    expect(stored?.length).toBeGreaterThan(0);
    expect(stored?.toString('latin1')).not.toContain(secret);
    expect(stored?.toString('latin1')).not.toContain('Sealed answer');
  });

  it('keeps keys per client: two clients may use the same key', async () => {
    const key = newKey();
    const name = `Shared key ${randomUUID()}`;
    const mine = await call('POST', '/api/tag', { key, payload: { name } });
    const theirs = await call('POST', '/api/tag', { key, payload: { name }, token: stranger.writeToken });
    for (const response of [mine, theirs]) {
      expect(response.statusCode).toBe(200);
      expect(response.headers['idempotent-replayed']).toBeUndefined();
    }
    expect(mine.json()).toMatchObject({ clientId: account.clientId });
    expect(theirs.json()).toMatchObject({ clientId: stranger.clientId });
  });

  it('ignores the header on GET', async () => {
    const response = await call('GET', '/api/tag', {
      token: account.readToken,
      headers: { 'Idempotency-Key': '' },
    });
    expect(response.statusCode).toBe(200);
  });
});

describe('reuse of a key with another request', () => {
  it('answers 422 for another body, query or path, and changes nothing', async () => {
    const key = newKey();
    const name = `Reused ${randomUUID()}`;
    expect((await call('POST', '/api/tag', { key, payload: { name } })).statusCode).toBe(200);
    expectError(
      await call('POST', '/api/tag', { key, payload: { name: `${name} 2` } }),
      422,
      'error_idempotency_key_reuse',
    );
    expect(await tagCount(account.clientId, `${name} 2`)).toBe(0);

    const document = await newDocument(`Reused query ${randomUUID()}`);
    const deleteKey = newKey();
    expectEmpty(await call('DELETE', `/api/inbound/${document.id}`, { key: deleteKey }));
    expectError(
      await call('DELETE', `/api/inbound/${document.id}`, { key: deleteKey, query: { deleted: false } }),
      422,
      'error_idempotency_key_reuse',
    );
    expect(
      (await call('GET', `/api/inbound/${document.id}`, { token: account.readToken })).json(),
    ).toMatchObject({ deleted: true });

    const [first, second] = [await newTag(`Path A ${randomUUID()}`), await newTag(`Path B ${randomUUID()}`)];
    const pathKey = newKey();
    expect(
      (await call('PUT', `/api/tag/${first.id}`, { key: pathKey, payload: { name: 'renamed' } })).statusCode,
    ).toBe(200);
    expectError(
      await call('PUT', `/api/tag/${second.id}`, { key: pathKey, payload: { name: 'renamed' } }),
      422,
      'error_idempotency_key_reuse',
    );
    expect(await tagCount(account.clientId, second.name)).toBe(1);
  });
});

describe('a request in flight', () => {
  it('answers 409 to a repeat while the first runs, then replays its answer', async () => {
    const tag = await newTag(`In flight ${randomUUID()}`);
    const key = newKey();
    const payload = { name: `${tag.name} renamed` };
    const lock = await lockTag(tag.id);
    let first: Promise<LightMyRequestResponse>;
    try {
      first = call('PUT', `/api/tag/${tag.id}`, { key, payload });
      await waitUntilBlockedBy(db(), lock.pid);
      expectError(
        await call('PUT', `/api/tag/${tag.id}`, { key, payload }),
        409,
        'error_idempotency_in_progress',
      );
      expectError(
        await call('PUT', `/api/tag/${tag.id}`, { key, payload: { name: 'other' } }),
        422,
        'error_idempotency_key_reuse',
      );
      // The lease (1 s) passes; the request still holds its key locked in its transaction.
      await sleep(1_100);
      expectError(
        await call('PUT', `/api/tag/${tag.id}`, { key, payload }),
        409,
        'error_idempotency_in_progress',
      );
    } finally {
      await lock.release();
    }
    const answered = await first;
    expect(answered.json()).toMatchObject(payload);
    expectReplay(await call('PUT', `/api/tag/${tag.id}`, { key, payload }), answered);
  });

  it('stores the answer of a request whose client disconnected; the retry gets it', async () => {
    const tag = await newTag(`Disconnect ${randomUUID()}`);
    const key = newKey();
    const payload = { name: `${tag.name} renamed` };
    const url = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const lock = await lockTag(tag.id);
    try {
      const aborted = new AbortController();
      const request = fetch(`${url}/api/tag/${tag.id}`, {
        method: 'PUT',
        headers: {
          authorization: account.writeToken,
          'content-type': 'application/json',
          'Idempotency-Key': key,
        },
        body: JSON.stringify(payload),
        signal: aborted.signal,
      });
      await waitUntilBlockedBy(db(), lock.pid);
      aborted.abort();
      await expect(request).rejects.toThrow();
    } finally {
      await lock.release();
    }
    await waitFor(
      'the answer is stored',
      async () => (await keyRow(account.clientId, key))?.response_status === 200,
    );
    const retried = await call('PUT', `/api/tag/${tag.id}`, { key, payload });
    expect(retried.headers['idempotent-replayed']).toBe('true');
    expect(retried.json()).toMatchObject({ id: tag.id, ...payload });
    expect(await tagCount(account.clientId, payload.name)).toBe(1);
  });
});

describe('what is stored', () => {
  it('stores no validation error: a corrected retry with the same key runs', async () => {
    const key = newKey();
    const name = `Corrected ${randomUUID()}`;
    // schema validation, before the key is even claimed
    expectValidation(await call('POST', '/api/tag', { key, payload: { name, nmae: name } }), 'nmae');
    // the service's own input check, before its change
    expectError(
      await call('POST', '/api/tag', { key, payload: { name: '  ' } }),
      400,
      'error_tag_name_required',
    );
    expect(await keyRow(account.clientId, key)).toBeUndefined();
    expect((await call('POST', '/api/tag', { key, payload: { name } })).statusCode).toBe(200);

    // refused by PostgreSQL inside the change, after the document row was written (P34): rolled back, not stored
    const documentKey = newKey();
    const documentName = `Overflow ${randomUUID()}`;
    const body = { organizationId: account.organizationId, type: 'INCOME', name: documentName };
    const productId = (
      await call('POST', '/api/model', {
        payload: await modelBody(),
      })
    ).json<{ views: Array<{ sizes: Array<{ id: number }> }> }>().views[0]?.sizes[0]?.id;
    const overflowing = {
      ...body,
      products: [{ productId, quantity: 2_000_000_000, price: 99_999_999_999 }],
    };
    expectValidation(await call('POST', '/api/inbound/', { key: documentKey, payload: overflowing }), 'body');
    expect(await documentCount(documentName)).toBe(0);
    const created = await call('POST', '/api/inbound/', { key: documentKey, payload: body });
    expect(created.statusCode, created.body).toBe(200);
    expect(created.headers['idempotent-replayed']).toBeUndefined();
    expect(await documentCount(documentName)).toBe(1);
  });

  it('stores no authentication or role error', async () => {
    const key = newKey();
    const name = `Authorized ${randomUUID()}`;
    expectError(
      await call('POST', '/api/tag', { key, payload: { name }, token: 'so_unknown' }),
      401,
      'auth_required',
    );
    expectError(
      await call('POST', '/api/tag', { key, payload: { name }, token: account.readToken }),
      400,
      'error_access_denied',
    );
    const created = await call('POST', '/api/tag', { key, payload: { name } });
    expect(created.statusCode).toBe(200);
    expect(created.headers['idempotent-replayed']).toBeUndefined();
  });

  it('stores a business error of a request that ran (404, 409)', async () => {
    const key = newKey();
    const missing = await call('PUT', `/api/tag/${MISSING_ID}`, { key, payload: { name: 'x' } });
    expectNotFound(missing, MISSING_ID);
    expectReplay(await call('PUT', `/api/tag/${MISSING_ID}`, { key, payload: { name: 'x' } }), missing);

    const document = await newDocument(`Conflict ${randomUUID()}`);
    const stale = { id: document.id, versionId: document.versionId + 5, name: 'stale' };
    const conflictKey = newKey();
    const conflict = await call('PATCH', '/api/inbound/', { key: conflictKey, payload: stale });
    expectError(conflict, 409, 'error_version_conflict');
    expectReplay(await call('PATCH', '/api/inbound/', { key: conflictKey, payload: stale }), conflict);
  });

  it('refuses a malformed key', async () => {
    const payload = { name: `Malformed ${randomUUID()}` };
    for (const key of ['', 'k'.repeat(256), 'tab\there'])
      expectValidation(await call('POST', '/api/tag', { key, payload }), 'Idempotency-Key');
    expect(await tagCount(account.clientId, payload.name)).toBe(0);
    const longest = await call('POST', '/api/tag', { key: `~ ${'k'.repeat(253)}`, payload });
    expect(longest.statusCode).toBe(200);
  });
});

describe('rollback', () => {
  it('a request that fails after its change stores nothing and changes nothing', async () => {
    const key = newKey();
    const name = `Failed ${randomUUID()}`;
    expectError(
      await call('POST', '/api/idempotency-fixture/fail-after-change', { key, payload: { name } }),
      500,
      'error_unknown',
    );
    expect(await tagCount(account.clientId, name)).toBe(0);
    expect(await keyRow(account.clientId, key)).toBeUndefined();
  });

  it('a failed commit answers 500, and nothing is stored or changed', async () => {
    const key = newKey();
    const name = `Commit fails ${randomUUID()}`;
    expectError(
      await call('POST', '/api/idempotency-fixture/commit-fails', { key, payload: { name } }),
      500,
      'error_unknown',
    );
    expect(await tagCount(account.clientId, name)).toBe(0);
    expect(await keyRow(account.clientId, key)).toBeUndefined();
    // The key is free: the same request runs again (and fails again the same way).
    expectError(
      await call('POST', '/api/idempotency-fixture/commit-fails', { key, payload: { name } }),
      500,
      'error_unknown',
    );
  });

  it('a second change that fails rolls back only itself, as without a key', async () => {
    for (const key of [newKey(), undefined]) {
      const name = `Two changes ${randomUUID()}`;
      const answer = await call('POST', '/api/idempotency-fixture/second-change-fails', {
        key,
        payload: { name },
      });
      expectNotFound(answer, 0);
      expect(await tagCount(account.clientId, name)).toBe(1);
      if (key === undefined) continue;
      expectReplay(
        await call('POST', '/api/idempotency-fixture/second-change-fails', { key, payload: { name } }),
        answer,
      );
      expect(await tagCount(account.clientId, name)).toBe(1);
    }
  });
});

describe('an early commit (commitNow)', () => {
  it('lets a repeat of an interrupted request resume from its checkpoint; the stale attempt is refused', async () => {
    const key = newKey();
    const name = `Two steps ${randomUUID()}`;
    const release = fixture.hold(name);
    const path = '/api/idempotency-fixture/two-step';
    const interrupted = call('POST', path, { key, payload: { name } });
    // The first step is committed before the answer; the request then stalls (as if its process had died).
    await waitFor('the first step is committed', async () => (await tagCount(account.clientId, name)) === 1);
    expectError(await call('POST', path, { key, payload: { name } }), 409, 'error_idempotency_in_progress');
    await sleep(1_100);
    const resumed = await call('POST', path, { key, payload: { name } });
    expect(resumed.statusCode, resumed.body).toBe(200);
    expect(resumed.json()).toMatchObject({ name: `${name} done` });
    release();
    expectError(await interrupted, 409, 'error_idempotency_in_progress');
    expect(await tagCount(account.clientId, `${name} done`)).toBe(1);
    expectReplay(await call('POST', path, { key, payload: { name } }), resumed);
  });

  it('stores the answer of a request that committed early, whatever it is', async () => {
    const key = newKey();
    const name = `Early ${randomUUID()}`;
    const answered = await call('POST', '/api/idempotency-fixture/two-step', { key, payload: { name } });
    expect(answered.statusCode).toBe(200);
    const row = await keyRow(account.clientId, key);
    expect(row?.checkpoint).toEqual({ tagId: answered.json<{ id: number }>().id });
    expectReplay(
      await call('POST', '/api/idempotency-fixture/two-step', { key, payload: { name } }),
      answered,
    );
  });
});

describe('expiry and purge', () => {
  it('keeps a key 24 h, then runs its request again; the purge job deletes expired keys', async () => {
    const key = newKey();
    const name = `Expiring ${randomUUID()}`;
    const payload = { organizationId: account.organizationId, type: 'INCOME', name };
    const first = await call('POST', '/api/inbound/', { key, payload });
    const row = await keyRow(account.clientId, key);
    expect((Number(row?.expires_at) - Number(row?.created_at)) / 1000).toBe(24 * 3600);
    const expire = (expired: string) =>
      db()
        .updateTable('idempotency_key')
        .set({ expires_at: sql<Date>`now() - interval '1 second'` })
        .where('client_id', '=', account.clientId)
        .where('key', '=', expired)
        .execute();
    await expire(key);
    const again = await call('POST', '/api/inbound/', { key, payload });
    expect(again.statusCode).toBe(200);
    expect(again.headers['idempotent-replayed']).toBeUndefined();
    expect(again.json<{ id: number }>().id).not.toBe(first.json<{ id: number }>().id);
    expect(await documentCount(name)).toBe(2);

    const kept = newKey();
    await call('POST', '/api/tag', { key: kept, payload: { name: `${name} kept` } });
    await expire(key);
    await idempotencyPurgeJob(db()).perform({}, { id: 'test', retryCount: 0 });
    expect(await keyRow(account.clientId, key)).toBeUndefined();
    expect(await keyRow(account.clientId, kept)).toBeDefined();
  });

  it('schedules the purge with pg-boss cron', async () => {
    const schedules = await t.runtime.jobs.boss.getSchedules();
    expect(schedules).toContainEqual(
      expect.objectContaining({ name: 'idempotency-purge', cron: '*/10 * * * *', timezone: 'UTC' }),
    );
  });
});

describe('the storage that finds a request commit (P217)', () => {
  const guard = { begin: async () => undefined, beforeEarlyCommit: async () => undefined };
  /** Node gives a promise's continuation an async id only while async hooks are on. */
  const asyncHooksOn = async () => (await Promise.resolve().then(() => executionAsyncId())) !== 0;

  it('is off, and async hooks with it, once a keyed request is answered', async () => {
    expect(await asyncHooksOn()).toBe(false);
    const payload = { organizationId: account.organizationId, type: 'INCOME', name: `Hooks ${randomUUID()}` };
    const answer = await call('POST', '/api/inbound/', { key: newKey(), payload });
    expect(answer.statusCode, answer.body).toBe(200);
    expect(await asyncHooksOn()).toBe(false);
  });

  it('keeps each open request commit found by its own continuations while another closes', async () => {
    const first = new RequestCommit(guard);
    const second = new RequestCommit(guard);
    const seen: Array<RequestCommit | undefined> = [];
    let closeFirst!: () => void;
    const firstClosed = new Promise<void>((resolve) => (closeFirst = resolve));
    const firstRun = first.enter(async () => {
      await sleep(1);
      seen.push(RequestCommit.current());
      await first.rollback();
      closeFirst();
    });
    const secondRun = second.enter(async () => {
      await firstClosed;
      await sleep(1);
      seen.push(RequestCommit.current());
      expect(await asyncHooksOn()).toBe(true);
      await second.rollback();
      seen.push(RequestCommit.current());
    });
    await Promise.all([firstRun, secondRun]);
    expect(seen).toEqual([first, second, undefined]);
    expect(await asyncHooksOn()).toBe(false);
  });
});

/** A one-size model card of the account's catalog (its product can be a document's position). */
async function modelBody() {
  const brand = (await call('POST', '/api/brand', { payload: { name: `Brand ${randomUUID()}` } })).json<{
    id: number;
  }>();
  const category = (
    await call('POST', '/api/category', { payload: { name: `Category ${randomUUID()}` } })
  ).json<{
    id: number;
  }>();
  return {
    article: `IDEM-${randomUUID()}`,
    title: 'Idempotency test product',
    brandId: brand.id,
    categoryId: category.id,
    organizationId: account.organizationId,
    views: [{ sizes: [{ name: 'One size', size: 'OS' }] }],
  };
}
