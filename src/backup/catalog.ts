/**
 * What a backup holds, read from PostgreSQL's catalog at run time (never a list kept in code, so tables and
 * columns added by later migrations are included without a change here):
 * - our tables: the ordinary and partitioned tables of the service's schema (`current_schema()`, where the
 *   migrations create them), except the migrator's own bookkeeping (`kysely_migration*`, kept as the schema
 *   version instead) and UNLOGGED tables, which by our convention hold state that is cheap to lose and that
 *   PostgreSQL itself empties after a crash (the rate-limit counters, P126);
 * - their columns, without generated ones (PostgreSQL computes those again);
 * - their order by foreign keys: a table comes after every table it references;
 * - the schema's sequences;
 * - the job queue's pending jobs (`pgboss.job` in state created, retry or active): a job exists exactly when the
 *   change that caused it committed (D9.3), so a webhook delivery, receipt refresh or task run that was due in
 *   the snapshot is due again after a restore. Finished jobs, pg-boss's archive and its cron schedules are not
 *   kept: the service records their outcome in its own tables and sets its schedules again on start.
 */
import type pg from 'pg';

/** A table of ours and the columns a backup copies. */
export interface CatalogTable {
  name: string;
  columns: string[];
}

/** Where migrations record what they applied (Kysely's Migrator). */
export const MIGRATION_TABLE = 'kysely_migration';
/** The job queue's schema (pg-boss default). */
export const JOB_SCHEMA = 'pgboss';
/** pg-boss's tables of jobs (pending and finished), which a restore empties as pg-boss's own `clearStorage` does. */
export const JOB_TABLES = [`${JOB_SCHEMA}.job`, `${JOB_SCHEMA}.archive`];
/** pg-boss's internal queues (cron hand-over), recreated by pg-boss itself. */
const INTERNAL_QUEUE_PREFIX = '__pgboss__';

/** A connection to run catalog queries on (a `pg.Client` inside the backup's or restore's transaction). */
export type Queryable = Pick<pg.ClientBase, 'query'>;

/**
 * Our tables in foreign-key order, with their columns.
 * @throws Error naming the tables when foreign keys form a cycle between tables (no load order exists)
 */
export async function ourTables(client: Queryable): Promise<CatalogTable[]> {
  const { rows: tables } = await client.query<{ oid: number; name: string; columns: string[] }>(
    `select c.oid::int as oid, c.relname as name,
            array(select a.attname::text from pg_attribute a
                  where a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped and a.attgenerated = ''
                  order by a.attnum) as columns
       from pg_class c
      where c.relnamespace = (select oid from pg_namespace where nspname = current_schema())
        and c.relkind in ('r', 'p') and not c.relispartition and c.relpersistence = 'p'
        and c.relname not like $1
      order by c.relname`,
    [`${MIGRATION_TABLE}%`],
  );
  const { rows: references } = await client.query<{ from: number; to: number }>(
    `select conrelid::int as "from", confrelid::int as "to" from pg_constraint
      where contype = 'f' and connamespace = (select oid from pg_namespace where nspname = current_schema()) and conrelid <> confrelid`,
  );
  return foreignKeyOrder(tables, references);
}

/**
 * Every table of the service's schema but the migrator's bookkeeping, UNLOGGED ones included: what a restore
 * empties before loading.
 */
export async function tablesToEmpty(client: Queryable): Promise<string[]> {
  const { rows } = await client.query<{ name: string }>(
    `select relname as name from pg_class
      where relnamespace = (select oid from pg_namespace where nspname = current_schema())
        and relkind in ('r', 'p') and not relispartition and relname not like $1
      order by relname`,
    [`${MIGRATION_TABLE}%`],
  );
  return rows.map((row) => row.name);
}

/** Kahn's topological sort; ties keep name order so archives are stable. */
function foreignKeyOrder(
  tables: Array<CatalogTable & { oid: number }>,
  references: Array<{ from: number; to: number }>,
): CatalogTable[] {
  const waitingFor = new Map(tables.map((table) => [table.oid, new Set<number>()]));
  for (const { from, to } of references)
    if (waitingFor.has(from) && waitingFor.has(to)) waitingFor.get(from)?.add(to);
  const ordered: CatalogTable[] = [];
  const done = new Set<number>();
  while (ordered.length < tables.length) {
    const ready = tables.filter(
      (table) => !done.has(table.oid) && [...(waitingFor.get(table.oid) ?? [])].every((oid) => done.has(oid)),
    );
    if (ready.length === 0) {
      const cycle = tables.filter((table) => !done.has(table.oid)).map((table) => table.name);
      throw new Error(`foreign keys form a cycle between ${cycle.join(', ')}: no load order exists`);
    }
    for (const table of ready) {
      done.add(table.oid);
      ordered.push({ name: table.name, columns: table.columns });
    }
  }
  return ordered;
}

/** The schema's sequences and their state (`last_value` as decimal text). */
export async function sequenceStates(
  client: Queryable,
): Promise<Array<{ name: string; lastValue: string; isCalled: boolean }>> {
  const { rows } = await client.query<{ name: string }>(
    `select relname as name from pg_class
      where relnamespace = (select oid from pg_namespace where nspname = current_schema()) and relkind = 'S' order by relname`,
  );
  const states = [];
  for (const { name } of rows) {
    const state = await one<{ lastValue: string; isCalled: boolean }>(
      client,
      `select last_value::text as "lastValue", is_called as "isCalled" from ${quote(name)}`,
    );
    states.push({ name, ...state });
  }
  return states;
}

/** The names of the applied migrations, in order; empty when the database has none. */
export async function appliedMigrations(client: Queryable): Promise<string[]> {
  const { exists } = await one<{ exists: boolean }>(
    client,
    `select to_regclass(quote_ident(current_schema()) || '.' || $1) is not null as exists`,
    [MIGRATION_TABLE],
  );
  if (!exists) return [];
  const { rows: applied } = await client.query<{ name: string }>(
    `select name from ${MIGRATION_TABLE} order by name`,
  );
  return applied.map((row) => row.name);
}

/** Columns of the job table, or undefined when the job queue's schema does not exist. */
export async function jobColumns(client: Queryable): Promise<string[] | undefined> {
  const { columns } = await one<{ columns: string[] | null }>(
    client,
    `select case when to_regclass($1) is null then null else
       array(select attname::text from pg_attribute
              where attrelid = to_regclass($1) and attnum > 0 and not attisdropped order by attnum) end as columns`,
    [`${JOB_SCHEMA}.job`],
  );
  return columns ?? undefined;
}

/** The query that selects `columns` of the pending jobs. */
export const pendingJobsQuery = (columns: string): string =>
  `select ${columns} from ${JOB_SCHEMA}.job
    where state in ('created', 'retry', 'active') and name not like '${INTERNAL_QUEUE_PREFIX}%'`;

/** The queues that have pending jobs. */
export async function pendingJobQueues(client: Queryable): Promise<string[]> {
  const { rows } = await client.query<{ name: string }>(
    `select distinct name from (${pendingJobsQuery('name')}) pending order by name`,
  );
  return rows.map((row) => row.name);
}

/** The one row `text` selects. */
export async function one<T extends pg.QueryResultRow>(
  client: Queryable,
  text: string,
  values: unknown[] = [],
): Promise<T> {
  const { rows } = await client.query<T>(text, values);
  if (!rows[0]) throw new Error(`no row from: ${text}`);
  return rows[0];
}

/** A quoted SQL identifier. */
export const quote = (name: string): string => `"${name.replace(/"/g, '""')}"`;
