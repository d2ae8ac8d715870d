/**
 * The task kind `MARKET1_DICTIONARY_TASK` (D11.3, P118–P119): refreshes the catalog dictionaries that
 * `GET /knowledge/getParams` and `GET /option/fetchOption` serve — subjects (categories) with their parent, their
 * parameters and the options of their `SUGGEST` parameters — from the organization's Market1 connector.
 *
 * Subjects are read from Market1 in batches of `SUBJECTS_PER_READ`; each subject is then stored in a transaction
 * of its own (`loadDictionary`: the category upserted, its parameters and options replaced), so a cancel or a
 * failure leaves every subject either as it was or fully refreshed. Rerunning is harmless: a subject stored
 * twice ends the same. Subjects Market1 does not know are left as they are (P119).
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import type { ChangeRunner } from '../../changes/change-runner.ts';
import { Market1Error, toAppError } from '../../connectors/market1/errors.ts';
import { loadDictionary } from '../catalog/dictionary.ts';
import type { Market1Access } from '../campaign/market1-access.ts';
import { defineTask, type TaskDefinition } from '../task/definition.ts';

/** The TmsTask `type` of a dictionary refresh. */
export const DICTIONARY_TASK_TYPE = 'MARKET1_DICTIONARY_TASK';

/** Subjects read from Market1 per `readDictionary` call (one list of subjects, then their parameters). */
export const SUBJECTS_PER_READ = 20;

/** `properties` of a refresh task: the subjects to refresh, or null for every category already stored. */
export interface DictionaryRefreshProperties {
  subjectIds: number[] | null;
}

/**
 * Runs `call` on Market1; a refused key or a request Market1 rejects becomes the task's `AppError` (ERROR, not
 * retried: `error_token_expired_or_revoked`, `error_market1_api`); throttling and outages stay plain errors, so
 * the task is retried after its backoff (P84).
 */
async function onMarket1<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof Market1Error && (error.kind === 'auth' || error.kind === 'api'))
      throw toAppError(error);
    throw error;
  }
}

/** The ids of every category the service stores, ascending. */
async function storedCategoryIds(db: Kysely<DB>): Promise<number[]> {
  const rows = await db.selectFrom('market_category').select('id').orderBy('id').execute();
  return rows.map((row) => row.id);
}

/**
 * Defines the refresh kind over the service's database, change runner and Market1 access. `processedQuantity`
 * counts the subjects handled (stored or unknown to Market1); progress is their share of all.
 * @throws (as the task's ERROR) `error_prepared_integration_not_found` when the organization lost its integration,
 *   `error_token_expired_or_revoked`, `error_market1_api`
 */
export function dictionaryRefreshTask(
  db: Kysely<DB>,
  changes: ChangeRunner,
  access: Market1Access,
): TaskDefinition<DictionaryRefreshProperties> {
  return defineTask<DictionaryRefreshProperties>({
    type: DICTIONARY_TASK_TYPE,
    attempts: 3,
    backoffSeconds: 30,
    timeoutSeconds: 3600,
    async perform({ task, properties, progress, checkCancelled }) {
      const subjectIds = properties.subjectIds ?? (await storedCategoryIds(db));
      if (task.organizationId === null) throw new Error('a dictionary refresh needs its organization');
      const market1 = await access.connector({
        clientId: task.clientId,
        organizationId: task.organizationId,
      });
      let handled = 0;
      for (let start = 0; start < subjectIds.length; start += SUBJECTS_PER_READ) {
        await checkCancelled();
        const batch = subjectIds.slice(start, start + SUBJECTS_PER_READ);
        const dictionary = await onMarket1(() => market1.readDictionary(batch));
        for (const category of dictionary.categories) {
          await checkCancelled();
          await changes.run((trx) => loadDictionary(trx, { categories: [category] }));
        }
        handled += batch.length;
        await progress((handled / subjectIds.length) * 100, handled);
      }
    },
  });
}
