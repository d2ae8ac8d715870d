/**
 * Regenerates the typed client package `clients/typescript/` (P170) from the service's own `/openapi.json`: the
 * document itself (`openapi.json`), its types by openapi-typescript (`src/schema.ts`) and the package's compiled
 * JavaScript and declarations (`dist/`, from `src/schema.ts` and the hand-written `src/index.ts`), so the
 * package installs from a path or a packed tarball with nothing to build. The service runs on a throwaway
 * database (the embedded PostgreSQL unless `DATABASE_URL` is set) and is asked through `app.inject`.
 *
 *   npm run client:generate
 *
 * `tests/http/client-package.test.ts` renders the same files from the served document and fails on any
 * difference with the committed ones.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import openapiTS, { astToString, COMMENT_HEADER, type OpenAPI3 } from 'openapi-typescript';

const run = promisify(execFile);

/** The client package's folder. */
export const CLIENT_DIRECTORY = fileURLToPath(new URL('../clients/typescript/', import.meta.url));

/** The files `renderClient` makes, relative to the package's folder. */
export const GENERATED = ['openapi.json', 'src/schema.ts', 'dist'] as const;

/**
 * Renders the generated files of the package for `document` (the body of `GET /openapi.json`).
 * @returns file contents by their path relative to the package's folder (`dist/…` included)
 * @throws when openapi-typescript cannot read the document or the package does not compile
 */
export async function renderClient(document: string): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  const parsed = JSON.parse(document) as OpenAPI3;
  files.set('openapi.json', `${JSON.stringify(parsed, null, 2)}\n`);
  // Fields with a default (paging's `limit`, `page`) stay optional in requests: the service fills them in.
  const types = await openapiTS(structuredClone(parsed), { defaultNonNullable: false });
  files.set('src/schema.ts', COMMENT_HEADER + astToString(types));
  // Compiled inside the repository's node_modules, so that `openapi-fetch` resolves as it does for the package.
  const cache = fileURLToPath(new URL('../node_modules/.cache/', import.meta.url));
  await mkdir(cache, { recursive: true });
  const work = await mkdtemp(path.join(cache, 'seller-ops-client-'));
  try {
    await mkdir(path.join(work, 'src'));
    await cp(path.join(CLIENT_DIRECTORY, 'tsconfig.json'), path.join(work, 'tsconfig.json'));
    await cp(path.join(CLIENT_DIRECTORY, 'src/index.ts'), path.join(work, 'src/index.ts'));
    await writeFile(path.join(work, 'src/schema.ts'), files.get('src/schema.ts') as string);
    await cp(path.join(CLIENT_DIRECTORY, 'package.json'), path.join(work, 'package.json'));
    const tsc = fileURLToPath(new URL('../node_modules/typescript/bin/tsc', import.meta.url));
    await run(process.execPath, [tsc, '-p', work]).catch((error: { stdout?: string; message: string }) => {
      throw new Error(`the client does not compile:\n${error.stdout ?? error.message}`);
    });
    for (const name of (await readdir(path.join(work, 'dist'))).sort())
      files.set(`dist/${name}`, await readFile(path.join(work, 'dist', name), 'utf8'));
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  return files;
}

/** The committed generated files of the package, by their path relative to its folder. */
export async function committedClient(): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  for (const name of ['openapi.json', 'src/schema.ts'])
    files.set(name, await readFile(path.join(CLIENT_DIRECTORY, name), 'utf8').catch(() => ''));
  const dist = await readdir(path.join(CLIENT_DIRECTORY, 'dist')).catch(() => [] as string[]);
  for (const name of dist.sort())
    files.set(`dist/${name}`, await readFile(path.join(CLIENT_DIRECTORY, 'dist', name), 'utf8'));
  return files;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { openThrowawayDatabase } = await import('./throwaway-database.ts');
  const { openFuzzTarget } = await import('./fuzz/target.ts');
  const log = (line: string) => process.stderr.write(`[client:generate] ${line}\n`);
  const database = await openThrowawayDatabase(log);
  try {
    const target = await openFuzzTarget(
      database.databaseUrl,
      randomBytes(32).toString('hex'),
      database.dataDir,
    );
    let document: string;
    try {
      document = (await target.app.inject('/openapi.json')).body;
    } finally {
      await target.close();
    }
    const files = await renderClient(document);
    await rm(path.join(CLIENT_DIRECTORY, 'dist'), { recursive: true, force: true });
    await mkdir(path.join(CLIENT_DIRECTORY, 'dist'), { recursive: true });
    for (const [name, text] of files) await writeFile(path.join(CLIENT_DIRECTORY, name), text);
    log(`wrote ${[...files.keys()].join(', ')} in ${CLIENT_DIRECTORY}`);
  } finally {
    await database.close();
  }
}
