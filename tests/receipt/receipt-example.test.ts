/**
 * `examples/receipt.mjs` (issue 8) runs against a live service whose organization uses provider A's sandbox:
 * it creates a receiving document and its INCOME receipt, refreshes it to COMPLETED and prints the fiscal
 * data; a second run reuses the catalog products found by their article.
 */
import { execFile } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { receiptAccount, useReceiptApp } from './kit.ts';

const run = promisify(execFile);
const example = path.resolve(import.meta.dirname, '../../examples/receipt.mjs');
const context = useReceiptApp({}, { workers: false });

describe('examples/receipt.mjs', () => {
  it('creates a document and its receipt, completes it and prints its fiscal data, twice', async () => {
    const account = await receiptAccount(context, 'CASH_REGISTER_A');
    await context.t.app.listen({ port: 0, host: '127.0.0.1' });
    const url = `http://127.0.0.1:${(context.t.app.server.address() as AddressInfo).port}`;
    const receipt = () =>
      run(process.execPath, [example], {
        env: {
          ...process.env,
          SELLER_OPS_URL: url,
          SELLER_OPS_TOKEN: account.writeToken,
          SELLER_OPS_ORGANIZATION_ID: String(account.organizationId),
        },
      });
    for (const attempt of [1, 2]) {
      const { stdout } = await receipt();
      expect(stdout).toContain('20 pcs for 5,554.80');
      expect(stdout).toMatch(/3\. receipt #\d+ INCOME for 5,554\.80: PENDING at CASH_REGISTER_A/);
      expect(stdout).toMatch(/4\. COMPLETED after \d+ refresh/);
      expect(stdout).toMatch(/fiscal document number \(ФД\) +\d+/);
      expect(stdout).toMatch(/check it at +http:\/\/127\.0\.0\.1:\d+\/receipt\//);
      const id = Number(/receipt #(\d+)/.exec(stdout)?.[1]);
      expect(await context.sandboxes.CASH_REGISTER_A.documents(id)).toMatchObject([{ fiscalisations: 1 }]);
      if (attempt === 2) expect(stdout).toMatch(/1\. products of model #\d+ RCPT-MUG/);
    }
  });
});
