/**
 * Test kit of backup and restore: the `seller-ops` command as a child process, restore targets of the run's kind
 * (a fresh data directory on the embedded default, a fresh database on the server of `DATABASE_URL`), and an
 * archive rewritten with a changed manifest (valid checksums) to test what restore refuses.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { inject } from 'vitest';
import {
  ArchiveWriter,
  CHECKSUMS_ENTRY,
  forEachEntry,
  MANIFEST_ENTRY,
  type BackupManifest,
} from '../../src/backup/archive.ts';
import { createServerDatabase } from '../helpers/server-database.ts';

const bin = path.resolve(import.meta.dirname, '../../bin/seller-ops.js');

/** How a command ended and what it printed. */
export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `seller-ops args…` with `env` added to this process's environment; never throws on a failing exit. */
export function runCli(args: string[], env: Record<string, string>): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [bin, ...args],
      { env: { ...process.env, ...env }, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** A temporary directory, removed by `cleanup`. */
export async function temporaryDirectory(name: string): Promise<{ path: string; cleanup(): Promise<void> }> {
  const directory = await mkdtemp(path.join(os.tmpdir(), `seller-ops-${name}-`));
  return { path: directory, cleanup: () => rm(directory, { recursive: true, force: true }) };
}

/** Where a restore goes: the settings a command or service needs to use it, and how to remove it. */
export interface RestoreTarget {
  env: Record<string, string>;
  cleanup(): Promise<void>;
}

/**
 * An empty target of this run's kind: a fresh `DATA_DIR` with no `DATABASE_URL` on the embedded default; on the
 * server of `DATABASE_URL`, a new empty database (not migrated) and a fresh `DATA_DIR` for the operator key.
 */
export async function emptyRestoreTarget(): Promise<RestoreTarget> {
  const dataDir = await temporaryDirectory('restore');
  if (inject('databaseKind') === 'embedded')
    return { env: { DATA_DIR: dataDir.path, DATABASE_URL: '' }, cleanup: () => dataDir.cleanup() };
  const target = await createServerDatabase(`restore_${randomUUID().slice(0, 8)}`);
  return {
    env: { DATA_DIR: dataDir.path, DATABASE_URL: target.url },
    async cleanup() {
      await target.drop();
      await dataDir.cleanup();
    },
  };
}

/**
 * Copies archive `from` into `to` with its manifest changed by `change` and `SHA256SUMS` made anew, or, with
 * `keepChecksums`, the original `SHA256SUMS` (which then no longer matches the manifest).
 */
export async function rewriteArchive(
  from: string,
  to: string,
  change: (manifest: BackupManifest) => void,
  options: { keepChecksums?: boolean } = {},
): Promise<void> {
  const writer = new ArchiveWriter(createWriteStream(to));
  let originalChecksums = Buffer.alloc(0);
  await forEachEntry(from, async (name, content) => {
    const chunks: Buffer[] = [];
    for await (const chunk of content) chunks.push(chunk as Buffer);
    if (name === CHECKSUMS_ENTRY) {
      originalChecksums = Buffer.concat(chunks);
      return;
    }
    let entry = Buffer.concat(chunks);
    if (name === MANIFEST_ENTRY) {
      const manifest = JSON.parse(entry.toString('utf8')) as BackupManifest;
      change(manifest);
      entry = Buffer.from(JSON.stringify(manifest));
    }
    await writer.add(name, entry);
  });
  if (options.keepChecksums) await writer.finishWith(originalChecksums);
  else await writer.finish();
}
