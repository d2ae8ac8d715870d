/**
 * Inbound receiving documents (spec §4.1, decision D5): documents, positions, status, history, receiving stock.
 * Cargo places and divergence live in `packages.service.ts`, search in `find.service.ts`.
 *
 * Every mutation is one transaction that locks the document, checks it (404 for a missing or foreign id, D2.5;
 * 400 `error_order_deleted` for a deleted one, D5.4; 409 `error_version_conflict` for a stale `versionId`, D5.2),
 * bumps `versionId`, appends a history row (D5.9), records its events (spec §6, D9.3) and announces the change to
 * every process's document cache. A change that changes nothing is a no-op: no version, history or event.
 */
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/schema.ts';
import type { ChangeRunner, ChangeSet } from '../../changes/change-runner.ts';
import type { EventType } from '../../events/outbox.ts';
import type { Principal } from '../../http/auth.ts';
import { AppError, notFound, validationError } from '../../http/errors.ts';
import { organizationRepository } from '../accounts/repository.ts';
import { productRepository as catalogProducts } from '../catalog/repository.ts';
import { CLOSED_ORDER_STATUSES, type MarkingStatus, type OrderStatus } from './enums.ts';
import type { InboundCaches } from './order-cache.ts';
import { VersionReads } from './version-reads.ts';
import {
  orderPath,
  presentOrder,
  presentProduct,
  selfLink,
  type OrderProductRow,
  type OrderRow,
} from './presenter.ts';
import { historyRepository, orderRepository, productRepository, type OrderValues } from './repository.ts';
import type {
  OrderCreateBody,
  OrderGetQuery,
  OrderPatchBody,
  OrderProduct,
  OrderProductInput,
  Order,
} from './schemas.ts';
/** API field of a document → its column, for the writable fields of create and PATCH (D5.1). */
const WRITABLE_FIELDS = {
  organizationId: 'organization_id',
  type: 'type',
  name: 'name',
  comment: 'comment',
  boxType: 'box_type',
  markingType: 'marking_type',
  service: 'service',
  warehouseId: 'warehouse_id',
  stockWarehouseId: 'stock_warehouse_id',
  serviceWarehouseId: 'service_warehouse_id',
  externalOrderId: 'external_order_id',
  invoiceNumber: 'invoice_number',
  trackingNumber: 'tracking_number',
  supplyId: 'supply_id',
  supplierId: 'supplier_id',
  incomeId: 'income_id',
  userId: 'user_id',
  express: 'express',
  updateInService: 'update_in_service',
  createdDate: 'created_date',
  deliveryDate: 'delivery_date',
} as const satisfies Partial<Record<keyof Order, keyof OrderValues>>;

type WritableField = keyof typeof WRITABLE_FIELDS;
const DATE_FIELDS = new Set<WritableField>(['createdDate', 'deliveryDate']);

/** `{field: {from, to}}` of a history row (D5.9). */
export type Changes = Record<string, { from: unknown; to: unknown }>;

/**
 * The documents a change touched, on top of the shared `ChangeSet`: raises their events and, once the work is
 * done, announces them to every process's document cache (D9.3, P27).
 */
export class ChangeLog {
  readonly orderIds: number[] = [];

  constructor(readonly change: ChangeSet) {}

  /** Records that `order` changed and which event it raises. */
  changed(order: { id: number; client_id: number; organization_id: number }, type: EventType): void {
    this.orderIds.push(order.id);
    this.change.event(type, {
      id: order.id,
      clientId: order.client_id,
      organizationId: order.organization_id,
    });
  }
}

/**
 * Positions reference final products of the caller's catalog (P15): every id must be a live product of
 * the client.
 * @throws 404 `error_not_found` `{entity: 'product', id, ids}` listing every unknown or foreign product id
 */
async function requireCatalogProducts(
  trx: Transaction<DB>,
  principal: Principal,
  ids: number[],
): Promise<void> {
  const existing = await catalogProducts.existing(trx, principal.clientId, ids);
  const missing = ids.filter((id) => !existing.has(id)).map(String);
  if (missing.length > 0)
    throw new AppError('error_not_found', { entity: 'product', id: missing[0], ids: missing });
}

const deletedError = (id: number) => new AppError('error_order_deleted', { id: String(id) });

/**
 * 400 `error_validation` unless `price` has at most 2 decimals (D5.3).
 * @returns the price as exact decimal text for the numeric column
 */
export function priceText(field: string, price: number): string {
  if (Number(price.toFixed(2)) !== price) throw validationError(field, 'must have at most 2 decimal places');
  return price.toFixed(2);
}

/** Normalizes an API value for storage and comparison (dates as ISO 8601 UTC). */
function normalized(field: WritableField, value: unknown): unknown {
  if (DATE_FIELDS.has(field) && typeof value === 'string') return new Date(value).toISOString();
  return value;
}

/** The stored columns of a position input (D5.3: quantity and price default 0 on add). */
function productValues(field: string, input: OrderProductInput) {
  return {
    ...(input.quantity !== undefined && { quantity: input.quantity }),
    ...(input.price !== undefined && { price: priceText(field ? `${field}.price` : 'price', input.price) }),
    ...(input.position !== undefined && { position: input.position }),
    ...(input.product?.name !== undefined && { product_name: input.product.name }),
    ...(input.product?.article !== undefined && { article: input.product.article }),
    ...(input.product?.barcode !== undefined && { barcode: input.product.barcode }),
  };
}

/** A position's state as history shows it. */
const positionState = (row: OrderProductRow) => {
  const product = presentProduct(row);
  return { quantity: product.quantity, price: product.price, position: product.position };
};

/** Operations on documents, positions, status and stock, for one runtime. */
export class InboundService {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly changes: ChangeRunner,
    private readonly caches: InboundCaches,
    private readonly baseUrl: string,
  ) {}

  /** The version check of cache hits, coalesced (P185). */
  private readonly versionReads = new VersionReads((clientId, ids) =>
    orderRepository.versionsOf(this.db, clientId, ids),
  );

  /**
   * Runs `work` as one change (`ChangeRunner.run`): its events are recorded and its changed documents announced
   * to the other processes inside the transaction; after the commit they leave this process's cache at once.
   */
  async mutate<T>(
    principal: Principal,
    work: (trx: Transaction<DB>, log: ChangeLog) => Promise<T>,
  ): Promise<T> {
    return this.changes.run(async (trx, change) => {
      const log = new ChangeLog(change);
      const value = await work(trx, log);
      if (log.orderIds.length > 0) {
        for (const key of this.caches.changeKeys(principal.clientId, log.orderIds))
          change.notify('order', key);
        change.afterCommit(() => this.caches.invalidate(principal.clientId, log.orderIds));
      }
      return value;
    });
  }

  /**
   * Locks the caller's document for a change.
   * @throws 404 `error_not_found` (missing or foreign); 400 `error_order_deleted` unless `allowDeleted`;
   *   409 `error_version_conflict` when `versionId` is given and stale (D5.2)
   */
  async lockForChange(
    trx: Transaction<DB>,
    principal: Principal,
    id: number,
    options: { versionId?: number; allowDeleted?: boolean } = {},
  ): Promise<OrderRow> {
    const order = await orderRepository.lock(trx, principal.clientId, id);
    if (!order) throw notFound('order', id);
    if (order.deleted && !options.allowDeleted) throw deletedError(id);
    if (options.versionId !== undefined && options.versionId !== order.version_id) {
      throw new AppError('error_version_conflict', { id: String(id), currentVersionId: order.version_id });
    }
    return order;
  }

  /** Bumps the document's version (with `values`), appends its history row and logs its event. */
  async commitChange(
    trx: Transaction<DB>,
    log: ChangeLog,
    principal: Principal,
    order: OrderRow,
    change: {
      action: string;
      changes: Changes;
      values?: OrderValues;
      recomputeTotals?: boolean;
      event?: EventType;
    },
  ): Promise<OrderRow> {
    const updated = await orderRepository.update(trx, order.client_id, order.id, change.values ?? {}, {
      recomputeTotals: change.recomputeTotals,
    });
    if (change.recomputeTotals) Object.assign(change.changes, totalsChanges(order, updated));
    await historyRepository.insert(trx, updated, {
      action: change.action,
      changes: change.changes,
      userId: principal.userId,
    });
    log.changed(updated, change.event ?? 'ORDER');
    return updated;
  }

  private async checkOrganization(db: Kysely<DB>, principal: Principal, organizationId: number) {
    const organization = await organizationRepository.findOfClient(db, principal.clientId, organizationId);
    if (!organization) throw new AppError('error_organization_not_found', { organizationId });
  }

  /**
   * Creates a document (D5.1): status CREATED, marking status UNKNOWN, version 1, optional positions.
   * Raises `CREATE_ORDER`.
   * @throws 400 `error_organization_not_found` when the organization is not the caller's;
   *   400 `error_validation` for a position without `productId` (`products.<i>.productId`), a repeated
   *   product, or a price with more than 2 decimals (`products.<i>.price`)
   */
  async create(principal: Principal, body: OrderCreateBody): Promise<Order> {
    const products = body.products ?? [];
    const seen = new Set<number>();
    const rows = products.map((input, index) => {
      const field = `products.${index}`;
      if (input.productId === undefined) throw validationError(`${field}.productId`, 'is required');
      if (seen.has(input.productId))
        throw validationError(`${field}.productId`, 'the document already has a position of this product');
      seen.add(input.productId);
      return { product_id: input.productId, quantity: 0, price: '0.00', ...productValues(field, input) };
    });
    return this.mutate(principal, async (trx, log) => {
      await this.checkOrganization(trx, principal, body.organizationId);
      await requireCatalogProducts(trx, principal, [...seen]);
      const values: Record<string, unknown> = {};
      const changes: Changes = {};
      for (const field of Object.keys(WRITABLE_FIELDS) as WritableField[]) {
        const value = body[field];
        if (value === undefined || value === null) continue;
        values[WRITABLE_FIELDS[field]] = normalized(field, value);
        changes[field] = { from: null, to: normalized(field, value) };
      }
      let order = await orderRepository.insert(trx, {
        ...(values as OrderValues),
        client_id: principal.clientId,
        organization_id: body.organizationId,
        type: body.type,
        created_user: principal.userName,
      });
      const inserted = await productRepository.insertMany(
        trx,
        rows.map((row) => ({
          ...row,
          client_id: principal.clientId,
          order_id: order.id,
          created_user: principal.userName,
        })),
      );
      if (inserted.length > 0) {
        order = await orderRepository.update(
          trx,
          order.client_id,
          order.id,
          {},
          { recomputeTotals: true, bump: false },
        );
        changes.products = {
          from: null,
          to: inserted.map((row) => ({ productId: row.product_id, ...positionState(row) })),
        };
      }
      await historyRepository.insert(trx, order, { action: 'CREATE', changes, userId: principal.userId });
      log.changed(order, 'CREATE_ORDER');
      return presentOrder(order, inserted, this.baseUrl);
    });
  }

  /**
   * Changes the fields present in `body` (null clears a nullable one); read-only fields are ignored (D5.1).
   * @throws 404, 400 `error_order_deleted`, 409 `error_version_conflict`, 400 `error_organization_not_found`
   */
  async patch(principal: Principal, body: OrderPatchBody): Promise<Order> {
    return this.mutate(principal, async (trx, log) => {
      const order = await this.lockForChange(trx, principal, body.id, { versionId: body.versionId });
      const current = presentOrder(order, undefined, this.baseUrl);
      const values: Record<string, unknown> = {};
      const changes: Changes = {};
      for (const field of Object.keys(WRITABLE_FIELDS) as WritableField[]) {
        const value = body[field];
        if (value === undefined) continue;
        if (value === null && (field === 'organizationId' || field === 'type')) continue;
        const next = normalized(field, value);
        if (next === current[field]) continue;
        values[WRITABLE_FIELDS[field]] = next;
        changes[field] = { from: current[field], to: next };
      }
      if (Object.keys(changes).length === 0) return this.orderWithProducts(trx, order);
      if (body.organizationId !== undefined && changes.organizationId)
        await this.checkOrganization(trx, principal, body.organizationId);
      const updated = await this.commitChange(trx, log, principal, order, {
        action: 'UPDATE',
        changes,
        values: values,
      });
      return this.orderWithProducts(trx, updated);
    });
  }

  private async orderWithProducts(db: Kysely<DB>, order: OrderRow): Promise<Order> {
    return presentOrder(
      order,
      await productRepository.listByOrder(db, order.client_id, order.id),
      this.baseUrl,
    );
  }

  /**
   * The serialized body of `GET /api/inbound/{orderId}` (with products) and the `versionId` it shows (for its
   * entity tag, P133), from the cache when possible: UTF-8 bytes when it is or may be cached, the JSON text when
   * product paging (`limit`/`page`) bypasses the cache (the socket writes the text without a copy in between).
   * @param revalidate whether a cache hit must first be checked against the stored `versionId` (the request's
   *   `Cache-Control: no-cache`, P198)
   * @throws 404 `error_not_found` for a missing or foreign id (D2.5)
   */
  async getOrderBody(
    principal: Principal,
    id: number,
    query: OrderGetQuery,
    revalidate = false,
  ): Promise<{ body: Buffer | string; versionId: number }> {
    if (query.limit !== undefined || query.page !== undefined) {
      const limit = query.limit ?? 100;
      const found = await orderRepository.findAnswer(this.db, principal.clientId, id, this.baseUrl, {
        limit,
        offset: ((query.page ?? 1) - 1) * limit,
      });
      if (!found) throw notFound('order', id);
      return { body: found.json, versionId: found.versionId };
    }
    const cached = this.caches.documents.get(id, principal.clientId);
    // The cache serves only while the change listener is connected, so a hit is as fresh as the last
    // notification (P36, P198). Asked to revalidate, a hit is checked against the stored versionId read after
    // the request arrived: a change another process committed and answered is seen even before its
    // notification arrives. Concurrent checks share one query (P185).
    if (
      cached?.version !== undefined &&
      (!revalidate || cached.version === (await this.versionReads.versionOf(principal.clientId, id)))
    )
      return { body: cached.body, versionId: cached.version };
    const readStartedAt = this.caches.documents.beginRead();
    const found = await orderRepository.findAnswer(this.db, principal.clientId, id, this.baseUrl);
    if (!found) throw notFound('order', id);
    const body = Buffer.from(found.json);
    this.caches.documents.store(id, id, principal.clientId, body, readStartedAt, found.versionId);
    return { body, versionId: found.versionId };
  }

  /**
   * The cached document `id` of `principal`'s client as `GET /api/inbound/{orderId}` without query answers it, or
   * undefined when this process's cache does not hold it (then `getOrderBody` reads it).
   */
  cachedOrderBody(principal: Principal, id: number): { body: Buffer; versionId: number } | undefined {
    const cached = this.caches.documents.get(id, principal.clientId);
    return cached?.version === undefined ? undefined : { body: cached.body, versionId: cached.version };
  }

  /**
   * Deletes (`deleted` true or absent) or restores (`deleted=false`) a document (D5.5); repeating either is a
   * no-op. Raises `ORDER`.
   * @throws 404 `error_not_found`
   */
  async setDeleted(principal: Principal, id: number, deleted: boolean): Promise<void> {
    await this.mutate(principal, async (trx, log) => {
      const order = await this.lockForChange(trx, principal, id, { allowDeleted: true });
      if (order.deleted === deleted) return;
      await this.commitChange(trx, log, principal, order, {
        action: deleted ? 'DELETE' : 'RESTORE',
        changes: { deleted: { from: order.deleted, to: deleted } },
        values: { deleted },
      });
    });
  }

  /**
   * Adds a position (D5.3): `productId` required, quantity and price default 0, one row per product.
   * Raises `ORDER`.
   * @throws 400 `error_validation` (`productId` missing or repeated, `price`), 404, 400 `error_order_deleted`,
   *   409 `error_version_conflict`
   */
  async addProduct(principal: Principal, orderId: number, input: OrderProductInput): Promise<OrderProduct> {
    const productId = input.productId;
    if (productId === undefined) throw validationError('productId', 'is required');
    const values = { quantity: 0, price: '0.00', ...productValues('', input) };
    return this.mutate(principal, async (trx, log) => {
      const order = await this.lockForChange(trx, principal, orderId, { versionId: input.versionId });
      await requireCatalogProducts(trx, principal, [productId]);
      if (await productRepository.findInOrder(trx, principal.clientId, orderId, { productId }))
        throw validationError('productId', 'the document already has a position of this product');
      const [row] = await productRepository.insertMany(trx, [
        {
          ...values,
          product_id: productId,
          client_id: principal.clientId,
          order_id: orderId,
          created_user: principal.userName,
        },
      ]);
      const position = row as OrderProductRow;
      await this.commitChange(trx, log, principal, order, {
        action: 'PRODUCT_ADD',
        changes: { [`products.${productId}`]: { from: null, to: positionState(position) } },
        recomputeTotals: true,
      });
      return { ...presentProduct(position), _links: selfLink(this.baseUrl, `${orderPath(orderId)}/product`) };
    });
  }

  /**
   * Updates a position identified by `id` (position id) or else `productId` (D5.3). Raises `ORDER`.
   * The position as GET returns it is accepted: its read-only fields are ignored, and its `orderId` must be the
   * document of the path (P169).
   * @throws 400 `error_validation` (`id` when neither is given, `productId` when it differs from the
   *   position's, `orderId` when it is not the path's, `price`), 404 `error_not_found` (`order`, or
   *   `orderProduct` for an unknown position), 400 `error_order_deleted`, 409 `error_version_conflict`
   */
  async updateProduct(
    principal: Principal,
    orderId: number,
    input: OrderProductInput,
  ): Promise<OrderProduct> {
    if (input.id === undefined && input.productId === undefined)
      throw validationError('id', 'id or productId is required');
    if (input.orderId !== undefined && input.orderId !== orderId)
      throw validationError('orderId', `is not the document of the path (${orderId})`);
    const values = productValues('', input);
    return this.mutate(principal, async (trx, log) => {
      const order = await this.lockForChange(trx, principal, orderId, { versionId: input.versionId });
      const key = input.id !== undefined ? { id: input.id } : { productId: input.productId as number };
      const position = await productRepository.findInOrder(trx, principal.clientId, orderId, key);
      if (!position) throw notFound('orderProduct', input.id ?? (input.productId as number));
      if (input.productId !== undefined && input.productId !== position.product_id)
        throw validationError('productId', "differs from the position's product; add a new position instead");
      const before = presentProduct(position);
      const changed = Object.entries(values).some(
        ([column, value]) => String(position[column as keyof OrderProductRow]) !== String(value),
      );
      const links = selfLink(this.baseUrl, `${orderPath(orderId)}/product`);
      if (!changed) return { ...before, _links: links };
      const updated = await productRepository.update(trx, principal.clientId, position.id, values);
      await this.commitChange(trx, log, principal, order, {
        action: 'PRODUCT_UPDATE',
        changes: {
          [`products.${position.product_id}`]: { from: positionState(position), to: positionState(updated) },
        },
        recomputeTotals: true,
      });
      return { ...presentProduct(updated), _links: links };
    });
  }

  /**
   * Sets the status of one document (D5.4); the current status is a no-op. A closed status stamps `closeDate`
   * and `closeUserId`; `FINISHED` of an INCOME document records its stock (D5.8). Raises `ORDER_STATUS`.
   * @throws 404 `error_not_found`, 400 `error_order_deleted`
   */
  async setStatus(principal: Principal, id: number, status: OrderStatus): Promise<void> {
    await this.mutate(principal, async (trx, log) => {
      const order = await this.lockForChange(trx, principal, id);
      if (order.status === status) return;
      await this.applyStatus(trx, log, principal, [id], status);
    });
  }

  /**
   * Sets the status of up to 10,000 documents, all or nothing (D5.4): duplicates are ignored, documents
   * already in `status` are unchanged. Raises `ORDER_STATUS` per changed document.
   * @throws 404 `error_not_found` `{entity: 'order', id, ids}` listing every missing or foreign id;
   *   else 400 `error_order_deleted` `{id, ids}` listing every deleted one; nothing changes then
   */
  async setStatusBulk(principal: Principal, requested: number[], status: OrderStatus): Promise<void> {
    const ids = [...new Set(requested)];
    await this.mutate(principal, async (trx, log) => {
      const found = new Map(
        (await orderRepository.lockMany(trx, principal.clientId, ids)).map((row) => [row.id, row.deleted]),
      );
      const missing = ids.filter((id) => !found.has(id)).map(String);
      if (missing.length > 0)
        throw new AppError('error_not_found', { entity: 'order', id: missing[0], ids: missing });
      const deleted = ids.filter((id) => found.get(id) === true).map(String);
      if (deleted.length > 0) throw new AppError('error_order_deleted', { id: deleted[0], ids: deleted });
      await this.applyStatus(trx, log, principal, ids, status);
    });
  }

  private async applyStatus(
    trx: Transaction<DB>,
    log: ChangeLog,
    principal: Principal,
    ids: number[],
    status: OrderStatus,
  ): Promise<void> {
    const closed = CLOSED_ORDER_STATUSES.includes(status);
    const changed = await orderRepository.setStatus(
      trx,
      principal.clientId,
      ids,
      status,
      closed,
      principal.userId,
    );
    if (changed.length === 0) return;
    if (status === 'FINISHED')
      await orderRepository.recordIncomeStock(
        trx,
        principal.clientId,
        changed.map((row) => row.id),
      );
    for (const row of changed)
      log.changed(
        { id: row.id, client_id: principal.clientId, organization_id: row.organization_id },
        'ORDER_STATUS',
      );
  }

  /**
   * Sets the marking status (no-op when unchanged). Raises `ORDER`.
   * @throws 404 `error_not_found`, 400 `error_order_deleted`
   */
  async setMarkingStatus(principal: Principal, id: number, status: MarkingStatus): Promise<void> {
    await this.mutate(principal, async (trx, log) => {
      const order = await this.lockForChange(trx, principal, id);
      if (order.marking_status === status) return;
      await this.commitChange(trx, log, principal, order, {
        action: 'MARKING_STATUS',
        changes: { markingStatus: { from: order.marking_status, to: status } },
        values: { marking_status: status },
      });
    });
  }

  /**
   * Reverses the stock recorded at receiving, once (D5.8); without recorded stock a no-op. Raises `ORDER`.
   * @throws 404 `error_not_found`, 400 `error_order_deleted`
   */
  async removeIncomeStock(principal: Principal, id: number): Promise<void> {
    await this.mutate(principal, async (trx, log) => {
      const order = await this.lockForChange(trx, principal, id);
      if (!(await orderRepository.removeIncomeStock(trx, principal.clientId, id))) return;
      await this.commitChange(trx, log, principal, order, {
        action: 'REMOVE_INCOME_STOCK',
        changes: { incomeStockState: { from: 'RECORDED', to: 'REMOVED' } },
      });
    });
  }
}

/** `totalQuantity`/`totalPrice` changes between two versions of a document. */
function totalsChanges(before: OrderRow, after: OrderRow): Changes {
  const changes: Changes = {};
  if (before.total_quantity !== after.total_quantity)
    changes.totalQuantity = { from: before.total_quantity, to: after.total_quantity };
  if (Number(before.total_price) !== Number(after.total_price))
    changes.totalPrice = { from: Number(before.total_price), to: Number(after.total_price) };
  return changes;
}
