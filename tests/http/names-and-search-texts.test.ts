/**
 * Names and search texts across the groups (P220): white space and invisible format characters (zero-width space,
 * byte order mark) at either end are not part of a name or a search text, a name of nothing else is refused as a
 * blank one, and a blank search text filters nothing in every group.
 */
import { describe, expect, it } from 'vitest';
import { useTestApp, type TestApp } from '../helpers/test-app.ts';
import { createAccount, type TestAccount } from '../helpers/factories.ts';
import { expectError, send } from '../helpers/http.ts';

let t: TestApp;
let account: TestAccount;
useTestApp(
  async (app) => {
    t = app;
    account = await createAccount(app.runtime);
  },
  {},
  { workers: false },
);

const INVISIBLE = '\u200B\uFEFF \u200D';
const call = (method: 'GET' | 'POST', url: string, payload?: unknown) =>
  send(t.app, account.writeToken, { method, url, payload });
const ok = async <T>(method: 'GET' | 'POST', url: string, payload?: unknown) => {
  const response = await call(method, url, payload);
  expect(response.statusCode, response.body).toBe(200);
  return response.json<T>();
};

describe('names and search texts (P220)', () => {
  it('refuses a name of invisible characters only, as a blank one, in every group', async () => {
    expectError(await call('POST', '/api/tag', { name: INVISIBLE }), 400, 'error_tag_name_required');
    expectError(
      await call('POST', `/api/keyword/group?groupName=${encodeURIComponent(INVISIBLE)}`, ['wool']),
      400,
      'error_empty_group_name',
    );
    for (const url of ['/api/brand', '/api/category'])
      expectError(await call('POST', url, { name: INVISIBLE }), 400, 'error_validation', { field: 'name' });
    expectError(
      await call('POST', '/api/webhook/', {
        name: INVISIBLE,
        url: 'https://93.184.216.34/hook',
        organizationId: account.organizationId,
        types: ['ORDER'],
      }),
      400,
      'error_validation',
      { field: 'name' },
    );
  });

  it('stores a name without the invisible characters at its ends', async () => {
    const name = `${INVISIBLE}Autumn${INVISIBLE}`;
    expect((await ok<{ name: string }>('POST', '/api/tag', { name })).name).toBe('Autumn');
    expect((await ok<{ name: string }>('POST', '/api/brand', { name })).name).toBe('Autumn');
    const group = await ok<{ name: string; keywords: Array<{ name: string }> }>(
      'POST',
      `/api/keyword/group?groupName=${encodeURIComponent(name)}`,
      [name, 'wool'],
    );
    expect(group.name).toBe('Autumn');
    expect(group.keywords.map((keyword) => keyword.name)).toEqual(['Autumn', 'wool']);
    expectError(await call('POST', '/api/tag', { name: 'autumn' }), 400, 'error_duplicate_tag_name');
  });

  it('reads a blank search text as no filter in every group', async () => {
    await ok('POST', '/api/tag', { name: 'Winter' });
    await ok('POST', '/api/brand', { name: 'Winter' });
    await ok('POST', '/api/keyword/group?groupName=Winter', ['snow']);
    const blank = encodeURIComponent(INVISIBLE);
    for (const [url, param] of [
      ['/api/tag/find', 'query'],
      ['/api/brand/find', 'query'],
      ['/api/product/find', 'query'],
      ['/api/inbound/find', 'query'],
    ] as const) {
      const all = (await ok<{ rows: unknown[] }>('GET', url)).rows;
      expect((await ok<{ rows: unknown[] }>('GET', `${url}?${param}=${blank}`)).rows, url).toEqual(all);
    }
    const groups = await ok<unknown[]>('GET', '/api/keyword/group');
    expect(groups.length).toBeGreaterThan(0);
    expect(await ok<unknown[]>('GET', `/api/keyword/group/find?word=${blank}`)).toEqual(groups);
    const found = await ok<{ rows: Array<{ name: string }> }>(
      'GET',
      `/api/tag/find?query=${encodeURIComponent(' Wint ')}`,
    );
    expect(found.rows.map((row) => row.name)).toEqual(['Winter']);
  });
});
