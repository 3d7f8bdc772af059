import { Chalk } from 'chalk';
import type { ChalkInstance } from 'chalk';
import { windowGrowth } from '../../core/reports/analyze.js';
import type { AnalyzeReport, TokenGroup } from '../../core/reports/analyze.js';
import { colorEnabled, terminalWidth } from '../context.js';
import type { CliContext } from '../context.js';
import { growthChart } from './chart.js';
import { thousands as n } from '../../core/numbers.js';
import { headOf } from '../../core/text-cut.js';

const pct = (part: number, whole: number): string => (whole === 0 ? '0 %' : `${((part / whole) * 100).toFixed(1)} %`);

function paint(ctx: CliContext): ChalkInstance {
  return new Chalk({ level: colorEnabled(ctx) ? 1 : 0 });
}

function urgencyText(c: ChalkInstance, report: AnalyzeReport): string {
  const { urgency, limits } = report;
  const totalTokens = report.context.tokens;
  if (urgency === 'hard') return `${c.red.bold('hard')}: the hard limit is reached; prune required`;
  if (urgency === 'soft')
    return `${c.yellow.bold('soft')}: the soft limit is reached; prune recommended (${n(limits.hard - totalTokens)} tokens to the hard limit)`;
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

const INDENT = '          ';

/** The human report for one transcript. */
export function renderAnalyzeReport(report: AnalyzeReport, ctx: CliContext): string {
  const c = paint(ctx);
  const width = terminalWidth(ctx);
  const out = [
    `${c.bold(report.file)}  ${c.dim(`${report.format} · ${n(report.turns)} turns · ${report.encoding}`)}`,
    '',
    ...sizeLines(c, report, width),
    ...recordedLines(c, report, width),
    ...breakdownLines(c, report),
    ...heaviestLines(c, report, width),
    ...growthLines(c, report, width),
    ...notesLines(c, report, width),
    ...issueLines(c, report, width),
  ];
  return `${out.join('\n')}\n`;
}

/** Context, model, limits, urgency, the agent's own compaction, lifetime and goal. */
function sizeLines(c: ChalkInstance, report: AnalyzeReport, width: number): string[] {
  const out: string[] = [];
  const cx = report.context;
  out.push(`Context   ${c.bold(n(cx.tokens))} tokens  ${limitBar(c, report, Math.max(20, Math.min(50, width - 40)))}`);
  out.push(...wrap(`${INDENT}${c.dim(contextBasisText(report))}`, width, INDENT));
  if (cx.model !== null || cx.window !== null) {
    out.push(`Model     ${cx.model ?? 'unknown'}${cx.window !== null ? ` · window ${n(cx.window)}` : ''}`);
  }
  const limits = report.limits;
  const from = limits.source === limits.from ? limits.source : `${limits.source}: ${limits.from}`;
  out.push(...wrap(`Limits    soft ${n(limits.soft)} │  hard ${n(limits.hard)} ┃  ${c.dim(`(${from})`)}`, width, INDENT));
  out.push(`Urgency   ${urgencyText(c, report)}`);
  if (report.agentCompaction) {
    const a = report.agentCompaction;
    const left =
      a.turnsLeft === null
        ? 'no recent growth recorded to say when'
        : a.turnsLeft === 0
          ? 'due at the next call'
          : `about ${n(a.turnsLeft)} call${a.turnsLeft === 1 ? '' : 's'} away at the recent growth`;
    out.push(`Agent     compacts by itself at about ${n(a.at)} tokens: ${left}`);
  }
  const life = report.lifetime;
  if (life.compactions > 0 || life.peak > cx.tokens) {
    const sizes = life.compactionSizes.filter((x) => x > 0).map(n);
    const at = sizes.length > 0 ? ` (at ${sizes.join(', ')})` : '';
    out.push(...wrap(`Lifetime  peak ${n(life.peak)} tokens; ${life.compactions} compaction${life.compactions === 1 ? '' : 's'}${at}`, width, INDENT));
  }
  if (report.goal) out.push(...wrap(`Goal      ${c.dim(`(${report.goal.how} request)`)} ${report.goal.text}`, width, INDENT));
  return out;
}

/** The size the file records beside our estimate, and blobs estimated by provider rules. */
function recordedLines(c: ChalkInstance, report: AnalyzeReport, width: number): string[] {
  const out: string[] = [];
  if (report.recorded) {
    const r = report.recorded;
    const diff = r.difference;
    out.push(
      ...wrap(
        `Recorded  ${n(r.contextTokens)} tokens in the file (${r.source})${r.contextWindow ? `, window ${n(r.contextWindow)}` : ''}; ` +
          `estimate is ${n(Math.abs(diff))} ${diff >= 0 ? 'higher' : 'lower'} (${pct(Math.abs(diff), Math.max(1, r.contextTokens))})`,
        width,
        INDENT,
      ),
    );
    if (r.urgency !== report.urgency) {
      const warning = `by the recorded size the urgency would be ${r.urgency}: the agent adds context the transcript does not hold (system prompt, tools, memory)`;
      out.push(...wrap(`${INDENT}${warning}`, width, INDENT).map((line) => c.yellow(line)));
    }
  }
  if (report.blobTokens > 0) out.push(`Blobs     ${n(report.blobTokens)} tokens of images/documents/encrypted content, estimated by provider rules`);
  return out;
}

/** Tokens by type, by role, and as a prune would split them. */
function breakdownLines(c: ChalkInstance, report: AnalyzeReport): string[] {
  const total = report.totalTokens;
  const share = (g: TokenGroup): string[] => [n(g.turns), n(g.tokens), pct(g.tokens, total)];
  const out = ['', c.bold('By type')];
  out.push(...table([['  type', 'turns', 'tokens', 'share'], ...groupRows(report.byType, total)], ['l', 'r', 'r', 'r']));
  out.push('', c.bold('By role'));
  out.push(...table([['  role', 'turns', 'tokens', 'share'], ...groupRows(report.byRole, total)], ['l', 'r', 'r', 'r']));
  out.push('', c.bold('What a prune would see'));
  const rows = [
    ['  pinned (never pruned)', ...share(report.pinned)],
    ['  protected tail', ...share(report.protectedTail)],
    ['  summarization candidates', ...share(report.candidates)],
  ];
  out.push(...table(rows, ['l', 'r', 'r', 'r']));
  if (report.candidates.turns === 0) out.push(c.dim('  (fewer than 3 candidates: nothing to summarize)'));
  return out;
}

function heaviestLines(c: ChalkInstance, report: AnalyzeReport, width: number): string[] {
  if (report.heaviest.length === 0) return [];
  const previewWidth = Math.max(10, width - 50);
  const rows = report.heaviest.map((h) => [`  ${h.index + 1}`, h.role, h.type, n(h.tokens), headOf(h.preview, previewWidth)]);
  return ['', c.bold(`Heaviest turns`), ...table([['  #', 'role', 'type', 'tokens', 'content'], ...rows], ['r', 'l', 'l', 'r', 'l'])];
}

/** The window's growth turn by turn, in the model's tokens. */
function growthLines(c: ChalkInstance, report: AnalyzeReport, width: number): string[] {
  const { overhead, scale } = report.context.mapping;
  const growth = windowGrowth(report.perTurn).map((t) => Math.max(0, Math.round(overhead + scale * t)));
  return ['', c.bold('Window growth'), ...growthChart({ growth, soft: report.limits.soft, hard: report.limits.hard, width, height: 8 })];
}

function notesLines(c: ChalkInstance, report: AnalyzeReport, width: number): string[] {
  if (report.notes.length === 0) return [];
  return ['', c.bold('Notes'), ...report.notes.flatMap((note) => wrap(`  ${note}`, width, '    '))];
}

function issueLines(c: ChalkInstance, report: AnalyzeReport, width: number): string[] {
  if (report.issues.length === 0) return [];
  const out = ['', c.bold(`Skipped or odd lines (${report.issues.length})`)];
  for (const issue of report.issues) {
    const where = issue.line > 0 ? `line ${issue.line}` : 'file';
    const sev = issue.severity === 'error' ? c.red('error') : c.yellow('warning');
    const [first = '', ...rest] = wrap(`  ${where}: ${issue.severity}: ${issue.reason}`, width, '    ');
    // Colour the severity word only (wrapping is measured on the plain text).
    out.push(first.replace(` ${issue.severity}: `, ` ${sev}: `), ...rest);
  }
  return out;
}
