/**
 * `examples/receipt.ts` works out of the box: against the service as `npm start` runs it (embedded
 * PostgreSQL in a fresh DATA_DIR, the demo account, provider A's sandbox started on loopback and the demo
 * organization configured with it), it creates a receiving document and its INCOME receipt, refreshes it to
 * COMPLETED and prints the fiscal data; a second run reuses the catalog products found by their article.
 */
import { describe, expect, it } from 'vitest';
import { runExample, useFreshService } from '../helpers/service-process.ts';

const service = useFreshService('receipt-example');

describe('examples/receipt.ts on a fresh service', () => {
  it('creates a document and its receipt, completes it and prints its fiscal data, twice', async () => {
    for (const attempt of [1, 2]) {
      const stdout = await runExample('receipt.ts', service);
      expect(stdout).toContain('20 pcs for 5,554.80');
      expect(stdout).toMatch(/3\. receipt #\d+ INCOME for 5,554\.80: PENDING at CASH_REGISTER_A/);
      expect(stdout).toMatch(/4\. COMPLETED after \d+ refresh/);
      expect(stdout).toMatch(/fiscal document number \(ФД\) +\d+/);
      if (attempt === 2) expect(stdout).toMatch(/1\. products of model #1 RCPT-MUG/);
      // The receipt's check page is on the sandbox the service started.
      const checkUrl = /check it at +(http:\/\/127\.0\.0\.1:\d+\/receipt\/\S+)/.exec(stdout)?.[1];
      const check = await fetch(checkUrl ?? 'http://127.0.0.1:9/missing');
      expect(check.status).toBe(200);
      const fiscal = (await check.json()) as { total: number; fiscalDocumentNumber: number };
      expect(fiscal.total).toBe(5554.8);
      // The service printed the URL of the sandbox it started, with the variable another instance would set.
      const sandboxUrl = new URL(checkUrl ?? '').origin;
      expect(service.output).toContain(`cash-register-a: ${sandboxUrl}  (CASH_REGISTER_A_URL=${sandboxUrl})`);
      expect(stdout).toContain(`fiscal document number (ФД)      ${fiscal.fiscalDocumentNumber}`);
    }
  });
});
