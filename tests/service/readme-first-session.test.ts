/**
 * The README's first session, walked as a reader types it: every command of the `sh` blocks of "A first
 * session" and "Operator commands", in order, run by bash from the repository against a fresh demo service
 * (started as `npm start` starts it). What a reader adapts is adapted the same way: the address of this run's
 * service instead of `127.0.0.1:8080` (the examples read it from `SELLER_OPS_URL`, the CLI finds the database
 * in `DATA_DIR`), the demo WRITE token where the README shows `so_1V1K…`, a value where it shows `…`. Commands
 * that keep running (`npm start`, `serve`, `sandbox`) are the service this test started, or are asked for their
 * `--help`. A change of the README that this walk cannot run fails here.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { useFreshService } from '../helpers/service-process.ts';
import { TEST_SECRET_KEY } from '../helpers/test-app.ts';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');
const service = useFreshService('readme-first-session');

/** The commands of the `sh` blocks between `from` and the next heading of the same or a higher level. */
function commandsOf(readme: string, from: string): string[] {
  const start = readme.indexOf(`\n${from}\n`);
  if (start < 0) throw new Error(`README has no section "${from}"`);
  const level = from.split(' ')[0] as string;
  const rest = readme.slice(start + from.length + 2);
  const end = rest.search(new RegExp(`\\n#{1,${level.length}} `));
  const section = end < 0 ? rest : rest.slice(0, end);
  const commands: string[] = [];
  for (const [, block] of section.matchAll(/```sh\n([\s\S]*?)```/g))
    for (const command of (block as string).replace(/\\\n\s*/g, ' ').split('\n'))
      if (command.trim() !== '') commands.push(command.trim());
  return commands;
}

/** A README command as this walk runs it; undefined for the service this test already started. */
function adapt(command: string, writeToken: string): string | undefined {
  if (/^npm (ci && npm )?start\b/.test(command)) return undefined;
  if (/^node (--\S+ )*bin\/seller-ops\.js serve\b/.test(command)) return undefined;
  if (/^node bin\/seller-ops\.js sandbox\b/.test(command)) return 'node bin/seller-ops.js sandbox --help';
  // A restore refuses the running service's data directory: the walk checks that the command exists.
  if (/^node bin\/seller-ops\.js restore\b/.test(command)) return 'node bin/seller-ops.js restore --help';
  if (command.startsWith('#')) return undefined;
  return command
    .replace(/^TOKEN=so_\S+/, `TOKEN=${writeToken}`)
    .replaceAll('http://127.0.0.1:8080', service.url)
    .replaceAll('seller-ops-backup.tar.gz', path.join(service.dataDir, 'readme-walk-backup.tar.gz'))
    .replaceAll('…', 'readme-walk');
}

describe("the README's first session", () => {
  it('runs every command it shows, in order', { timeout: 600_000 }, async () => {
    const readme = await readFile(path.join(root, 'README.md'), 'utf8');
    const commands = [
      ...commandsOf(readme, '## A first session'),
      ...commandsOf(readme, '### Operator commands'),
    ];
    expect(commands.filter((command) => command.startsWith('npx tsx examples/'))).toHaveLength(4);
    const demo = JSON.parse(await readFile(path.join(service.dataDir, 'demo-credentials.json'), 'utf8')) as {
      writeToken: string;
    };
    const env = {
      ...process.env,
      SELLER_OPS_URL: service.url,
      DATA_DIR: service.dataDir,
      DATABASE_URL: '',
      SECRET_KEY: TEST_SECRET_KEY,
      REPORT_FILE: path.join(service.dataDir, 'campaign-stats.xlsx'),
    };
    // One shell for the whole walk, as a reader's terminal: TOKEN set by one line is used by the next ones; each
    // command is echoed (set -x, to standard error) so a failure shows where the walk stopped.
    const script = commands
      .map((command) => adapt(command, demo.writeToken))
      .filter((command): command is string => command !== undefined)
      .join('\n');
    const { stdout } = await run('bash', ['-e', '-x', '-o', 'pipefail', '-c', script], {
      cwd: root,
      env,
      maxBuffer: 64 * 1024 * 1024,
    }).catch((error: { stdout?: string; stderr?: string; message: string }) => {
      throw new Error(`${error.message}\n${error.stdout ?? ''}\n${error.stderr ?? ''}`);
    });
    expect(stdout).toMatch(/"type":"INCOME".*"name":"First receiving"/);
    expect(stdout).toMatch(/Done: document #\d+ received, fixed, finished and its stock removed\./);
    expect(stdout).toMatch(/6\. verified: \d+ products, each colour has XL and its own Color value: yes/);
    expect(stdout).toMatch(/4\. COMPLETED after \d+ refresh/);
    expect(stdout).toMatch(/3\. saved .*campaign-stats\.xlsx/);
    expect(stdout).toMatch(/"name":\s*"Shop LLC"/);
    expect(stdout).not.toMatch(/"error":\s*"error_/);
  });
});
