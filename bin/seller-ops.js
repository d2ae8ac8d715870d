#!/usr/bin/env node
// Entry point of the `seller-ops` command: runs the CLI from its bundle, rebuilt from src/ when older (P188,
// scripts/bundle.js), or from the TypeScript source through tsx's loader when the bundle cannot be built. The
// service's Node options (P218, src/node-options.ts) are given on the command line that runs it (`npm start`).
import { currentBundle } from '../scripts/bundle.js';

const bundle = currentBundle();
if (bundle) await import(bundle);
else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli/main.ts');
}
