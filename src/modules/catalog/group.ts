/**
 * Factory of the catalog group (spec §4.7, D11): builds its service once, registers how a product renders for
 * `CREATE_PRODUCT` events (the row `GET /api/product/find` returns), and returns its routes under `/api`
 * (`/api/brand`, `/api/category`, `/api/model`, `/api/product`).
 */
import type { Runtime } from '../../runtime.ts';
import type { ResourceGroup } from '../group.ts';
import { catalogRoutes } from './routes.ts';
import { CatalogService } from './service.ts';

/** Builds the catalog group over `runtime`. */
export function createCatalogGroup(runtime: Runtime): ResourceGroup {
  const catalog = new CatalogService(runtime.database.db, runtime.changes);
  runtime.changes.registerRenderer(['CREATE_PRODUCT'], (trx, ids) => catalog.renderProducts(trx, ids));
  return { name: 'catalog', scope: 'api', prefix: '', routes: catalogRoutes(catalog) };
}
