import { basename, dirname, isAbsolute, relative, resolve } from 'node:path';
import { Chalk } from 'chalk';
import type { PruneUrgency } from '../../core/policy.js';
import { subagentParent } from '../batch/session.js';
import type { SessionError, SessionSummary } from '../batch/session.js';
import type { BatchReportText } from '../batch/report-json.js';
import { colorEnabled, terminalWidth } from '../context.js';
import type { CliContext } from '../context.js';
import { thousands as n } from '../../core/numbers.js';
import { headOf, printable, tailOf } from '../../core/text-cut.js';
import { shellWord } from '../../core/git-hook.js';

/** A row of a batch in its final order: an analysed session, or a transcript that could not be read. */
export type BatchRow =
  /** `reportJson`: its full report, as an element of `--json`'s array (see src/cli/batch/report-json.ts). */
  | { readonly kind: 'session'; readonly summary: SessionSummary; readonly reportJson?: BatchReportText }
  | { readonly kind: 'error'; readonly file: string; readonly project: string; readonly error: SessionError };

export interface BatchTotals {
  readonly transcripts: number;
  readonly failed: number;
  readonly turns: number;
  readonly totalTokens: number;
  readonly urgency: PruneUrgency;
  /** Sessions left out by --since/--until. */
  readonly outOfRange: number;
  /** Of the transcripts, Claude Code subagent transcripts (counted under their session, not as sessions). */
  readonly subagents: number;
  /** Files a directory walk or a glob found that are JSON but no transcript format devs-ctx knows, left out. */
  readonly notTranscripts: number;
}

export interface ProjectTotals {
  readonly project: string;
  readonly transcripts: number;
  readonly failed: number;
  readonly turns: number;
  readonly totalTokens: number;
  readonly urgency: PruneUrgency;
  /** Of the transcripts, subagent transcripts (their turns and tokens are in the project's). */
  readonly subagents: number;
}

/** The rows that set the column widths before the table starts to stream. */
export const ALIGN_BLOCK = 50;
const ALIGN: readonly ('l' | 'r')[] = ['l', 'l', 'r', 'r', 'r', 'r', 'l', 'l'];
const HEADER = ['file', 'model', 'context', 'window', 'peak', 'compact', 'last active', 'urgency'];
/** Once streaming, sizes get room for a large one (1.5M, 999k). */
const STREAM_MIN_WIDTHS = [0, 0, 7, 0, 5, 0, 0, 0];
/** The file column is never cut shorter than this, however narrow the terminal. */
const MIN_FILE_WIDTH = 12;
/** A longer model id is cut in the middle; on a narrow terminal, down to MIN_MODEL_WIDTH. */
const MODEL_WIDTH = 18;
const MIN_MODEL_WIDTH = 11;
const WINDOW = 3;
const LAST_ACTIVE = 6;
/** `2026-01-29`: last activity without its time of day. */
const DAY_WIDTH = 11;

/** A size in short, as a person reads a table (exact figures are in --json): 144, 9.3k, 106k, 1M, 1.5M. */
export function shortSize(tokens: number): string {
  if (tokens >= 999_500) return `${Number((tokens / 1_000_000).toFixed(1))}M`;
  if (tokens >= 9950) return `${Math.round(tokens / 1000)}k`;
  if (tokens >= 1000) return `${Number((tokens / 1000).toFixed(1))}k`;
  return String(tokens);
}

/** The model's id without its release date (claude-opus-4-5-20251101 → claude-opus-4-5). */
export function shortModel(model: string | null): string {
  return model === null ? '-' : model.replace(/-\d{8}$/, '');
}

/** Cuts the middle out of a long name so that it fits `width` (the start and the file's own name stay). */
export function truncateMiddle(text: string, width: number): string {
  if (text.length <= width) return text;
  if (width <= 1) return '…'.slice(0, width);
  const head = Math.floor((width - 1) / 2);
  return `${headOf(text, head)}…${tailOf(text, width - 1 - head)}`;
}

/** When the session was last active, in UTC to the minute. */
function lastActive(iso: string | null): string {
  return iso === null ? '-' : `${iso.slice(0, 10)} ${iso.slice(11, 16)}`;
}

function cells(row: BatchRow, name: (file: string) => string): string[] {
  if (row.kind === 'error') return [printable(name(row.file)), '-', '-', '-', '-', '-', '-', `error (exit ${row.error.exitCode})`];
  const s = row.summary;
  const share = s.window ? `${Math.round((100 * s.contextTokens) / s.window)}% of ${shortSize(s.window)}` : '-';
  return [
    printable(name(s.file)),
    truncateMiddle(shortModel(s.model), MODEL_WIDTH),
    shortSize(s.contextTokens),
    share,
    shortSize(s.peakTokens),
    n(s.compactions),
    lastActive(s.lastTimestamp),
    s.urgency,
  ];
}

function line(row: readonly string[], widths: readonly number[]): string {
  return row
    .map((cell, col) => {
      const width = widths[col] ?? 0;
      // A name or model too long for its column loses its middle; a narrow last-active column, the time of day.
      // A narrow window column keeps the share without the window's size.
      const fitted =
        col === 0 || col === 1
          ? truncateMiddle(cell, width)
          : col === LAST_ACTIVE
            ? cell.slice(0, width)
            : col === WINDOW && cell.length > width
              ? (cell.split(' ')[0] ?? cell)
              : cell;
      return ALIGN[col] === 'r' ? fitted.padStart(width) : fitted.padEnd(width);
    })
    .join('  ')
    .trimEnd();
}

/**
 * Column widths that fit `columns` where they can: the file column gets what the others leave (at
 * least MIN_FILE_WIDTH); on a narrow terminal, last activity shows the day only, then the window column the
 * share only, then the model is cut.
 */
function widthsOf(rows: readonly (readonly string[])[], columns: number, min: readonly number[] = []): number[] {
  const widths = HEADER.map((_, col) => Math.max(min[col] ?? 0, ...rows.map((r) => (r[col] ?? '').length)));
  const room = (): number => columns - widths.slice(1).reduce((sum, w) => sum + w + 2, 0);
  if (room() < MIN_FILE_WIDTH && (widths[LAST_ACTIVE] ?? 0) > DAY_WIDTH) widths[LAST_ACTIVE] = DAY_WIDTH;
  if (room() < MIN_FILE_WIDTH) widths[WINDOW] = Math.min(widths[WINDOW] ?? 0, Math.max('window'.length, '100%'.length));
  if (room() < MIN_FILE_WIDTH) widths[1] = Math.max(MIN_MODEL_WIDTH, (widths[1] ?? 0) - (MIN_FILE_WIDTH - room()));
  widths[0] = Math.min(widths[0] ?? 0, Math.max(MIN_FILE_WIDTH, room()));
  return widths;
}

/** How a batch's file names are shown: relative to the common root of its inputs. */
export interface BatchNames {
  /** The absolute directory the inputs have in common. */
  readonly root: string;
  readonly cwd: string;
}

/**
 * The table of a batch for a person, streamed: the first ALIGN_BLOCK rows are held to size the
 * columns, then every row is written as it comes, in the same columns (a longer name is cut in the
 * middle). Rows fit the terminal (COLUMNS): names are relative to the inputs' common root, and the
 * middle of a name that is still too long is cut. The total counts sessions per urgency.
 */
export class BatchTable {
  private readonly held: string[][] = [];
  private widths: number[] | undefined;
  private readonly bold: (s: string) => string;
  private readonly columns: number;
  private readonly counts: Record<PruneUrgency, number> = { hard: 0, soft: 0, none: 0 };
  private failed = 0;
  private subagents = 0;
  /** Session rows written so far (their files), and subagent rows waiting for their session's row. */
  private readonly sessions = new Set<string>();
  private readonly waiting = new Map<string, BatchRow[]>();

  constructor(
    ctx: CliContext,
    private readonly write: (text: string) => void,
    private readonly names?: BatchNames,
  ) {
    const chalk = new Chalk({ level: colorEnabled(ctx) ? 1 : 0 });
    this.bold = (s) => chalk.bold(s);
    this.columns = terminalWidth(ctx);
  }

  private name = (file: string): string => {
    if (this.names === undefined || file === '(stdin)') return file;
    const shown = relative(this.names.root, resolve(this.names.cwd, file));
    return shown === '' || shown.startsWith('..') || isAbsolute(shown) ? file : shown;
  };

  /**
   * A subagent's row goes right under its session's row, named `↳ agent-….jsonl` (held until that
   * row comes; at the end, rows whose session is not in the batch are written with their path). Its
   * window is its own, so it is not counted as a session, nor in the urgency counts.
   */
  add(row: BatchRow): void {
    const file = row.kind === 'session' ? row.summary.file : row.file;
    const parent = subagentParent(file);
    if (row.kind === 'error') this.failed++;
    else if (parent !== undefined) this.subagents++;
    else this.counts[row.summary.urgency]++;
    if (parent === undefined) {
      this.place(cells(row, this.name));
      this.sessions.add(file);
      for (const sub of this.waiting.get(file) ?? []) this.place(cells(sub, (f) => `  ↳ ${basename(f)}`));
      this.waiting.delete(file);
    } else if (this.sessions.has(parent)) {
      this.place(cells(row, (f) => `  ↳ ${relative(dirname(parent), f)}`));
    } else {
      this.waiting.set(parent, [...(this.waiting.get(parent) ?? []), row]);
    }
  }

  private place(rowCells: string[]): void {
    if (this.widths) {
      this.write(`${line(rowCells, this.widths)}\n`);
      return;
    }
    this.held.push(rowCells);
    if (this.held.length >= ALIGN_BLOCK) {
      this.widths = widthsOf([HEADER, ...this.held], this.columns, STREAM_MIN_WIDTHS);
      this.write(`${[this.bold(line(HEADER, this.widths)), ...this.held.map((r) => line(r, this.widths ?? []))].join('\n')}\n`);
      this.held.length = 0;
    }
  }

  /** The rows not written yet (held to size the columns, subagents waiting for their session's row), written now: a batch stopped by a signal. */
  flush(): void {
    const out = this.pending();
    if (out.length > 0) this.write(`${out.join('\n')}\n`);
  }

  /** The lines of the rows not written yet, the header first when none was. */
  private pending(): string[] {
    for (const rows of this.waiting.values()) for (const row of rows) this.place(cells(row, this.name));
    this.waiting.clear();
    if (this.widths !== undefined) return [];
    const widths = widthsOf([HEADER, ...this.held], this.columns);
    this.widths = widths;
    const out = [this.bold(line(HEADER, widths)), ...this.held.map((r) => line(r, widths))];
    this.held.length = 0;
    return out;
  }

  finish(totals: BatchTotals, projects: readonly ProjectTotals[], range: { readonly shown: string } | undefined): void {
    const out = this.pending();
    const sessions = this.counts.hard + this.counts.soft + this.counts.none;
    const parts = [`${this.counts.hard} hard`, `${this.counts.soft} soft`, `${this.counts.none} none`];
    if (this.failed > 0) parts.push(`${n(this.failed)} unreadable`);
    const subagents = this.subagents > 0 ? ` (+${n(this.subagents)} subagent${this.subagents === 1 ? '' : 's'})` : '';
    out.push(`total  ${n(sessions)} session${sessions === 1 ? '' : 's'}${subagents}: ${parts.join(' · ')}`);
    if (range)
      out.push(
        totals.outOfRange === 0 ? `every session is within ${range.shown}` : `${n(totals.outOfRange)} more session(s) outside ${range.shown}, not shown`,
      );
    if (totals.notTranscripts > 0) {
      const files = totals.notTranscripts === 1 ? 'file' : 'files';
      out.push(`${n(totals.notTranscripts)} other .json/.jsonl ${files} left out: JSON, but no transcript format devs-ctx knows`);
    }
    if (showProjects(projects)) out.push('', this.bold('By project'), ...projectTable(projects, this.bold));
    this.write(`${out.join('\n')}\n`);
  }
}

/** Per-project totals say something the rows do not when there are several projects and one has several sessions. */
function showProjects(projects: readonly ProjectTotals[]): boolean {
  return projects.length > 1 && projects.some((p) => p.transcripts > 1);
}

/** A project's sessions, its subagent transcripts and failures aside: `3`, `3 (+2 subagents)`, `3 (1 failed)`. */
function sessionCount(p: ProjectTotals): string {
  const extra = [
    ...(p.subagents > 0 ? [`+${n(p.subagents)} subagent${p.subagents === 1 ? '' : 's'}`] : []),
    ...(p.failed > 0 ? [`${n(p.failed)} failed`] : []),
  ];
  return `${n(p.transcripts - p.subagents)}${extra.length > 0 ? ` (${extra.join(', ')})` : ''}`;
}

function projectTable(projects: readonly ProjectTotals[], bold: (s: string) => string): string[] {
  const align: readonly ('l' | 'r')[] = ['l', 'r', 'r', 'r', 'l'];
  const rows = [
    ['project', 'sessions', 'turns', 'tokens', 'worst'],
    ...projects.map((p) => [printable(p.project), sessionCount(p), n(p.turns), n(p.totalTokens), p.transcripts > p.failed ? p.urgency : '-']),
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
    (s.file === '(stdin)' ? '; analyze it alone (devs-ctx analyze -) for the reasons\n' : `; run devs-ctx analyze ${shellWord(s.file)} for the reasons\n`)
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
