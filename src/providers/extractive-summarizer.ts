import type { TextTokenCounter } from '../core/accounting.js';
import { SUMMARY_PREFIX } from '../core/prune/edit.js';
import type { Summarizer, SummaryRequest } from '../core/providers.js';
import { ProviderError } from '../core/errors.js';
import type { ConversationTurn } from '../core/turn.js';

/**
 * The offline default summarizer. It does not paraphrase: it keeps, verbatim, what later turns
 * need to carry on — file paths, identifiers, commands run, errors and what followed them,
 * decisions, open work — and says where the removed turns are archived. Sections are filled
 * round-robin, most important first, until the token budget is spent.
 */
export class ExtractiveSummarizer implements Summarizer {
  readonly name = 'extractive';

  constructor(private readonly counter: TextTokenCounter) {}

  summarize(request: SummaryRequest): Promise<string> {
    try {
      return Promise.resolve(this.build(request));
    } catch (error) {
      return Promise.reject(error instanceof ProviderError ? error : new ProviderError(String(error), this.name));
    }
  }

  private build(request: SummaryRequest): string {
    const { turns, budgetTokens } = request;
    const facts = extractFacts(turns);
    const ids = turns.map((t) => t.id);
    const idRange = ids.length > 6 ? `${ids.slice(0, 3).join(', ')} … ${ids.slice(-2).join(', ')}` : ids.join(', ');
    const where = request.archive ? ` (prune ${request.archive.eventId}${request.archive.location ? ` in ${request.archive.location}` : ''})` : '';
    const header = `${SUMMARY_PREFIX}\n${turns.length} earlier turn(s) were removed from the context and archived by devs-ctx${where}. What they held, verbatim where it matters:`;
    const hints = [
      `archived turn ids: ${idRange}`,
      request.archive ? `full text: devs-ctx recall "<words>" or devs-ctx restore (prune ${request.archive.eventId})` : 'full text: devs-ctx recall "<words>"',
    ];
    const goal = firstLine(request.activeTask, 300);
    const sections: Section[] = [
      { title: 'Goal', items: goal ? [goal] : [] },
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
        `a summary needs at least ${used} tokens, more than the ${budgetTokens} allowed (what it replaces is too small to be worth summarizing)`,
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
const ERROR_LINE = /\b(error|exception|traceback|failed|failure|fatal|panic|cannot|ENOENT|EACCES|TypeError|SyntaxError|ReferenceError|AssertionError)\b/i;
const DECISION_LINE = /\b(decided|decision|we will|we'll|i will|i'll use|let's use|chose|choose|going with|instead of|switch(?:ed)? to|prefer)\b/i;
const TODO_LINE = /\b(TODO|FIXME|next step|remaining|still need|not yet|follow[- ]up|left to do)\b/i;
const DONE_LINE = /\b(fixed|resolved|done|implemented|added|passes|passing|succeeded|works now|completed)\b/i;
const COMMAND_FIELD = /"(?:command|cmd)"\s*:\s*(?:\[\s*)?"((?:[^"\\]|\\.){1,300})"/g;

/** What the removed turns mention that later turns may need, most frequent (or first) first. */
export function extractFacts(turns: readonly ConversationTurn[]): ExtractedFacts {
  const files = new Counter();
  const identifiers = new Counter();
  const commands = new Ordered();
  const errors = new Ordered();
  const decisions = new Ordered();
  const todos = new Ordered();
  const done = new Ordered();
  turns.forEach((turn, t) => {
    const text = turn.content;
    for (const match of text.matchAll(FILE_PATH)) files.add(match[0]);
    for (const match of text.matchAll(BACKTICKED)) if (match[1] && !match[1].includes(' ')) identifiers.add(match[1]);
    for (const match of text.matchAll(IDENTIFIER)) identifiers.add(match[0]);
    if (turn.type === 'tool_call') {
      let found = false;
      for (const match of text.matchAll(COMMAND_FIELD)) {
        if (match[1]) {
          commands.add(unescapeJson(match[1]));
          found = true;
        }
      }
      if (!found) commands.add(firstLine(text, 200));
    }
    const lines = text.split('\n');
    for (const line of lines) {
      if (line.length < 4) continue;
      if (ERROR_LINE.test(line) && (turn.type === 'tool_result' || turn.role === 'tool' || /error/i.test(line))) {
        const next = followUp(turns, t);
        errors.add(`${clip(line.trim(), 200)} (turn ${turn.id})${next ? ` → then: ${next}` : ''}`);
      } else if (turn.role !== 'tool' && DECISION_LINE.test(line)) decisions.add(clip(line.trim(), 240));
      else if (TODO_LINE.test(line)) todos.add(clip(line.trim(), 200));
      else if (turn.role === 'assistant' && DONE_LINE.test(line)) done.add(clip(line.trim(), 200));
    }
  });
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
