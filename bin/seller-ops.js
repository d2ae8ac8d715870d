#!/usr/bin/env -S node --min-semi-space-size=16
// Entry point of the `seller-ops` command: runs the CLI from its bundle, rebuilt from src/ when older (P188,
// scripts/bundle.js), or from the TypeScript source through tsx's loader when the bundle cannot be built. The first
// line passes Node the service's options (P218, src/node-options.ts) when the file runs as a program.
import { currentBundle } from '../scripts/bundle.js';

const bundle = currentBundle();
if (bundle) await import(bundle);
else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli/main.ts');
}
