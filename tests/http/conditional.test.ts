/**
 * Conditional requests (P133–P135): the ETag of a single-entity GET, 304 on `If-None-Match`,
 * and `If-Match` as the alternative to `versionId` on PATCH/PUT (stale → 409 `error_version_conflict`).
 */
import { describe, expect, it } from 'vitest';
import { useTestApp, type TestApp } from '../helpers/test-app.ts';
import { createAccount, type TestAccount } from '../helpers/factories.ts';
import { expectError, expectValidation } from '../helpers/http.ts';
import { createOrder, productLine, send, type Order } from '../helpers/inbound.ts';
import { createModel, replaceBody, type ProductModel } from '../helpers/catalog.ts';

let t: TestApp;
let account: TestAccount;
let other: TestAccount;
useTestApp(
  async (app) => {
    t = app;
    account = await createAccount(app.runtime);
    other = await createAccount(app.runtime);
  },
  {},
  { workers: false },
);

const newOrder = () =>
  createOrder(t.app, account.writeToken, {
    organizationId: account.organizationId,
    type: 'INCOME',
    name: 'conditional',
    products: [productLine()],
  });
const getOrder = (id: number, headers: Record<string, string> = {}, query = {}) =>
  send(t.app, account.readToken, { method: 'GET', url: `/api/inbound/${id}`, headers, query });
const patchOrder = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  send(t.app, account.writeToken, { method: 'PATCH', url: '/api/inbound/', payload: body, headers });

describe('GET of a document', () => {
  it('carries a strong ETag of its id and version, and answers If-None-Match with 304 and no body', async () => {
    const order = await newOrder();
    const first = await getOrder(order.id);
    expect(first.statusCode).toBe(200);
    const tag = `"order-${order.id}-v${order.versionId}"`;
    expect(first.headers.etag).toBe(tag);
    // Again, from the cache: the same tag.
    expect((await getOrder(order.id)).headers.etag).toBe(tag);

    const notModified = await getOrder(order.id, { 'if-none-match': tag });
    expect(notModified.statusCode).toBe(304);
    expect(notModified.body).toBe('');
    expect(notModified.headers.etag).toBe(tag);
    // Weak comparison: a weak form, a list and * match too.
    for (const header of [`W/${tag}`, `"other", ${tag}`, '*'])
      expect((await getOrder(order.id, { 'if-none-match': header })).statusCode, header).toBe(304);
  });

  it('answers 200 with the new tag once the document changed, and 404 (not 304) for another client', async () => {
    const order = await newOrder();
    const tag = `"order-${order.id}-v${order.versionId}"`;
    expect((await patchOrder({ id: order.id, name: 'renamed' })).statusCode).toBe(200);
    const changed = await getOrder(order.id, { 'if-none-match': tag });
    expect(changed.statusCode).toBe(200);
    expect(changed.headers.etag).toBe(`"order-${order.id}-v${order.versionId + 1}"`);
    expect(changed.json<Order>().name).toBe('renamed');

    const foreign = await send(t.app, other.readToken, {
      method: 'GET',
      url: `/api/inbound/${order.id}`,
      headers: { 'if-none-match': '*' },
    });
    expectError(foreign, 404, 'error_not_found');
  });

  it('names the product page in the tag, and ignores a malformed If-None-Match', async () => {
    const order = await newOrder();
    const paged = await getOrder(order.id, {}, { limit: 10, page: 2 });
    expect(paged.headers.etag).toBe(`"order-${order.id}-v${order.versionId}-limit10-page2"`);
    const whole = `"order-${order.id}-v${order.versionId}"`;
    expect((await getOrder(order.id, { 'if-none-match': whole }, { limit: 10, page: 2 })).statusCode).toBe(
      200,
    );
    expect((await getOrder(order.id, { 'if-none-match': 'not a tag' })).statusCode).toBe(200);
  });
});

describe('If-Match on PATCH and PUT of a document', () => {
  it('applies a change whose If-Match names the current version', async () => {
    const order = await newOrder();
    const response = await patchOrder(
      { id: order.id, name: 'by If-Match' },
      { 'if-match': `"order-${order.id}-v${order.versionId}"` },
    );
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json<Order>()).toMatchObject({ name: 'by If-Match', versionId: order.versionId + 1 });
  });

  it('answers 409 error_version_conflict for a stale, weak or foreign tag, changing nothing', async () => {
    const order = await newOrder();
    await patchOrder({ id: order.id, comment: 'moves the version on' });
    for (const header of [
      `"order-${order.id}-v${order.versionId}"`,
      `W/"order-${order.id}-v${order.versionId + 1}"`,
      `"order-${order.id + 1}-v${order.versionId + 1}"`,
      `"model-${order.id}-v${order.versionId + 1}"`,
    ]) {
      const response = await patchOrder({ id: order.id, name: 'must not land' }, { 'if-match': header });
      const body = expectError(response, 409, 'error_version_conflict');
      expect(body.params, header).toMatchObject({
        id: String(order.id),
        currentVersionId: order.versionId + 1,
      });
    }
    expect((await getOrder(order.id)).json<Order>().name).toBe('conditional');
  });

  it('accepts a tag of a compressed answer and If-Match: *', async () => {
    const order = await newOrder();
    const gzip = await patchOrder(
      { id: order.id, name: 'gzip tag' },
      { 'if-match': `"order-${order.id}-v${order.versionId}-gzip"` },
    );
    expect(gzip.statusCode, gzip.body).toBe(200);
    const any = await patchOrder({ id: order.id, name: 'any version' }, { 'if-match': '*' });
    expect(any.statusCode, any.body).toBe(200);
  });

  it('refuses a malformed If-Match, several versions, or one differing from versionId in the body', async () => {
    const order = await newOrder();
    const tag = (version: number) => `"order-${order.id}-v${version}"`;
    expectValidation(await patchOrder({ id: order.id }, { 'if-match': 'order-1-v1' }), 'If-Match');
    expectValidation(
      await patchOrder(
        { id: order.id },
        { 'if-match': `${tag(order.versionId)}, ${tag(order.versionId + 5)}` },
      ),
      'If-Match',
    );
    expectValidation(
      await patchOrder(
        { id: order.id, versionId: order.versionId + 1 },
        { 'if-match': tag(order.versionId) },
      ),
      'If-Match',
    );
    const agreeing = await patchOrder(
      { id: order.id, versionId: order.versionId, name: 'both agree' },
      { 'if-match': tag(order.versionId) },
    );
    expect(agreeing.statusCode, agreeing.body).toBe(200);
  });

  it('guards PUT /{orderId}/product the same way', async () => {
    const order = await newOrder();
    const position = order.products?.[0];
    const put = (version: number) =>
      send(t.app, account.writeToken, {
        method: 'PUT',
        url: `/api/inbound/${order.id}/product`,
        payload: { id: position?.id, quantity: 7 },
        headers: { 'if-match': `"order-${order.id}-v${version}"` },
      });
    expect((await put(order.versionId)).statusCode).toBe(200);
    expectError(await put(order.versionId), 409, 'error_version_conflict');
  });

  it('guards POST /{orderId}/product the same way, and adds nothing on a conflict', async () => {
    const order = await newOrder();
    const add = (version: number) =>
      send(t.app, account.writeToken, {
        method: 'POST',
        url: `/api/inbound/${order.id}/product`,
        payload: productLine(),
        headers: { 'if-match': `"order-${order.id}-v${version}"` },
      });
    expectError(await add(order.versionId + 1), 409, 'error_version_conflict');
    expect((await getOrder(order.id)).json<Order>().products).toHaveLength(order.products?.length ?? 0);
    expect((await add(order.versionId)).statusCode).toBe(200);
  });
});

describe('catalog model', () => {
  const getModel = (id: number, headers: Record<string, string> = {}, query = {}) =>
    send(t.app, account.readToken, { method: 'GET', url: `/api/model/${id}`, headers, query });

  it('tags GET /api/model/{modelId}, withParams as another representation, with 304 on a match', async () => {
    const model = await createModel(t.app, account);
    const plain = await getModel(model.id);
    const tag = `"model-${model.id}-v${model.versionId}"`;
    expect(plain.headers.etag).toBe(tag);
    const withParams = await getModel(model.id, {}, { withParams: true });
    expect(withParams.headers.etag).toBe(`"model-${model.id}-v${model.versionId}-params"`);
    expect((await getModel(model.id, { 'if-none-match': tag })).statusCode).toBe(304);
    expect((await getModel(model.id, { 'if-none-match': tag }, { withParams: true })).statusCode).toBe(200);
  });

  it('PUT takes the version from If-Match instead of versionId; stale → 409; neither → 400', async () => {
    const model = await createModel(t.app, account);
    const { id, versionId } = model;
    // no versionId in the body (undefined is left out of the JSON): the version comes from If-Match only
    const body = replaceBody(model, { title: 'replaced through If-Match', versionId: undefined });
    const put = (headers: Record<string, string>) =>
      send(t.app, account.writeToken, { method: 'PUT', url: `/api/model/${id}`, payload: body, headers });
    const tag = `"model-${id}-v${versionId}"`;
    const replaced = await put({ 'if-match': tag });
    expect(replaced.statusCode, replaced.body).toBe(200);
    expect(replaced.json<ProductModel>()).toMatchObject({ title: 'replaced through If-Match' });
    expectError(await put({ 'if-match': tag }), 409, 'error_version_conflict');
    expectValidation(await put({}), 'versionId');
  });

  it('PATCH /api/product/{productId} takes the model tag; a tag of another model is a conflict', async () => {
    const model = await createModel(t.app, account);
    const productId = model.views[0]?.sizes[0]?.id as number;
    const patch = (tag: string) =>
      send(t.app, account.writeToken, {
        method: 'PATCH',
        url: `/api/product/${productId}`,
        payload: { name: 'patched by If-Match' },
        headers: { 'if-match': tag },
      });
    expectError(await patch(`"model-${model.id + 1}-v${model.versionId}"`), 409, 'error_version_conflict');
    expect((await patch(`"model-${model.id}-v${model.versionId}"`)).statusCode).toBe(200);
    expectError(await patch(`"model-${model.id}-v${model.versionId}"`), 409, 'error_version_conflict');
  });
});
