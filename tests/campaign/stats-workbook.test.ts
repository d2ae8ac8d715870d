/**
 * The statistics workbook writer's memory (P150): with `drained()` between batches the compressed file reaches
 * its stream while rows are still being written, instead of the sheet's uncompressed XML queueing in the zip
 * pipeline until the end; the file read back holds every row.
 */
import { Writable } from 'node:stream';
import ExcelJS from 'exceljs';
import { describe, expect, it } from 'vitest';
import { StatsWorkbookWriter, type StatsWorkbookRow } from '../../src/modules/campaign/stats-workbook.ts';

const BATCHES = 10;
const ROWS_PER_BATCH = 2_000;

const row = (index: number): StatsWorkbookRow => ({
  organizationName: 'Organization',
  externalId: 9_000_000 + (index % 500),
  campaignName: `Campaign ${index % 500}`,
  type: 'AUTO',
  status: 'ACTIVE',
  day: '2026-03-01',
  views: 1_000 + index,
  clicks: index % 50,
  expenses: '123.45',
  quantityAddCart: 3,
  quantityOrders: 2,
  quantityProductOrders: 2,
  ordersAmount: '4567.00',
});

describe('StatsWorkbookWriter', () => {
  it('hands the compressed sheet to its stream while rows are written when drained between batches', async () => {
    const chunks: Buffer[] = [];
    let received = 0;
    // a stream that takes its time, as a file or a database does
    const sink = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        chunks.push(chunk);
        received += chunk.length;
        setImmediate(callback);
      },
    });
    const writer = new StatsWorkbookWriter(sink, 'en');
    for (let batch = 0; batch < BATCHES; batch += 1) {
      for (let index = 0; index < ROWS_PER_BATCH; index += 1)
        writer.addRow(row(batch * ROWS_PER_BATCH + index));
      await writer.drained();
    }
    const beforeFinish = received;
    await writer.finish([]);
    await new Promise<void>((resolve) => sink.end(resolve));

    // without the waits about a tenth arrives before `finish`, the rest queued uncompressed in memory
    expect(beforeFinish / received).toBeGreaterThan(0.6);
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load(Buffer.concat(chunks) as unknown as ArrayBuffer);
    // the header, every row and the totals row
    expect(workbook.worksheets[0]?.rowCount).toBe(1 + BATCHES * ROWS_PER_BATCH + 1);
  });
});
