import { TermIds, TermIndex } from '../terms.js';
import type { LineTerms } from '../terms.js';
import { headOf } from '../text-cut.js';

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
export const EXCERPT_MIN_LINES = 12;
/** The excerpt keeps at most this share of the output's characters. */
const EXCERPT_MAX_SHARE = 0.2;
/** And at most this many lines, however long the output. */
const EXCERPT_MAX_LINES = 40;
/** Lines longer than this are cut in the excerpt (a minified bundle is one line). */
const EXCERPT_LINE_CHARS = 400;
const ERROR_LINE = /\b(?:error|errors|fail|failed|failure|exception|fatal|panic|traceback)\b|✗|×/i;
const HAS_DIGIT = /\d/;

interface ScoredLine {
  readonly index: number;
  readonly score: number;
}

/** Whether line `a` comes before line `b`: the higher score, then the earlier line. */
function before(a: ScoredLine, b: ScoredLine): boolean {
  return a.score > b.score || (a.score === b.score && a.index < b.index);
}

/**
 * The first `n` of `lines` in the order `before` sorts them (each line is once in `lines`, so no
 * two tie): what sorting them all gives first, without sorting them all (a long log names the goal
 * on thousands of lines; an excerpt keeps a few dozen).
 */
export function best(lines: readonly ScoredLine[], n: number): ScoredLine[] {
  const top: ScoredLine[] = [];
  for (const line of lines) {
    if (top.length === n && !before(line, top[n - 1] as ScoredLine)) continue;
    // Insert in order (n is small): from the end, shifting the worse ones down.
    let at = top.length === n ? n - 1 : top.length;
    while (at > 0 && before(line, top[at - 1] as ScoredLine)) {
      top[at] = top[at - 1] as ScoredLine;
      at--;
    }
    top[at] = line;
  }
  return top;
}

/** The excerpt of `text` for `goal`, or undefined when it has too few lines or none about the goal. */
export function goalExcerpt(text: string, goal: string): GoalExcerpt | undefined {
  return new GoalExcerpts(goal).of(text);
}

/**
 * `goalExcerpt` for many texts and one goal (a prune's tool results): the terms are numbered once
 * for all of them (tool outputs repeat their words from one result to the next), and the tables a
 * text is scored with are reused, cleared only where that text wrote.
 */
export class GoalExcerpts {
  private readonly read = new TermIds();
  /** Where each line's ids end in `read`. */
  private readonly lineEnds = new TermIds();
  /** Each line's distinct terms in first-seen order (line k's from `lineStarts[k]` up to `lineStarts[k + 1]`). */
  private readonly distinct = new TermIds();
  /** The text's distinct terms (what its reading wrote in the per-term tables, cleared after it). */
  private readonly touched = new TermIds();
  private lineStarts: Int32Array = new Int32Array(64);
  /**
   * Where each line of the text being read starts (line k is `text.slice(charStarts[k], charStarts[k + 1] - 1)`,
   * the last entry one past the text's end): a text is not split into lines, only the lines an
   * excerpt reads become strings (a prune reads every tool result, and most lines are never read).
   */
  private charStarts: Int32Array = new Int32Array(64);
  /** Per term id: the last line it was seen on (+1; 0 none yet), and on how many lines it is. */
  private lastLine: Int32Array = new Int32Array(1024);
  private frequency: Int32Array = new Int32Array(1024);
  private isGoal: Uint8Array = new Uint8Array(1024);
  private digits: Uint8Array = new Uint8Array(1024);
  private readonly goalEmpty: boolean;

  /** `index`: terms already read elsewhere (a prune's BM25 fit), so the words of these texts are known. */
  constructor(
    goal: string,
    private readonly index = new TermIndex(),
  ) {
    this.index.read(goal, this.read);
    this.goalEmpty = this.read.length === 0;
    this.fit();
    for (let k = 0; k < this.read.length; k++) this.isGoal[this.read.ids[k] as number] = 1;
  }

  /** `read`: the text's lines' ids, when already read with this index (LineKeepingReader); read here when not (or not one per line). */
  of(text: string, read?: LineTerms): GoalExcerpt | undefined {
    const lines = this.findLines(text);
    if (lines < EXCERPT_MIN_LINES || this.goalEmpty) return undefined;
    this.readLines(text, lines, read?.lineEnds.length === lines ? read : undefined);
    const scored = this.score(text, lines);
    // Clear what this text wrote, for the next one.
    for (let k = 0; k < this.touched.length; k++) {
      const term = this.touched.ids[k] as number;
      this.lastLine[term] = 0;
      this.frequency[term] = 0;
    }
    if (scored.length === 0) return undefined;
    const budget = EXCERPT_MAX_SHARE * text.length;
    const kept = new Set<number>();
    let chars = 0;
    // The best lines first: at most EXCERPT_MAX_LINES are kept, and the first that does not fit
    // ends the choice, so only the best EXCERPT_MAX_LINES + 1 are ever looked at.
    for (const { index } of best(scored, EXCERPT_MAX_LINES + 1)) {
      const length = Math.min(EXCERPT_LINE_CHARS, this.lineEnd(index) - (this.charStarts[index] as number)) + 1;
      if (kept.size >= EXCERPT_MAX_LINES || chars + length > budget) break;
      kept.add(index);
      chars += length;
    }
    if (kept.size === 0) return undefined;
    return { text: this.joinKept(text, lines, kept), keptLines: kept.size, totalLines: lines };
  }

  /** How many lines `text` has (as `text.split('\n')` splits it), their starts noted in `charStarts`. */
  private findLines(text: string): number {
    let lines = 0;
    let at = 0;
    for (;;) {
      if (lines + 2 > this.charStarts.length) {
        const grown = new Int32Array(this.charStarts.length * 2);
        grown.set(this.charStarts);
        this.charStarts = grown;
      }
      this.charStarts[lines++] = at;
      const end = text.indexOf('\n', at);
      if (end < 0) break;
      at = end + 1;
    }
    this.charStarts[lines] = text.length + 1;
    return lines;
  }

  /** Where line `index` ends (its line break, or the text's end). */
  private lineEnd(index: number): number {
    return (this.charStarts[index + 1] as number) - 1;
  }

  /** Line `index` of the text whose lines were found last. */
  private line(text: string, index: number): string {
    return text.slice(this.charStarts[index], this.lineEnd(index));
  }

  /**
   * The kept lines in their order, each run of masked lines as one `[… N lines …]`: from the kept
   * lines (at most EXCERPT_MAX_LINES), not by walking every line (a log has thousands).
   */
  private joinKept(text: string, lines: number, kept: ReadonlySet<number>): string {
    const out: string[] = [];
    const gap = (masked: number): void => {
      if (masked > 0) out.push(`[… ${masked} line${masked === 1 ? '' : 's'} …]`);
    };
    let next = 0;
    for (const i of [...kept].sort((a, b) => a - b)) {
      gap(i - next);
      const line = this.line(text, i);
      out.push(line.length > EXCERPT_LINE_CHARS ? `${headOf(line, EXCERPT_LINE_CHARS)}…` : line);
      next = i + 1;
    }
    gap(lines - next);
    return out.join('\n');
  }

  /** Each line's distinct terms, and on how many lines each term is. */
  private readLines(text: string, lines: number, read: LineTerms | undefined): void {
    if (this.lineStarts.length < lines + 1) this.lineStarts = new Int32Array(lines + 1);
    this.distinct.length = 0;
    this.touched.length = 0;
    let ids: Int32Array;
    let lineEnds: Int32Array;
    if (read) ({ ids, lineEnds } = read);
    else {
      this.read.length = 0;
      this.lineEnds.length = 0;
      this.index.readLines(text, this.read, this.lineEnds);
      ids = this.read.ids;
      lineEnds = this.lineEnds.ids;
    }
    this.fit();
    for (let line = 0; line < lines; line++) {
      const end = lineEnds[line] as number;
      for (let k = line === 0 ? 0 : (lineEnds[line - 1] as number); k < end; k++) {
        const term = ids[k] as number;
        if (this.lastLine[term] === line + 1) continue;
        this.lastLine[term] = line + 1;
        if (this.frequency[term] === 0) this.touched.push(term);
        this.frequency[term] = (this.frequency[term] as number) + 1;
        this.distinct.push(term);
      }
      this.lineStarts[line + 1] = this.distinct.length;
    }
  }

  /** The lines about the goal, scored: the goal's words by how rare they are here, more when the line says something new or reports an error. */
  private score(text: string, lines: number): ScoredLine[] {
    const scored: ScoredLine[] = [];
    for (let line = 0; line < lines; line++) {
      let goalScore = 0;
      let fresh = 0;
      // Each term of the line once, in the order it first appears there.
      const end = this.lineStarts[line + 1] as number;
      for (let k = this.lineStarts[line] as number; k < end; k++) {
        const term = this.distinct.ids[k] as number;
        const seen = this.frequency[term] as number;
        if (this.isGoal[term] === 1) goalScore += Math.log(1 + lines / seen);
        else if (seen === 1 && !this.hasDigit(term)) fresh++;
      }
      if (goalScore === 0) continue;
      const score = goalScore * (1 + 0.25 * Math.min(fresh, 4)) + (ERROR_LINE.test(this.line(text, line)) ? goalScore : 0);
      scored.push({ index: line, score });
    }
    return scored;
  }

  /** Whether term `term` has a digit, found once per term (2 yes, 1 no, 0 not yet asked). */
  private hasDigit(term: number): boolean {
    if (this.digits[term] === 0) this.digits[term] = HAS_DIGIT.test(this.index.name(term)) ? 2 : 1;
    return this.digits[term] === 2;
  }

  /** Room in the per-term tables for every term read so far. */
  private fit(): void {
    const size = this.index.size;
    if (this.lastLine.length >= size) return;
    let length = this.lastLine.length;
    while (length < size) length *= 2;
    const lastLine = new Int32Array(length);
    lastLine.set(this.lastLine);
    this.lastLine = lastLine;
    const frequency = new Int32Array(length);
    frequency.set(this.frequency);
    this.frequency = frequency;
    const isGoal = new Uint8Array(length);
    isGoal.set(this.isGoal);
    this.isGoal = isGoal;
    const digits = new Uint8Array(length);
    digits.set(this.digits);
    this.digits = digits;
  }
}
