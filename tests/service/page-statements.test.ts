/**
 * The row count and offset of list pages (P202): without a filter a page's row count is a literal and a first or
 * cursor page has no offset, so its prepared statement keeps one generic plan; with a filter the row count stays a
 * parameter. Checked on the statements the repositories send (captured from Kysely's log) for inbound find,
 * `findTask` and the webhook delivery log; the plans themselves differ only on realistic statistics (the bench).
 */
import { Kysely, PostgresDialect } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../../src/db/database.ts';
import type { DB } from '../../src/db/schema.ts';
import { resolveFindCriteria } from '../../src/modules/inbound/find-filter.ts';
import { findRepository } from '../../src/modules/inbound/find.repository.ts';
import type { OrderFindQuery } from '../../src/modules/inbound/schemas.ts';
import { taskRepository } from '../../src/modules/task/repository.ts';
import { deliveryRepository } from '../../src/modules/webhook/repository.ts';
import { testDatabaseUrl } from '../helpers/test-app.ts';

const database = createDatabase(testDatabaseUrl(), 1);
const statements: string[] = [];
const db = new Kysely<DB>({
  dialect: new PostgresDialect({ pool: database.pool }),
  log: (event) => void statements.push(event.query.sql),
});
afterAll(() => database.close());

/** The text of the last statement `read` sends (the page's; a client id no row has, so no rows come back). */
async function lastStatement(read: () => Promise<unknown>): Promise<string> {
  statements.length = 0;
  await read();
  return statements.at(-1) ?? '';
}

const CLIENT = 8_000_000_000_000_001;
const inboundPage = (query: Partial<OrderFindQuery>) => {
  const criteria = resolveFindCriteria({ limit: 10, ...query });
  return lastStatement(() => findRepository.page(db, CLIENT, { ...criteria, after: undefined }));
};
const noDates = { from: undefined, to: undefined };

describe('list page statements (P202)', () => {
  it('inbound find: a literal row count without a filter, no offset on a first page; a parameter with one', async () => {
    const first = await inboundPage({});
    expect(first).toMatch(/limit 11\b/);
    expect(first).not.toMatch(/offset/);
    expect(await inboundPage({ page: 3 })).toMatch(/limit 11 offset \$\d+/);
    expect(await inboundPage({ status: 'CREATED' })).toMatch(/limit \$\d+/);
  });

  it('findTask: the same rule', async () => {
    const page = (criteria: object, offset: number) =>
      lastStatement(() =>
        taskRepository.page(db, { clientId: CLIENT, created: noDates, ...criteria }, 'ID', false, 10, {
          offset,
        }),
      );
    const first = await page({}, 0);
    expect(first).toMatch(/limit 11\b/);
    expect(first).not.toMatch(/offset/);
    expect(await page({}, 20)).toMatch(/limit 11 offset \$\d+/);
    expect(await page({ status: 'RUNNING' }, 0)).toMatch(/limit \$\d+/);
  });

  it('webhook delivery log: a literal row count, no offset on a first or cursor page', async () => {
    const page = (from: { offset: number } | { afterId: number }) =>
      lastStatement(() => deliveryRepository.pageOfWebhook(db, CLIENT, 1, 10, from));
    for (const from of [{ offset: 0 }, { afterId: 100 }]) {
      const text = await page(from);
      expect(text).toMatch(/limit 11\b/);
      expect(text).not.toMatch(/offset/);
    }
    expect(await page({ offset: 20 })).toMatch(/limit 11 offset \$\d+/);
  });
});
