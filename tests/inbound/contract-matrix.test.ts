/**
 * The access matrix of the sixteen inbound operations (spec §4.1, §5; decisions D2.2, D2.3, D2.5, D3.1):
 * a READ token is refused on every write and nothing changes; another client's token gets 404
 * `error_not_found` on every id-taking operation, exactly like a missing id, and the owner's document is
 * unchanged; a missing, empty or invalid token gets 401 `auth_required` everywhere.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/test-app.ts';
import { createAccount, type TestAccount } from '../helpers/factories.ts';
import {
  MISSING_ID,
  createOrder,
  expectError,
  expectHal,
  expectNotFound,
  findOrders,
  newProductId,
  productLine,
  putPackages,
  send,
  setStatus,
  snapshot,
  type InboundRequest,
  type ListPage,
  type Order,
} from '../helpers/inbound.ts';

let t: TestApp;
let owner: TestAccount;
let stranger: TestAccount;

beforeAll(async () => {
  t = await buildTestApp();
  owner = await createAccount(t.runtime);
  stranger = await createAccount(t.runtime);
});
afterAll(async () => {
  await t.close();
});

/** What an operation needs to address a document: its id, a position's product id, its organization. */
interface Target {
  orderId: number;
  productId: number;
  orderProductId: number;
  organizationId: number;
}

/** How an operation takes a document id (D2.5); `none` for create, `filter` for find's `orderId` filter. */
type IdKind = 'path' | 'query' | 'body' | 'bulk' | 'none' | 'filter';

interface Operation {
  name: string;
  access: 'read' | 'write';
  ids: IdKind;
  /** The target must be FINISHED for the operation to change something (removeIncomeStock, D5.8). */
  finished?: boolean;
  /** A request that would succeed for the owner of `target`. */
  request(target: Target): InboundRequest;
}

/** The sixteen operations of spec §4.1, each with a request that is valid for the target document. */
const OPERATIONS: Operation[] = [
  {
    name: 'POST /api/inbound/ (create)',
    access: 'write',
    ids: 'none',
    request: (target) => ({
      method: 'POST',
      url: '/api/inbound/',
      payload: { organizationId: target.organizationId, type: 'INCOME', products: [productLine()] },
    }),
  },
  {
    name: 'PATCH /api/inbound/',
    access: 'write',
    ids: 'body',
    request: (target) => ({
      method: 'PATCH',
      url: '/api/inbound/',
      payload: { id: target.orderId, name: 'Renamed', comment: 'changed' },
    }),
  },
  {
    name: 'GET /api/inbound/{orderId}',
    access: 'read',
    ids: 'path',
    request: (target) => ({ method: 'GET', url: `/api/inbound/${target.orderId}` }),
  },
  {
    name: 'DELETE /api/inbound/{orderId}',
    access: 'write',
    ids: 'path',
    request: (target) => ({ method: 'DELETE', url: `/api/inbound/${target.orderId}` }),
  },
  {
    name: 'POST /api/inbound/{orderId}/product (add)',
    access: 'write',
    ids: 'path',
    request: (target) => ({
      method: 'POST',
      url: `/api/inbound/${target.orderId}/product`,
      payload: productLine({ quantity: 2, price: 3.5 }),
    }),
  },
  {
    name: 'PUT /api/inbound/{orderId}/product (update)',
    access: 'write',
    ids: 'path',
    request: (target) => ({
      method: 'PUT',
      url: `/api/inbound/${target.orderId}/product`,
      payload: { productId: target.productId, quantity: 7, price: 12.25 },
    }),
  },
  {
    name: 'POST /api/inbound/{orderId}/status',
    access: 'write',
    ids: 'path',
    request: (target) => ({
      method: 'POST',
      url: `/api/inbound/${target.orderId}/status`,
      query: { status: 'PACKING' },
    }),
  },
  {
    name: 'POST /api/inbound/status (bulk)',
    access: 'write',
    ids: 'bulk',
    request: (target) => ({
      method: 'POST',
      url: '/api/inbound/status',
      query: { status: 'PACKING' },
      payload: [target.orderId],
    }),
  },
  {
    name: 'POST /api/inbound/{orderId}/divergence/fix',
    access: 'write',
    ids: 'path',
    request: (target) => ({ method: 'POST', url: `/api/inbound/${target.orderId}/divergence/fix` }),
  },
  {
    name: 'GET /api/inbound/{orderId}/divergence',
    access: 'read',
    ids: 'path',
    request: (target) => ({ method: 'GET', url: `/api/inbound/${target.orderId}/divergence` }),
  },
  {
    name: 'POST /api/inbound/updateOrderPackage',
    access: 'write',
    ids: 'query',
    request: (target) => ({
      method: 'POST',
      url: '/api/inbound/updateOrderPackage',
      query: { orderId: target.orderId },
      payload: [{ number: 'BOX-9', items: [{ orderProductId: target.orderProductId, quantity: 1 }] }],
    }),
  },
  {
    name: 'GET /api/inbound/getOrderPackage',
    access: 'read',
    ids: 'query',
    request: (target) => ({
      method: 'GET',
      url: '/api/inbound/getOrderPackage',
      query: { orderId: target.orderId },
    }),
  },
  {
    name: 'POST /api/inbound/setOrderMarkingStatus',
    access: 'write',
    ids: 'query',
    request: (target) => ({
      method: 'POST',
      url: '/api/inbound/setOrderMarkingStatus',
      query: { status: 'NO_NEED_MARKING', orderId: target.orderId },
    }),
  },
  {
    name: 'POST /api/inbound/removeIncomeStock',
    access: 'write',
    ids: 'query',
    finished: true,
    request: (target) => ({
      method: 'POST',
      url: '/api/inbound/removeIncomeStock',
      query: { orderId: target.orderId },
    }),
  },
  {
    name: 'GET /api/inbound/{orderId}/history',
    access: 'read',
    ids: 'path',
    request: (target) => ({ method: 'GET', url: `/api/inbound/${target.orderId}/history` }),
  },
  {
    name: 'GET /api/inbound/find',
    access: 'read',
    ids: 'filter',
    request: (target) => ({ method: 'GET', url: '/api/inbound/find', query: { orderId: target.orderId } }),
  },
];

/**
 * Creates an INCOME document of `account` with one short-packed position and a cargo place, so that every
 * operation of the table has something to change; `finished` moves it to FINISHED so that it holds received
 * stock for removeIncomeStock to reverse (D5.8).
 */
async function createTarget(account: TestAccount, finished = false): Promise<Target> {
  const productId = newProductId();
  const order = await createOrder(t.app, account.writeToken, {
    organizationId: account.organizationId,
    type: 'INCOME',
    name: 'Matrix target',
    products: [productLine({ productId, quantity: 5, price: 10.5 })],
  });
  const orderProductId = order.products?.[0]?.id;
  expect(orderProductId).toBeTypeOf('number');
  await putPackages(t.app, account.writeToken, order.id, [
    { number: 'BOX-1', items: [{ orderProductId, quantity: 3 }] },
  ]);
  if (finished) await setStatus(t.app, account.writeToken, order.id, 'FINISHED');
  return {
    orderId: order.id,
    productId,
    orderProductId: orderProductId as number,
    organizationId: account.organizationId,
  };
}

/** Number of documents `account` can see, including deleted ones. */
async function documentCount(account: TestAccount): Promise<number> {
  const page = await findOrders(t.app, account.readToken, { count: true, deleted: true, limit: 1 });
  return page.total ?? -1;
}

it('lists all sixteen operations of spec §4.1', () => {
  expect(OPERATIONS).toHaveLength(16);
  expect(new Set(OPERATIONS.map((operation) => operation.name)).size).toBe(16);
});

describe('a READ token on a write operation: 400 error_access_denied, nothing changes (D2.3)', () => {
  for (const operation of OPERATIONS.filter((candidate) => candidate.access === 'write')) {
    it(operation.name, async () => {
      const target = await createTarget(owner, operation.finished);
      const before = await snapshot(t.app, owner.readToken, target.orderId);
      const countBefore = await documentCount(owner);

      const response = await send(t.app, owner.readToken, operation.request(target));
      expectError(response, 400, 'error_access_denied');

      expect(await snapshot(t.app, owner.readToken, target.orderId)).toEqual(before);
      expect(await documentCount(owner)).toBe(countBefore);
    });
  }
});

it('a READ token may HEAD what it may GET (a GET without its body, D2.3)', async () => {
  const target = await createTarget(owner, false);
  for (const url of [`/api/inbound/${target.orderId}`, '/api/inbound/find']) {
    const response = await send(t.app, owner.readToken, { method: 'HEAD', url });
    expect(response.statusCode, url).toBe(200);
    expect(response.body).toBe('');
  }
});

describe('the same operations succeed for the owner with a WRITE token (the matrix requests are valid)', () => {
  for (const operation of OPERATIONS) {
    it(operation.name, async () => {
      const target = await createTarget(owner, operation.finished);
      const response = await send(t.app, owner.writeToken, operation.request(target));
      expect(response.statusCode, response.body).toBe(200);
    });
  }
});

describe("another client's token: 404 error_not_found like a missing id, owner's document unchanged (D2.5)", () => {
  const idTaking = OPERATIONS.filter((operation) => ['path', 'query', 'body'].includes(operation.ids));

  for (const operation of idTaking) {
    const tokens =
      operation.access === 'read' ? (['writeToken', 'readToken'] as const) : (['writeToken'] as const);
    for (const tokenName of tokens) {
      it(`${operation.name} with the other client's ${tokenName === 'readToken' ? 'READ' : 'WRITE'} token`, async () => {
        const target = await createTarget(owner, operation.finished);
        const before = await snapshot(t.app, owner.readToken, target.orderId);

        const foreign = await send(t.app, stranger[tokenName], operation.request(target));
        const foreignBody = expectNotFound(foreign, target.orderId);

        // A missing id answers the same way (same entity, same params), so the two cannot be told apart.
        const missing = await send(
          t.app,
          stranger[tokenName],
          operation.request({ ...target, orderId: MISSING_ID }),
        );
        const missingBody = expectNotFound(missing, MISSING_ID);
        expect(foreignBody.params.entity).toBe(missingBody.params.entity);
        expect(Object.keys(foreignBody.params).sort()).toEqual(Object.keys(missingBody.params).sort());

        expect(await snapshot(t.app, owner.readToken, target.orderId)).toEqual(before);
      });
    }
  }

  it("POST /api/inbound/status (bulk) with the other client's WRITE token lists the foreign id (D5.4)", async () => {
    const target = await createTarget(owner);
    const before = await snapshot(t.app, owner.readToken, target.orderId);
    const response = await send(t.app, stranger.writeToken, {
      method: 'POST',
      url: '/api/inbound/status',
      query: { status: 'PACKING' },
      payload: [target.orderId],
    });
    const body = expectError(response, 404, 'error_not_found');
    expect((body.params.ids as unknown[]).map(String)).toEqual([String(target.orderId)]);

    const missing = await send(t.app, stranger.writeToken, {
      method: 'POST',
      url: '/api/inbound/status',
      query: { status: 'PACKING' },
      payload: [MISSING_ID],
    });
    const missingBody = expectError(missing, 404, 'error_not_found');
    expect((missingBody.params.ids as unknown[]).map(String)).toEqual([String(MISSING_ID)]);
    expect(Object.keys(body.params).sort()).toEqual(Object.keys(missingBody.params).sort());

    expect(await snapshot(t.app, owner.readToken, target.orderId)).toEqual(before);
  });

  it("GET /api/inbound/find?orderId= of another client's document answers like a missing id: no rows", async () => {
    const target = await createTarget(owner);
    for (const token of [stranger.readToken, stranger.writeToken]) {
      const foreign = expectHal<ListPage<Order>>(
        await send(t.app, token, {
          method: 'GET',
          url: '/api/inbound/find',
          query: { orderId: target.orderId },
        }),
      );
      const missing = expectHal<ListPage<Order>>(
        await send(t.app, token, { method: 'GET', url: '/api/inbound/find', query: { orderId: MISSING_ID } }),
      );
      expect(foreign.rows).toEqual([]);
      expect(missing.rows).toEqual([]);
    }
  });
});

describe('missing, empty or invalid token: 401 auth_required with empty params (D2.2)', () => {
  const credentials: [string, string | undefined][] = [
    ['no Authorization header', undefined],
    ['an empty header', ''],
    ['an empty Bearer', 'Bearer '],
    ['an unknown token', 'so_not-a-real-token'],
  ];
  for (const operation of OPERATIONS) {
    it(operation.name, async () => {
      const target = await createTarget(owner, operation.finished);
      const before = await snapshot(t.app, owner.readToken, target.orderId);
      for (const [label, token] of credentials) {
        const response = await send(t.app, token, operation.request(target));
        expect(response.statusCode, label).toBe(401);
        const body = expectError(response, 401, 'auth_required');
        expect(body.params).toEqual({});
      }
      expect(await snapshot(t.app, owner.readToken, target.orderId)).toEqual(before);
    });
  }
});
