/**
 * The embedded PostgreSQL under Linux's `SCHED_BATCH` scheduling policy (decision P213).
 *
 * The service and its embedded server share the machine's cores. Under the default policy a backend woken by a
 * query the service sends may preempt the service's Node thread on the spot (the kernel's wake-up preemption):
 * the one event loop that serves every connection then waits, in the middle of its `write`, for the query it just
 * sent. A `SCHED_BATCH` process has the same share of the CPU but never preempts on waking; it runs when a core is
 * free or at the scheduler's next tick. The policy is set on the postmaster and the processes it has started
 * (checkpointer, WAL writer, I/O workers); every backend and worker it starts afterwards inherits it. An
 * unprivileged process may set it on processes of its own user (`sched_setscheduler(2)`); `chrt` is util-linux's.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

/**
 * Sets `SCHED_BATCH` on process `pid` and its children (Linux only; elsewhere nothing happens).
 * @returns undefined when set or not on Linux, else why it was not (no `chrt`, refused): the server runs as before
 *   under the default policy, so the caller only tells
 */
export async function scheduleAsBatch(pid: number): Promise<string | undefined> {
  if (process.platform !== 'linux') return undefined;
  const children = await fs.readFile(`/proc/${pid}/task/${pid}/children`, 'utf8').catch(() => '');
  try {
    await Promise.all(
      [String(pid), ...children.split(' ').filter(Boolean)].map((each) =>
        execFileAsync('chrt', ['--batch', '--pid', '0', each]),
      ),
    );
    return undefined;
  } catch (error) {
    return (error as Error).message.split('\n')[0];
  }
}
