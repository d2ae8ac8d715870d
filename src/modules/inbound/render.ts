/**
 * Renders documents exactly as `GET /api/inbound/{orderId}` returns them (with products), for event bodies
 * (spec §6, D9.2). Two queries for any number of ids, so a bulk status change of 1,000 documents renders in
 * constant round trips.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import type { RenderEntities } from '../../events/outbox.ts';
import { presentOrder, type OrderProductRow } from './presenter.ts';
import { orderRepository, productRepository } from './repository.ts';
import type { Order } from './schemas.ts';

/**
 * The documents with the given ids (any client: the ids come from the caller's own change), keyed by id.
 * Ids that do not exist are absent from the map.
 * @param baseUrl `PUBLIC_BASE_URL` for `_links` (empty = relative)
 */
export async function renderOrders(
  db: Kysely<DB>,
  clientId: number,
  ids: readonly number[],
  baseUrl: string,
): Promise<Map<number, Order>> {
  const rendered = new Map<number, Order>();
  if (ids.length === 0) return rendered;
  const [orders, products] = await Promise.all([
    orderRepository.findMany(db, clientId, ids),
    productRepository.listByOrders(db, clientId, ids),
  ]);
  const byOrder = new Map<number, OrderProductRow[]>();
  for (const product of products) {
    const list = byOrder.get(product.order_id);
    if (list) list.push(product);
    else byOrder.set(product.order_id, [product]);
  }
  for (const order of orders)
    rendered.set(order.id, presentOrder(order, byOrder.get(order.id) ?? [], baseUrl));
  return rendered;
}

/** A `RenderEntities` for the event recorder (D9.3) that renders documents with `renderOrders`. */
export function orderRenderer(baseUrl: string): RenderEntities {
  return (trx, clientId, ids) => renderOrders(trx, clientId, ids, baseUrl);
}
