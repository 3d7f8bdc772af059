import { Chalk } from 'chalk';
import type { PruneUrgency } from '../../core/policy.js';
import type { SessionError, SessionSummary } from '../batch/session.js';
import { colorEnabled } from '../context.js';
import type { CliContext } from '../context.js';

/** A row of a batch in its final order: an analysed session, or a transcript that could not be read. */
export type BatchRow =
  | { readonly kind: 'session'; readonly summary: SessionSummary; readonly reportJson?: string }
  | { readonly kind: 'error'; readonly file: string; readonly project: string; readonly error: SessionError };

export interface BatchTotals {
  readonly transcripts: number;
  readonly failed: number;
  readonly turns: number;
  readonly totalTokens: number;
  readonly urgency: PruneUrgency;
  /** Sessions left out by --since/--until. */
  readonly outOfRange: number;
}

export interface ProjectTotals {
  readonly project: string;
  readonly transcripts: number;
  readonly failed: number;
  readonly turns: number;
  readonly totalTokens: number;
  readonly urgency: PruneUrgency;
}

const n = (value: number): string => value.toLocaleString('en-US');

/** The rows that set the column widths before the table starts to stream. */
export const ALIGN_BLOCK = 50;
const ALIGN: readonly ('l' | 'r')[] = ['l', 'l', 'r', 'r', 'l'];
const HEADER = ['file', 'format', 'turns', 'tokens', 'urgency'];
/** Once streaming, numbers get room for a large total (9,999,999,999 tokens). */
const STREAM_MIN_WIDTHS = [0, 0, 9, 13, 0];

function cells(row: BatchRow): string[] {
  if (row.kind === 'error') return [row.file, '-', '-', '-', `error (exit ${row.error.exitCode})`];
  const s = row.summary;
  return [s.file, s.format, n(s.turns), n(s.totalTokens), s.urgency];
}

function line(row: readonly string[], widths: readonly number[]): string {
  return row
    .map((cell, col) => (ALIGN[col] === 'r' ? cell.padStart(widths[col] ?? 0) : cell.padEnd(widths[col] ?? 0)))
    .join('  ')
    .trimEnd();
}

function widthsOf(rows: readonly (readonly string[])[], min: readonly number[] = []): number[] {
  return HEADER.map((_, col) => Math.max(min[col] ?? 0, ...rows.map((r) => (r[col] ?? '').length)));
}

/**
 * The table of a batch for a person, streamed: the first ALIGN_BLOCK rows are held to size the
 * columns, then every row is written as it comes (a longer file name later only pushes its own row
 * out of line). Up to ALIGN_BLOCK rows it is exactly the table a few files always gave.
 */
export class BatchTable {
  private readonly held: string[][] = [];
  private widths: number[] | undefined;
  private readonly bold: (s: string) => string;

  constructor(
    ctx: CliContext,
    private readonly write: (text: string) => void,
  ) {
    const chalk = new Chalk({ level: colorEnabled(ctx) ? 1 : 0 });
    this.bold = (s) => chalk.bold(s);
  }

  add(row: BatchRow): void {
    if (this.widths) {
      this.write(`${line(cells(row), this.widths)}\n`);
      return;
    }
    this.held.push(cells(row));
    if (this.held.length >= ALIGN_BLOCK) {
      this.widths = widthsOf([HEADER, ...this.held], STREAM_MIN_WIDTHS);
      this.write(`${[this.bold(line(HEADER, this.widths)), ...this.held.map((r) => line(r, this.widths ?? []))].join('\n')}\n`);
      this.held.length = 0;
    }
  }

  finish(totals: BatchTotals, projects: readonly ProjectTotals[], range: { readonly shown: string } | undefined): void {
    const total = ['total', '', n(totals.turns), n(totals.totalTokens), ''];
    const out: string[] = [];
    if (this.widths === undefined) {
      const widths = widthsOf([HEADER, ...this.held, total]);
      out.push(this.bold(line(HEADER, widths)), ...this.held.map((r) => line(r, widths)), line(total, widths));
    } else {
      out.push(line(total, this.widths));
    }
    if (range) out.push(totals.outOfRange === 0 ? `every session is within ${range.shown}` : `${n(totals.outOfRange)} more session(s) outside ${range.shown}, not shown`);
    if (showProjects(projects)) out.push('', this.bold('By project'), ...projectTable(projects, this.bold));
    this.write(`${out.join('\n')}\n`);
  }
}

/** Per-project totals say something the rows do not when there are several projects and one has several sessions. */
export function showProjects(projects: readonly ProjectTotals[]): boolean {
  return projects.length > 1 && projects.some((p) => p.transcripts > 1);
}

function projectTable(projects: readonly ProjectTotals[], bold: (s: string) => string): string[] {
  const align: readonly ('l' | 'r')[] = ['l', 'r', 'r', 'r', 'l'];
  const rows = [
    ['project', 'sessions', 'turns', 'tokens', 'worst'],
    ...projects.map((p) => [
      p.project,
      p.failed > 0 ? `${n(p.transcripts)} (${n(p.failed)} failed)` : n(p.transcripts),
      n(p.turns),
      n(p.totalTokens),
      p.transcripts > p.failed ? p.urgency : '-',
    ]),
  ];
  const widths = align.map((_, col) => Math.max(...rows.map((r) => (r[col] ?? '').length)));
  const lines = rows.map((r) =>
    r
      .map((cell, col) => (align[col] === 'r' ? cell.padStart(widths[col] ?? 0) : cell.padEnd(widths[col] ?? 0)))
      .join('  ')
      .trimEnd(),
  );
  return [bold(lines[0] ?? ''), ...lines.slice(1)];
}

/**
 * The note on stderr beside a row (as the table of a few files always printed): why a transcript
 * could not be read, or how many of its lines were skipped.
 */
export function batchRowDiagnostic(row: BatchRow): string {
  if (row.kind === 'error') return `devs-ctx: ${row.error.message}${row.error.hint ? `\n  hint: ${row.error.hint}` : ''}\n`;
  const s = row.summary;
  if (s.issues === 0) return '';
  const shown = s.issueLines.slice(0, 10).join(', ');
  return (
    `devs-ctx: ${s.file}: ${s.issues} skipped or odd line(s)` +
    (s.issueLines.length > 0 ? ` (line ${shown}${s.issueLines.length > 10 ? ', …' : ''})` : '') +
    `; run devs-ctx analyze ${s.file} for the reasons\n`
  );
}

/** One `--ndjson` line for a row. */
export function ndjsonRow(row: BatchRow): string {
  if (row.kind === 'error') {
    return `${JSON.stringify({ type: 'session', file: row.file, project: row.project, error: row.error })}\n`;
  }
  const { issueLines: _lines, ...summary } = row.summary;
  return `${JSON.stringify({ type: 'session', ...summary })}\n`;
}
