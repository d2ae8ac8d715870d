/**
 * Factory of the knowledge group (D11.3, P118): the refresh of the catalog dictionaries from Market1 under
 * `/api/knowledge` and its task kind `MARKET1_DICTIONARY_TASK`. The dictionaries themselves are served by the
 * catalog group (`GET /knowledge/getParams`, `GET /option/fetchOption`).
 */
import type { Runtime } from '../../runtime.ts';
import type { ResourceGroup } from '../group.ts';
import type { TaskService } from '../task/service.ts';
import { Market1Access } from '../campaign/market1-access.ts';
import { dictionaryRefreshTask } from './refresh-task.ts';
import { knowledgeRoutes } from './routes.ts';
import { KnowledgeService } from './service.ts';

/** Builds the knowledge group over `runtime`; `tasks` creates the refresh tasks. */
export function createKnowledgeGroup(runtime: Runtime, tasks: TaskService): ResourceGroup {
  const db = runtime.database.db;
  const access = new Market1Access(db, runtime.secrets, runtime.config);
  runtime.onClose(async () => access.close());
  const kind = dictionaryRefreshTask(db, runtime.changes, access);
  const service = new KnowledgeService(runtime.changes, access, tasks, kind);
  return {
    name: 'knowledge',
    scope: 'api',
    prefix: '/knowledge',
    routes: knowledgeRoutes(service),
    tasks: [kind],
  };
}
