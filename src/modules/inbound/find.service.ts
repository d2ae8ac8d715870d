/**
 * Reading lists of the inbound group: `find` (D4, D5.10) and a document's `history` (D5.9). The page and the
 * optional count run concurrently; `withProducts` adds one query for all rows' positions.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import type { SearchTurns } from '../../db/search-turns.ts';
import type { Principal } from '../../http/auth.ts';
import { notFound } from '../../http/errors.ts';
import { cutPage, resolvePaging, type CursorCodec } from '../../http/cursor.ts';
import type { InboundCaches } from './order-cache.ts';
import { isTextSearch, resolveFindCriteria, resolveHistoryCriteria } from './find-filter.ts';
import { findRepository } from './find.repository.ts';
import { presentHistory, presentOrder, selfLink, type OrderProductRow } from './presenter.ts';
import { historyRepository, orderRepository, productRepository } from './repository.ts';
import type { OrderFindQuery, OrderHistoryQuery, Order, OrderHistory } from './schemas.ts';

/** A page of a list response (D4.2) with its HAL link. */
export interface ListPage<T> {
  rows: T[];
  page: number;
  total?: number;
  nextCursor?: string;
  _links: { self: { href: string } };
}

/** `find` and `history` over one database. */
export class InboundFindService {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly baseUrl: string,
    private readonly caches: InboundCaches,
    private readonly cursors: CursorCodec,
    private readonly searches: SearchTurns,
  ) {}

  /**
   * The serialized `find` page for `query` (UTF-8 bytes), from the cache of the client's pages when possible
   * (dropped on any change of one of the client's documents).
   * @param path the request path with its query: part of the cache key and `_links.self`
   * @throws 400 `error_validation` for a malformed date parameter
   */
  async findBody(principal: Principal, query: OrderFindQuery, path: string): Promise<Buffer> {
    const key = `${principal.clientId} ${path}`;
    const cached = this.caches.lists.get(key, principal.clientId);
    if (cached !== undefined) return cached.body;
    const readStartedAt = this.caches.lists.beginRead();
    const body = Buffer.from(JSON.stringify(await this.find(principal, query, path)));
    this.caches.lists.store(key, principal.clientId, principal.clientId, body, readStartedAt);
    return body;
  }

  /**
   * Documents of the caller's client matching the filter set, without positions unless `withProducts=true`;
   * deleted ones only with `deleted=true`; newest first unless `sortBy`/`ascending` say otherwise. A page by
   * `page` or after a `cursor` (P172); `nextCursor` continues after the page's last row when there is more.
   * @param path the request path with its query, for `_links.self`
   * @throws 400 `error_validation` for a malformed date parameter or cursor
   */
  async find(principal: Principal, query: OrderFindQuery, path: string): Promise<ListPage<Order>> {
    const scope = {
      list: 'inbound.find',
      clientId: principal.clientId,
      sortBy: query.sortBy ?? 'ID',
      ascending: query.ascending === true,
    };
    const paging = resolvePaging(this.cursors, query, scope);
    const criteria = { ...resolveFindCriteria(query), page: paging.page, after: paging.after };
    const [read, total] = await this.searches.run(isTextSearch(query), () =>
      Promise.all([
        findRepository.page(this.db, principal.clientId, criteria),
        criteria.count ? findRepository.count(this.db, principal.clientId, criteria) : undefined,
      ]),
    );
    const { rows, nextCursor } = cutPage(this.cursors, scope, read, criteria.limit, criteria.page, (row) => ({
      value: row.keyset_value,
      id: row.id,
    }));
    let products: Map<number, OrderProductRow[]> | undefined;
    if (criteria.withProducts) {
      products = new Map(rows.map((row) => [row.id, []]));
      for (const product of await productRepository.listByOrders(
        this.db,
        principal.clientId,
        rows.map((row) => row.id),
      ))
        products.get(product.order_id)?.push(product);
    }
    return {
      rows: rows.map((row) => presentOrder(row, products?.get(row.id), this.baseUrl)),
      page: criteria.page,
      ...(total !== undefined && { total }),
      ...(nextCursor !== undefined && { nextCursor }),
      _links: selfLink(this.baseUrl, path),
    };
  }

  /**
   * One page of the document's history, newest first, by `page` or after a `cursor` (P172; each document's history
   * is its own list); `dateFrom`/`dateTo` bound the change date; the other filters of the set do not apply to
   * history rows (P23).
   * @throws 404 `error_not_found`; 400 `error_validation` for a malformed date or cursor
   */
  async history(
    principal: Principal,
    orderId: number,
    query: OrderHistoryQuery,
    path: string,
  ): Promise<ListPage<OrderHistory>> {
    const scope = {
      list: `inbound.history.${orderId}`,
      clientId: principal.clientId,
      sortBy: 'ID',
      ascending: false,
    };
    const { page, after } = resolvePaging(this.cursors, query, scope);
    const criteria = resolveHistoryCriteria(query, page);
    const order = await orderRepository.find(this.db, principal.clientId, orderId);
    if (!order) throw notFound('order', orderId);
    const [read, total] = await Promise.all([
      historyRepository.page(this.db, principal.clientId, orderId, {
        limit: criteria.limit + 1,
        ...(after === undefined ? { offset: criteria.offset } : { afterId: after.id }),
        dates: criteria.dates,
      }),
      criteria.count
        ? historyRepository.count(this.db, principal.clientId, orderId, criteria.dates)
        : undefined,
    ]);
    const { rows, nextCursor } = cutPage(this.cursors, scope, read, criteria.limit, page, (row) => ({
      value: null,
      id: row.id,
    }));
    return {
      rows: rows.map(presentHistory),
      page,
      ...(total !== undefined && { total }),
      ...(nextCursor !== undefined && { nextCursor }),
      _links: selfLink(this.baseUrl, path),
    };
  }
}
