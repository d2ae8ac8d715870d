/**
 * `examples/campaign-report.ts` works out of the box: against the service as `npm start` runs it
 * (embedded PostgreSQL in a fresh DATA_DIR, the demo account whose organization has a Market1 integration with
 * the sandbox the service serves), it imports the campaigns, prints the top five by expenses with CTR and DRR,
 * exports the statistics with progress and saves a workbook that exceljs reads back.
 */
import path from 'node:path';
import ExcelJS from 'exceljs';
import { describe, expect, it } from 'vitest';
import { runExample, useFreshService } from '../helpers/service-process.ts';

const service = useFreshService('campaign-example');

describe('examples/campaign-report.ts on a fresh service', () => {
  it('imports, prints the top five by expenses and saves the export', async () => {
    const reportFile = path.join(service.dataDir, 'report.xlsx');
    const stdout = await runExample('campaign-report.ts', service, { REPORT_FILE: reportFile });
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
