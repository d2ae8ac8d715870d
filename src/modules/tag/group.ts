/** Factory of the tag group (spec §4.5, D7): its service once, its routes under `/api/tag`. */
import type { Runtime } from '../../runtime.ts';
import type { ResourceGroup } from '../group.ts';
import { tagRoutes } from './routes.ts';
import { TagService } from './service.ts';

/** Builds the tag group over `runtime`. */
export function createTagGroup(runtime: Runtime): ResourceGroup {
  const service = new TagService(runtime.database.db, runtime.changes, runtime.searches, runtime.cursors);
  return { name: 'tag', scope: 'api', prefix: '/tag', routes: tagRoutes(service) };
}
