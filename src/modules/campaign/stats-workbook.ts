/**
 * The campaign statistics workbook (P116): an XLSX file written with exceljs's streaming
 * `WorkbookWriter` into a Writable, one row committed at a time, so memory stays flat however many rows.
 *
 * Sheet "Statistics": a frozen header, one row per campaign and day — organization, campaign external id and name,
 * type, status, day, views, clicks, CTR, expenses, average cost, add-to-cart, orders, conversion, ordered items,
 * orders amount, DRR, CPS — an autofilter over the rows and a totals row below them (`SUBTOTAL`, so it follows the
 * autofilter; the ratios recomputed from the totals). Ratios follow D10.4 (a zero denominator gives 0); the
 * percentages (CTR, conversion, DRR) are stored as fractions with a percent format, so Excel shows
 * `clicks/views×100 %` (P116). Days are date cells (the marketplace's Moscow day, P110), money (roubles) is
 * `#,##0.00`, counts `#,##0`. Cells carry cached values, so a reader that does not recalculate sees them.
 * Sheet "Filter": the filter the export used, one setting per row. Printing is set to landscape, one page wide.
 */
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import ExcelJS from 'exceljs';

/** The XLSX media type (the download's `Content-Type`). */
export const XLSX_CONTENT_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

/** One campaign and day of statistics, summed over products (money: exact decimal strings or numbers, roubles). */
export interface StatsWorkbookRow {
  organizationName: string;
  externalId: number;
  campaignName: string;
  /** Campaign type (spec §2 `Campaign.type`). */
  type: string;
  /** Campaign status (spec §3). */
  status: string;
  /** The marketplace's day, `YYYY-MM-DD`. */
  day: string;
  views: number;
  clicks: number;
  expenses: string | number;
  quantityAddCart: number;
  quantityOrders: number;
  quantityProductOrders: number;
  ordersAmount: string | number;
}

/** One row of the "Filter" sheet: a setting and its value (text, number or date). */
export interface FilterSetting {
  name: string;
  value: string | number | Date;
}

/** The language of the headers: the task creator's (P85). */
export type WorkbookLang = 'ru' | 'en';

type Kind = 'text' | 'id' | 'date' | 'count' | 'money' | 'percent';

interface ColumnSpec {
  en: string;
  ru: string;
  kind: Kind;
  width: number;
  /** How the totals row fills the column: a sum, a ratio of two summed columns (D10.4), or nothing. */
  total?: 'sum' | { numerator: number; denominator: number };
}

const NUMBER_FORMATS: Record<Kind, string | undefined> = {
  text: undefined,
  id: '0',
  date: 'yyyy-mm-dd',
  count: '#,##0',
  money: '#,##0.00',
  percent: '0.00%',
};

/**
 * One style object per column, shared by every data cell of the column: exceljs remembers a style object's id
 * (a WeakMap), so shared objects skip its per-cell style rendering, most of the writer's time otherwise.
 */
const CELL_STYLES: Record<Kind, Partial<ExcelJS.Style>> = {
  text: {},
  id: { numFmt: NUMBER_FORMATS.id! },
  date: { numFmt: NUMBER_FORMATS.date! },
  count: { numFmt: NUMBER_FORMATS.count! },
  money: { numFmt: NUMBER_FORMATS.money! },
  percent: { numFmt: NUMBER_FORMATS.percent! },
};

/** Column positions (1-based), for formulas and ratios. */
const VIEWS = 7;
const CLICKS = 8;
const EXPENSES = 10;
const ORDERS = 13;
const ORDERS_AMOUNT = 16;

const ratioOf = (numerator: number, denominator: number) => ({ numerator, denominator });

/** The columns of the "Statistics" sheet, in order (A..R). */
const COLUMNS: ColumnSpec[] = [
  { en: 'Organization', ru: 'Организация', kind: 'text', width: 28 },
  { en: 'Campaign ID', ru: 'ID кампании', kind: 'id', width: 13 },
  { en: 'Campaign', ru: 'Кампания', kind: 'text', width: 40 },
  { en: 'Type', ru: 'Тип', kind: 'text', width: 25 },
  { en: 'Status', ru: 'Статус', kind: 'text', width: 12 },
  { en: 'Day', ru: 'День', kind: 'date', width: 12 },
  { en: 'Views', ru: 'Показы', kind: 'count', width: 12, total: 'sum' },
  { en: 'Clicks', ru: 'Клики', kind: 'count', width: 10, total: 'sum' },
  { en: 'CTR', ru: 'CTR', kind: 'percent', width: 9, total: ratioOf(CLICKS, VIEWS) },
  { en: 'Expenses, ₽', ru: 'Затраты, ₽', kind: 'money', width: 14, total: 'sum' },
  {
    en: 'Average cost, ₽',
    ru: 'Средняя цена клика, ₽',
    kind: 'money',
    width: 13,
    total: ratioOf(EXPENSES, CLICKS),
  },
  { en: 'Add to cart', ru: 'Добавления в корзину', kind: 'count', width: 12, total: 'sum' },
  { en: 'Orders', ru: 'Заказы', kind: 'count', width: 10, total: 'sum' },
  { en: 'Conversion', ru: 'Конверсия', kind: 'percent', width: 11, total: ratioOf(ORDERS, CLICKS) },
  { en: 'Ordered items', ru: 'Заказано товаров', kind: 'count', width: 12, total: 'sum' },
  { en: 'Orders amount, ₽', ru: 'Сумма заказов, ₽', kind: 'money', width: 16, total: 'sum' },
  { en: 'DRR', ru: 'ДРР', kind: 'percent', width: 9, total: ratioOf(EXPENSES, ORDERS_AMOUNT) },
  { en: 'CPS, ₽', ru: 'CPS, ₽', kind: 'money', width: 11, total: ratioOf(EXPENSES, ORDERS) },
];

const TEXT = {
  statistics: { en: 'Statistics', ru: 'Статистика' },
  filter: { en: 'Filter', ru: 'Фильтр' },
  total: { en: 'Total', ru: 'Итого' },
  setting: { en: 'Setting', ru: 'Параметр' },
  value: { en: 'Value', ru: 'Значение' },
};

/** `numerator / denominator`, 0 for a zero denominator (D10.4). */
export const ratio = (numerator: number, denominator: number): number =>
  denominator === 0 ? 0 : numerator / denominator;

/** Excel's column letter of a 1-based column number (A..Z, enough for this sheet). */
const letter = (column: number) => String.fromCharCode(64 + column);

/** A `YYYY-MM-DD` day as a date cell value (midnight UTC: exceljs writes dates as UTC serial numbers). */
const dayCell = (day: string) => new Date(`${day}T00:00:00Z`);

/**
 * Writes the workbook to a stream. Call `addRow` for each row in order, then `finish` once; a writer is used once.
 * Headers and sheet names are in `lang`.
 */
export class StatsWorkbookWriter {
  /** Data rows written so far. */
  rowCount = 0;
  private readonly workbook: ExcelJS.stream.xlsx.WorkbookWriter;
  private readonly sheet: ExcelJS.Worksheet;
  /** Sums of the summed columns, by column number (money in kopecks, exact). */
  private readonly sums = new Map<number, number>();

  constructor(
    private readonly stream: Writable,
    private readonly lang: WorkbookLang,
  ) {
    this.workbook = new ExcelJS.stream.xlsx.WorkbookWriter({
      stream,
      useStyles: true,
      useSharedStrings: false,
    });
    this.workbook.creator = 'seller-ops';
    this.sheet = this.workbook.addWorksheet(TEXT.statistics[lang], {
      views: [{ state: 'frozen', ySplit: 1, xSplit: 0 }],
      // Printed (or rendered to PDF): landscape A4, every column on one page's width.
      pageSetup: { orientation: 'landscape', paperSize: 9, fitToPage: true, fitToWidth: 1, fitToHeight: 0 },
    });
    this.sheet.columns = COLUMNS.map((column) => ({ width: column.width }));
    const header = this.sheet.addRow(COLUMNS.map((column) => column[lang]));
    header.font = { bold: true };
    header.alignment = { vertical: 'middle', wrapText: true };
    header.commit();
  }

  /** Writes one campaign and day, with its ratios (D10.4), and commits it (it leaves memory). */
  addRow(row: StatsWorkbookRow): void {
    const expenses = Number(row.expenses);
    const ordersAmount = Number(row.ordersAmount);
    const values = [
      row.organizationName,
      row.externalId,
      row.campaignName,
      row.type,
      row.status,
      dayCell(row.day),
      row.views,
      row.clicks,
      ratio(row.clicks, row.views),
      expenses,
      ratio(expenses, row.clicks),
      row.quantityAddCart,
      row.quantityOrders,
      ratio(row.quantityOrders, row.clicks),
      row.quantityProductOrders,
      ordersAmount,
      ratio(expenses, ordersAmount),
      ratio(expenses, row.quantityOrders),
    ];
    for (const [index, column] of COLUMNS.entries())
      if (column.total === 'sum') {
        const value = values[index] as number;
        const exact = column.kind === 'money' ? Math.round(value * 100) : value;
        this.sums.set(index + 1, (this.sums.get(index + 1) ?? 0) + exact);
      }
    const added = this.sheet.addRow(values);
    for (const [index, column] of COLUMNS.entries())
      added.getCell(index + 1).style = CELL_STYLES[column.kind];
    added.commit();
    this.rowCount += 1;
  }

  /**
   * Resolves once the statistics sheet's zip entry has taken the XML written so far (P150) and the output stream
   * has room again; call it between batches of rows. exceljs writes the sheet into archiver's entry stream
   * without heeding its backpressure, and the compression only advances while the event loop is free: without
   * this wait the uncompressed XML of every row queued there until the end (≈ 65 MiB for 100,000 rows). Reads
   * exceljs's (`WorksheetWriter.stream.pipes`) and archiver's (`_writableState.needDrain`) internals of the
   * versions in the lockfile; where they differ it does not wait, and `tests/campaign/stats-workbook.test.ts`
   * fails.
   */
  async drained(): Promise<void> {
    const sheetStream = (this.sheet as unknown as { stream?: { pipes?: unknown[] } }).stream;
    const entry = sheetStream?.pipes?.[0] as
      (NodeJS.EventEmitter & { _writableState?: { needDrain?: boolean } }) | undefined;
    if (entry?._writableState?.needDrain === true) await once(entry, 'drain');
    if (this.stream.writableNeedDrain) await once(this.stream, 'drain');
  }

  /**
   * Writes the totals row, the autofilter and the "Filter" sheet (`filter`), and ends the stream. Resolves once
   * the workbook is written.
   */
  async finish(filter: readonly FilterSetting[]): Promise<void> {
    this.writeTotals();
    const lastRow = this.rowCount + 1;
    this.sheet.autoFilter = { from: { row: 1, column: 1 }, to: { row: lastRow, column: COLUMNS.length } };
    this.sheet.commit();

    const sheet = this.workbook.addWorksheet(TEXT.filter[this.lang]);
    sheet.columns = [{ width: 24 }, { width: 60 }];
    const header = sheet.addRow([TEXT.setting[this.lang], TEXT.value[this.lang]]);
    header.font = { bold: true };
    header.commit();
    for (const setting of filter) {
      const row = sheet.addRow([setting.name, setting.value]);
      if (setting.value instanceof Date) row.getCell(2).numFmt = 'yyyy-mm-dd hh:mm:ss';
      row.alignment = { horizontal: 'left' };
      row.commit();
    }
    sheet.commit();
    await this.workbook.commit();
  }

  /** The totals row: sums (`SUBTOTAL(109, …)`: visible rows only) and the ratios of the sums, with cached values. */
  private writeTotals(): void {
    const first = 2;
    const last = this.rowCount + 1;
    const totalRow = last + 1;
    const sumOf = (column: number) => {
      const sum = this.sums.get(column) ?? 0;
      return COLUMNS[column - 1]!.kind === 'money' ? sum / 100 : sum;
    };
    const values: ExcelJS.CellValue[] = COLUMNS.map((column, index) => {
      const at = index + 1;
      if (index === 0) return TEXT.total[this.lang];
      if (column.total === undefined) return null;
      if (column.total === 'sum')
        return this.rowCount === 0
          ? 0
          : { formula: `SUBTOTAL(109,${letter(at)}${first}:${letter(at)}${last})`, result: sumOf(at) };
      const { numerator, denominator } = column.total;
      const n = `${letter(numerator)}${totalRow}`;
      const d = `${letter(denominator)}${totalRow}`;
      return {
        formula: `IF(${d}=0,0,${n}/${d})`,
        result: ratio(sumOf(numerator), sumOf(denominator)),
      };
    });
    const row = this.sheet.addRow(values);
    for (const [index, column] of COLUMNS.entries())
      row.getCell(index + 1).style = { ...CELL_STYLES[column.kind], font: { bold: true } };
    row.commit();
  }
}
