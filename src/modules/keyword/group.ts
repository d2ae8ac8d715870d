/** Factory of the keyword group (spec §4.2, D6): its service once, its routes under `/api/keyword`. */
import type { Runtime } from '../../runtime.ts';
import type { ResourceGroup } from '../group.ts';
import { keywordRoutes } from './routes.ts';
import { KeywordService } from './service.ts';

/** Builds the keyword group over `runtime`. */
export function createKeywordGroup(runtime: Runtime): ResourceGroup {
  const service = new KeywordService(runtime.database.db, runtime.changes, runtime.searches);
  return { name: 'keyword', scope: 'api', prefix: '/keyword', routes: keywordRoutes(service) };
}
