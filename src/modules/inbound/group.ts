/**
 * Factory of the inbound group (spec §4.1, D5): builds its document caches and services once over a runtime,
 * registers how its documents render for the events it raises (`CREATE_ORDER`, `ORDER`, `ORDER_STATUS`), and
 * returns its routes under `/api/inbound` and the cached document's path answered in front of them (P223).
 */
import type { Runtime } from '../../runtime.ts';
import type { ResourceGroup } from '../group.ts';
import { InboundFindService } from './find.service.ts';
import { InboundCaches } from './order-cache.ts';
import { PackageService } from './packages.service.ts';
import { orderRenderer } from './render.ts';
import { cachedDocumentRoute, inboundRoutes } from './routes.ts';
import { InboundService } from './service.ts';

/** The services of the inbound group. */
export interface InboundServices {
  orders: InboundService;
  packages: PackageService;
  lists: InboundFindService;
}

/** Builds the inbound services over `runtime`. */
export function createInboundServices(runtime: Runtime): InboundServices {
  const caches = new InboundCaches();
  caches.attach(runtime.notifier);
  const baseUrl = runtime.config.publicBaseUrl;
  const db = runtime.database.db;
  runtime.changes.registerRenderer(['CREATE_ORDER', 'ORDER', 'ORDER_STATUS'], orderRenderer(baseUrl));
  const orders = new InboundService(db, runtime.changes, caches, baseUrl);
  return {
    orders,
    packages: new PackageService(orders, db, baseUrl),
    lists: new InboundFindService(db, baseUrl, caches, runtime.cursors, runtime.searches),
  };
}

/** The inbound group. */
export function createInboundGroup(runtime: Runtime): ResourceGroup {
  const services = createInboundServices(runtime);
  return {
    name: 'inbound',
    scope: 'api',
    prefix: '/inbound',
    routes: inboundRoutes(services),
    cachedRoutes: [cachedDocumentRoute(services.orders)],
  };
}
