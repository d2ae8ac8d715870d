/**
 * The `query` filters' statements can use the trigram indexes (P173): the statements the repositories run for
 * product find, inbound find (and its position filters, P207), getCampaigns, tags and keyword groups are captured
 * and explained (sequential scans off: a test database is small enough to scan whole), and each plan reads the
 * filtered text through its trigram index, not through a filter over the client's rows or a join. On Citus
 * (docs/scale-out.md) the coordinator's plan of a statement routed to one shard holds the plan its worker runs on
 * that shard, whose indexes carry the shard's number (`product_name_trgm_idx_102040`): the test reads that task's
 * plan and matches the names with the suffix, so it asserts the same on both. A plan, not a timing: the figures
 * are in docs/performance.md.
 */
import { describe, expect, it } from 'vitest';
import { Kysely, PostgresDialect, sql, type CompiledQuery } from 'kysely';
import type { DB } from '../../src/db/schema.ts';
import { productFindRepository } from '../../src/modules/catalog/repository.ts';
import { trigramLookup } from '../../src/modules/catalog/search-words.repository.ts';
import { findRepository } from '../../src/modules/inbound/find.repository.ts';
import { resolveFindCriteria } from '../../src/modules/inbound/find-filter.ts';
import type { OrderFindQuery } from '../../src/modules/inbound/schemas.ts';
import { statisticsRepository } from '../../src/modules/campaign/statistics.repository.ts';
import { resolveCampaignFilter } from '../../src/modules/campaign/filter.ts';
import { tagRepository } from '../../src/modules/tag/repository.ts';
import { keywordRepository } from '../../src/modules/keyword/repository.ts';
import { useTestApp, type TestApp } from '../helpers/test-app.ts';
import { nestedPlanNotices } from '../helpers/nested-plans.ts';
import { createAccount, type TestAccount } from '../helpers/factories.ts';

let t: TestApp;
let account: TestAccount;
const ROWS = 2_000;

useTestApp(async (app) => {
  t = app;
  account = await createAccount(t.runtime);
  const db = t.runtime.database.db;
  const { clientId: client, organizationId: organization } = account;
  await sql`
    with brand as (insert into brand (client_id, name) values (${client}, 'Brand') returning id),
    category as (insert into category (client_id, name) values (${client}, 'Category') returning id),
    model as (
      insert into product_model (client_id, organization_id, article, title, brand_id, category_id)
      select ${client}, ${organization}, 'ART-' || md5(n::text), 'Model', brand.id, category.id
      from generate_series(1, ${ROWS}) as n, brand, category
      returning id
    ), view as (insert into product_view (client_id, model_id) select ${client}, id from model returning id, model_id)
    insert into product (client_id, model_id, view_id, name, size)
    select ${client}, model_id, id, 'Product ' || md5(id::text), 'M' from view`.execute(db);
  await sql`
    with document as (
      insert into inbound_order (client_id, organization_id, type, name, external_order_id, tracking_number)
      select ${client}, ${organization}, 'INCOME', 'Order ' || md5(n::text), md5(n::text || 'e'),
        md5(n::text || 't')
      from generate_series(1, ${ROWS}) as n
      returning id
    )
    insert into inbound_order_product (client_id, order_id, product_id, article, barcode, product_name, quantity)
    select ${client}, id, id, 'POS-' || md5(id::text), '460' || lpad(id::text, 10, '0'),
      'Position ' || md5(id::text), 1
    from document`.execute(db);
  await sql`
    insert into campaign (client_id, organization_id, service, external_id, name, type, status)
    select ${client}, ${organization}, 'SERVICE_01', 9000000000 + n, 'Campaign ' || md5(n::text), 'AUTO', 'ACTIVE'
    from generate_series(1, ${ROWS}) as n`.execute(db);
  await sql`
    insert into product_tag (client_id, name) select ${client}, 'Tag ' || md5(n::text)
    from generate_series(1, ${ROWS}) as n`.execute(db);
  await sql`
    with grouped as (
      insert into keyword_group (client_id, name) select ${client}, 'Group ' || md5(n::text)
      from generate_series(1, ${ROWS}) as n returning id
    )
    insert into keyword (client_id, group_id, name) select ${client}, id, 'word ' || md5(id::text) from grouped`.execute(
    db,
  );
  // As autovacuum would: statistics, and the positions' trigram entries merged from the pending list into their
  // indexes (migration 0027 keeps `fastupdate` on). Citus runs it on every shard, a multi-shard command its test
  // guard (`citus.multi_task_query_log_level`, a placeholder elsewhere) would refuse, so the guard is off for it.
  const connection = await t.runtime.database.pool.connect();
  try {
    await connection.query(`set citus.multi_task_query_log_level = 'off'`);
    await connection.query(`vacuum analyze product, product_model, product_view, inbound_order,
      inbound_order_product, campaign, product_tag, keyword_group, keyword`);
  } finally {
    await connection.query('reset citus.multi_task_query_log_level');
    connection.release();
  }
});

/**
 * Runs `read` on a Kysely that records its statements, and answers the plans of those statements: the whole plan on
 * one server, the plan of the one task a statement is routed to on Citus.
 * @param analyzed run each statement, with sequential scans allowed, and show the rows each step found
 *   (`EXPLAIN ANALYZE`): the plan as it runs
 */
async function plansOf(read: (db: Kysely<DB>) => Promise<unknown>, analyzed = false): Promise<string[]> {
  const statements: CompiledQuery[] = [];
  const db = new Kysely<DB>({
    dialect: new PostgresDialect({ pool: t.runtime.database.pool }),
    log: (event) => void statements.push(event.query),
  });
  await read(db);
  const plans: string[] = [];
  const client = await t.runtime.database.pool.connect();
  try {
    // A table this small is cheaper to scan whole; without that choice the plan shows which index it can use. On
    // Citus the worker plans the routed statement, so the setting goes to the worker too (a placeholder elsewhere).
    await client.query('begin');
    await client.query(`set local citus.propagate_set_commands = 'local'`);
    if (!analyzed) await client.query('set local enable_seqscan = off');
    for (const statement of statements) {
      if (CALLS_SEARCH_FUNCTION.test(statement.sql)) {
        // The plans of the statements the function runs (`EXPLAIN` of a call shows the call only).
        plans.push((await nestedPlanNotices(client, statement, { format: 'text', analyzed })).join('\n'));
        continue;
      }
      const result = await client.query<{ 'QUERY PLAN': string }>(
        `explain ${analyzed ? '(analyze, timing off) ' : ''}${statement.sql}`,
        statement.parameters as unknown[],
      );
      plans.push(routedPlan(result.rows.map((row) => row['QUERY PLAN']).join('\n')));
    }
  } finally {
    await client.query('rollback');
    client.release();
  }
  return plans;
}

/** A statement whose search runs inside a PL/pgSQL function (`product_search_page`, P214). */
const CALLS_SEARCH_FUNCTION = /\bproduct_search_page\(/;

/**
 * The plan a statement runs on its data: on Citus the plan of its one task (a router plan: `Task Count: 1`, the
 * worker's plan below `->  Task`), elsewhere the plan itself.
 */
function routedPlan(plan: string): string {
  if (!plan.startsWith('Custom Scan (Citus')) return plan;
  expect(plan).toMatch(/Task Count: 1\b/);
  const task = plan.indexOf('->  Task');
  expect(task, plan).toBeGreaterThan(0);
  return plan.slice(task);
}

/** Whether `plan` reads index `name`, or on Citus a shard's copy of it (`name_<shard id>`). */
function usesIndex(plan: string, name: string): boolean {
  return new RegExp(`\\b${name}(_\\d+)?\\b`).test(plan);
}

/** Expects `plan` to read each of `indexes`. */
function expectIndexes(plan: string | undefined, ...indexes: string[]): void {
  for (const index of indexes) expect(usesIndex(plan ?? '', index), `${index} in:\n${plan}`).toBe(true);
}

/**
 * The searched text, in none of the stored values (the data is hex and words): a text that one stored value holds
 * would be judged by whether that value fell into the column's statistics sample (its histogram bounds), a 1 %
 * share when it did, at which a 2,000-row client is cheaper to filter whole; the plans would then depend on the
 * sample. A text matched by no sample value gets the planner's least share, so the choice is its plain one.
 */
const NEEDLE = 'qzxwj';

/** The first page of the test client's product search for `query`, on `db`. */
const searchPage = async (db: Kysely<DB>, query: string) =>
  productFindRepository.page(
    db,
    { clientId: account.clientId, query },
    true,
    100,
    { offset: 0 },
    await t.runtime.database.distributed(),
  );

/** The plan of the statement inbound find runs for the filters `query` (a page of the test client's documents). */
async function inboundFindPlan(query: OrderFindQuery): Promise<string | undefined> {
  const [plan] = await plansOf((db) => findRepository.page(db, account.clientId, resolveFindCriteria(query)));
  return plan;
}

describe('trigram indexes serve the query filters', () => {
  it('product find: name and model article', async () => {
    const plan = (await plansOf((db) => searchPage(db, NEEDLE))).at(-1);
    // The products of the models found by article through their model's index, not a scan of every product.
    expectIndexes(
      plan,
      'product_name_trgm_idx',
      'product_model_article_trgm_idx',
      'product_model_position_idx',
    );
  });

  it('product find: a text of several words is looked up by its rarest word, filtered by the whole text', async () => {
    // Every name holds "product": its trigrams would make the scan read the whole index (P195).
    const plans = await plansOf((db) => searchPage(db, `product ${NEEDLE}`));
    const plan = plans.at(-1);
    if (plan?.startsWith('->  Task')) {
      // Citus: the coordinator holds no statistics of a distributed table, so no word is chosen and the full
      // pattern is the condition (P195); the worker plans it on its shard's statistics (docs/scale-out.md).
      expect(plan).toContain(`name ~~* '%product ${NEEDLE}%'::text`);
      return;
    }
    // `product_search_page` (P214): one plan for every text; the word looked up ($4) is chosen by `trigramLookup`.
    expect(plan).toContain('Index Cond: (name ~~* $4)');
    expect(plan).toContain('texticlike(p.name, $3)');
    expect(await trigramLookup(t.runtime.database.db, 'product.name', `product ${NEEDLE}`, 101)).toBe(
      `%${NEEDLE}%`,
    );
  });

  it('product find: a text every product holds reads a page of rows, not every match (P209)', async () => {
    const plans = await plansOf((db) => searchPage(db, 'product'), true);
    const plan = plans.at(-1) ?? '';
    if (plan.startsWith('->  Task')) {
      // Citus: the worker explains the routed statement without its values (`$n` in the plan), so it shows a plan
      // for an unknown pattern, not the one the run gets; each way of matching is cut at the page's end all the same.
      expect(plan.match(/->\s+Limit\b/g)?.length, plan).toBeGreaterThanOrEqual(4);
      return;
    }
    // The client's products walked in id order (by either index of `client_id, id`), filtered by the text (P214).
    expect(plan).toMatch(
      /Index Scan using product_(pkey|client_id_idx) on product p\b.*\n\s+Index Cond: \(\(client_id = \$1\) AND \(id > \$7\)\)\n\s+Filter: .*texticlike\(name, \$3\)/,
    );
    // Rows each step found (PostgreSQL 18 writes them with two decimals): at most the page's 101 a step.
    const found = [...plan.matchAll(/actual rows=(\d+(?:\.\d+)?)/g)].map((match) => Number(match[1]));
    expect(found.length, plan).toBeGreaterThan(0);
    expect(Math.max(...found), plan).toBeLessThanOrEqual(101);
  });

  it("product find: each way of matching reads the index or walks the client's rows, judged from the sample (P214)", async () => {
    // Citus: the coordinator holds no statistics of a distributed table, and its searches keep the union (P214).
    if (await t.runtime.database.distributed()) return;
    const lookup = (text: string, reach: number) =>
      trigramLookup(t.runtime.database.db, 'product.name', text, reach);
    // Matched by no sampled name: the index, by the rarest word.
    expect(await lookup(`product ${NEEDLE}`, 101)).toBe(`%${NEEDLE}%`);
    // In every name: a page's 101 rows are the client's first 101 ...
    expect(await lookup('product', 101)).toBeUndefined();
    // ... unless the page lies deeper than the whole index is long.
    expect(await lookup('product', 100_000)).toBe('%product%');
    // No word pg_trgm can index: only a walk can find it.
    expect(await lookup('x1', 101)).toBeUndefined();
  });

  it('inbound find: name, external order id and tracking number', async () => {
    expectIndexes(
      await inboundFindPlan({ query: NEEDLE }),
      'inbound_order_name_trgm_idx',
      'inbound_order_external_trgm_idx',
      'inbound_order_tracking_trgm_idx',
    );
  });

  it('inbound find: new documents wait in a 64 kB pending list, found and searched through the index (P215)', async () => {
    const db = t.runtime.database.db;
    const { rows: options } = await sql<{ name: string; options: string[] | null }>`
      select relname as name, reloptions as options from pg_class
      where relname in ('inbound_order_name_trgm_idx', 'inbound_order_external_trgm_idx',
        'inbound_order_tracking_trgm_idx', 'product_name_trgm_idx')
      order by relname`.execute(db);
    expect(options).toEqual([
      { name: 'inbound_order_external_trgm_idx', options: ['fastupdate=on', 'gin_pending_list_limit=64'] },
      { name: 'inbound_order_name_trgm_idx', options: ['fastupdate=on', 'gin_pending_list_limit=64'] },
      { name: 'inbound_order_tracking_trgm_idx', options: ['fastupdate=on', 'gin_pending_list_limit=64'] },
      { name: 'product_name_trgm_idx', options: ['fastupdate=off'] },
    ]);
    // Written after the set-up's VACUUM: their trigrams are in the pending lists, not yet in the indexes.
    await sql`
      insert into inbound_order (client_id, organization_id, type, name, external_order_id, tracking_number)
      select ${account.clientId}, ${account.organizationId}, 'INCOME', 'Pending ' || n, 'PEND-' || n, 'TRK-' || n
      from generate_series(1, 20) as n`.execute(db);
    for (const query of ['Pending 17', 'PEND-17', 'TRK-17']) {
      const page = await findRepository.page(db, account.clientId, resolveFindCriteria({ query }));
      expect(page.map((row) => row.name)).toEqual(['Pending 17']);
    }
    expectIndexes(
      await inboundFindPlan({ query: NEEDLE }),
      'inbound_order_name_trgm_idx',
      'inbound_order_external_trgm_idx',
      'inbound_order_tracking_trgm_idx',
    );
  });

  it("inbound find by position: the position's name, article or barcode, and its article alone", async () => {
    expectIndexes(
      await inboundFindPlan({ product: NEEDLE }),
      'inbound_order_product_name_trgm_idx',
      'inbound_order_product_article_trgm_idx',
      'inbound_order_product_client_barcode_idx',
    );
    expectIndexes(
      await inboundFindPlan({ containsArticle: NEEDLE }),
      'inbound_order_product_article_trgm_idx',
    );
  });

  it('getCampaigns: the campaign name', async () => {
    const filter = resolveCampaignFilter(
      { query: NEEDLE },
      { clientId: account.clientId, organizationIds: [account.organizationId] },
    );
    const [plan] = await plansOf((db) => statisticsRepository.campaignPage(db, filter));
    expectIndexes(plan, 'campaign_name_trgm_idx');
  });

  it('getCampaigns: a number, in the name or the external id', async () => {
    const filter = resolveCampaignFilter(
      { query: '9000000001' },
      { clientId: account.clientId, organizationIds: [account.organizationId] },
    );
    const [plan] = await plansOf((db) => statisticsRepository.campaignPage(db, filter));
    expectIndexes(plan, 'campaign_name_trgm_idx', 'campaign_client_external_idx');
  });

  it('tags and keyword groups: the name, and the keywords', async () => {
    const [tags] = await plansOf((db) =>
      tagRepository.page(db, { clientId: account.clientId, query: NEEDLE }, 'ID', true, 100, { offset: 0 }),
    );
    expectIndexes(tags, 'product_tag_name_trgm_idx');
    const [groups] = await plansOf((db) => keywordRepository.groupIds(db, account.clientId, NEEDLE));
    expectIndexes(groups, 'keyword_group_name_trgm_idx', 'keyword_name_trgm_idx');
  });
});
