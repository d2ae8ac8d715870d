/**
 * Keyword groups through HTTP (spec §4.2, D6): the twelve operations, merge and its three errors, attachment to
 * products, views and models with `usingQuantity`, roles and tenancy.
 */
import { describe, expect, it } from 'vitest';
import { useTestApp, type TestApp } from '../helpers/test-app.ts';
import { createAccount, type TestAccount } from '../helpers/factories.ts';
import {
  expectEmpty,
  expectError,
  expectNotFound,
  expectValidation,
  send,
  MISSING_ID,
} from '../helpers/http.ts';
import { createModel } from '../helpers/catalog.ts';
import type { KeywordAndGroup, KeywordGroup } from '../../src/modules/keyword/schemas.ts';

let t: TestApp;
let account: TestAccount;
let stranger: TestAccount;
useTestApp(
  async (app) => {
    t = app;
    account = await createAccount(app.runtime);
    stranger = await createAccount(app.runtime);
  },
  {},
  { workers: false },
);

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';
const call = (method: Method, url: string, payload?: unknown, token = account.writeToken) =>
  send(t.app, token, { method, url, payload });
const ok = async <T>(method: Method, url: string, payload?: unknown, token?: string): Promise<T> => {
  const response = await call(method, url, payload, token);
  expect(response.statusCode, response.body).toBe(200);
  return response.json<T>();
};
const newGroup = (name: string, words: string[], token?: string) =>
  ok<KeywordGroup>('POST', `/api/keyword/group?groupName=${encodeURIComponent(name)}`, words, token);

describe('keyword groups', () => {
  it('creates a group from trimmed words without case-insensitive repeats, reads, renames and extends it', async () => {
    const group = await newGroup('Summer', [' linen ', 'Linen', 'beach', '', 'BEACH wear']);
    expect(group.name).toBe('Summer');
    expect(group.keywords.map((keyword) => keyword.name)).toEqual(['linen', 'beach', 'BEACH wear']);
    expect(group.keywords.every((keyword) => keyword.usingQuantity === 0)).toBe(true);
    expect(await ok('GET', `/api/keyword/group/${group.id}`, undefined, account.readToken)).toEqual(group);
    const updated = await ok<KeywordGroup>('PUT', `/api/keyword/group/${group.id}?newName=Summer%202026`, [
      'LINEN',
      'sun',
    ]);
    expect(updated.name).toBe('Summer 2026');
    expect(updated.keywords.map((keyword) => keyword.name)).toEqual(['linen', 'beach', 'BEACH wear', 'sun']);
    const listed = await ok<KeywordGroup[]>('GET', '/api/keyword/group', undefined, account.readToken);
    expect(listed.map((item) => item.id)).toContain(group.id);
    await newGroup('Autumn', ['wool']);
    const ids = (await ok<KeywordGroup[]>('GET', '/api/keyword/group')).map((item) => item.id);
    expect(ids.length).toBeGreaterThan(1);
    expect(ids, 'creation order (P60)').toEqual([...ids].sort((a, b) => a - b));
    expectError(await call('POST', '/api/keyword/group?groupName=%20', ['x']), 400, 'error_empty_group_name');
    expectValidation(await call('POST', '/api/keyword/group', ['x']), 'groupName');
  });

  it('finds groups by a word in their name or keywords, case-insensitive', async () => {
    const owner = await createAccount(t.runtime);
    const winter = await newGroup('Winter', ['wool', 'scarf'], owner.writeToken);
    const gifts = await newGroup('Gifts', ['Woolen socks'], owner.writeToken);
    await newGroup('Other', ['cotton'], owner.writeToken);
    const found = await ok<KeywordGroup[]>(
      'GET',
      '/api/keyword/group/find?word=WOOL',
      undefined,
      owner.readToken,
    );
    expect(found.map((group) => group.id)).toEqual([winter.id, gifts.id]);
    expect(await ok('GET', '/api/keyword/group/find?word=wint', undefined, owner.readToken)).toEqual([
      winter,
    ]);
  });

  it('deletes keywords of a group, one group (answering it) and several groups all or nothing', async () => {
    const group = await newGroup('To trim', ['a', 'b', 'c']);
    const [a, b] = group.keywords;
    expect(await ok('DELETE', `/api/keyword/group/${group.id}/keywords`, [a?.id])).toBe('OK');
    expectNotFound(
      await call('DELETE', `/api/keyword/group/${group.id}/keywords`, [b?.id, a?.id]),
      String(a?.id),
    );
    expect(
      (await ok<KeywordGroup>('GET', `/api/keyword/group/${group.id}`)).keywords.map(
        (keyword) => keyword.name,
      ),
    ).toEqual(['b', 'c']);
    const removed = await ok<KeywordGroup>('DELETE', `/api/keyword/group/${group.id}`);
    expect(removed.id).toBe(group.id);
    expectNotFound(await call('GET', `/api/keyword/group/${group.id}`), group.id);
    const one = await newGroup('One', ['x']);
    const two = await newGroup('Two', ['y']);
    expectNotFound(await call('DELETE', '/api/keyword/group', [one.id, MISSING_ID]), MISSING_ID);
    expect((await call('GET', `/api/keyword/group/${one.id}`)).statusCode).toBe(200);
    expect(await ok('DELETE', '/api/keyword/group', [one.id, two.id])).toBe('OK');
    expectNotFound(await call('GET', `/api/keyword/group/${two.id}`), two.id);
  });

  it('deletes no keyword for an empty list, and still answers 404 for an unknown group (found by the fuzzer)', async () => {
    const group = await newGroup('Kept', ['a', 'b']);
    expect(await ok('DELETE', `/api/keyword/group/${group.id}/keywords`, [])).toBe('OK');
    expect(await ok('GET', `/api/keyword/group/${group.id}`)).toEqual(group);
    expectNotFound(await call('DELETE', `/api/keyword/group/${MISSING_ID}/keywords`, []), MISSING_ID);
    expect(await ok('DELETE', '/api/keyword/group', [])).toBe('OK');
  });
});

describe('merge', () => {
  it('creates the union, moves the attachments and deletes the sources', async () => {
    const model = await createModel(t.app, account, ['grey'], ['M']);
    const first = await newGroup('Colours', ['grey', 'Melange']);
    const second = await newGroup('Fabrics', ['melange', 'jersey']);
    expectEmpty(await call('PUT', `/api/keyword/add?modelId=${model.id}`, [first.id]));
    const merged = await ok<KeywordGroup>('POST', '/api/keyword/group/merge?newGroupName=Merged', [
      first.id,
      second.id,
    ]);
    expect(merged.name).toBe('Merged');
    expect(merged.keywords.map((keyword) => [keyword.name, keyword.usingQuantity])).toEqual([
      ['grey', 1],
      ['Melange', 1],
      ['jersey', 0],
    ]);
    expectNotFound(await call('GET', `/api/keyword/group/${first.id}`), first.id);
    const ofModel = await ok<KeywordAndGroup>('GET', `/api/keyword/${model.id}`);
    expect(ofModel.group.map((group) => group.id)).toEqual([merged.id]);
    expect(ofModel.keyword.map((keyword) => keyword.name)).toEqual(['grey', 'Melange']);
  });

  it('answers its three errors of spec §7 and 404 for foreign groups', async () => {
    const one = await newGroup('Lonely', ['word']);
    const emptyA = await newGroup('Empty A', []);
    const emptyB = await newGroup('Empty B', []);
    expectError(
      await call('POST', '/api/keyword/group/merge?newGroupName=%20%20', [one.id, emptyA.id]),
      400,
      'error_empty_group_name',
    );
    expectError(
      await call('POST', '/api/keyword/group/merge?newGroupName=M', [one.id, one.id]),
      400,
      'error_need_at_least_two_groups',
    );
    expectError(
      await call('POST', '/api/keyword/group/merge?newGroupName=M', [emptyA.id, emptyB.id]),
      400,
      'error_empty_keywords_groups',
    );
    const foreign = await newGroup('Theirs', ['x'], stranger.writeToken);
    expectNotFound(
      await call('POST', '/api/keyword/group/merge?newGroupName=M', [one.id, foreign.id]),
      foreign.id,
    );
  });
});

describe('attachments', () => {
  it('attaches to exactly one of product, view or model; counts usingQuantity; detaches from a model', async () => {
    const model = await createModel(t.app, account, ['blue'], ['S', 'M']);
    const view = model.views[0];
    const product = view?.sizes[0];
    const group = await newGroup('Attach', ['denim']);
    expectEmpty(await call('PUT', `/api/keyword/add?productId=${product?.id}`, [group.id]));
    expectEmpty(await call('PUT', `/api/keyword/add?productViewId=${view?.id}`, [group.id]));
    expectEmpty(await call('PUT', `/api/keyword/add?modelId=${model.id}`, [group.id]));
    expectEmpty(await call('PUT', `/api/keyword/add?modelId=${model.id}`, [group.id]));
    expect((await ok<KeywordGroup>('GET', `/api/keyword/group/${group.id}`)).keywords[0]?.usingQuantity).toBe(
      3,
    );
    expectValidation(
      await call('PUT', `/api/keyword/add?productId=${product?.id}&modelId=${model.id}`, [group.id]),
      'productId',
    );
    expectValidation(await call('PUT', '/api/keyword/add', [group.id]), 'productId');
    expect(await ok('DELETE', `/api/keyword/model/${model.id}`, [group.id])).toBe('OK');
    expect(await ok('GET', `/api/keyword/${model.id}`)).toEqual({ keyword: [], group: [] });
    expect((await ok<KeywordGroup>('GET', `/api/keyword/group/${group.id}`)).keywords[0]?.usingQuantity).toBe(
      2,
    );
  });

  it('answers another client’s product, view, model or group exactly like unknown ones', async () => {
    const theirs = await createModel(t.app, stranger, ['red'], ['L']);
    const group = await newGroup('Mine', ['word']);
    const theirGroup = await newGroup('Theirs', ['word'], stranger.writeToken);
    const foreignProduct = theirs.views[0]?.sizes[0]?.id;
    const foreignView = theirs.views[0]?.id;
    expectNotFound(
      await call('PUT', `/api/keyword/add?productId=${foreignProduct}`, [group.id]),
      String(foreignProduct),
    );
    expectNotFound(
      await call('PUT', `/api/keyword/add?productViewId=${foreignView}`, [group.id]),
      String(foreignView),
    );
    expectNotFound(await call('PUT', `/api/keyword/add?modelId=${theirs.id}`, [group.id]), theirs.id);
    expectNotFound(await call('GET', `/api/keyword/${theirs.id}`), theirs.id);
    expectNotFound(await call('DELETE', `/api/keyword/model/${theirs.id}`, [group.id]), theirs.id);
    expectNotFound(await call('GET', `/api/keyword/group/${theirGroup.id}`), theirGroup.id);
    expectNotFound(await call('PUT', `/api/keyword/group/${theirGroup.id}`, ['x']), theirGroup.id);
    expectNotFound(await call('DELETE', `/api/keyword/group/${theirGroup.id}`), theirGroup.id);
  });

  it('refuses every write with a READ token', async () => {
    const group = await newGroup('Read only', ['x']);
    const model = await createModel(t.app, account, ['white'], ['S']);
    for (const [method, url, body] of [
      ['POST', '/api/keyword/group?groupName=x', []],
      ['DELETE', '/api/keyword/group', [group.id]],
      ['PUT', `/api/keyword/group/${group.id}`, []],
      ['DELETE', `/api/keyword/group/${group.id}`, undefined],
      ['DELETE', `/api/keyword/group/${group.id}/keywords`, []],
      ['POST', '/api/keyword/group/merge?newGroupName=x', [group.id]],
      ['PUT', `/api/keyword/add?modelId=${model.id}`, [group.id]],
      ['DELETE', `/api/keyword/model/${model.id}`, [group.id]],
    ] as const)
      expectError(await call(method, url, body, account.readToken), 400, 'error_access_denied');
  });
});
