/**
 * Prints the bench results as text tables and records them in docs/performance.md, between the markers
 * `<!-- bench:results:start -->` and `<!-- bench:results:end -->` (the hand-written analysis around them stays).
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { repoRoot, type BenchPartResult } from './lib.ts';

const START = '<!-- bench:results:start -->';
const END = '<!-- bench:results:end -->';

/** Where and how the figures were taken. */
export interface RunInfo {
  date: string;
  cpus: number;
  cpuModel: string;
  memoryGiB: number;
  node: string;
  database: string;
  loadSeconds: number;
  durationSeconds: number;
}

/** Renders the results as aligned text for the terminal. */
export function renderText(info: RunInfo, parts: BenchPartResult[]): string {
  const lines = [
    `seller-ops bench, ${info.date}: ${info.cpus} CPUs (${info.cpuModel}), ${info.memoryGiB} GiB, Node ${info.node}`,
    `database: ${info.database}; load: autocannon, ${info.loadSeconds} s per run; whole run ${info.durationSeconds} s`,
  ];
  for (const part of parts) {
    lines.push('', part.title, '='.repeat(part.title.length));
    const width = Math.max(...part.rows.map((row) => row.name.length));
    for (const row of part.rows) {
      lines.push(`${row.name.padEnd(width)}  ${row.value}`);
      if (row.detail) lines.push(`${''.padEnd(width)}    ${row.detail}`);
    }
  }
  const targets = parts.flatMap((part) => part.targets);
  lines.push('', 'Targets', '=======');
  const width = Math.max(...targets.map((target) => target.target.length));
  for (const target of targets)
    lines.push(
      `${target.met ? 'met   ' : 'MISSED'}  ${target.target.padEnd(width)}  ${target.measured}${target.miss ? ` (${target.miss})` : ''}`,
    );
  return lines.join('\n');
}

const cell = (text: string) => text.replace(/\|/g, '\\|');

/** Renders the results as the Markdown section of docs/performance.md. */
export function renderMarkdown(info: RunInfo, parts: BenchPartResult[]): string {
  const lines = [
    START,
    `Measured ${info.date} by \`npm run bench\` on ${info.cpus} CPUs (${info.cpuModel}), ${info.memoryGiB} GiB RAM,`,
    `Node ${info.node}; database: ${info.database}; autocannon runs of ${info.loadSeconds} s; the whole run took`,
    `${info.durationSeconds} s.`,
  ];
  for (const part of parts) {
    lines.push('', `### ${part.title}`, '', '| Measured | Figure | Detail |', '|---|---|---|');
    for (const row of part.rows)
      lines.push(`| ${cell(row.name)} | ${cell(row.value)} | ${cell(row.detail ?? '')} |`);
  }
  lines.push('', '### Targets', '', '| Target | Measured | Verdict |', '|---|---|---|');
  for (const target of parts.flatMap((part) => part.targets))
    lines.push(
      `| ${cell(target.target)} | ${cell(target.measured)} | ${target.met ? 'met' : `missed: ${cell(target.miss ?? '')}`} |`,
    );
  lines.push(END);
  return lines.join('\n');
}

/** Replaces the results section of docs/performance.md (appends it when the markers are missing). */
export async function writeDocs(markdown: string): Promise<string> {
  const file = path.join(repoRoot, 'docs/performance.md');
  const current = await readFile(file, 'utf8').catch(() => '# Performance\n');
  const start = current.indexOf(START);
  const end = current.indexOf(END);
  const next =
    start >= 0 && end > start
      ? current.slice(0, start) + markdown + current.slice(end + END.length)
      : `${current.trimEnd()}\n\n## Latest figures\n\n${markdown}\n`;
  await writeFile(file, next);
  return file;
}
