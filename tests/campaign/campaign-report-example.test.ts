/**
 * `examples/campaign-report.mjs` (issue 9) works out of the box: against the service as `npm start` runs it
 * (embedded PostgreSQL in a fresh DATA_DIR, the demo account whose organization has a Market1 integration with
 * the sandbox the service serves), it imports the campaigns, prints the top five by expenses with CTR and DRR,
 * exports the statistics with progress and saves a workbook that exceljs reads back.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  spawnService,
  stopService,
  waitUntilReady,
  type ServiceProcess,
} from '../helpers/service-process.ts';

const run = promisify(execFile);
const example = path.resolve(import.meta.dirname, '../../examples/campaign-report.mjs');
let dataDir: string;
let service: ServiceProcess | undefined;

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'seller-ops-campaign-example-'));
  service = await spawnService({ DATA_DIR: dataDir, DATABASE_URL: '', SEED_DEMO: 'true' });
  await waitUntilReady(service);
});
afterAll(async () => {
  if (service) await stopService(service);
  await rm(dataDir, { recursive: true, force: true });
});

describe('examples/campaign-report.mjs on a fresh service', () => {
  it('imports, prints the top five by expenses and saves the export', async () => {
    const reportFile = path.join(dataDir, 'report.xlsx');
    const { stdout } = await run(process.execPath, [example], {
      env: { ...process.env, SELLER_OPS_URL: service?.url ?? '', DATA_DIR: dataDir, REPORT_FILE: reportFile },
    });
    const imported = Number(/1\. imported (\d+) campaigns/.exec(stdout)?.[1]);
    expect(imported).toBeGreaterThan(100);
    const top = stdout
      .split('\n')
      .filter((line) => /^ {3}\S.* [\d,]+\.\d\d +\d+\.\d\d % +\d+\.\d\d %$/.test(line));
    expect(top).toHaveLength(5);
    const expenses = top.map((line) => Number(/ ([\d,]+\.\d\d) +\d/.exec(line)?.[1]?.replaceAll(',', '')));
    expect([...expenses].sort((a, b) => b - a)).toEqual(expenses);
    expect(stdout).toMatch(/export task #\d+: (CREATED|RUNNING) \d+ %/);
    expect(stdout).toContain(`3. saved ${reportFile}`);
    expect(stdout).toContain('application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.readFile(reportFile);
    expect(workbook.worksheets.length).toBeGreaterThanOrEqual(2);
    expect(workbook.worksheets[0]?.rowCount).toBeGreaterThan(2);
  });
});
