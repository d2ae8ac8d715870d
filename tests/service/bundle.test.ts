import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Packages a running service loads only when a request or a migration needs them (P188). */
const LOADED_WHEN_FIRST_USED = ['exceljs', 'libpg-query'];

const staticImports = (text: string) =>
  [...text.matchAll(/^import\s[^;]*?from\s*"([^"]+)";?$|^import\s*"([^"]+)";?$/gm)].map(
    (match) => match[1] ?? match[2],
  );

describe('the command bundle', () => {
  it('loads the packages only some requests need from chunks, not at start', () => {
    execFileSync(process.execPath, [path.join(root, 'scripts/bundle.js')], { stdio: 'inherit' });
    const dist = path.join(root, 'dist');
    const entry = path.join(dist, 'seller-ops.mjs');
    const entryImports = staticImports(readFileSync(entry, 'utf8'));
    for (const name of LOADED_WHEN_FIRST_USED) expect(entryImports).not.toContain(name);
    expect(entryImports).toContain('fastify');
    const chunkImports = readdirSync(dist)
      .filter((file) => file.endsWith('.mjs') && path.join(dist, file) !== entry)
      .flatMap((file) => staticImports(readFileSync(path.join(dist, file), 'utf8')));
    expect(chunkImports).toContain('exceljs');
  }, 60_000);
});
