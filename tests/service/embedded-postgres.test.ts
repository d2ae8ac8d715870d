import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import {
  DataDirInUseError,
  runningEmbeddedUrl,
  startEmbeddedPostgres,
  type EmbeddedPostgresHandle,
} from '../../src/db/embedded-postgres.ts';

const TIMEOUT = 60_000;
const childScript = fileURLToPath(new URL('../fixtures/embedded-child.ts', import.meta.url));
const root = await fs.mkdtemp(path.join(os.tmpdir(), 'seller-ops-embedded-pg-'));
// as root, PostgreSQL runs as an unprivileged user that must be able to enter the directory (mkdtemp makes it 0700)
await fs.chmod(root, 0o755);
const children: ChildProcess[] = [];
const handles: EmbeddedPostgresHandle[] = [];

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  for (const handle of handles) await handle.stop();
  // nothing of ours may keep running: any server left on a test directory fails the suite
  const leftovers: string[] = [];
  for (const dir of await fs.readdir(root)) {
    const pidFile = path.join(root, dir, 'pg', 'postmaster.pid');
    if (!existsSync(pidFile)) continue;
    const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
    if (isAlive(pid)) {
      leftovers.push(`${dir}: pid ${pid}`);
      process.kill(pid, 'SIGINT');
    }
  }
  await fs.rm(root, { recursive: true, force: true });
  expect(leftovers).toEqual([]);
}, TIMEOUT);

async function start(dataDir: string): Promise<EmbeddedPostgresHandle> {
  const handle = await startEmbeddedPostgres({ dataDir });
  handles.push(handle);
  return handle;
}

async function query<R extends pg.QueryResultRow>(url: string, sql: string): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(sql)).rows;
  } finally {
    await client.end();
  }
}

/** Runs the fixture on `dataDir` in a separate Node process and waits for its `READY` line. */
async function startChild(
  dataDir: string,
  ...args: string[]
): Promise<{ child: ChildProcess; output: () => string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', childScript, dataDir, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (/^READY /m.test(output)) resolve();
    });
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('exit', (code) => reject(new Error(`child exited (${code}) before READY:\n${output}`)));
  });
  return { child, output: () => output };
}

async function kill(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill(signal);
  await exited;
}

/** Whether `pid` runs (an exited process awaiting reaping by init counts as gone). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return !existsSync('/proc/self'); // no procfs: trust kill(0)
  }
}

function postmasterPid(dataDir: string): number {
  return Number(readFileSync(path.join(dataDir, 'pg', 'postmaster.pid'), 'utf8').split('\n')[0]);
}

/** The scheduling policy of process `pid` (`/proc/<pid>/stat` field 41): 0 SCHED_OTHER, 3 SCHED_BATCH. */
function schedulingPolicy(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (in parentheses, which may hold spaces) start at field 3.
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[41 - 3]);
}

const SCHED_BATCH = 3;

describe('startEmbeddedPostgres', () => {
  it.runIf(process.platform === 'linux')(
    'runs the server, and every backend it starts, under SCHED_BATCH (P213)',
    async () => {
      const dataDir = path.join(root, 'batch');
      const handle = await start(dataDir);
      expect(schedulingPolicy(postmasterPid(dataDir))).toBe(SCHED_BATCH);
      const client = new pg.Client({ connectionString: handle.databaseUrl });
      await client.connect();
      try {
        const { rows } = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
        expect(schedulingPolicy(rows[0]?.pid ?? 0)).toBe(SCHED_BATCH);
      } finally {
        await client.end();
      }
      await handle.stop();
    },
    TIMEOUT,
  );

  it(
    'creates a cluster, serves queries, and keeps data across a warm restart',
    async () => {
      const dataDir = path.join(root, 'restart');
      let t0 = performance.now();
      const first = await start(dataDir);
      const firstMs = performance.now() - t0;
      expect(first.initialised).toBe(true);
      expect(first.adminUrl).toMatch(/^postgres:\/\/seller_ops:[^@]+@127\.0\.0\.1:\d+\/postgres$/);
      expect(first.databaseUrl).toMatch(/^postgres:\/\/seller_ops:[^@]+@127\.0\.0\.1:\d+\/seller_ops$/);
      expect(await query(first.databaseUrl, 'select 1 as one')).toEqual([{ one: 1 }]);
      await query(
        first.databaseUrl,
        "create table kept (id int primary key, note text); insert into kept values (1, 'жёлтый')",
      );
      await first.stop();
      await first.stop(); // idempotent
      expect(existsSync(path.join(dataDir, 'seller-ops.lock'))).toBe(false);

      t0 = performance.now();
      const warm = await start(dataDir);
      const warmMs = performance.now() - t0;
      expect(warm.initialised).toBe(false);
      expect(await query(warm.databaseUrl, 'select note, upper(note) as upper from kept')).toEqual([
        { note: 'жёлтый', upper: 'ЖЁЛТЫЙ' },
      ]);
      console.log(
        `embedded PostgreSQL: first start ${firstMs.toFixed(0)} ms, warm start ${warmMs.toFixed(0)} ms`,
      );

      const credentials = statSync(path.join(dataDir, 'pg-credentials.json'));
      expect(credentials.mode & 0o777).toBe(0o600);
      const cluster = statSync(path.join(dataDir, 'pg'));
      if (process.getuid?.() === 0) {
        // PostgreSQL refuses root, so the cluster belongs to an unprivileged user
        expect(cluster.uid).not.toBe(0);
        expect(statSync(path.join(dataDir, 'pg', 'PG_VERSION')).uid).toBe(cluster.uid);
      } else {
        expect(cluster.uid).toBe(process.getuid?.());
      }
      await warm.stop();
    },
    TIMEOUT,
  );

  it(
    'refuses a data directory held by another live process',
    async () => {
      const dataDir = path.join(root, 'in-use');
      const { child } = await startChild(dataDir);
      const attempt = startEmbeddedPostgres({ dataDir });
      await expect(attempt).rejects.toBeInstanceOf(DataDirInUseError);
      await expect(attempt).rejects.toThrow(
        `data directory ${dataDir} is in use by another seller-ops process (pid ${child.pid})`,
      );
      // the holder is undisturbed, and its server can be shared (as the CLI does)
      const pid = postmasterPid(dataDir);
      expect(isAlive(pid)).toBe(true);
      const shared = await runningEmbeddedUrl(dataDir);
      expect(shared).toBeDefined();
      expect(await query(shared ?? '', 'select count(*)::int as n from child_rows')).toEqual([{ n: 100 }]);

      // the same process asking twice, even concurrently, gets one server and one refusal
      const twice = await Promise.allSettled([
        start(path.join(root, 'twice')),
        start(path.join(root, 'twice')),
      ]);
      expect(twice.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
      for (const r of twice) {
        if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(DataDirInUseError);
        else await r.value.stop();
      }

      // with no SIGTERM handler of its own, the process stops its server and dies of the signal
      await kill(child, 'SIGTERM');
      expect(child.signalCode).toBe('SIGTERM');
      await expect.poll(() => isAlive(pid), { timeout: 10_000 }).toBe(false);
      expect(existsSync(path.join(dataDir, 'seller-ops.lock'))).toBe(false);
      expect(await runningEmbeddedUrl(dataDir)).toBeUndefined();
    },
    TIMEOUT,
  );

  it(
    'recovers the PostgreSQL orphaned by a SIGKILLed service, with its committed data',
    async () => {
      const dataDir = path.join(root, 'orphan');
      const { child } = await startChild(dataDir);
      const orphan = postmasterPid(dataDir);
      await kill(child, 'SIGKILL');
      expect(isAlive(orphan)).toBe(true); // PostgreSQL outlives the killed service

      const handle = await start(dataDir);
      expect(handle.initialised).toBe(false);
      expect(isAlive(orphan)).toBe(false);
      expect(postmasterPid(dataDir)).not.toBe(orphan);
      expect(await query(handle.databaseUrl, 'select count(*)::int as n from child_rows')).toEqual([
        { n: 100 },
      ]);
      await handle.stop();
    },
    TIMEOUT,
  );

  it(
    'leaves SIGTERM to an application that handles it, so it can use the database while shutting down',
    async () => {
      const dataDir = path.join(root, 'graceful');
      const { child, output } = await startChild(dataDir, 'handle-signals');
      const pid = postmasterPid(dataDir);
      await kill(child, 'SIGTERM');
      expect(output()).toContain('DRAINED 100');
      expect(child.exitCode).toBe(0);
      expect(isAlive(pid)).toBe(false);
    },
    TIMEOUT,
  );

  it(
    'starts over a stale postmaster.pid whose PID now belongs to an unrelated process',
    async () => {
      const dataDir = path.join(root, 'stale-pid');
      await (await start(dataDir)).stop();
      // a pid file left by a crash, its PID since reused by an unrelated process
      const unrelated = spawn('sleep', ['60'], { stdio: 'ignore' });
      children.push(unrelated);
      const pidFile = path.join(dataDir, 'pg', 'postmaster.pid');
      await fs.writeFile(
        pidFile,
        `${unrelated.pid}\n${path.join(dataDir, 'pg')}\n0\n5432\n\n127.0.0.1\n0 0\nready\n`,
      );
      if (process.getuid?.() === 0) await fs.chown(pidFile, statSync(path.join(dataDir, 'pg')).uid, 0);
      const handle = await start(dataDir);
      expect(await query(handle.databaseUrl, 'select 1 as one')).toEqual([{ one: 1 }]);
      await handle.stop();
      expect(isAlive(unrelated.pid ?? 0)).toBe(true);
      await kill(unrelated, 'SIGKILL');
    },
    TIMEOUT,
  );

  it.runIf(process.getuid?.() === 0)(
    'as root, names a directory on the way that PostgreSQL’s user cannot enter, with the fix',
    async () => {
      const closed = path.join(root, 'closed');
      await fs.mkdir(closed, { mode: 0o700 });
      await fs.chmod(closed, 0o700);
      await expect(start(path.join(closed, 'data'))).rejects.toThrow(
        `cannot enter ${closed} on the way to its data directory; put seller-ops and its data directory ` +
          `elsewhere or allow it in (chmod o+x ${closed})`,
      );
    },
    TIMEOUT,
  );
});
