/**
 * Secrets at rest (decision P160): cash-register passwords, marketplace API keys and webhook signing
 * secrets are stored sealed with the operator key, AES-256-GCM from `node:crypto` (authenticated: a changed
 * or foreign ciphertext fails to open instead of yielding garbage). Webhook secrets must stay usable for
 * signing, so this is encryption, not hashing; API tokens stay hashed (P7).
 *
 * Stored form: `sealed:v1:` + base64url(12-byte IV ‖ 16-byte tag ‖ ciphertext). The key is 32 bytes:
 * `SECRET_KEY` (base64 or 64 hex digits) or, when unset, the file `<DATA_DIR>/secret-key` created with mode
 * 0600 on first start.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';

const PREFIX = 'sealed:v1:';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** A sealed value could not be opened: wrong operator key or a damaged value. */
export class SecretOpenError extends Error {
  constructor() {
    super('a stored secret cannot be opened with the operator key (SECRET_KEY changed or value damaged)');
    this.name = 'SecretOpenError';
  }
}

/** Seals and opens stored secrets with one operator key. */
export class SecretBox {
  /** @throws Error unless `key` has 32 bytes */
  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error('the operator key must be 32 bytes');
  }

  /** Whether `value` is in the sealed form (anything else is a legacy plain value). */
  static isSealed(value: string): boolean {
    return value.startsWith(PREFIX);
  }

  /** A 32-byte key for `purpose` derived from the operator key (HKDF-SHA-256), e.g. to sign cursors (P172). */
  deriveKey(purpose: string): Buffer {
    return Buffer.from(hkdfSync('sha256', this.key, Buffer.alloc(0), purpose, 32));
  }

  /** Seals `plain` with a fresh random IV (sealing the same value twice gives different text). */
  seal(plain: string): string {
    return PREFIX + this.sealBytes(Buffer.from(plain, 'utf8')).toString('base64url');
  }

  /**
   * Opens a sealed value.
   * @throws SecretOpenError when it is not sealed with this key or was changed
   */
  open(sealed: string): string {
    if (!SecretBox.isSealed(sealed)) throw new SecretOpenError();
    return this.openBytes(Buffer.from(sealed.slice(PREFIX.length), 'base64url')).toString('utf8');
  }

  /**
   * Seals bytes (e.g. a stored answer that may carry a secret, P121): IV ‖ tag ‖ ciphertext, a fresh random IV.
   */
  sealBytes(plain: Buffer): Buffer {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const ciphertext = Buffer.concat([cipher.update(plain), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), ciphertext]);
  }

  /**
   * Opens bytes sealed by `sealBytes`.
   * @throws SecretOpenError when they are not sealed with this key or were changed
   */
  openBytes(data: Buffer): Buffer {
    if (data.length < IV_BYTES + TAG_BYTES) throw new SecretOpenError();
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, data.subarray(0, IV_BYTES));
      decipher.setAuthTag(data.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      return Buffer.concat([decipher.update(data.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]);
    } catch {
      throw new SecretOpenError();
    }
  }
}

/**
 * Parses `SECRET_KEY`: 32 bytes as 64 hex digits or as base64/base64url.
 * @throws Error naming SECRET_KEY when it is not 32 bytes
 */
export function parseSecretKey(text: string): Buffer {
  const trimmed = text.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(trimmed)
    ? Buffer.from(trimmed, 'hex')
    : Buffer.from(trimmed, 'base64');
  if (key.length !== 32) throw new Error('SECRET_KEY must be 32 bytes, as 64 hex digits or base64');
  return key;
}

/**
 * The operator key: `secretKey` (SECRET_KEY) when given, else `<dataDir>/secret-key`, created (mode 0600,
 * 32 random bytes in base64) when missing.
 * @throws Error when SECRET_KEY or the key file is malformed, or the file cannot be written
 */
export async function loadOperatorKey(secretKey: string | undefined, dataDir: string): Promise<Buffer> {
  if (secretKey) return parseSecretKey(secretKey);
  const file = path.join(dataDir, 'secret-key');
  try {
    return parseSecretKey(await readFile(file, 'utf8'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  await mkdir(dataDir, { recursive: true });
  const key = randomBytes(32);
  try {
    // `wx`: two processes starting at once never overwrite each other's key.
    await writeFile(file, `${key.toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
    return key;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return parseSecretKey(await readFile(file, 'utf8'));
  }
}
