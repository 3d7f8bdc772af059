import { terms } from '../terms.js';

/**
 * The goal's lines of a large tool result: what a partial mask keeps. Pure and lexical (no
 * embedder), so a dry run repeats exactly and nothing more is sent to a provider.
 *
 * A line is worth keeping when it names the goal's words (weighted by how rare the word is in this
 * output: a word on every line says nothing), and more so when it also says something no other line
 * says (words found on this line only: an error code, an id, a path among templated log lines) or
 * reports an error. Numbers and words with digits do not count as new: every log line has a time.
 */
export interface GoalExcerpt {
  /** The kept lines with `[… N lines …]` where masked lines were. */
  readonly text: string;
  readonly keptLines: number;
  readonly totalLines: number;
}

/** Below this many lines a tool result is kept or masked whole. */
const EXCERPT_MIN_LINES = 12;
/** The excerpt keeps at most this share of the output's characters. */
const EXCERPT_MAX_SHARE = 0.2;
/** And at most this many lines, however long the output. */
const EXCERPT_MAX_LINES = 40;
/** Lines longer than this are cut in the excerpt (a minified bundle is one line). */
const EXCERPT_LINE_CHARS = 400;
const ERROR_LINE = /\b(?:error|errors|fail|failed|failure|exception|fatal|panic|traceback)\b|✗|×/i;
const HAS_DIGIT = /\d/;

/** The excerpt of `text` for `goal`, or undefined when it has too few lines or none about the goal. */
export function goalExcerpt(text: string, goal: string): GoalExcerpt | undefined {
  const lines = text.split('\n');
  if (lines.length < EXCERPT_MIN_LINES) return undefined;
  const goalTerms = new Set(terms(goal));
  if (goalTerms.size === 0) return undefined;
  const lineTerms = lines.map((line) => new Set(terms(line)));
  const frequency = new Map<string, number>();
  for (const set of lineTerms) for (const term of set) frequency.set(term, (frequency.get(term) ?? 0) + 1);
  const scored: { index: number; score: number }[] = [];
  lineTerms.forEach((set, index) => {
    let goalScore = 0;
    let fresh = 0;
    for (const term of set) {
      const seen = frequency.get(term) ?? 1;
      if (goalTerms.has(term)) goalScore += Math.log(1 + lines.length / seen);
      else if (seen === 1 && !HAS_DIGIT.test(term)) fresh++;
    }
    if (goalScore === 0) return;
    const score = goalScore * (1 + 0.25 * Math.min(fresh, 4)) + (ERROR_LINE.test(lines[index] ?? '') ? goalScore : 0);
    scored.push({ index, score });
  });
  if (scored.length === 0) return undefined;
  scored.sort((a, b) => b.score - a.score || a.index - b.index);
  const budget = EXCERPT_MAX_SHARE * text.length;
  const kept = new Set<number>();
  let chars = 0;
  for (const { index } of scored) {
    const length = Math.min(EXCERPT_LINE_CHARS, (lines[index] ?? '').length) + 1;
    if (kept.size >= EXCERPT_MAX_LINES || chars + length > budget) break;
    kept.add(index);
    chars += length;
  }
  if (kept.size === 0) return undefined;
  return { text: joinKept(lines, kept), keptLines: kept.size, totalLines: lines.length };
}

/** The kept lines in their order, each run of masked lines as one `[… N lines …]`. */
function joinKept(lines: readonly string[], kept: ReadonlySet<number>): string {
  const out: string[] = [];
  let gap = 0;
  const flush = (): void => {
    if (gap > 0) out.push(`[… ${gap} line${gap === 1 ? '' : 's'} …]`);
    gap = 0;
  };
  lines.forEach((line, i) => {
    if (!kept.has(i)) {
      gap++;
      return;
    }
    flush();
    out.push(line.length > EXCERPT_LINE_CHARS ? `${line.slice(0, EXCERPT_LINE_CHARS)}…` : line);
  });
  flush();
  return out.join('\n');
}
