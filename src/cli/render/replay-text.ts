import { Chalk } from 'chalk';
import type { ReplayEvent, ReplayReport } from '../../core/reports/replay.js';
import { compact } from './chart.js';
import { colorEnabled, terminalWidth } from '../context.js';
import type { CliContext } from '../context.js';
import { thousands as n } from '../../core/numbers.js';
import { clipLine } from '../../core/text-cut.js';

const MAX_EVENT_ROWS = 60;
const CHART_HEIGHT = 8;

/** The human report of `devs-ctx replay`: the policy's verdict, the events, and the window over time. */
export function renderReplayReport(report: ReplayReport, ctx: CliContext): string {
  const c = new Chalk({ level: colorEnabled(ctx) ? 1 : 0 });
  const { limits } = report;
  const lines: string[] = [];
  lines.push(`${c.bold(report.file)} (${report.format}): replayed ${n(report.turns)} turns as ${n(report.steps)} agent steps`);
  const refresh = report.refreshThreshold === null ? 'no refreshes' : `refresh every ${report.refreshThreshold} turns in a node`;
  lines.push(
    `  limits: soft ${n(limits.soft)}, hard ${n(limits.hard)}, target ${n(limits.target)} (${limits.source}); strategy ${report.strategy}; ${refresh}`,
  );
  for (const note of report.notes) lines.push(`  note: ${note}`);
  lines.push(
    `  ${n(report.prunes)} prune${report.prunes === 1 ? '' : 's'} saved ${n(report.tokensSaved)} tokens; ${n(report.refreshes)} refresh${report.refreshes === 1 ? '' : 'es'}; largest window ${n(report.largestWindow.tokens)} tokens${report.largestWindow.step > 0 ? ` at step ${report.largestWindow.step} (${report.largestWindow.turnId})` : ''}`,
  );
  const first = report.stepsOverHardLimit[0];
  const life = report.lifetime;
  if (life.compactions > 0) {
    const sizes = life.compactionSizes.map((size) => compact(size)).join(', ');
    lines.push(
      `  whole session: the agent compacted ${n(life.compactions)} time${life.compactions === 1 ? '' : 's'} (at ${sizes}); peak ${n(life.peak)} tokens; ${life.wholeFile ? 'replayed through them (the policy prunes instead)' : 'replayed from its last compaction on'}`,
    );
  }
  if (first !== undefined) {
    lines.push(
      c.red(
        `  hard limit: exceeded at ${n(report.stepsOverHardLimit.length)} step${report.stepsOverHardLimit.length === 1 ? '' : 's'} (first at step ${first}), even after pruning`,
      ),
    );
  } else if (life.overHardLimit) {
    lines.push(c.red(`  hard limit: exceeded before the agent's own compaction (peak ${n(life.peak)} ≥ ${n(limits.hard)}); never after it in the replay`));
  } else {
    lines.push(`  hard limit: ${c.green('never exceeded')} by a window the agent would have been sent`);
  }
  const failures = report.events.filter((e) => e.kind === 'prune-impossible' || e.kind === 'prune-failed').length;
  if (failures > 0) lines.push(c.yellow(`  ${n(failures)} prune${failures === 1 ? '' : 's'} could not be done (see below)`));

  if (report.events.length > 0) {
    lines.push('', `  ${'step'.padStart(6)}  ${'turn'.padEnd(30)}  ${'event'.padEnd(8)}  ${'window'.padStart(21)}  detail`);
    for (const event of report.events.slice(0, MAX_EVENT_ROWS)) lines.push(eventRow(event));
    if (report.events.length > MAX_EVENT_ROWS) lines.push(`  … and ${n(report.events.length - MAX_EVENT_ROWS)} more events (--json lists them all)`);
  }
  if (report.peakTokens.length > 0) {
    lines.push('', '  window over the steps (before each prune):');
    lines.push(...sawtoothChart(report.peakTokens, limits.soft, limits.hard, terminalWidth(ctx)).map((l) => `  ${l}`));
  }
  lines.push('', `  final window: ${n(report.finalWindow.turns)} turns, ${n(report.finalWindow.tokens)} tokens`);
  return `${lines.join('\n')}\n`;
}

function eventRow(event: ReplayEvent): string {
  const window = `${compact(event.windowBefore)} → ${compact(event.windowAfter)}`;
  const detail =
    event.kind === 'prune'
      ? `saved ${n(event.tokensSaved ?? 0)} (${event.removedTurnCount ? `${n(event.removedTurnCount)} turns removed` : 'tool output masked'})`
      : event.kind === 'refresh'
        ? `${n(event.tokens ?? 0)} tokens${event.node ? `, node ${event.node}` : ''}`
        : clipLine(event.message ?? '', 80);
  const name = event.kind === 'prune-impossible' ? 'stuck' : event.kind === 'prune-failed' ? 'failed' : event.kind;
  return `  ${String(event.step).padStart(6)}  ${clipLine(event.turnId, 30).padEnd(30)}  ${name.padEnd(8)}  ${window.padStart(21)}  ${detail}`;
}

/** One column per group of steps, its height the largest window in the group; the limits as lines. */
function sawtoothChart(values: readonly number[], soft: number, hard: number, width: number): string[] {
  const columns = Math.max(1, Math.min(values.length, width - 14));
  const peaks: number[] = [];
  for (let c = 0; c < columns; c++) {
    const from = Math.floor((c * values.length) / columns);
    const to = Math.max(from + 1, Math.floor(((c + 1) * values.length) / columns));
    peaks.push(Math.max(...values.slice(from, to)));
  }
  const top = Math.max(hard, ...peaks) * 1.05;
  const rowOf = (value: number): number => Math.min(CHART_HEIGHT - 1, Math.floor((value / top) * CHART_HEIGHT));
  const out: string[] = [];
  for (let r = CHART_HEIGHT - 1; r >= 0; r--) {
    const low = (r / CHART_HEIGHT) * top;
    const step = top / CHART_HEIGHT;
    let row = '';
    for (const value of peaks) {
      if (value >= low + step) row += '█';
      else if (value >= low + step / 2) row += '▄';
      else if (r === rowOf(hard)) row += '═';
      else if (r === rowOf(soft)) row += '─';
      else row += ' ';
    }
    const label = r === rowOf(hard) ? `hard ${compact(hard)}` : r === rowOf(soft) ? `soft ${compact(soft)}` : '';
    out.push(`${label.padStart(10)} ${row}`);
  }
  const left = 'step 1';
  const right = `step ${values.length}`;
  out.push(`${''.padStart(10)} ${left}${' '.repeat(Math.max(1, columns - left.length - right.length))}${right}`);
  return out;
}
