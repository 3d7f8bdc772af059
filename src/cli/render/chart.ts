/** A terminal chart of the window's growth over the turns, with the limits drawn as lines. */
export interface GrowthChartInput {
  readonly growth: readonly number[];
  readonly soft: number;
  readonly hard: number;
  readonly width: number;
  readonly height: number;
}

const FULL = '█';
const HALF = '▄';

export function growthChart(input: GrowthChartInput): string[] {
  const { growth, soft, hard } = input;
  const total = growth[growth.length - 1] ?? 0;
  if (growth.length === 0 || total === 0) return ['(no tokens)'];
  const labelWidth = 9;
  // One column per turn up to the terminal width, and at least wide enough for both axis labels.
  const width = Math.max(24, Math.min(input.width - labelWidth - 8, growth.length));
  const height = input.height;
  // Show the limits when the window is within reach of them; otherwise scale to the window itself.
  const showLimits = total >= soft * 0.25;
  const top = showLimits ? Math.max(total, hard) * 1.05 : total;
  const columns: number[] = [];
  for (let c = 0; c < width; c++) {
    const turn = Math.min(growth.length - 1, Math.floor(((c + 1) * growth.length) / width) - 1);
    columns.push(growth[Math.max(0, turn)] ?? 0);
  }
  const rowOf = (value: number): number => Math.min(height - 1, Math.floor((value / top) * height));
  const softRow = showLimits ? rowOf(soft) : -1;
  const hardRow = showLimits ? rowOf(hard) : -1;
  const lines: string[] = [];
  for (let r = height - 1; r >= 0; r--) {
    const low = (r / height) * top;
    const step = top / height;
    let row = '';
    for (const value of columns) {
      if (value >= low + step) row += FULL;
      else if (value >= low + step / 2) row += HALF;
      else if (r === hardRow) row += '═';
      else if (r === softRow) row += '─';
      else row += ' ';
    }
    const label = r === height - 1 ? compact(top) : r === 0 ? '0' : '';
    const marker = r === hardRow ? ' hard' : r === softRow ? ' soft' : '';
    lines.push(`${label.padStart(labelWidth)} ┤${row}${marker}`);
  }
  lines.push(`${''.padStart(labelWidth)} └${'─'.repeat(width)}`);
  const first = 'turn 1';
  const last = `turn ${growth.length}`;
  // The end label only when it fits beside the start label with a gap.
  const axis = width >= first.length + last.length + 2 ? `${first}${last.padStart(width - first.length)}` : first;
  lines.push(`${''.padStart(labelWidth)}  ${axis}`);
  if (!showLimits) lines.push(`${''.padStart(labelWidth)}  (soft ${compact(soft)} and hard ${compact(hard)} are far above)`);
  return lines;
}

/** 1234 → 1.2k, 1500000 → 1.5M. */
export function compact(n: number): string {
  if (n >= 1_000_000) return `${trim(n / 1_000_000)}M`;
  if (n >= 1_000) return `${trim(n / 1_000)}k`;
  return String(Math.round(n));
}

function trim(n: number): string {
  return n >= 100 ? String(Math.round(n)) : n.toFixed(1).replace(/\.0$/, '');
}
