/**
 * The reference page `/docs` in a real browser (P147): headless Chromium (the one shipped inside the
 * `@sparticuz/chromium` dev dependency, so nothing comes from the system) lists every group
 * of `/openapi.json`, expands `GET /api/webhook/`, authorizes with a token through the "Authorize" dialog and
 * shows 200 with the account's webhook after "Try it out" → "Execute". The page reaches nothing but the service.
 */
import { stat, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestApp, type TestApp } from '../helpers/test-app.ts';
import { createAccount, type TestAccount } from '../helpers/factories.ts';
import { send } from '../helpers/http.ts';
import { launchChromium, walkDocsPage, type DocsBrowser } from '../../scripts/docs-page.ts';
import type { OpenApiDocument } from '../../scripts/fuzz/openapi.ts';

let t: TestApp;
let account: TestAccount;
let baseUrl: string;
let browser: DocsBrowser;
let screenshots: string;
useTestApp(
  async (app) => {
    t = app;
    account = await createAccount(app.runtime);
    await app.app.listen({ port: 0, host: '127.0.0.1' });
    baseUrl = `http://127.0.0.1:${(app.app.server.address() as { port: number }).port}`;
  },
  // No workers and no DNS: the webhook below is never resolved nor delivered.
  { WEBHOOK_ALLOW_PRIVATE: 'true' },
  { workers: false },
);
beforeAll(async () => {
  browser = await launchChromium();
  screenshots = await mkdtemp(path.join(os.tmpdir(), 'seller-ops-docs-page-'));
});
afterAll(async () => {
  await browser?.close();
  if (screenshots) await rm(screenshots, { recursive: true, force: true });
});

describe('/docs in headless Chromium', () => {
  it('lists every group, and "Try it out" with a token answers 200 with the webhooks', async () => {
    const created = await send(t.app, account.writeToken, {
      method: 'POST',
      url: '/api/webhook/',
      payload: {
        name: 'Docs page webhook',
        url: 'https://hooks.example.com/docs-page',
        organizationId: account.organizationId,
        types: ['ORDER'],
      },
    });
    expect(created.statusCode, created.body).toBe(200);
    const document = (await t.app.inject('/openapi.json')).json<OpenApiDocument>();
    const tags = new Set(
      Object.values(document.paths).flatMap((methods) =>
        Object.values(methods).flatMap((op) => op.tags ?? []),
      ),
    );

    const screenshot = path.join(screenshots, 'docs-page.png');
    const walk = await walkDocsPage(browser.context, baseUrl, account.readToken, screenshot);

    expect([...walk.groups].sort()).toEqual([...tags].sort());
    expect(walk.executedStatus).toBe('200');
    expect(JSON.parse(walk.executedBody)).toEqual([
      expect.objectContaining({ name: 'Docs page webhook', organizationId: account.organizationId }),
    ]);
    expect(walk.blockedRequests).toEqual([]);
    expect((await stat(screenshot)).size).toBeGreaterThan(10_000);
  });
});
