import type { TextTokenCounter } from '../core/accounting.js';
import { SUMMARY_PREFIX } from '../core/prune/edit.js';
import type { Summarizer, SummaryRequest } from '../core/providers.js';
import { InterruptedError, ProviderError } from '../core/errors.js';
import { Pacer } from '../core/pace.js';
import type { ConversationTurn } from '../core/turn.js';
import { terms } from './local-embedder.js';

/**
 * The offline default summarizer. It does not paraphrase: it keeps, verbatim, what later turns
 * need to carry on — file paths, identifiers, commands run, errors and what followed them,
 * decisions, open work — and says where the removed turns are archived. Sections are filled
 * round-robin, most important first, until the token budget is spent.
 */
export class ExtractiveSummarizer implements Summarizer {
  readonly name = 'extractive';

  constructor(private readonly counter: TextTokenCounter) {}

  async summarize(request: SummaryRequest): Promise<string> {
    try {
      return await this.build(request);
    } catch (error) {
      throw error instanceof ProviderError || error instanceof InterruptedError ? error : new ProviderError(String(error), this.name);
    }
  }

  /** Reads the removed turns a slice at a time, giving the event loop its turns (a signal stops it: exit 130). */
  private async build(request: SummaryRequest): Promise<string> {
    const { turns, budgetTokens } = request;
    const pacer = new Pacer(request.signal);
    const facts = await runPaced(factsSteps(turns), pacer);
    const aboutGoal = await runPaced(goalLineSteps(turns, request.activeTask), pacer);
    const first = turns[0]?.id ?? '';
    const last = turns[turns.length - 1]?.id ?? '';
    // No prune id in the text: it is random, and a dry run must count the same summary every time.
    const header = `${SUMMARY_PREFIX}\n${turns.length} earlier turns were removed and archived by devs-ctx. What they held, verbatim where it matters:`;
    const hints = [
      turns.length > 1 ? `archived turns: ${first} … ${last}` : `archived turn: ${first}`,
      'full text: devs-ctx recall "<words>" (or --turn ID); undo: devs-ctx restore FILE',
    ];
    const goal = clip(request.activeTask.replace(/\s+/g, ' ').trim(), 400);
    const sections: Section[] = [
      { title: 'Goal', items: goal ? [goal] : [] },
      { title: 'On the goal', items: aboutGoal },
      { title: 'Errors and what followed', items: facts.errors },
      { title: 'Decisions', items: facts.decisions },
      { title: 'Commands run', items: facts.commands },
      { title: 'Files', items: facts.files },
      { title: 'Identifiers', items: facts.identifiers },
      { title: 'Open work', items: facts.todos },
      { title: 'Done', items: facts.done },
    ];

    const cost = (text: string): number => this.counter.count(text);
    const hintText = `\n## Lookup hints\n${hints.map((h) => `- ${h}`).join('\n')}`;
    let used = cost(header) + cost(hintText);
    if (used > budgetTokens) {
      throw new ProviderError(
        `a summary needs at least ${used} tokens, more than the ${budgetTokens} allowed (what it replaces is too small to be worth summarizing); nothing was written`,
        this.name,
        'raise --target or prune more turns at once',
      );
    }
    // Round-robin over sections so each gets its most important items before any gets many.
    const chosen = sections.map(() => [] as string[]);
    const cursor = sections.map(() => 0);
    let progress = true;
    while (progress) {
      progress = false;
      sections.forEach((section, s) => {
        const index = cursor[s] ?? 0;
        const item = section.items[index];
        if (item === undefined) return;
        cursor[s] = index + 1;
        const heading = (chosen[s]?.length ?? 0) === 0 ? `\n## ${section.title}\n` : '\n';
        const piece = `${heading}- ${item}`;
        const pieceCost = cost(piece);
        if (used + pieceCost > budgetTokens) return;
        chosen[s]?.push(item);
        used += pieceCost;
        progress = true;
      });
    }
    const body = sections
      .map((section, s) => ((chosen[s]?.length ?? 0) > 0 ? `\n## ${section.title}\n${chosen[s]?.map((i) => `- ${i}`).join('\n')}` : ''))
      .join('');
    return `${header}${body}${hintText}`;
  }
}

interface Section {
  readonly title: string;
  readonly items: readonly string[];
}

export interface ExtractedFacts {
  readonly files: string[];
  readonly identifiers: string[];
  readonly commands: string[];
  readonly errors: string[];
  readonly decisions: string[];
  readonly todos: string[];
  readonly done: string[];
}

const FILE_PATH = /(?:~|\.{1,2})?(?:\/?[\w@.+-]+\/)+[\w@.+-]+\.[A-Za-z0-9]{1,8}\b|\b[\w-]+\.(?:ts|tsx|js|jsx|mjs|cjs|json|jsonl|md|py|rs|go|java|kt|rb|php|c|h|cc|cpp|hpp|cs|swift|sql|yaml|yml|toml|sh|css|scss|html|vue|svelte|lock)\b/g;
const IDENTIFIER = /\b(?:[a-z]+(?:[A-Z][a-z0-9]*)+|[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+|[a-z][a-z0-9]*(?:_[a-z0-9]+)+|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)\b/g;
const BACKTICKED = /`([^`\n]{2,80})`/g;
/** How tool output says something went wrong (not code that merely mentions an Error class). */
const ERROR_LINE = /^\s*(?:[\w./-]+:\d+(?::\d+)?:?\s*)?(?:error|ERROR|Error|fatal|FATAL)(?:\[[^\]]*\])?:\s|\berror TS\d+|\b\w+(?:Error|Exception):|\bTraceback\b|\bFAIL(?:ED)?\b|\bfailed\b|\bexit (?:code|status) [1-9]|\bpanic:|\bE(?:NOENT|ACCES|ADDRINUSE|CONNREFUSED)\b|command not found|No such file or directory/;
const MAX_FACT_LINE = 400;
/** Lines that are code, not messages: they end mid-statement. */
const CODE_LINE = /[,{(\[;]\s*$|^\s*(?:const|let|var|return|import|export|if|throw|catch|function|def|class)\b/;
const ANSI = /\x1b\[[0-9;]*[A-Za-z]/g;
const DECISION_LINE = /\b(decided|decision|we will|we'll|i will|i'll use|let's use|chose|choose|going with|instead of|switch(?:ed)? to|prefer)\b/i;
const TODO_LINE = /\b(TODO|FIXME|next step|remaining|still need|not yet|follow[- ]up|left to do)\b/i;
const DONE_LINE = /\b(fixed|resolved|done|implemented|added|passes|passing|succeeded|works now|completed)\b/i;
const COMMAND_FIELD = /"(?:command|cmd)"\s*:\s*(?:\[\s*)?"((?:[^"\\]|\\.){1,300})"/g;

/** What the removed turns mention that later turns may need, most frequent (or first) first. */
export function extractFacts(turns: readonly ConversationTurn[]): ExtractedFacts {
  return runSync(factsSteps(turns));
}

/** extractFacts, one removed turn per step. */
function* factsSteps(turns: readonly ConversationTurn[]): Generator<void, ExtractedFacts> {
  const files = new Counter();
  const identifiers = new Counter();
  const commands = new Ordered();
  const errors = new Ordered();
  const decisions = new Ordered();
  const todos = new Ordered();
  const done = new Ordered();
  for (let t = 0; t < turns.length; t++) {
    const turn = turns[t] as ConversationTurn;
    const text = headAndTail(turn.content).replace(ANSI, '').replace(/\\u001b\[[0-9;]*[A-Za-z]/g, '').replace(/\\n/g, '\n');
    for (const match of text.matchAll(FILE_PATH)) files.add(match[0]);
    for (const match of text.matchAll(BACKTICKED)) if (match[1] && !match[1].includes(' ')) identifiers.add(match[1]);
    for (const match of text.matchAll(IDENTIFIER)) identifiers.add(match[0]);
    if (turn.type === 'tool_call') {
      const command = commandOf(text);
      if (command) commands.add(clip(command, 300));
      else {
        let found = false;
        for (const match of text.matchAll(COMMAND_FIELD)) {
          if (match[1]) {
            commands.add(unescapeJson(match[1]));
            found = true;
          }
        }
        if (!found) commands.add(firstLine(text, 200));
      }
    }
    const lines = readableText(text).split('\n');
    for (const line of lines) {
      if (line.length < 4 || line.length > MAX_FACT_LINE) continue;
      if (ERROR_LINE.test(line) && !CODE_LINE.test(line)) {
        const next = followUp(turns, t);
        errors.add(`${clip(line.trim(), 200)} (turn ${turn.id})${next ? ` → then: ${next}` : ''}`);
      } else if ((turn.type === 'message' || turn.type === 'reasoning') && DECISION_LINE.test(line)) decisions.add(clip(line.trim(), 240));
      else if (TODO_LINE.test(line)) todos.add(clip(line.trim(), 200));
      else if (turn.role === 'assistant' && DONE_LINE.test(line)) done.add(clip(line.trim(), 200));
    }
    yield;
  }
  return {
    files: files.top(60),
    identifiers: identifiers.top(60).filter((id) => !files.has(id)),
    commands: commands.first(40),
    errors: errors.first(20),
    decisions: decisions.first(20),
    todos: todos.first(20),
    done: done.first(20),
  };
}

/**
 * The shell command of a tool call whose arguments are JSON with a `command`/`cmd` field:
 * `["bash", "-lc", "npm test"]` gives `npm test`.
 */
function commandOf(text: string): string | undefined {
  const start = text.indexOf('{');
  if (start < 0 || text.length > 100_000) return undefined;
  try {
    const args: unknown = JSON.parse(text.slice(start));
    if (typeof args !== 'object' || args === null) return undefined;
    const record = args as Record<string, unknown>;
    const command = record['command'] ?? record['cmd'];
    if (typeof command === 'string') return command;
    if (Array.isArray(command) && command.every((c) => typeof c === 'string')) {
      const parts = command as string[];
      if (parts.length === 3 && /(?:^|\/)(?:ba|z|da)?sh$/.test(parts[0] ?? '') && /^-\w*c$/.test(parts[1] ?? '')) return parts[2];
      return parts.join(' ');
    }
  } catch {
    // not JSON arguments
  }
  return undefined;
}

/** A huge tool output's facts are in its first and last pages; reading it all only costs time. */
const HEAD_CHARS = 24_000;
const TAIL_CHARS = 8_000;
function headAndTail(text: string): string {
  return text.length <= HEAD_CHARS + TAIL_CHARS ? text : `${text.slice(0, HEAD_CHARS)}\n${text.slice(-TAIL_CHARS)}`;
}

/** Tool output is often JSON (`{"output": "…"}`): its text fields, one per line, are what to read. */
function readableText(text: string): string {
  const trimmed = text.trimStart();
  if (!trimmed.startsWith('{') || trimmed.length > 2_000_000) return text;
  try {
    const value: unknown = JSON.parse(trimmed);
    if (typeof value !== 'object' || value === null) return text;
    const parts = Object.values(value as Record<string, unknown>).filter((v): v is string => typeof v === 'string');
    return parts.length > 0 ? parts.join('\n') : text;
  } catch {
    return text;
  }
}

const MAX_GOAL_LINES = 30;

/**
 * The removed lines that speak most about the goal: scored by the goal's words they contain,
 * rarer words (in the removed text) weighing more, so a line naming the goal's file and function
 * beats one that only says "fix". The best lines are returned best first.
 */
export function linesAboutGoal(turns: readonly ConversationTurn[], goal: string): string[] {
  return runSync(goalLineSteps(turns, goal));
}

/** linesAboutGoal, one removed turn per step. */
function* goalLineSteps(turns: readonly ConversationTurn[], goal: string): Generator<void, string[]> {
  const goalTerms = new Set(terms(goal));
  if (goalTerms.size === 0) return [];
  // A cheap first pass: only lines containing one of the goal's words somewhere are split into terms.
  const mentionsGoal = new RegExp([...goalTerms].map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'), 'i');
  const candidates: { line: string; words: Set<string>; order: number }[] = [];
  const frequency = new Map<string, number>();
  let order = 0;
  for (const turn of turns) {
    for (const raw of readableText(headAndTail(turn.content)).split('\n')) {
      const line = raw.trim();
      if (line.length < 12 || line.length > MAX_FACT_LINE || !mentionsGoal.test(line) || CODE_LINE.test(line)) continue;
      const words = new Set(terms(line).filter((w) => goalTerms.has(w)));
      if (words.size === 0) continue;
      for (const w of words) frequency.set(w, (frequency.get(w) ?? 0) + 1);
      candidates.push({ line, words, order: order++ });
    }
    yield;
  }
  const scored = candidates.map((c) => ({ ...c, score: [...c.words].reduce((sum, w) => sum + 1 / Math.sqrt(frequency.get(w) ?? 1), 0) }));
  scored.sort((a, b) => b.score - a.score || a.order - b.order);
  const seen = new Set<string>();
  const out: string[] = [];
  for (const { line } of scored) {
    if (seen.has(line)) continue;
    seen.add(line);
    out.push(line);
    if (out.length >= MAX_GOAL_LINES) break;
  }
  return out;
}

/** The first line of the next assistant message after turn t: what the agent did about an error. */
function followUp(turns: readonly ConversationTurn[], t: number): string | undefined {
  for (let i = t + 1; i < Math.min(turns.length, t + 4); i++) {
    const next = turns[i];
    if (next?.role === 'assistant' && next.type !== 'reasoning' && next.content.trim()) return firstLine(next.content, 160);
  }
  return undefined;
}

function firstLine(text: string, max: number): string {
  const line = text.trim().split('\n').find((l) => l.trim().length > 0) ?? '';
  return clip(line.trim(), max);
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

function unescapeJson(text: string): string {
  try {
    return JSON.parse(`"${text}"`) as string;
  } catch {
    return text;
  }
}

class Counter {
  private readonly counts = new Map<string, number>();
  add(key: string): void {
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
  }
  has(key: string): boolean {
    return this.counts.has(key);
  }
  top(n: number): string[] {
    return [...this.counts.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([key]) => key);
  }
}

class Ordered {
  private readonly seen = new Set<string>();
  private readonly items: string[] = [];
  add(item: string): void {
    if (!item || this.seen.has(item)) return;
    this.seen.add(item);
    this.items.push(item);
  }
  first(n: number): string[] {
    return this.items.slice(0, n);
  }
}

/** Runs a stepwise computation to its end at once. */
function runSync<R>(steps: Generator<void, R>): R {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/** Runs a stepwise computation, giving the event loop a turn every slice of work (see Pacer). */
async function runPaced<R>(steps: Generator<void, R>, pacer: Pacer): Promise<R> {
  for (let n = 1; ; n++) {
    const step = steps.next();
    if (step.done) return step.value;
    if ((n & 15) === 0) await pacer.tick();
  }
}
