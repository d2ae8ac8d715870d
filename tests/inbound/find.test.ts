/** `GET /api/inbound/find`: filters, paging, count, sorting with ties, deleted, withProducts (D4, D5.10). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/test-app.ts';
import type { Order } from '../../src/modules/inbound/schemas.ts';
import { parseDate } from '../../src/modules/inbound/find-filter.ts';
import { expectError, newCaller, productId, type Caller } from './support.ts';

let t: TestApp;
let c: Caller;
let docs: Order[];
const article = `ART-${productId()}`;
const pid = productId();

interface FindPage {
  rows: Order[];
  page: number;
  total?: number;
  _links: { self: { href: string } };
}

const find = async (query: string) => {
  const answer = await c.call<FindPage>('GET', `/api/inbound/find?${query}`);
  expect(answer.status, answer.raw).toBe(200);
  expect(answer.type).toMatch(/^application\/hal\+json/);
  return answer.body;
};
const ids = (page: FindPage) => page.rows.map((row) => row.id);

beforeAll(async () => {
  t = await buildTestApp();
  c = await newCaller(t.app, t.runtime);
  const second = await c.account.addOrganization();
  docs = [];
  docs.push(await c.create({ type: 'INCOME', name: 'Alpha supply', warehouseId: 7, express: true }));
  docs.push(
    await c.create({
      type: 'FBS',
      externalOrderId: 'EXT-XY',
      deliveryDate: '2024-03-10T21:30:00Z',
      products: [{ productId: pid, quantity: 1, product: { article, barcode: '46001' } }],
    }),
  );
  docs.push(await c.create({ type: 'FBS', organizationId: second, service: 'SERVICE_01', supplyId: 9 }));
  docs.push(await c.create({ type: 'FBO', trackingNumber: 'TRK-100%', createdDate: '2024-01-15T12:00:00Z' }));
  docs.push(await c.create({ type: 'INCOME', name: 'deleted one' }));
  await c.call('POST', `/api/inbound/${docs[0]?.id}/status?status=FINISHED`);
  await c.call('POST', `/api/inbound/${docs[1]?.id}/status?status=PACKING`);
  await c.call('DELETE', `/api/inbound/${docs[4]?.id}`);
});
afterAll(async () => {
  await t.close();
});

const id = (index: number) => docs[index]?.id as number;

describe('find', () => {
  it('lists the live documents of the caller only, newest first, without products', async () => {
    const stranger = await newCaller(t.app, t.runtime);
    await stranger.create();
    const page = await find('');
    expect(ids(page)).toEqual([id(3), id(2), id(1), id(0)]);
    expect(page.page).toBe(1);
    expect(page.total).toBeUndefined();
    expect(page.rows[0]?.products).toBeUndefined();
    expect(page._links.self.href).toMatch(/^\/api\/inbound\/find/);
  });

  it('applies filters on stored data, repeated array parameters and EXISTS on positions', async () => {
    expect(ids(await find('type=FBS'))).toEqual([id(2), id(1)]);
    expect(ids(await find('statuses=FINISHED&statuses=PACKING'))).toEqual([id(1), id(0)]);
    expect(ids(await find('statuses=PACKING'))).toEqual([id(1)]);
    expect(ids(await find('actual=true'))).toEqual([id(3), id(2), id(1)]);
    expect(ids(await find(`organizationId=${c.account.organizationId}&type=FBS`))).toEqual([id(1)]);
    expect(ids(await find('services=SERVICE_01&services=SERVICE_02'))).toEqual([id(2)]);
    expect(ids(await find('supplyId=9'))).toEqual([id(2)]);
    expect(ids(await find('withoutSupply=true&type=FBS'))).toEqual([id(1)]);
    expect(ids(await find('warehouseId=7'))).toEqual([id(0)]);
    expect(ids(await find('noWarehouse=true'))).toEqual([id(3), id(2), id(1)]);
    expect(ids(await find('express=true'))).toEqual([id(0)]);
    expect(ids(await find(`ids=${id(0)}&ids=${id(3)}&ids=${id(4)}`))).toEqual([id(3), id(0)]);
    expect(ids(await find(`orderId=${id(2)}`))).toEqual([id(2)]);
    expect(ids(await find('externalOrderId=EXT-XY'))).toEqual([id(1)]);
    expect(ids(await find(`article=${article}`))).toEqual([id(1)]);
    expect(ids(await find(`containsArticle=${article.slice(4).toLowerCase()}`))).toEqual([id(1)]);
    expect(ids(await find('barcode=46001'))).toEqual([id(1)]);
    // Position search texts are trimmed of white space and invisible characters, a blank one filters nothing (P220).
    const padded = (text: string) => encodeURIComponent(` ${text}\u200B`);
    expect(ids(await find(`containsArticle=${padded(article.slice(4))}`))).toEqual([id(1)]);
    expect(ids(await find(`product=${padded('46001')}`))).toEqual([id(1)]);
    expect(ids(await find(`product=${padded('')}&containsArticle=${padded('')}`))).toEqual(
      ids(await find('')),
    );
    expect(ids(await find(`productId=${pid}`))).toEqual([id(1)]);
    expect(ids(await find('query=alpha'))).toEqual([id(0)]);
    expect(ids(await find(`query=${id(3)}`))).toEqual([id(3)]);
    expect(ids(await find(`query=${encodeURIComponent('100%')}`))).toEqual([id(3)]);
    // The text's LIKE wildcards are matched literally: `%` is in one tracking number, `_` in no article.
    expect(ids(await find(`query=${encodeURIComponent('%')}`))).toEqual([id(3)]);
    expect(ids(await find('containsArticle=_'))).toEqual([]);
    expect(ids(await find('orderDate=2024-01-15'))).toEqual([id(3)]);
    expect(ids(await find('orderDate=2024-01-16'))).toEqual([]);
    // 21:30 UTC on March 10 is March 11 at UTC+3.
    expect(ids(await find('deliveryDate=2024-03-10'))).toEqual([id(1)]);
    expect(ids(await find('deliveryDate=2024-03-11&timeZone=3'))).toEqual([id(1)]);
    expect(ids(await find('closeDateFrom=2000-01-01'))).toEqual([id(0)]);
    expect(ids(await find('dateFrom=2999-01-01'))).toEqual([]);
    expect(ids(await find('brandId=5&isLegal=true&forSystemA=true&collectLabel=true&type=FBO'))).toEqual([
      id(3),
    ]);
  });

  it('shows deleted documents only with deleted=true', async () => {
    expect(ids(await find('deleted=true'))).toEqual([id(4)]);
  });

  it('adds products with withProducts=true', async () => {
    const page = await find(`withProducts=true&ids=${id(1)}&ids=${id(0)}`);
    expect(page.rows.map((row) => row.products?.map((p) => p.productId))).toEqual([[pid], []]);
  });

  it('pages with count and keeps pages disjoint when sorting by a column with ties', async () => {
    const first = await find('limit=2&count=true&sortBy=TYPE&ascending=true');
    const second = await find('limit=2&page=2&count=true&sortBy=TYPE&ascending=true');
    expect(first.total).toBe(4);
    expect(second.page).toBe(2);
    // FBO, FBS (lower id first on the tie), FBS, INCOME
    expect([...ids(first), ...ids(second)]).toEqual([id(3), id(1), id(2), id(0)]);
    const descending = await find('sortBy=TYPE');
    expect(ids(descending)).toEqual([id(0), id(2), id(1), id(3)]);
  });

  it('refuses limit outside 1..500, page 0 and malformed dates, naming the field', async () => {
    expectError(await c.call('GET', '/api/inbound/find?limit=501'), 400, 'error_validation', {
      field: 'limit',
    });
    expectError(await c.call('GET', '/api/inbound/find?limit=0'), 400, 'error_validation', {
      field: 'limit',
    });
    expectError(await c.call('GET', '/api/inbound/find?page=0'), 400, 'error_validation', {
      field: 'page',
    });
    for (const field of ['query', 'article', 'containsArticle', 'product', 'barcode', 'externalOrderId'])
      expectError(
        await c.call('GET', `/api/inbound/find?${field}=${'x'.repeat(201)}`),
        400,
        'error_validation',
        {
          field,
        },
      );
    for (const value of [
      '2024-13-40',
      '2024-02-30T00:00:00Z',
      '2024-02-01T24:00',
      '2024-02-01 10:00',
      '0000-06-01',
    ])
      expectError(
        await c.call('GET', `/api/inbound/find?createdDateFrom=${encodeURIComponent(value)}`),
        400,
        'error_validation',
        { field: 'createdDateFrom' },
      );
  });

  it('reads a date-time without an offset in timeZone, never in the server’s zone (P22)', () => {
    const instant = (value: string, timeZone = 0) =>
      parseDate('modifiedDate', value, timeZone).instant.toISOString();
    expect(instant('2026-01-01T00:00:00')).toBe('2026-01-01T00:00:00.000Z');
    expect(instant('2026-01-01T00:00', 3)).toBe('2025-12-31T21:00:00.000Z');
    expect(instant('2026-01-01T03:00:00.5+03:00', 5)).toBe('2026-01-01T00:00:00.500Z');
    expect(instant('2026-01-01T00:00:00-0530')).toBe('2026-01-01T05:30:00.000Z');
    expect(instant('2026-01-01T10:00:00z')).toBe('2026-01-01T10:00:00.000Z');
    expect(instant('2026-01-01', 3)).toBe('2025-12-31T21:00:00.000Z');
  });
});
