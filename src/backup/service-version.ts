/** The version of this seller-ops (`version` of package.json), printed by `--version` and recorded in backups. */
import { readFileSync } from 'node:fs';

export const SERVICE_VERSION = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
