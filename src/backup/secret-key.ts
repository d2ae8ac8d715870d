/**
 * The operator key (P160) in backups: a backup carries it, so restored sealed credentials and webhook secrets
 * open again; a restore puts it where the service reads it (`<DATA_DIR>/secret-key` unless `SECRET_KEY` is set).
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../config.ts';
import { parseSecretKey } from '../security/secret-box.ts';

const KEY_FILE = 'secret-key';

/**
 * The operator key the service uses (`SECRET_KEY`, else `<DATA_DIR>/secret-key`), read without creating one.
 * @throws Error when neither is there, or the key is malformed
 */
export async function currentOperatorKey(config: Config): Promise<Buffer> {
  if (config.secretKey) return parseSecretKey(config.secretKey);
  const file = path.join(config.dataDir, KEY_FILE);
  try {
    return parseSecretKey(await readFile(file, 'utf8'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    throw new Error(
      `no operator key: SECRET_KEY is unset and ${file} does not exist; set SECRET_KEY as the service has it, ` +
        'or pass --without-secret-key (sealed credentials then open only with a key kept elsewhere)',
      { cause: error },
    );
  }
}

/**
 * Checks, before a restore writes anything, that the archive's key can be put in use.
 * @throws Error when `SECRET_KEY` is set to another key than the archive's
 */
export function checkRestorableKey(config: Config, archived: Buffer | undefined): void {
  if (!archived || !config.secretKey || parseSecretKey(config.secretKey).equals(archived)) return;
  throw new Error(
    'SECRET_KEY is set to another key than the one in the archive, so the restored credentials would not open: ' +
      `unset SECRET_KEY (restore then writes the archive's key to ${path.join(config.dataDir, KEY_FILE)}) ` +
      "or set it to the archive's key (tar -xzOf ARCHIVE secret-key)",
  );
}

/**
 * Puts the archive's key in use: written to `<DATA_DIR>/secret-key` (mode 0600, replacing the file atomically)
 * unless `SECRET_KEY` already holds it.
 * @returns the file written, or undefined when nothing was written
 */
export async function installRestoredKey(config: Config, archived: Buffer): Promise<string | undefined> {
  if (config.secretKey) return undefined;
  const file = path.join(config.dataDir, KEY_FILE);
  const scratch = `${file}.${randomBytes(4).toString('hex')}.tmp`;
  await mkdir(config.dataDir, { recursive: true });
  await writeFile(scratch, `${archived.toString('base64')}\n`, { mode: 0o600 });
  await rename(scratch, file);
  return file;
}
