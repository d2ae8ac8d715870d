/**
 * Factory of the catalog group (spec §4.7, D11): builds its service once, registers how a product renders for
 * `CREATE_PRODUCT` events (the row `GET /api/product/find` returns), and returns its routes under `/api`
 * (`/api/brand`, `/api/category`, `/api/model`, `/api/product`) and the dictionary lookups at `/knowledge` and
 * `/option`.
 */
import type { Runtime } from '../../runtime.ts';
import type { ResourceGroup } from '../group.ts';
import { dictionaryRoutes } from './dictionary.routes.ts';
import { catalogRoutes } from './routes.ts';
import { CatalogService } from './service.ts';

/** Builds the catalog groups over `runtime`: the API and the dictionary lookups (D11.3). */
export function createCatalogGroups(runtime: Runtime): ResourceGroup[] {
  const catalog = new CatalogService(
    runtime.database.db,
    runtime.changes,
    runtime.cursors,
    runtime.searches,
    runtime.database.distributed,
  );
  runtime.changes.registerRenderer(['CREATE_PRODUCT'], (trx, clientId, ids) =>
    catalog.renderProducts(trx, clientId, ids),
  );
  return [
    { name: 'catalog', scope: 'api', prefix: '', routes: catalogRoutes(catalog) },
    {
      name: 'catalog dictionaries',
      scope: 'root',
      prefix: '',
      routes: dictionaryRoutes(runtime.database.db, runtime.authenticator),
    },
  ];
}
