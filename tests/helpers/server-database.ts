/**
 * A fresh database on the server of the run's database, for tests that need one of their own (a first deploy,
 * workers with test settings, a restore target). On a Citus cluster (docs/scale-out.md) a database is usable only
 * when it exists on every node with the `citus` extension and the workers are registered in it, so there it is
 * created on the coordinator and on every worker of the run's database, and it inherits the run's multi-shard
 * guard (`citus.multi_task_query_log_level`, decision P175).
 */
import pg from 'pg';
import { testDatabaseUrl } from './test-app.ts';

/** A database created for a test, and how to drop it (on every node). */
export interface ServerDatabase {
  url: string;
  drop(): Promise<void>;
}

interface Node {
  host: string;
  port: number;
}

/** Runs `work` on a session to `url`, closed afterwards. */
async function withSession<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** `base` with its host, port and database replaced. */
function urlOf(base: string, database: string, node?: Node): string {
  const url = new URL(base);
  url.pathname = `/${database}`;
  if (node) {
    url.hostname = node.host;
    url.port = String(node.port);
  }
  return url.toString();
}

/** The Citus layout of the run's database: its coordinator, workers and guard level; undefined off Citus. */
async function citusLayout(base: string) {
  return withSession(base, async (client) => {
    const extension = await client.query(`select 1 from pg_extension where extname = 'citus'`);
    if (extension.rowCount !== 1) return undefined;
    const nodes = await client.query<{ host: string; port: number; coordinator: boolean }>(
      `select nodename as host, nodeport as port, groupid = 0 as coordinator from pg_dist_node
       where noderole = 'primary' and isactive order by nodeid`,
    );
    const guard = await client.query<{ level: string }>(
      `select current_setting('citus.multi_task_query_log_level') as level`,
    );
    const coordinator = nodes.rows.find((node) => node.coordinator);
    if (!coordinator) throw new Error('the Citus cluster of the test run has no coordinator registered');
    return {
      coordinator,
      workers: nodes.rows.filter((node) => !node.coordinator),
      guard: guard.rows[0]?.level ?? 'off',
    };
  });
}

/**
 * Creates database `name` (letters, digits and `_` only) on the run's server, on every node of a Citus cluster.
 * @throws the server's error (e.g. the name is taken)
 */
export async function createServerDatabase(name: string): Promise<ServerDatabase> {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a plain database name: ${name}`);
  const base = testDatabaseUrl();
  const citus = await citusLayout(base);
  const url = urlOf(base, name);
  await withSession(base, (client) => client.query(`create database ${name}`));
  if (citus) {
    for (const worker of citus.workers) {
      await withSession(urlOf(base, 'postgres', worker), (client) => client.query(`create database ${name}`));
      await withSession(urlOf(base, name, worker), (client) => client.query('create extension citus'));
    }
    await withSession(url, async (client) => {
      await client.query('create extension citus');
      await client.query('select citus_set_coordinator_host($1, $2)', [
        citus.coordinator.host,
        citus.coordinator.port,
      ]);
      for (const worker of citus.workers) await addWorker(client, worker);
      await client.query(
        `alter database ${name} set citus.multi_task_query_log_level = ${client.escapeLiteral(citus.guard)}`,
      );
    });
  }
  return {
    url,
    async drop() {
      await dropDatabase(base, name);
      for (const worker of citus?.workers ?? []) await dropDatabase(urlOf(base, 'postgres', worker), name);
    },
  };
}

/** Citus's error when a node's part of a coordinated transaction failed (it carries no SQLSTATE of its own). */
const NODE_TRANSACTION_FAILED = /^failure on connection marked as essential/;

/**
 * Registers `worker` in the database of `client`. `citus_add_node` syncs the metadata to the worker in a
 * coordinated transaction; on a loaded cluster the worker's part of it can fail for a moment,
 * so a failed registration, which changed nothing, is tried again a few times.
 */
async function addWorker(client: pg.Client, worker: Node): Promise<void> {
  await tryAgain(
    3,
    (error) => error instanceof Error && NODE_TRANSACTION_FAILED.test(error.message),
    () => client.query('select citus_add_node($1, $2)', [worker.host, worker.port]),
  );
}

/** SQLSTATE `object_in_use`: a session of the database did not end within the 5 s `with (force)` waits. */
const OBJECT_IN_USE = '55006';

/**
 * Drops database `name` on the server of `url`, ending its sessions (`with (force)`); on a loaded machine a session
 * (on Citus, its maintenance daemon's) can outlast the server's 5 s wait, so the drop is tried again a few times.
 */
async function dropDatabase(url: string, name: string): Promise<void> {
  await tryAgain(
    5,
    (error) => (error as { code?: string }).code === OBJECT_IN_USE,
    () => withSession(url, (client) => client.query(`drop database if exists ${name} with (force)`)),
  );
}

/** Runs `work` up to `attempts` times, 1 s apart, while it fails with an error `transient` accepts; else rethrows. */
async function tryAgain(
  attempts: number,
  transient: (error: unknown) => boolean,
  work: () => Promise<unknown>,
) {
  for (let attempt = 1; ; attempt += 1) {
    try {
      await work();
      return;
    } catch (error) {
      if (attempt === attempts || !transient(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
  }
}
