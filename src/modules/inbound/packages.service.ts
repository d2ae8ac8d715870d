/**
 * Cargo places (D5.6) and packing divergence (D5.7) of inbound documents. Changes go through
 * `InboundService.mutate`, so they share its locking, versioning, history, events and cache invalidation.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import type { Principal } from '../../http/auth.ts';
import { notFound, validationError } from '../../http/errors.ts';
import type { InboundService } from './service.ts';
import { packageRepository, type PackageItemWrite, type PackageWrite } from './packages.repository.ts';
import { presentPackage, selfLink, type OrderPackageItemRow } from './presenter.ts';
import { orderRepository, productRepository } from './repository.ts';
import type { OrderPackage, TotalDivergence } from './schemas.ts';

/** Cargo places and divergence over the documents of `InboundService`. */
export class PackageService {
  constructor(
    private readonly orders: InboundService,
    private readonly db: Kysely<DB>,
    private readonly baseUrl: string,
  ) {}

  /**
   * Replaces the document's cargo places (D5.6): places with `packageId` are updated, new ones created, missing
   * ones removed; every item's product is taken from its position. Raises `ORDER`.
   * @throws 404 `error_not_found` (`order`; `orderPackage` for a `packageId` not of this document);
   *   400 `error_validation` `<i>.items.<j>.orderProductId` for an item whose position is not of this document,
   *   `<i>.packageId` for a repeated place; 400 `error_order_deleted`
   */
  async replace(principal: Principal, orderId: number, packages: OrderPackage[]): Promise<void> {
    await this.orders.mutate(principal, async (trx, log) => {
      const order = await this.orders.lockForChange(trx, principal, orderId);
      const [positions, existing] = await Promise.all([
        productRepository.listByOrder(trx, principal.clientId, orderId),
        packageRepository.ids(trx, principal.clientId, orderId),
      ]);
      const productOf = new Map(positions.map((row) => [row.id, row.product_id]));
      const seen = new Set<number>();
      const writes: PackageWrite[] = [];
      const items: PackageItemWrite[] = [];
      packages.forEach((input, index) => {
        if (input.packageId !== undefined) {
          if (!existing.has(input.packageId)) throw notFound('orderPackage', input.packageId);
          if (seen.has(input.packageId))
            throw validationError(`${index}.packageId`, 'the cargo place is listed twice');
          seen.add(input.packageId);
        }
        writes.push({
          ...(input.packageId !== undefined && { id: input.packageId }),
          number: input.number ?? null,
          width: input.width ?? null,
          height: input.height ?? null,
          length: input.length ?? null,
          weight: input.weight ?? null,
        });
        (input.items ?? []).forEach((item, itemIndex) => {
          const productId = productOf.get(item.orderProductId);
          if (productId === undefined)
            throw validationError(
              `${index}.items.${itemIndex}.orderProductId`,
              'is not a position of this document',
            );
          items.push({
            packageIndex: index,
            orderProductId: item.orderProductId,
            productId,
            quantity: item.quantity,
          });
        });
      });
      await packageRepository.replace(trx, order, writes, items);
      await this.orders.commitChange(trx, log, principal, order, {
        action: 'PACKAGES',
        changes: {
          packages: { from: existing.size, to: writes.length },
          packageItems: { from: null, to: items.length },
        },
      });
    });
  }

  /**
   * The document's cargo places with their items, by place id.
   * @throws 404 `error_not_found`
   */
  async list(principal: Principal, orderId: number): Promise<OrderPackage[]> {
    const order = await orderRepository.find(this.db, principal.clientId, orderId);
    if (!order) throw notFound('order', orderId);
    const { packages, items } = await packageRepository.list(this.db, principal.clientId, orderId);
    const byPackage = new Map<number, OrderPackageItemRow[]>();
    for (const item of items) {
      const list = byPackage.get(item.package_id);
      if (list) list.push(item);
      else byPackage.set(item.package_id, [item]);
    }
    return packages.map((row) => presentPackage(row, byPackage.get(row.id) ?? []));
  }

  /**
   * Packing divergence (D5.7): per position supplied = its quantity, packed = the sum of its items; only the
   * positions where they differ are listed; totals cover every position.
   * @throws 404 `error_not_found`
   */
  async divergence(principal: Principal, orderId: number): Promise<TotalDivergence> {
    const order = await orderRepository.find(this.db, principal.clientId, orderId);
    if (!order) throw notFound('order', orderId);
    const rows = await productRepository.packedQuantities(this.db, principal.clientId, orderId);
    let totalSupplied = 0;
    let totalPacked = 0;
    const divergence: TotalDivergence['divergence'] = [];
    for (const row of rows) {
      totalSupplied += row.quantity;
      totalPacked += row.packed;
      if (row.quantity !== row.packed)
        divergence.push({
          orderId,
          product: { id: row.product_id, name: row.product_name, article: row.article, barcode: row.barcode },
          supplyQuantity: row.quantity,
          packedQuantity: row.packed,
        });
    }
    return {
      divergence,
      totalSupplied,
      totalPacked,
      _links: selfLink(this.baseUrl, `/api/inbound/${orderId}/divergence`),
    };
  }

  /**
   * Sets each position's quantity to its packed quantity (D5.7), recomputing the totals; no-op without
   * divergence. History action DIVERGENCE_FIX with the changed positions. Raises `ORDER`.
   * @throws 404 `error_not_found`, 400 `error_order_deleted`
   */
  async fix(principal: Principal, orderId: number): Promise<void> {
    await this.orders.mutate(principal, async (trx, log) => {
      const order = await this.orders.lockForChange(trx, principal, orderId);
      const changed = await productRepository.fixDivergence(trx, principal.clientId, orderId);
      if (changed.length === 0) return;
      await this.orders.commitChange(trx, log, principal, order, {
        action: 'DIVERGENCE_FIX',
        changes: Object.fromEntries(
          changed.map((row) => [`products.${row.product_id}.quantity`, { from: row.from, to: row.to }]),
        ),
        recomputeTotals: true,
      });
    });
  }
}
