/**
 * The reference page `/docs` in a real browser (P147): the headless Chromium that ships inside the
 * `@sparticuz/chromium` dev dependency, driven by playwright-core, so `npm ci` brings everything and no system
 * browser is looked for. `walkDocsPage` does what a reader does — reads the groups, opens `GET /api/webhook/`,
 * authorizes with a token in the "Authorize" dialog, runs "Try it out" → "Execute" — and reports what the page
 * showed. Every request the page makes to anything but the service's loopback address is aborted and reported.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

const run = promisify(execFile);
const require = createRequire(import.meta.url);

/**
 * What the machine needs to run Chromium as root in a container: no sandbox, no zygote, no GPU, and nothing that
 * reaches the network on its own (QUIC, background networking, component updates, sync). Playwright adds the
 * fresh `--user-data-dir`.
 */
const CHROMIUM_FLAGS = [
  '--no-sandbox',
  '--no-zygote',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** How long one step of the page may take (Swagger UI renders the whole document once). */
const STEP_TIMEOUT_MS = 30_000;

/**
 * The browser of `@sparticuz/chromium`, unpacked once per package version into
 * `node_modules/.cache/seller-ops-chromium/<version>/` (its `chromium` binary, the SwiftShader libraries beside
 * it, the fonts it ships and a `fonts.conf` naming only those, so pages render alike on every machine). The
 * package unpacks into `os.tmpdir()`, so a child process does it with `TMPDIR` set to a fresh directory, which
 * is then renamed into place: processes unpacking at the same time never see a half-written browser.
 * @returns the path of the `chromium` binary and the fontconfig file to start it with
 */
export async function bundledChromium(): Promise<{ executablePath: string; fontconfigFile: string }> {
  const entry = require.resolve('@sparticuz/chromium');
  const packageDirectory = path.resolve(path.dirname(entry), '../..');
  const { version } = JSON.parse(await readFile(path.join(packageDirectory, 'package.json'), 'utf8')) as {
    version: string;
  };
  const cacheRoot = path.resolve(packageDirectory, '../../.cache/seller-ops-chromium');
  const target = path.join(cacheRoot, version);
  const located = {
    executablePath: path.join(target, 'chromium'),
    fontconfigFile: path.join(target, 'fonts.conf'),
  };
  if (existsSync(located.fontconfigFile)) return located;
  await mkdir(cacheRoot, { recursive: true });
  const unpacking = await mkdtemp(path.join(cacheRoot, `${version}-unpacking-`));
  try {
    const script = `import('@sparticuz/chromium').then((m) => m.default.executablePath())`;
    await run(process.execPath, ['--input-type=module', '-e', script], {
      cwd: packageDirectory,
      env: { ...process.env, TMPDIR: unpacking },
    });
    await writeFile(
      path.join(unpacking, 'fonts.conf'),
      `<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n<fontconfig>\n` +
        `  <dir>${path.join(target, 'fonts')}</dir>\n  <cachedir>${path.join(target, 'fonts-cache')}</cachedir>\n` +
        `</fontconfig>\n`,
    );
    await rename(unpacking, target).catch((error: NodeJS.ErrnoException) => {
      // Another process published the same version first: use its copy.
      if (!existsSync(located.fontconfigFile)) throw error;
    });
  } finally {
    await rm(unpacking, { recursive: true, force: true });
  }
  return located;
}

/** A headless Chromium with a fresh profile, and how to close it (and remove the profile). */
export interface DocsBrowser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** Starts the bundled Chromium (`bundledChromium`) headless with a fresh user data directory. */
export async function launchChromium(): Promise<DocsBrowser> {
  const { executablePath, fontconfigFile } = await bundledChromium();
  const profile = await mkdtemp(path.join(os.tmpdir(), 'seller-ops-chromium-'));
  try {
    const context = await chromium.launchPersistentContext(profile, {
      executablePath,
      headless: true,
      args: CHROMIUM_FLAGS,
      env: { ...process.env, FONTCONFIG_FILE: fontconfigFile },
      viewport: { width: 1280, height: 900 },
    });
    return {
      context,
      async close() {
        await context.close();
        await rm(profile, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await rm(profile, { recursive: true, force: true });
    throw error;
  }
}

/** What the page showed. */
export interface DocsPageWalk {
  /** The groups (OpenAPI tags) the page lists, in its order. */
  groups: string[];
  /** The status Swagger UI shows for the executed `GET /api/webhook/`. */
  executedStatus: string;
  /** The response body Swagger UI shows for it. */
  executedBody: string;
  /** Requests the page tried to send off the service's address (aborted). */
  blockedRequests: string[];
}

/**
 * Walks `/docs` of the service at `baseUrl` (`http://127.0.0.1:<port>`) with `token`; saves a screenshot of the
 * executed operation to `screenshotPath` when given.
 */
export async function walkDocsPage(
  context: BrowserContext,
  baseUrl: string,
  token: string,
  screenshotPath?: string,
): Promise<DocsPageWalk> {
  const blockedRequests: string[] = [];
  const origin = new URL(baseUrl).origin;
  const page = await context.newPage();
  page.setDefaultTimeout(STEP_TIMEOUT_MS);
  await page.route('**/*', async (route) => {
    const url = route.request().url();
    if (url.startsWith(`${origin}/`) || url.startsWith('data:')) return route.continue();
    blockedRequests.push(url);
    return route.abort('blockedbyclient');
  });
  try {
    await page.goto(`${baseUrl}/docs`);
    await page.locator('.opblock-tag').first().waitFor();
    const groups = await page
      .locator('.opblock-tag')
      .evaluateAll((nodes) => nodes.map((node) => node.getAttribute('data-tag') ?? ''));
    await authorize(page, token);
    const operation = page.locator('#operations-webhook-getWebhook');
    await operation.locator('.opblock-summary').click();
    await operation.locator('.try-out__btn').click();
    await operation.locator('button.execute').click();
    const status = operation.locator('.live-responses-table tbody .response-col_status').first();
    await status.waitFor();
    const executedStatus = (await status.innerText()).trim();
    const executedBody = await operation
      .locator('.live-responses-table tbody .response-col_description pre')
      .first()
      .innerText();
    if (screenshotPath) {
      await hideToken(page, token);
      await operation.scrollIntoViewIfNeeded();
      await page.screenshot({ path: screenshotPath });
    }
    return { groups, executedStatus, executedBody, blockedRequests };
  } finally {
    await page.close();
  }
}

/** Enters `token` for the `token` security scheme in the "Authorize" dialog and closes it. */
async function authorize(page: Page, token: string): Promise<void> {
  await page.locator('button.authorize').first().click();
  const dialog = page.locator('.modal-ux');
  await dialog.locator('input').first().fill(token);
  await dialog.locator('button.authorize').click();
  await dialog.locator('button.btn-done').click();
  await dialog.waitFor({ state: 'detached' });
}

/** Shortens `token` wherever the page shows it (the curl example), so a screenshot never holds a token. */
async function hideToken(page: Page, token: string): Promise<void> {
  await page.evaluate((secret) => {
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode())
      if (node.textContent?.includes(secret)) node.textContent = node.textContent.replaceAll(secret, 'so_…');
  }, token);
}
