import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const dist = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../dist');

/** Packages a running service loads only when a request, a backup or a migration needs them (P188). */
const LOADED_WHEN_FIRST_USED = ['exceljs', 'libpg-query', 'tar-stream', 'pg-copy-streams'];

/** What the bundle file `file` imports statically (not by `import()`). */
const staticImports = (file: string) =>
  [
    ...readFileSync(path.join(dist, file), 'utf8').matchAll(
      /^import\s[^;]*?from\s*"([^"]+)";?$|^import\s*"([^"]+)";?$/gm,
    ),
  ].map((match) => match[1] ?? match[2] ?? '');

/** Packages loaded with the bundle file `file`: its static imports and those of the chunks it imports. */
function packagesLoadedWith(file: string, seen = new Set<string>()): Set<string> {
  const packages = new Set<string>();
  seen.add(file);
  for (const specifier of staticImports(file))
    if (!specifier.startsWith('./')) packages.add(specifier);
    else if (!seen.has(specifier.slice(2)))
      for (const name of packagesLoadedWith(specifier.slice(2), seen)) packages.add(name);
  return packages;
}

describe('the command bundle', () => {
  it('loads the packages only some requests need from chunks, not at start', () => {
    execFileSync(process.execPath, [path.join(dist, '../scripts/bundle.js')], { stdio: 'inherit' });
    const atStart = packagesLoadedWith('seller-ops.mjs');
    expect(atStart).toContain('fastify');
    for (const name of LOADED_WHEN_FIRST_USED) expect(atStart).not.toContain(name);
    const inChunks = readdirSync(dist)
      .filter((file) => file.endsWith('.mjs'))
      .flatMap((file) => staticImports(file));
    for (const name of ['exceljs', 'tar-stream']) expect(inChunks).toContain(name);
  }, 60_000);
});
