/**
 * Dependency rules of the code base (docs/architecture.md): `src/runtime.ts` builds the shared state of
 * a process and knows no resource group; groups do not import each other's routes; nothing under `src/` imports
 * from `tests/` or `bench/`.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const src = path.resolve(import.meta.dirname, '../../src');

/** Every `.ts` file under `dir`. */
async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => path.join(entry.parentPath, entry.name));
}

/** The resolved paths a file imports (relative imports only). */
async function importsOf(file: string): Promise<string[]> {
  const text = await readFile(file, 'utf8');
  return [...text.matchAll(/(?:import|export)[^'"]*?from\s+'(\.{1,2}\/[^']+)'/g)].map((match) =>
    path.resolve(path.dirname(file), match[1] as string),
  );
}

describe('dependency rules', () => {
  it('src/runtime.ts imports nothing under src/modules/', async () => {
    const imports = await importsOf(path.join(src, 'runtime.ts'));
    expect(imports.length).toBeGreaterThan(0);
    expect(imports.filter((target) => target.startsWith(path.join(src, 'modules')))).toEqual([]);
  });

  it('src/ imports nothing from tests/ or bench/, and no group imports another group’s routes', async () => {
    const offending: string[] = [];
    for (const file of await sourceFiles(src)) {
      for (const target of await importsOf(file)) {
        const relative = path.relative(src, target);
        if (relative.startsWith('..')) offending.push(`${path.relative(src, file)} → ${relative}`);
        const group = /^modules\/([^/]+)\//.exec(path.relative(src, file))?.[1];
        const targetGroup = /^modules\/([^/]+)\/routes\.ts$/.exec(relative)?.[1];
        if (targetGroup && group && targetGroup !== group)
          offending.push(`${path.relative(src, file)} → ${relative}`);
      }
    }
    expect(offending).toEqual([]);
  });
});
