// @ts-check
/**
 * The CLI's bundle (P188): `src/cli/main.ts` and every module it imports, compiled by esbuild into one ES module,
 * `dist/seller-ops.mjs` (npm packages stay external imports). `bin/seller-ops.js` runs it, so a running service
 * carries neither tsx's loader nor a compiled copy of each source file beside it (≈ 40 MiB of RSS, docs/performance.md
 * "Memory at idle").
 *
 *   node scripts/bundle.js    builds it (also `npm ci`'s `prepare`)
 *
 * `currentBundle()` is what `bin/seller-ops.js` calls: it rebuilds in a child process when the bundle is missing or
 * older than a source file (a pull, a branch switch, an edit), so the command always runs the source as it is.
 */
import { spawnSync } from 'node:child_process';
import process from 'node:process';
import { existsSync, readdirSync, renameSync, statSync, utimesSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const sourceDir = path.join(root, 'src');
const bundleFile = path.join(root, 'dist', 'seller-ops.mjs');
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

/**
 * Builds the bundle into a temporary file and renames it into place (processes starting at once never read a half
 * written one); its time is set to the build's start, so a source edited during the build is newer than it.
 */
async function build() {
  const { build: esbuild } = await import('esbuild');
  const started = new Date();
  const temporary = `${bundleFile}.${process.pid}.tmp`;
  await esbuild({
    entryPoints: [path.join(sourceDir, 'cli', 'main.ts')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    outfile: temporary,
    logLevel: 'warning',
    plugins: [
      {
        // A module that finds files beside itself (`new URL('./x.json', import.meta.url)`, migrations) keeps its
        // own location: `import.meta.url` becomes the source file's URL, relative to the bundle.
        name: 'source-import-meta-url',
        setup(builder) {
          builder.onLoad({ filter: /\.ts$/ }, async (args) => {
            const relative = path.relative(path.dirname(bundleFile), args.path).split(path.sep).join('/');
            const source = await readFile(args.path, 'utf8');
            const location = `new URL(${JSON.stringify(relative)}, import.meta.url).href`;
            return { contents: source.replaceAll('import.meta.url', location), loader: 'ts' };
          });
        },
      },
    ],
  });
  utimesSync(temporary, started, started);
  renameSync(temporary, bundleFile);
}

if (process.argv[1] === thisFile) await build();
