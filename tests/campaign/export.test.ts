/**
 * The statistics export (spec §4.6 `POST /api/campaign/stats/xlsx`, §7, D10.3, D10.4; P115–P117) through HTTP on
 * the real database: the task finishes, its file is downloaded by the owner only, and the workbook read back with
 * exceljs holds typed cells, the D10.4 ratios (zero denominators → 0), a totals row and the filter sheet; filters
 * restrict the rows; the access checks answer in the spec's order; a cancelled export leaves no file.
 */
import { describe, expect, it } from 'vitest';
import type ExcelJS from 'exceljs';
import { useTestApp, testDatabaseUrl, type TestApp } from '../helpers/test-app.ts';
import { createAccount, type TestAccount } from '../helpers/factories.ts';
import { expectError, expectNotFound, send } from '../helpers/http.ts';
import { waitForTask } from '../helpers/tasks.ts';
import { openBlockingTransaction, waitUntilBlockedBy } from '../helpers/blocking-transaction.ts';
import { downloadWorkbook, seedCampaigns, startExport, type SeedCampaign } from './export-kit.ts';

let t: TestApp;
useTestApp((app) => void (t = app), {
  TASK_PROGRESS_WRITE_MS: '20',
  TASK_HEARTBEAT_SECONDS: '1',
  TASK_SWEEP_SECONDS: '1',
});

const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

/** Two campaigns over five days; 2026-01-05 lies outside the exported range. */
const CAMPAIGNS: SeedCampaign[] = [
  {
    externalId: 501,
    name: 'Shirts autumn',
    type: 'AUTO',
    status: 'ACTIVE',
    productIds: [1, 2],
    days: {
      '2026-01-01': [
        {
          product: 1,
          views: 1000,
          clicks: 50,
          expenses: '250.50',
          addToCart: 10,
          orders: 5,
          orderedItems: 6,
          ordersAmount: '5000.00',
        },
        { product: 2, views: 500, clicks: 10, expenses: '49.50', orders: 1, ordersAmount: '1000.00' },
      ],
      '2026-01-02': [{ product: 1, views: 0, clicks: 0, expenses: '0', orders: 0, ordersAmount: '0' }],
      '2026-01-05': [{ product: 1, views: 100, clicks: 1, expenses: '1.00', orders: 0, ordersAmount: '0' }],
    },
  },
  {
    externalId: 502,
    name: 'Vases search',
    type: 'IN_SEARCH',
    status: 'PAUSED',
    productIds: [3],
    days: {
      '2026-01-03': [{ product: 3, views: 200, clicks: 4, expenses: '12.34', orders: 0, ordersAmount: '0' }],
    },
  },
];

async function seededAccount(options: { role?: 'SUPPORT' } = {}): Promise<TestAccount> {
  const account = await createAccount(t.runtime, options);
  await seedCampaigns(t.runtime.database.db, account, CAMPAIGNS);
  return account;
}

const RANGE = { dateFrom: '2026-01-01', dateTo: '2026-01-03' };

/** Exports with `body` and waits for the task to finish. */
async function exportFinished(account: TestAccount, body: object) {
  const task = await startExport(t.app, account.writeToken, body);
  const finished = await waitForTask(t.app, account.readToken, task.id, ['FINISHED', 'ERROR', 'INTERRUPTED']);
  expect(finished.status, finished.message ?? '').toBe('FINISHED');
  return finished;
}

/** The data rows of the statistics sheet (between the header and the totals row) as plain values. */
function dataRows(sheet: ExcelJS.Worksheet): ExcelJS.CellValue[][] {
  const rows: ExcelJS.CellValue[][] = [];
  for (let number = 2; number < sheet.rowCount; number += 1)
    rows.push((sheet.getRow(number).values as ExcelJS.CellValue[]).slice(1));
  return rows;
}

const day = (text: string) => new Date(`${text}T00:00:00Z`);

describe('POST /api/campaign/stats/xlsx', () => {
  it('exports one row per campaign and day with typed cells, ratios, totals and the filter sheet', async () => {
    const account = await seededAccount();
    const stranger = await createAccount(t.runtime);
    // Another client's campaign with the same external id and days: never in this client's file.
    await seedCampaigns(t.runtime.database.db, stranger, [CAMPAIGNS[0]!]);

    const task = await exportFinished(account, {
      service: 'SERVICE_01',
      organizationId: account.organizationId,
      filter: RANGE,
    });
    expect(task).toMatchObject({
      name: 'Campaign statistics, 2026-01-01..2026-01-03',
      progress: 100,
      processedQuantity: 3,
      organizationId: account.organizationId,
    });
    for (const [filter, name] of [
      [{}, 'Campaign statistics, all days'],
      [{ dateFrom: '2026-01-02' }, 'Campaign statistics, from 2026-01-02'],
      [{ dateTo: '2026-01-02' }, 'Campaign statistics, to 2026-01-02'],
    ] as const) {
      const started = await startExport(t.app, account.writeToken, {
        service: 'SERVICE_01',
        organizationId: account.organizationId,
        filter,
      });
      expect(started.name).toBe(name);
    }
    expect(task.url).toBe(`/api/task/${task.id}/file`);

    const { workbook, headers } = await downloadWorkbook(t.app, account.readToken, task);
    expect(headers['content-type']).toBe(XLSX);
    expect(headers['content-disposition']).toContain('filename="campaign-stats-2026-01-01-2026-01-03.xlsx"');

    const sheet = workbook.getWorksheet('Statistics')!;
    expect(sheet.getRow(1).values).toEqual([
      undefined,
      'Organization',
      'Campaign ID',
      'Campaign',
      'Type',
      'Status',
      'Day',
      'Views',
      'Clicks',
      'CTR',
      'Expenses, ₽',
      'Average cost, ₽',
      'Add to cart',
      'Orders',
      'Conversion',
      'Ordered items',
      'Orders amount, ₽',
      'DRR',
      'CPS, ₽',
    ]);
    const organization = (
      await t.runtime.database.db
        .selectFrom('organization')
        .select('name')
        .where('client_id', '=', account.clientId)
        .where('id', '=', account.organizationId)
        .executeTakeFirstOrThrow()
    ).name;
    expect(dataRows(sheet)).toEqual([
      [organization, 501, 'Shirts autumn', 'AUTO', 'ACTIVE', day('2026-01-01')].concat([
        1500, 60, 0.04, 300, 5, 10, 6, 0.1, 7, 6000, 0.05, 50,
      ] as never[]),
      [organization, 501, 'Shirts autumn', 'AUTO', 'ACTIVE', day('2026-01-02')].concat([
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
      ] as never[]),
      [organization, 502, 'Vases search', 'IN_SEARCH', 'PAUSED', day('2026-01-03')].concat([
        200, 4, 0.02, 12.34, 3.085, 0, 0, 0, 0, 0, 0, 0,
      ] as never[]),
    ]);
    // Typed cells: dates, money, percentages, counts.
    const first = sheet.getRow(2);
    expect(first.getCell(6).type).toBe(4); // ExcelJS.ValueType.Date
    expect(first.getCell(6).numFmt).toBe('yyyy-mm-dd');
    expect(first.getCell(7).numFmt).toBe('#,##0');
    expect(first.getCell(9).numFmt).toBe('0.00%');
    expect(first.getCell(10).numFmt).toBe('#,##0.00');
    expect(first.getCell(18).numFmt).toBe('#,##0.00');

    // Totals: SUBTOTAL sums of the visible rows and the ratios of the sums, with cached results.
    const totals = sheet.getRow(5);
    expect(totals.getCell(1).value).toBe('Total');
    expect(totals.getCell(7).value).toEqual({ formula: 'SUBTOTAL(109,G2:G4)', result: 1700 });
    expect(totals.getCell(10).value).toEqual({ formula: 'SUBTOTAL(109,J2:J4)', result: 312.34 });
    expect(totals.getCell(9).value).toEqual({ formula: 'IF(G5=0,0,H5/G5)', result: 64 / 1700 });
    expect(totals.getCell(17).value).toEqual({ formula: 'IF(P5=0,0,J5/P5)', result: 312.34 / 6000 });
    expect(totals.getCell(18).value).toEqual({ formula: 'IF(M5=0,0,J5/M5)', result: 312.34 / 6 });
    expect(totals.getCell(9).numFmt).toBe('0.00%');
    expect(totals.getCell(10).numFmt).toBe('#,##0.00');
    expect(totals.getCell(10).font.bold).toBe(true);

    expect(sheet.views[0]).toMatchObject({ state: 'frozen', ySplit: 1 });
    expect(sheet.autoFilter).toBe('A1:R4');
    expect(sheet.getColumn(3).width).toBe(40);

    const filter = workbook.getWorksheet('Filter')!;
    const settings = new Map(
      (filter.getSheetValues().slice(2) as ExcelJS.CellValue[][]).map((row) => [row[1], row[2]]),
    );
    expect(settings.get('organizations')).toBe(organization);
    expect(settings.get('service')).toBe('SERVICE_01');
    expect(settings.get('dateFrom')).toBe('2026-01-01');
    expect(settings.get('dateTo')).toBe('2026-01-03');
    expect(settings.get('rows')).toBe(3);
    expect(settings.get('exportedAt (UTC)')).toBeInstanceOf(Date);

    // Only the owner's client downloads it; without a token: 401.
    expectNotFound(await send(t.app, stranger.readToken, { method: 'GET', url: task.url! }), task.id);
    expectError(await send(t.app, undefined, { method: 'GET', url: task.url! }), 401, 'auth_required');
  });

  it('restricts rows by product, status and organizations; without dates the file names the days it holds', async () => {
    const account = await seededAccount();
    const second = await account.addOrganization();
    await seedCampaigns(t.runtime.database.db, { ...account, organizationId: second }, [
      {
        externalId: 900,
        name: 'Second organization',
        days: {
          '2026-01-04': [
            { product: 9, views: 10, clicks: 1, expenses: '2.00', orders: 1, ordersAmount: '20.00' },
          ],
        },
      },
    ]);

    const byProduct = await exportFinished(account, {
      service: 'SERVICE_01',
      organizationId: account.organizationId,
      filter: { ...RANGE, productExternalId: 2 },
    });
    const productRows = dataRows(
      (await downloadWorkbook(t.app, account.readToken, byProduct)).workbook.worksheets[0]!,
    );
    expect(productRows.map((row) => row.slice(1, 8))).toEqual([
      [501, 'Shirts autumn', 'AUTO', 'ACTIVE', day('2026-01-01'), 500, 10],
    ]);

    const paused = await exportFinished(account, {
      service: 'SERVICE_01',
      organizationId: account.organizationId,
      filter: { ...RANGE, status: 'PAUSED,FINISHED' },
    });
    const pausedBook = (await downloadWorkbook(t.app, account.readToken, paused)).workbook;
    expect(dataRows(pausedBook.worksheets[0]!).map((row) => row[1])).toEqual([502]);
    const pausedSettings = pausedBook.getWorksheet('Filter')!.getSheetValues() as ExcelJS.CellValue[][];
    expect(pausedSettings.some((row) => row?.[1] === 'status' && row[2] === 'PAUSED,FINISHED')).toBe(true);

    const both = await exportFinished(account, {
      service: 'SERVICE_01',
      organizationId: account.organizationId,
      organizationIds: [second],
    });
    const { workbook, headers } = await downloadWorkbook(t.app, account.readToken, both);
    expect(headers['content-disposition']).toContain('filename="campaign-stats-2026-01-01-2026-01-05.xlsx"');
    expect(dataRows(workbook.worksheets[0]!).map((row) => [row[1], row[5]])).toEqual([
      [501, day('2026-01-01')],
      [501, day('2026-01-02')],
      [501, day('2026-01-05')],
      [502, day('2026-01-03')],
      [900, day('2026-01-04')],
    ]);
  });

  it('an empty selection still gives a workbook with a zero totals row', async () => {
    const account = await seededAccount();
    const task = await exportFinished(account, {
      service: 'SERVICE_01',
      organizationId: account.organizationId,
      filter: { dateFrom: '2025-06-01', dateTo: '2025-06-30' },
    });
    expect(task.processedQuantity).toBe(0);
    const sheet = (await downloadWorkbook(t.app, account.readToken, task)).workbook.worksheets[0]!;
    expect(sheet.rowCount).toBe(2);
    expect(sheet.getRow(2).getCell(1).value).toBe('Total');
    expect(sheet.getRow(2).getCell(7).value).toBe(0);
  });

  it('answers the access checks of spec §7 in order, and error_validation for a bad filter', async () => {
    const account = await seededAccount();
    const other = await createAccount(t.runtime);
    const support = await seededAccount({ role: 'SUPPORT' });
    const expired = await seededAccount();
    await t.runtime.database.db
      .updateTable('client')
      .set({ subscription_expires_at: new Date(Date.now() - 86_400_000) })
      .where('id', '=', expired.clientId)
      .execute();
    const post = (token: string | undefined, payload: object) =>
      send(t.app, token, { method: 'POST', url: '/api/campaign/stats/xlsx', payload });
    const organizationId = account.organizationId;

    expectError(await post(account.writeToken, { organizationId }), 400, 'error_no_marketplace');
    expectError(
      await post(account.writeToken, { organizationId, service: 'SERVICE_02' }),
      400,
      'error_unsupported_service',
    );
    expectError(await post(account.writeToken, { service: 'SERVICE_01' }), 400, 'error_no_organization');
    expectError(
      await post(account.writeToken, { service: 'SERVICE_01', organizationId: other.organizationId }),
      400,
      'error_user_does_not_have_this_organization',
    );
    expectError(
      await post(account.writeToken, {
        service: 'SERVICE_01',
        organizationId,
        filter: { organizationIds: [other.organizationId] },
      }),
      400,
      'error_user_does_not_have_this_organization',
    );
    expectError(
      await post(support.writeToken, { service: 'SERVICE_01', organizationId: support.organizationId }),
      400,
      'error_analytics_access_denied',
    );
    expectError(
      await post(expired.writeToken, { service: 'SERVICE_01', organizationId: expired.organizationId }),
      400,
      'error_subscription_expired',
    );
    expectError(
      await post(account.writeToken, {
        service: 'SERVICE_01',
        organizationId,
        filter: { dateFrom: '2026-02-01', dateTo: '2026-01-01' },
      }),
      400,
      'error_validation',
      { field: 'filter.dateFrom' },
    );
    for (const [filter, field] of [
      [{ dateTo: 'soon' }, 'filter.dateTo'],
      [{ status: 'FOO' }, 'filter.status'],
      [{ bogus: 1 }, 'filter.bogus'],
    ] as const)
      expectError(
        await post(account.writeToken, { service: 'SERVICE_01', organizationId, filter }),
        400,
        'error_validation',
        { field },
      );
    expectError(
      await post(account.writeToken, {
        service: 'SERVICE_01',
        organizationId,
        filter: { dateFrom: 'yesterday' },
      }),
      400,
      'error_validation',
    );
    expectError(
      await post(account.readToken, { service: 'SERVICE_01', organizationId }),
      400,
      'error_access_denied',
    );
    expectError(await post(undefined, { service: 'SERVICE_01', organizationId }), 401, 'auth_required');

    const tasks = await send(t.app, account.readToken, {
      method: 'GET',
      url: '/api/task/findTask',
      query: { type: 'CAMPAIGN_STATS_FILE_TASK' },
    });
    expect(tasks.json<{ rows: unknown[] }>().rows).toEqual([]);
  });

  it('a cancelled export ends INTERRUPTED at its next step and has no file', async () => {
    const account = await seededAccount();
    // Holds the statistics table (as a long migration would) for the few hundred ms the test needs: the export
    // starts RUNNING and waits at its first read, so the cancel lands while it runs.
    const blocker = await openBlockingTransaction(
      testDatabaseUrl(),
      'lock table campaign_statistic_day in access exclusive mode',
      [],
    );
    let taskId: number;
    try {
      const task = await startExport(t.app, account.writeToken, {
        service: 'SERVICE_01',
        organizationId: account.organizationId,
        filter: RANGE,
      });
      taskId = task.id;
      await waitUntilBlockedBy(t.runtime.database.db, blocker.pid);
      expect((await waitForTask(t.app, account.readToken, task.id, ['RUNNING'])).status).toBe('RUNNING');
      const cancelled = await send(t.app, account.writeToken, {
        method: 'POST',
        url: '/api/task/cancelTask',
        query: { taskId: task.id },
      });
      expect(cancelled.statusCode, cancelled.body).toBe(200);
    } finally {
      await blocker.release();
    }
    const stopped = await waitForTask(t.app, account.readToken, taskId, ['INTERRUPTED', 'FINISHED', 'ERROR']);
    expect(stopped.status).toBe('INTERRUPTED');
    expect(stopped.url ?? null).toBeNull();
    expectNotFound(
      await send(t.app, account.readToken, { method: 'GET', url: `/api/task/${taskId}/file` }),
      taskId,
    );
  });
});
