/**
 * Statements that span clients on purpose (decision P176, docs/scale-out.md): the admin API's lookups by a bare
 * id, the sweeps and purges of background jobs, start-up sealing. On Citus, where a statement that needs more
 * than one shard is refused (`citus.multi_task_query_log_level = 'error'` for the service's sessions), these
 * lower that level for their own transaction with `set local`; on plain PostgreSQL the setting is an unused
 * placeholder and changes nothing. Every other statement names its client and reaches one shard.
 */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { DB } from './schema.ts';

/**
 * Runs `work` in a transaction (the given one, or a new one) where statements may span clients.
 * @throws whatever `work` throws (a new transaction is then rolled back)
 */
export async function acrossClients<T>(db: Kysely<DB>, work: (trx: Kysely<DB>) => Promise<T>): Promise<T> {
  if (db.isTransaction) {
    await allowMultiShard(db);
    return work(db);
  }
  return db.transaction().execute(async (trx: Transaction<DB>) => {
    await allowMultiShard(trx);
    return work(trx);
  });
}

async function allowMultiShard(db: Kysely<DB>): Promise<void> {
  await sql`set local citus.multi_task_query_log_level = 'off'`.execute(db);
}
