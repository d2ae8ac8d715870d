/**
 * Keyset pagination (P172) of the five lists with `cursor`/`nextCursor`: `GET /api/inbound/find`,
 * `/api/product/find` (with and without `query`), `/api/campaign/getCampaigns`, `/api/task/findTask` and a
 * webhook's delivery log. For every supported sort order a walk by cursor runs while rows of the client (and of
 * another client) are inserted and deleted between pages: no row is repeated, every row present throughout is read
 * exactly once, the rows read keep the list's order, and another client's rows never appear. Cursors of another
 * client, list or sort, changed ones and those of the previous format are `error_validation`. Rows are seeded and
 * changed with SQL (fixtures, as in the factories): the read path is under test.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sql, type Kysely } from 'kysely';
import type { DB } from '../../src/db/schema.ts';
import { ORDER_SORT_FIELDS } from '../../src/modules/inbound/enums.ts';
import { TASK_SORT_FIELDS } from '../../src/modules/task/schemas.ts';
import { CAMPAIGN_SORT_FIELDS } from '../../src/modules/campaign/filter.ts';
import { useTestApp, type TestApp } from '../helpers/test-app.ts';
import { createAccount, type TestAccount } from '../helpers/factories.ts';
import { expectValidation, send, type ApiRequest } from '../helpers/http.ts';

let t: TestApp;
useTestApp((app) => {
  t = app;
});

const db = (): Kysely<DB> => t.runtime.database.db;

/** Picks one of `values` by a deterministic counter, so sort values repeat (ties) and include nulls. */
let counter = 0;
const pick = <T>(values: readonly T[]): T => values[counter++ % values.length] as T;
const DATES = [null, '2026-01-05T10:00:00.123456Z', '2026-01-05T10:00:00.123457Z', '2026-03-01T00:00:00Z'];
const TEXTS = [null, 'alpha', 'Beta', 'beta', 'gamma'];

/** A list under test: its URL and extra query for an account, and how rows of an account are added and removed. */
interface ListKit {
  url(account: ListAccount): string;
  query?(account: ListAccount): Record<string, string | number>;
  /** Adds `count` rows of the account. */
  insert(account: ListAccount, count: number): Promise<void>;
  /** Removes rows of the account (as the list sees it: deleted, or marked deleted). */
  remove(account: ListAccount, ids: number[]): Promise<void>;
}

/** An account with the parent rows some lists need (a webhook subscription, a catalog brand and category). */
interface ListAccount extends TestAccount {
  webhookId: number;
  brandId: number;
  categoryId: number;
}

async function listAccount(): Promise<ListAccount> {
  const account = await createAccount(t.runtime);
  const webhook = await sql<{ id: number }>`
    insert into webhook (client_id, organization_id, name, url, types, secret)
    values (${account.clientId}, ${account.organizationId}, 'log', 'https://example.com/hook',
      array['CREATE_ORDER'], 'unused') returning id`.execute(db());
  const brand = await sql<{ id: number }>`
    insert into brand (client_id, name) values (${account.clientId}, 'Brand') returning id`.execute(db());
  const category = await sql<{ id: number }>`
    insert into category (client_id, name) values (${account.clientId}, 'Category') returning id`.execute(
    db(),
  );
  return {
    ...account,
    webhookId: Number(webhook.rows[0]!.id),
    brandId: Number(brand.rows[0]!.id),
    categoryId: Number(category.rows[0]!.id),
  };
}

const inbound: ListKit = {
  url: () => '/api/inbound/find',
  async insert(account, count) {
    for (let row = 0; row < count; row += 1)
      await sql`
        insert into inbound_order (client_id, organization_id, type, status, marking_status, box_type, service,
          name, warehouse_id, service_warehouse_id, external_order_id, invoice_number, supply_id, user_id,
          close_user_id, created_user, created_date, delivery_date, close_date, created, total_quantity,
          total_price)
        values (${account.clientId}, ${account.organizationId}, ${pick(['INCOME', 'FBS'])},
          ${pick(['CREATED', 'FINISHED', 'CANCELED'])}, ${pick(['UNKNOWN', 'CARDS_SEND'])},
          ${pick([null, 'MONO', 'QR'])}, ${pick(['NONE', 'OTHER'])}, ${pick(TEXTS)}, ${pick([null, 1, 2])},
          ${pick([null, 'W1', 'W2'])}, ${pick(TEXTS)}, ${pick([null, 5, 7])}, ${pick([null, 3, 4])},
          ${pick([null, 1, 2])}, ${pick([null, 1, 2])}, ${pick(TEXTS)}, ${pick(DATES)}, ${pick(DATES)},
          ${pick(DATES)}, ${pick(DATES.slice(1))}, ${pick([0, 1, 2])}, ${pick(['0', '1.50', '1.5', '20'])})`.execute(
        db(),
      );
  },
  async remove(account, ids) {
    await sql`update inbound_order set deleted = true where client_id = ${account.clientId} and id = any(${ids}::bigint[])`.execute(
      db(),
    );
  },
};

/**
 * Product find over products of one model each. With `search` the list is `query=needle`, and the rows added match
 * it by name, by their model's article or not at all, in turn (P209).
 */
function productKit(search: boolean): ListKit {
  const nameAndArticle = (): [string, string] => {
    if (!search) return ['Product', randomUUID()];
    return pick([
      ['Needle product', randomUUID()],
      ['Product', `NEEDLE-${randomUUID()}`],
      ['Product', randomUUID()],
    ]);
  };
  return {
    url: () => '/api/product/find',
    ...(search && { query: () => ({ query: 'needle' }) }),
    async insert(account, count) {
      for (let row = 0; row < count; row += 1) {
        const [name, article] = nameAndArticle();
        await sql`
          with model as (
            insert into product_model (client_id, organization_id, article, title, brand_id, category_id)
            values (${account.clientId}, ${account.organizationId}, ${article}, 'Model', ${account.brandId},
              ${account.categoryId})
            returning id
          ), view as (
            insert into product_view (client_id, model_id) select ${account.clientId}, id from model returning id, model_id
          )
          insert into product (client_id, model_id, view_id, name, size)
          select ${account.clientId}, view.model_id, view.id, ${name}, 'M' from view`.execute(db());
      }
    },
    async remove(account, ids) {
      await sql`update product set deleted = true where client_id = ${account.clientId} and id = any(${ids}::bigint[])`.execute(
        db(),
      );
    },
  };
}

const campaigns: ListKit = {
  url: () => '/api/campaign/getCampaigns',
  query: (account) => ({ organizationId: account.organizationId }),
  async insert(account, count) {
    for (let row = 0; row < count; row += 1)
      await sql`
        insert into campaign (client_id, organization_id, service, external_id, name, type, status,
          category_name, create_date)
        values (${account.clientId}, ${account.organizationId}, 'SERVICE_01',
          ${Math.floor(Math.random() * 1e12)}, ${pick(['alpha', 'Beta', 'beta'])}, ${pick(['AUTO', 'IN_SEARCH'])},
          ${pick(['ACTIVE', 'PAUSED'])}, ${pick(TEXTS)}, ${pick(DATES)})`.execute(db());
  },
  async remove(account, ids) {
    await sql`delete from campaign where client_id = ${account.clientId} and id = any(${ids}::bigint[])`.execute(
      db(),
    );
  },
};

const tasks: ListKit = {
  url: () => '/api/task/findTask',
  async insert(account, count) {
    // Ended tasks: no worker or sweep changes them while the test reads.
    for (let row = 0; row < count; row += 1)
      await sql`
        insert into task (client_id, organization_id, user_id, type, lang, status, job_id, created_date,
          start_date, finish_date)
        values (${account.clientId}, ${account.organizationId}, ${account.userId},
          ${pick(['CAMPAIGN_STATS_FILE_TASK', 'KNOWLEDGE_REFRESH'])}, 'en', ${pick(['FINISHED', 'INTERRUPTED'])},
          ${randomUUID()}, ${pick(DATES.slice(1))}, ${pick(DATES)},
          now() - ${pick([null, '1 minute', '2 minutes'])}::interval)`.execute(db());
  },
  async remove(account, ids) {
    await sql`delete from task where client_id = ${account.clientId} and id = any(${ids}::bigint[])`.execute(
      db(),
    );
  },
};

const deliveries: ListKit = {
  url: (account) => `/api/webhook/${account.webhookId}/deliveries`,
  async insert(account, count) {
    for (let row = 0; row < count; row += 1)
      await sql`
        with event as (
          insert into webhook_event (client_id, organization_id, type, entity_id, payload)
          values (${account.clientId}, ${account.organizationId}, 'CREATE_ORDER', 1, '{}') returning id
        )
        insert into webhook_delivery (client_id, webhook_id, event_id, status, next_attempt_at)
        select ${account.clientId}, ${account.webhookId}, event.id, 'CANCELLED', null from event`.execute(
        db(),
      );
  },
  async remove(account, ids) {
    await sql`delete from webhook_delivery where client_id = ${account.clientId} and id = any(${ids}::bigint[])`.execute(
      db(),
    );
  },
};

/** Brand or category find (by id, P172); names are unique per client (P41). */
const dictionaryKit = (table: 'brand' | 'category'): ListKit => ({
  url: () => `/api/${table}/find`,
  async insert(account, count) {
    for (let row = 0; row < count; row += 1)
      await sql`insert into ${sql.table(table)} (client_id, name) values (${account.clientId}, ${randomUUID()})`.execute(
        db(),
      );
  },
  async remove(account, ids) {
    await sql`delete from ${sql.table(table)} where client_id = ${account.clientId} and id = any(${ids}::bigint[])
      and id <> all(${[account.brandId, account.categoryId]}::bigint[])`.execute(db());
  },
});

const tags: ListKit = {
  url: () => '/api/tag/find',
  async insert(account, count) {
    // Names unique ignoring case (D7.1), in mixed case: the name sort ignores case, so must its cursor.
    for (let row = 0; row < count; row += 1)
      await sql`insert into product_tag (client_id, name)
        values (${account.clientId}, ${`${pick(['alpha', 'Beta', 'GAMMA'])} ${randomUUID()}`})`.execute(db());
  },
  async remove(account, ids) {
    await sql`delete from product_tag where client_id = ${account.clientId} and id = any(${ids}::bigint[])`.execute(
      db(),
    );
  },
};

/** A receiving document's history (newest first, P172): one document per account, its rows inserted here. */
const historyOrders = new Map<number, number>();
const history: ListKit = {
  url: (account) => `/api/inbound/${historyOrders.get(account.clientId)}/history`,
  async insert(account, count) {
    if (!historyOrders.has(account.clientId)) {
      const order = await sql<{ id: number }>`
        insert into inbound_order (client_id, organization_id, type, status, name)
        values (${account.clientId}, ${account.organizationId}, 'INCOME', 'CREATED', 'History')
        returning id`.execute(db());
      historyOrders.set(account.clientId, Number(order.rows[0]!.id));
    }
    for (let row = 0; row < count; row += 1)
      await sql`
        insert into inbound_order_history (client_id, order_id, organization_id, action, order_status,
          order_type, total_quantity, total_price, version_id)
        values (${account.clientId}, ${historyOrders.get(account.clientId)}, ${account.organizationId}, 'UPDATE',
          'CREATED', 'INCOME', 0, 0, ${row + 1})`.execute(db());
  },
  async remove(account, ids) {
    await sql`delete from inbound_order_history where client_id = ${account.clientId} and id = any(${ids}::bigint[])`.execute(
      db(),
    );
  },
};

/** A sort order; `implicit` for a list with one order and no sort parameters (the delivery log: newest first). */
type Sort = { sortBy?: string; ascending: boolean; implicit?: true };
const both = (fields: readonly (string | undefined)[]): Sort[] =>
  fields.flatMap((sortBy) => [
    { sortBy, ascending: true },
    { sortBy, ascending: false },
  ]);

const LISTS: Array<{ name: string; kit: ListKit; sorts: Sort[] }> = [
  { name: 'inbound find', kit: inbound, sorts: both(ORDER_SORT_FIELDS) },
  { name: 'product find', kit: productKit(false), sorts: both([undefined]) },
  { name: 'product find with query', kit: productKit(true), sorts: both([undefined]) },
  { name: 'getCampaigns', kit: campaigns, sorts: both([undefined, ...CAMPAIGN_SORT_FIELDS]) },
  { name: 'findTask', kit: tasks, sorts: both(TASK_SORT_FIELDS) },
  { name: 'webhook delivery log', kit: deliveries, sorts: [{ ascending: false, implicit: true }] },
  { name: 'tag find', kit: tags, sorts: both(['ID', 'NAME']) },
  { name: 'inbound history', kit: history, sorts: [{ ascending: false, implicit: true }] },
  { name: 'brand find', kit: dictionaryKit('brand'), sorts: both([undefined]) },
  { name: 'category find', kit: dictionaryKit('category'), sorts: both([undefined]) },
];

interface PageBody {
  rows: Array<{ id: number }>;
  page: number;
  nextCursor?: string;
}

function get(kit: ListKit, account: ListAccount, query: ApiRequest['query']) {
  return send(t.app, account.readToken, {
    method: 'GET',
    url: kit.url(account),
    query: { ...kit.query?.(account), ...query },
  });
}

async function readPage(kit: ListKit, account: ListAccount, query: ApiRequest['query']): Promise<PageBody> {
  const response = await get(kit, account, query);
  expect(response.statusCode, response.body).toBe(200);
  return response.json<PageBody>();
}

const sortQuery = (sort: Sort) =>
  sort.implicit
    ? {}
    : { ...(sort.sortBy !== undefined && { sortBy: sort.sortBy }), ascending: sort.ascending };

describe.each(LISTS)('keyset pagination of $name', ({ kit, sorts }) => {
  it('reads every row once, in order, while rows are inserted and deleted, for every sort order', async () => {
    for (const sort of sorts) {
      const account = await listAccount();
      const other = await listAccount();
      await kit.insert(account, 14);
      await kit.insert(other, 3);
      const initial = (await readPage(kit, account, { ...sortQuery(sort), limit: 500 })).rows.map(
        (r) => r.id,
      );
      const otherIds = new Set((await readPage(kit, other, { limit: 500 })).rows.map((r) => r.id));
      const removed = new Set<number>();
      const seen: number[] = [];
      let cursor: string | undefined;
      let page = 1;
      for (;;) {
        const body = await readPage(kit, account, {
          ...sortQuery(sort),
          limit: 4,
          ...(cursor !== undefined && { cursor }),
        });
        expect(body.page).toBe(page);
        seen.push(...body.rows.map((row) => row.id));
        if (body.nextCursor === undefined) break;
        expect(body.rows).toHaveLength(4);
        cursor = body.nextCursor;
        page += 1;
        // Between pages: the last row read, or one not read yet, is deleted; rows are added to both clients.
        const victim =
          page % 2 === 0 ? seen.at(-1)! : initial.find((id) => !seen.includes(id) && !removed.has(id));
        if (victim !== undefined) {
          removed.add(victim);
          await kit.remove(account, [victim]);
        }
        await kit.insert(account, 2);
        await kit.insert(other, 1);
      }
      const label = JSON.stringify(sort);
      expect(new Set(seen).size, label).toBe(seen.length);
      for (const id of initial) if (!removed.has(id)) expect(seen, label).toContain(id);
      for (const id of seen) expect(otherIds.has(id), label).toBe(false);
      const final = (await readPage(kit, account, { ...sortQuery(sort), limit: 500 })).rows.map((r) => r.id);
      const stillThere = seen.filter((id) => final.includes(id));
      expect(stillThere, label).toEqual(final.filter((id) => stillThere.includes(id)));
    }
  });

  it('refuses a cursor of another client, another sort, a changed one, and one with another page', async () => {
    const account = await listAccount();
    const other = await listAccount();
    await kit.insert(account, 3);
    await kit.insert(other, 3);
    const sort = sorts[0]!;
    const { nextCursor } = await readPage(kit, account, { ...sortQuery(sort), limit: 1 });
    expect(nextCursor).toBeDefined();
    const cursor = nextCursor!;
    const refused = async (who: ListAccount, query: ApiRequest['query'], field = 'cursor') =>
      expectValidation(await get(kit, who, query), field);
    // Another client (its own webhook's log for the delivery log: another list and client)
    await refused(other, { ...sortQuery(sort), cursor });
    const flipped = sort.ascending ? { ...sort, ascending: false } : { ...sort, ascending: true };
    if (sorts.some((s) => s.sortBy === flipped.sortBy && s.ascending === flipped.ascending))
      await refused(account, { ...sortQuery(flipped), cursor });
    const changed = cursor.slice(0, 5) + (cursor[5] === 'A' ? 'B' : 'A') + cursor.slice(6);
    await refused(account, { ...sortQuery(sort), cursor: changed });
    await refused(account, { ...sortQuery(sort), cursor: 'not-a-cursor' });
    await refused(account, { ...sortQuery(sort), cursor, page: 2 }, 'page');
    // The same position in the previous release's format (version 1, before P222), signed with this key.
    const [version, ...rest] = JSON.parse(
      Buffer.from(cursor.split('.')[0]!, 'base64url').toString(),
    ) as unknown[];
    expect(version).toBe(2);
    const earlier = Buffer.from(JSON.stringify([1, ...rest])).toString('base64url');
    const tag = createHmac('sha256', t.runtime.secrets.deriveKey('seller-ops keyset cursor'))
      .update(earlier)
      .digest()
      .subarray(0, 16);
    const release = expectValidation(
      await get(kit, account, { ...sortQuery(sort), cursor: `${earlier}.${tag.toString('base64url')}` }),
      'cursor',
    );
    expect(release.params.reason).toMatch(/another release/);
    // The same cursor with its own sort reads on.
    expect((await readPage(kit, account, { ...sortQuery(sort), limit: 1, cursor })).page).toBe(2);
  });
});
