import { Chalk } from 'chalk';
import type { ChalkInstance } from 'chalk';
import type { DevsCtxError } from '../../core/errors.js';
import { windowGrowth } from '../../core/report.js';
import type { AnalyzeReport, TokenGroup } from '../../core/report.js';
import { colorEnabled, terminalWidth } from '../context.js';
import type { CliContext } from '../context.js';
import { growthChart } from './chart.js';

export interface FileRow {
  readonly file: string;
  readonly report?: AnalyzeReport;
  readonly error?: DevsCtxError;
}

const n = (value: number): string => value.toLocaleString('en-US');
const pct = (part: number, whole: number): string => (whole === 0 ? '0 %' : `${((part / whole) * 100).toFixed(1)} %`);

function paint(ctx: CliContext): ChalkInstance {
  return new Chalk({ level: colorEnabled(ctx) ? 1 : 0 });
}

function urgencyText(c: ChalkInstance, report: AnalyzeReport): string {
  const { urgency, limits } = report;
  const totalTokens = report.context.tokens;
  if (urgency === 'hard') return `${c.red.bold('hard')}: the hard limit is reached; prune required`;
  if (urgency === 'soft') return `${c.yellow.bold('soft')}: the soft limit is reached; prune recommended (${n(limits.hard - totalTokens)} tokens to the hard limit)`;
  return `${c.green.bold('none')}: below the soft limit (${n(limits.soft - totalTokens)} tokens to go)`;
}

/** A bar of the total against the limits: `[████████░░░░│░░░░░┃░░]`. */
function limitBar(c: ChalkInstance, report: AnalyzeReport, width: number): string {
  const { limits } = report;
  const totalTokens = report.context.tokens;
  const scale = Math.max(totalTokens, limits.hard) * 1.1;
  const at = (v: number): number => Math.min(width - 1, Math.round((v / scale) * width));
  const filled = at(totalTokens);
  const soft = at(limits.soft);
  const hard = at(limits.hard);
  let bar = '';
  for (let i = 0; i < width; i++) {
    if (i === soft) bar += '│';
    else if (i === hard) bar += '┃';
    else bar += i < filled ? '█' : '░';
  }
  const color = report.urgency === 'hard' ? c.red : report.urgency === 'soft' ? c.yellow : c.green;
  return `[${color(bar)}]`;
}

/** How the context size was found, in one line. */
function contextBasisText(report: AnalyzeReport): string {
  const cx = report.context;
  const estimate = `${n(cx.estimate)} estimated (${report.encoding}) from the turns in the file`;
  if (cx.basis === 'calibrated' && cx.fit) {
    return (
      `calibrated on ${n(cx.fit.points)} recorded API calls: ${cx.fit.scale} × the estimate + ${n(cx.fit.overhead)} not in the file ` +
      `(median error ${(cx.fit.medianError * 100).toFixed(1)} %); ${estimate}`
    );
  }
  if (cx.basis === 'calibrated') {
    const { scale, overhead } = cx.mapping;
    return `the calibration from before devs-ctx last pruned it: ${scale} × the estimate + ${n(overhead)} not in the file; ${estimate}`;
  }
  if (cx.basis === 'recorded') return `the last recorded API call plus the estimate of what came after it; ${estimate}`;
  return `the estimate: ${estimate}`;
}

/** Wraps `text` at word boundaries to `width` columns; lines after the first get `indent`. */
export function wrap(text: string, width: number, indent: string): string[] {
  const lead = /^ */.exec(text)?.[0] ?? '';
  const lines: string[] = [];
  let line = lead;
  for (const word of text.slice(lead.length).split(' ')) {
    const next = line.trim() === '' ? `${line}${word}` : `${line} ${word}`;
    if (next.length > width && line.trim() !== '') {
      lines.push(line);
      line = `${indent}${word}`;
    } else {
      line = next;
    }
  }
  lines.push(line);
  return lines;
}

function table(rows: readonly (readonly string[])[], align: readonly ('l' | 'r')[]): string[] {
  const widths = align.map((_, col) => Math.max(...rows.map((r) => (r[col] ?? '').length)));
  return rows.map((r) =>
    r
      .map((cell, col) => (align[col] === 'r' ? cell.padStart(widths[col] ?? 0) : cell.padEnd(widths[col] ?? 0)))
      .join('  ')
      .trimEnd(),
  );
}

function groupRows(groups: Readonly<Partial<Record<string, TokenGroup>>>, total: number): string[][] {
  return Object.entries(groups)
    .filter((e): e is [string, TokenGroup] => e[1] !== undefined)
    .sort((a, b) => b[1].tokens - a[1].tokens || a[0].localeCompare(b[0]))
    .map(([name, g]) => [`  ${name}`, n(g.turns), n(g.tokens), pct(g.tokens, total)]);
}

/** The human report for one transcript. */
export function renderAnalyzeReport(report: AnalyzeReport, ctx: CliContext): string {
  const c = paint(ctx);
  const width = terminalWidth(ctx);
  const out: string[] = [];
  const total = report.totalTokens;
  out.push(`${c.bold(report.file)}  ${c.dim(`${report.format} · ${n(report.turns)} turns · ${report.encoding}`)}`);
  out.push('');
  const cx = report.context;
  out.push(`Context   ${c.bold(n(cx.tokens))} tokens  ${limitBar(c, report, Math.max(20, Math.min(50, width - 40)))}`);
  out.push(...wrap(`          ${c.dim(contextBasisText(report))}`, width, '          '));
  if (cx.model !== null || cx.window !== null) {
    out.push(`Model     ${cx.model ?? 'unknown'}${cx.window !== null ? ` · window ${n(cx.window)}` : ''}`);
  }
  out.push(...wrap(`Limits    soft ${n(report.limits.soft)} │  hard ${n(report.limits.hard)} ┃  ${c.dim(`(${report.limits.source === report.limits.from ? report.limits.source : `${report.limits.source}: ${report.limits.from}`})`)}`, width, '          '));
  out.push(`Urgency   ${urgencyText(c, report)}`);
  if (report.agentCompaction) {
    const a = report.agentCompaction;
    const left = a.turnsLeft === null ? 'no recent growth recorded to say when' : a.turnsLeft === 0 ? 'due at the next call' : `about ${n(a.turnsLeft)} call${a.turnsLeft === 1 ? '' : 's'} away at the recent growth`;
    out.push(`Agent     compacts by itself at about ${n(a.at)} tokens: ${left}`);
  }
  const life = report.lifetime;
  if (life.compactions > 0 || life.peak > cx.tokens) {
    const sizes = life.compactionSizes.filter((x) => x > 0).map(n);
    out.push(
      ...wrap(
        `Lifetime  peak ${n(life.peak)} tokens; ${life.compactions} compaction${life.compactions === 1 ? '' : 's'}` +
          (sizes.length > 0 ? ` (at ${sizes.join(', ')})` : ''),
        width,
        '          ',
      ),
    );
  }
  if (report.goal) out.push(...wrap(`Goal      ${c.dim(`(${report.goal.how} request)`)} ${report.goal.text}`, width, '          '));
  if (report.recorded) {
    const r = report.recorded;
    const diff = r.difference;
    out.push(
      ...wrap(
        `Recorded  ${n(r.contextTokens)} tokens in the file (${r.source})${r.contextWindow ? `, window ${n(r.contextWindow)}` : ''}; ` +
          `estimate is ${n(Math.abs(diff))} ${diff >= 0 ? 'higher' : 'lower'} (${pct(Math.abs(diff), Math.max(1, r.contextTokens))})`,
        width,
        '          ',
      ),
    );
    if (r.urgency !== report.urgency) {
      const warning = `by the recorded size the urgency would be ${r.urgency}: the agent adds context the transcript does not hold (system prompt, tools, memory)`;
      out.push(...wrap(`          ${warning}`, width, '          ').map((line) => c.yellow(line)));
    }
  }
  if (report.blobTokens > 0) out.push(`Blobs     ${n(report.blobTokens)} tokens of images/documents/encrypted content, estimated by provider rules`);

  out.push('', c.bold('By type'));
  out.push(...table([['  type', 'turns', 'tokens', 'share'], ...groupRows(report.byType, total)], ['l', 'r', 'r', 'r']));
  out.push('', c.bold('By role'));
  out.push(...table([['  role', 'turns', 'tokens', 'share'], ...groupRows(report.byRole, total)], ['l', 'r', 'r', 'r']));

  out.push('', c.bold('What a prune would see'));
  out.push(
    ...table(
      [
        ['  pinned (never pruned)', n(report.pinned.turns), n(report.pinned.tokens), pct(report.pinned.tokens, total)],
        ['  protected tail', n(report.protectedTail.turns), n(report.protectedTail.tokens), pct(report.protectedTail.tokens, total)],
        ['  summarization candidates', n(report.candidates.turns), n(report.candidates.tokens), pct(report.candidates.tokens, total)],
      ],
      ['l', 'r', 'r', 'r'],
    ),
  );
  if (report.candidates.turns === 0) out.push(c.dim('  (fewer than 3 candidates: nothing to summarize)'));

  if (report.heaviest.length > 0) {
    out.push('', c.bold(`Heaviest turns`));
    const previewWidth = Math.max(10, width - 50);
    out.push(
      ...table(
        [
          ['  #', 'role', 'type', 'tokens', 'content'],
          ...report.heaviest.map((h) => [`  ${h.index + 1}`, h.role, h.type, n(h.tokens), h.preview.slice(0, previewWidth)]),
        ],
        ['r', 'l', 'l', 'r', 'l'],
      ),
    );
  }

  out.push('', c.bold('Window growth'));
  const { overhead, scale } = report.context.mapping;
  const growth = windowGrowth(report.perTurn).map((t) => Math.max(0, Math.round(overhead + scale * t)));
  out.push(...growthChart({ growth, soft: report.limits.soft, hard: report.limits.hard, width, height: 8 }));

  if (report.notes.length > 0) {
    out.push('', c.bold('Notes'));
    for (const note of report.notes) out.push(...wrap(`  ${note}`, width, '    '));
  }
  if (report.issues.length > 0) {
    out.push('', c.bold(`Skipped or odd lines (${report.issues.length})`));
    for (const issue of report.issues) {
      const where = issue.line > 0 ? `line ${issue.line}` : 'file';
      const sev = issue.severity === 'error' ? c.red('error') : c.yellow('warning');
      const [first = '', ...rest] = wrap(`  ${where}: ${issue.severity}: ${issue.reason}`, width, '    ');
      // Colour the severity word only (wrapping is measured on the plain text).
      out.push(first.replace(` ${issue.severity}: `, ` ${sev}: `), ...rest);
    }
  }
  return `${out.join('\n')}\n`;
}

/**
 * What goes to stderr beside the table: each transcript that could not be read, and how many lines
 * of each were skipped (the single-file report lists them one by one).
 */
export function renderAnalyzeTableDiagnostics(rows: readonly FileRow[]): string {
  const out: string[] = [];
  for (const row of rows) {
    if (row.error) {
      out.push(`devs-ctx: ${row.error.message}${row.error.hint ? `\n  hint: ${row.error.hint}` : ''}`);
    } else if (row.report && row.report.issues.length > 0) {
      const lines = row.report.issues.filter((i) => i.line > 0).map((i) => i.line);
      const shown = lines.slice(0, 10).join(', ');
      out.push(
        `devs-ctx: ${row.file}: ${row.report.issues.length} skipped or odd line(s)` +
          (lines.length > 0 ? ` (line ${shown}${lines.length > 10 ? ', …' : ''})` : '') +
          `; run devs-ctx analyze ${row.file} for the reasons`,
      );
    }
  }
  return out.length > 0 ? `${out.join('\n')}\n` : '';
}

/** One row per transcript and a total, for several paths or a directory. */
export function renderAnalyzeTable(rows: readonly FileRow[], ctx: CliContext): string {
  const c = paint(ctx);
  const body: string[][] = [['file', 'format', 'turns', 'tokens', 'urgency']];
  let turns = 0;
  let tokens = 0;
  for (const row of rows) {
    if (row.report) {
      turns += row.report.turns;
      tokens += row.report.totalTokens;
      body.push([row.file, row.report.format, n(row.report.turns), n(row.report.totalTokens), row.report.urgency]);
    } else {
      body.push([row.file, '-', '-', '-', `error (exit ${row.error?.exitCode})`]);
    }
  }
  body.push(['total', '', n(turns), n(tokens), '']);
  const lines = table(body, ['l', 'l', 'r', 'r', 'l']);
  const out = [c.bold(lines[0] ?? ''), ...lines.slice(1)];
  return `${out.join('\n')}\n`;
}
