/**
 * The fuzzing report (P145): counts by status, by variant and by operation × status, the broken rules with the
 * requests that broke them, as text for the terminal and as Markdown for `docs/fuzzing.md`.
 */
import { readFile, writeFile } from 'node:fs/promises';
import type { FuzzReport } from './runner.ts';

/** Whether the run found nothing wrong: no broken rule, nothing skipped, every operation exercised. */
export const passed = (report: FuzzReport) =>
  Object.values(report.violations).every((count) => count === 0) &&
  report.skipped.length === 0 &&
  unexercised(report).length === 0;

/** Operations that received no request. */
export const unexercised = (report: FuzzReport) =>
  report.operations.filter((operation) => operation.requests === 0).map((operation) => operation.key);

const number = (value: number) => value.toLocaleString('en-US');
const byKey = (record: Record<string, number>) =>
  Object.entries(record).sort(([a], [b]) => a.localeCompare(b, 'en', { numeric: true }));
const inline = (record: Record<string, number>) =>
  byKey(record)
    .map(([key, count]) => `${key} ${number(count)}`)
    .join(' · ');

/** The summary lines shared by both renderings. */
function summary(report: FuzzReport): string[] {
  const { violations } = report;
  return [
    `seed ${report.seed} · ${number(report.requests)} requests · ${report.operations.length} operations · ${(report.durationMs / 1000).toFixed(1)} s`,
    `statuses: ${inline(report.statuses)}`,
    `variants: ${inline(report.variants)}`,
    `5xx: ${violations['5xx']} · bodies outside the model: ${violations['outside-model']} · unanswered: ${violations['no-answer']}`,
    `skipped operations: ${report.skipped.length === 0 ? 'none' : report.skipped.map((s) => `${s.key} (${s.reason})`).join('; ')}`,
    `operations without requests: ${unexercised(report).join(', ') || 'none'}`,
  ];
}

/** The table of requests per operation and status: header row, then one row per operation. */
function table(report: FuzzReport): string[][] {
  const statuses = byKey(report.statuses).map(([status]) => status);
  return [
    ['operation', 'requests', ...statuses],
    ...report.operations.map((operation) => [
      operation.key,
      number(operation.requests),
      ...statuses.map((status) => number(operation.statuses[status] ?? 0)),
    ]),
  ];
}

/** The report for a terminal. */
export function renderText(report: FuzzReport): string {
  const rows = table(report);
  const widths = (rows[0] ?? []).map((_cell, column) =>
    Math.max(...rows.map((row) => (row[column] ?? '').length)),
  );
  const lines = rows.map((row) =>
    row
      .map((cell, column) =>
        column === 0 ? cell.padEnd(widths[0] ?? 0) : cell.padStart(widths[column] ?? 0),
      )
      .join('  '),
  );
  const failures = report.failures.map(
    (failure) =>
      `#${failure.index} ${failure.kind} ${failure.operation} (${failure.variant}): ${failure.message}\n    ${JSON.stringify(failure.request)}`,
  );
  return [
    ...summary(report),
    '',
    ...lines,
    ...(failures.length > 0 ? ['', `first ${failures.length} broken rules:`, ...failures] : []),
  ].join('\n');
}

/** The report as Markdown (summary list and table). */
export function renderMarkdown(report: FuzzReport): string {
  const [header = [], ...rows] = table(report);
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [
    ...summary(report).map((text) => `- ${text}`),
    '',
    line(header),
    line(header.map((_cell, column) => (column === 0 ? '---' : '---:'))),
    ...rows.map((row) => line([`\`${row[0]}\``, ...row.slice(1)])),
  ].join('\n');
}

const START = '<!-- fuzz-results:start -->';
const END = '<!-- fuzz-results:end -->';

/**
 * Replaces the results between the markers of `file` (docs/fuzzing.md) with `markdown`.
 * @throws Error when the file has no markers
 */
export async function writeResults(file: string, markdown: string): Promise<void> {
  const current = await readFile(file, 'utf8');
  const start = current.indexOf(START);
  const end = current.indexOf(END);
  if (start < 0 || end < start) throw new Error(`${file} has no ${START} … ${END} markers`);
  await writeFile(file, `${current.slice(0, start + START.length)}\n${markdown}\n${current.slice(end)}`);
}
