// @ts-check
/**
 * The CLI's bundle (P188): `src/cli/main.ts` and every module it imports, compiled by esbuild into ES modules in
 * `dist/`: the entry `dist/seller-ops.mjs` and, for each module the source loads with `import()` (the XLSX writer,
 * the sandboxes, backup and restore, …), a chunk `dist/<name>-<hash>.mjs` that is read when first imported. npm
 * packages stay external imports, each in the chunk that needs it, so a package only some requests use is not
 * loaded at start. `bin/seller-ops.js` runs the entry, so a running service carries neither tsx's loader nor a
 * compiled copy of each source file beside it (docs/performance.md "Memory at idle").
 *
 *   node scripts/bundle.js    builds it (also `npm ci`'s `prepare`)
 *
 * `currentBundle()` is what `bin/seller-ops.js` calls: it rebuilds in a child process when the bundle is missing or
 * older than a source file (a pull, a branch switch, an edit), so the command always runs the source as it is.
 */
import { spawnSync } from 'node:child_process';
import process from 'node:process';
import { existsSync, readdirSync, renameSync, rmSync, statSync, unlinkSync, utimesSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const sourceDir = path.join(root, 'src');
const bundleDir = path.join(root, 'dist');
const bundleFile = path.join(bundleDir, 'seller-ops.mjs');
const thisFile = fileURLToPath(import.meta.url);

/** Newest modification time (ms) of the bundle's inputs: every `.ts` file under src/ and this script. */
function newestInputMs() {
  let newest = statSync(thisFile).mtimeMs;
  const visit = (/** @type {string} */ dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const entryPath = path.join(dir, entry.name);
      if (entry.isDirectory()) visit(entryPath);
      else if (entry.name.endsWith('.ts')) newest = Math.max(newest, statSync(entryPath).mtimeMs);
    }
  };
  visit(sourceDir);
  return newest;
}

/**
 * The bundle's file URL, rebuilt first (in a child process, so esbuild never stays in the caller) when it is
 * missing or older than a source file; undefined when it cannot be built (e.g. a read-only install), in which case
 * the caller runs the TypeScript source.
 * @returns {string | undefined}
 */
export function currentBundle() {
  const fresh = existsSync(bundleFile) && statSync(bundleFile).mtimeMs >= newestInputMs();
  if (!fresh) {
    const built = spawnSync(process.execPath, [thisFile], { stdio: ['ignore', 'ignore', 'inherit'] });
    if (built.status !== 0) return undefined;
  }
  return pathToFileURL(bundleFile).href;
}

/** Chunks an earlier build left that the current one no longer has are removed once this old (ms): a process
 * started from that build may still import them meanwhile. */
const STALE_CHUNK_MS = 24 * 60 * 60 * 1000;

/**
 * Builds the bundle into a temporary folder and moves it into place: the chunks first (a chunk's name carries a
 * hash of its content, so one already there is the same file), the entry last, by a rename, so processes starting
 * at once never read a half-written build. The entry's time is set to the build's start, so a source edited during
 * the build is newer than it.
 */
async function build() {
  const { build: esbuild } = await import('esbuild');
  const started = new Date();
  const temporaryDir = path.join(bundleDir, `.build-${process.pid}`);
  rmSync(temporaryDir, { recursive: true, force: true });
  const { metafile } = await esbuild({
    entryPoints: { [path.basename(bundleFile, '.mjs')]: path.join(sourceDir, 'cli', 'main.ts') },
    bundle: true,
    splitting: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    outdir: temporaryDir,
    outExtension: { '.js': '.mjs' },
    chunkNames: '[name]-[hash]',
    metafile: true,
    logLevel: 'warning',
    plugins: [
      {
        // A module that finds files beside itself (`new URL('./x.json', import.meta.url)`, migrations) keeps its
        // own location: `import.meta.url` becomes the source file's URL, relative to dist/, where every output goes.
        name: 'source-import-meta-url',
        setup(builder) {
          builder.onLoad({ filter: /\.ts$/ }, async (args) => {
            const relative = path.relative(bundleDir, args.path).split(path.sep).join('/');
            const source = await readFile(args.path, 'utf8');
            const location = `new URL(${JSON.stringify(relative)}, import.meta.url).href`;
            return { contents: source.replaceAll('import.meta.url', location), loader: 'ts' };
          });
        },
      },
    ],
  });
  const outputs = new Set(Object.keys(metafile.outputs).map((output) => path.basename(output)));
  const entry = path.basename(bundleFile);
  for (const file of outputs)
    if (file !== entry) renameSync(path.join(temporaryDir, file), path.join(bundleDir, file));
  utimesSync(path.join(temporaryDir, entry), started, started);
  renameSync(path.join(temporaryDir, entry), bundleFile);
  rmSync(temporaryDir, { recursive: true, force: true });
  for (const file of readdirSync(bundleDir))
    if (
      file.endsWith('.mjs') &&
      !outputs.has(file) &&
      started.getTime() - statSync(path.join(bundleDir, file)).mtimeMs > STALE_CHUNK_MS
    )
      unlinkSync(path.join(bundleDir, file));
}

if (process.argv[1] === thisFile) await build();
