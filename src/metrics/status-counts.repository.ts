/**
 * Counts of tasks and receipts by status over every client, read on each scrape of `/metrics` (P131). Operator
 * figures: no client's data leaves through them, only counts. Reads spanning clients (P176).
 */
import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';
import { acrossClients } from '../db/cross-tenant.ts';

/** Rows of one table counted by `status`. */
export interface StatusCount {
  status: string;
  count: number;
}

/** SQL of the status counts. */
export const statusCountsRepository = {
  /** Tasks (TmsTask, D10.3) by status. */
  async tasks(db: Kysely<DB>): Promise<StatusCount[]> {
    const { rows } = await acrossClients(db, (trx) =>
      sql<StatusCount>`SELECT status, count(*)::int AS count FROM task GROUP BY status`.execute(trx),
    );
    return rows;
  },

  /** Receipts by status. */
  async receipts(db: Kysely<DB>): Promise<StatusCount[]> {
    const { rows } = await acrossClients(db, (trx) =>
      sql<StatusCount>`SELECT status, count(*)::int AS count FROM receipt GROUP BY status`.execute(trx),
    );
    return rows;
  },
};
