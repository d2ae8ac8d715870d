/**
 * Regenerates `docs/images/docs-page.png` (P147): the service on a throwaway database with
 * an account and one webhook, `/docs` in headless Chromium authorized with the account's READ token, and
 * `GET /api/webhook/` executed through "Try it out".
 *
 *   npm run docs-screenshot
 */
import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { createAccount } from '../tests/helpers/factories.ts';
import { FUZZ_WEBHOOK_URL } from './fuzz/fixture.ts';
import { openFuzzTarget, type FuzzTarget } from './fuzz/target.ts';
import { launchChromium, walkDocsPage, type DocsBrowser } from './docs-page.ts';
import { openThrowawayDatabase, type ThrowawayDatabase } from './throwaway-database.ts';

const log = (line: string) => process.stderr.write(`[docs-screenshot] ${line}\n`);
const file = fileURLToPath(new URL('../docs/images/docs-page.png', import.meta.url));

let database: ThrowawayDatabase | undefined;
let target: FuzzTarget | undefined;
let browser: DocsBrowser | undefined;
try {
  database = await openThrowawayDatabase(log);
  // No workers: the webhook shown on the page is never delivered.
  target = await openFuzzTarget(database.databaseUrl, randomBytes(32).toString('hex'), database.dataDir);
  const account = await createAccount(target.runtime);
  const created = await target.app.inject({
    method: 'POST',
    url: '/api/webhook/',
    headers: { authorization: account.writeToken },
    payload: {
      name: 'ERP order feed',
      url: FUZZ_WEBHOOK_URL,
      organizationId: account.organizationId,
      types: ['CREATE_ORDER', 'ORDER_STATUS'],
    },
  });
  if (created.statusCode !== 200) throw new Error(`webhook not created: ${created.body}`);
  await target.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = target.app.server.address() as { port: number };
  browser = await launchChromium();
  await mkdir(fileURLToPath(new URL('../docs/images/', import.meta.url)), { recursive: true });
  const walk = await walkDocsPage(browser.context, `http://127.0.0.1:${port}`, account.readToken, file);
  if (walk.executedStatus !== '200') throw new Error(`GET /api/webhook/ showed ${walk.executedStatus}`);
  log(`groups ${walk.groups.join(', ')}; screenshot saved to ${file}`);
} catch (error) {
  log(error instanceof Error ? (error.stack ?? error.message) : String(error));
  process.exitCode = 1;
} finally {
  await browser?.close();
  await target?.close();
  await database?.close();
}
