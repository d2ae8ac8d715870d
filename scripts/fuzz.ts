/**
 * `npm run fuzz` (P145): sends generated valid and invalid requests to every operation of
 * `/openapi.json` and prints the counts by operation and status. Exits with 1 when an answer was a 5xx, a body
 * was outside the model, a request went unanswered, or an operation was skipped or got no request.
 *
 *   npm run fuzz                               10,000 requests, a random seed (printed)
 *   npm run fuzz -- --seed 1234 --requests 500 replays the first 500 requests of seed 1234
 *   npm run fuzz -- --docs                     also records the results in docs/fuzzing.md
 *
 * The service runs in this process over the embedded PostgreSQL in a fresh temporary directory, or on
 * `DATABASE_URL` when set (then a run leaves its account behind, and ids differ from run to run).
 */
import { randomBytes, randomInt } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Command, InvalidArgumentError } from 'commander';
import { runFuzz } from './fuzz/runner.ts';
import { openFuzzTarget, type FuzzTarget } from './fuzz/target.ts';
import { passed, renderMarkdown, renderText, writeResults } from './fuzz/report.ts';
import { openThrowawayDatabase, type ThrowawayDatabase } from './throwaway-database.ts';

const integer = (name: string, min: number, max: number) => (text: string) => {
  const value = Number(text);
  if (!Number.isInteger(value) || value < min || value > max)
    throw new InvalidArgumentError(`${name} must be an integer in ${min}..${max}`);
  return value;
};

const options = new Command('npm run fuzz --')
  .description('Fuzz every operation of /openapi.json with generated valid and invalid requests')
  .option(
    '--seed <n>',
    'seed of every random choice (default: random, printed)',
    integer('seed', 0, 2 ** 31 - 1),
  )
  .option('--requests <n>', 'requests to send', integer('requests', 1, 1_000_000), 10_000)
  .option('--docs', 'record the results in docs/fuzzing.md', false)
  .parse()
  .opts<{ seed?: number; requests: number; docs: boolean }>();

const seed = options.seed ?? randomInt(0, 2 ** 31 - 1);
const log = (line: string) => process.stderr.write(`[fuzz] ${line}\n`);
log(`seed ${seed} (replay: npm run fuzz -- --seed ${seed} --requests ${options.requests})`);

let database: ThrowawayDatabase | undefined;
let target: FuzzTarget | undefined;
const cleanUp = async () => {
  await target?.close();
  await database?.close();
};
process.once('SIGINT', () => void cleanUp().finally(() => process.exit(130)));

try {
  database = await openThrowawayDatabase(log);
  target = await openFuzzTarget(database.databaseUrl, randomBytes(32).toString('hex'), database.dataDir);
  const report = await runFuzz({
    app: target.app,
    runtime: target.runtime,
    seed,
    requests: options.requests,
    progress: log,
  });
  process.stdout.write(`${renderText(report)}\n`);
  if (options.docs) {
    const file = fileURLToPath(new URL('../docs/fuzzing.md', import.meta.url));
    await writeResults(file, renderMarkdown(report));
    log(`results recorded in ${file}`);
  }
  process.exitCode = passed(report) ? 0 : 1;
} catch (error) {
  log(error instanceof Error ? (error.stack ?? error.message) : String(error));
  process.exitCode = 2;
} finally {
  await cleanUp();
}
