import type { TextTokenCounter } from '../core/accounting.js';
import { SUMMARY_PREFIX } from '../core/prune/edit.js';
import type { Summarizer, SummaryRequest } from '../core/provider-contracts.js';
import { InterruptedError, ProviderError } from '../core/errors.js';
import { Pacer } from '../core/pace.js';
import type { ConversationTurn } from '../core/turn.js';
import { terms } from '../core/terms.js';
import {
  ANSI_ESCAPE,
  cleanText,
  commandKey,
  oneLine,
  quotable,
  readStructure,
  splitToolCallTurn,
  stripReminders,
  structureSteps,
} from './session-structure.js';
import type { CommandRun, FileTouch, SessionStructure, ToolFailure } from './session-structure.js';
import { filePathsIn, identifiersIn } from './fact-matches.js';
import { clip, headOf, tailOf } from '../core/text-cut.js';

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
    const facts = await runPaced(factsSteps(turns, SUMMARY_FACTS), pacer);
    const structure = await runPaced(structureSteps(turns), pacer);
    const first = turns[0]?.id ?? '';
    const last = turns[turns.length - 1]?.id ?? '';
    // No prune id in the text: it is random, and a dry run must count the same summary every time.
    // Without an archive (--no-archive) nothing can be recalled or restored: the summary says so, and gives no way to.
    const archived = request.archive !== undefined;
    const header = archived
      ? `${SUMMARY_PREFIX}\n${turns.length} earlier turns were removed and archived by devs-ctx. What they held, verbatim where it matters:`
      : `${SUMMARY_PREFIX}\n${turns.length} earlier turns were removed by devs-ctx and not archived. What they held, verbatim where it matters:`;
    const latest = structure.requests[structure.requests.length - 1];
    const which = archived ? 'archived' : 'removed';
    const hints = [
      turns.length > 1 ? `${which} turns: ${first} … ${last}` : `${which} turn: ${first}`,
      ...(latest ? [`latest request: turn ${latest.turnId}${structure.lastPlan ? `; last plan: turn ${structure.lastPlan.turnId}` : ''}`] : []),
      ...(archived ? ['full text: devs-ctx recall "<words>" (or --turn ID); undo: devs-ctx restore FILE'] : []),
    ];
    // The active task is the latest user line, which may be injected text (`<local-command-stdout>Bye!…`):
    // never quoted, as anywhere else in the summary; the latest real request stands in for it.
    const goal = clip((cleanText(request.activeTask) || (latest?.text ?? '')).replace(/\s+/g, ' ').trim(), 400);
    const sections: Section[] = [
      { title: 'Goal', items: goal ? [goal] : [] },
      { title: 'User requests (in order)', items: requestItems(structure), inOrder: true },
      { title: 'Current state and next step', items: planItems(structure), inOrder: true },
      { title: 'Errors and what fixed them', items: errorItems(structure, facts) },
      { title: 'Files touched', items: fileItems(structure, [...prosePaths(structure), ...facts.files.filter((f) => !WEB_PATH.test(f))]) },
      { title: 'Commands run', items: commandItems(structure), inOrder: true },
      { title: 'Decisions and constraints', items: decisionItems(structure) },
      { title: 'Open TODOs', items: todoItems(structure) },
      { title: 'Identifiers', items: identifierItems(structure) },
      { title: 'Done', items: doneItems(structure) },
    ];

    const cost = (text: string): number => this.counter.count(text);
    const hintText = `\n## Lookup hints\n${hints.map((h) => `- ${h}`).join('\n')}`;
    const piece = (section: Section, text: string, first: boolean): string => `${first ? `\n## ${section.title}\n` : '\n'}- ${text}`;
    // Every line that may be costed, counted ahead at once (on a count worker in the CLI): under a
    // heading for a section's first item (the one usually shown first), plain for every item. A
    // count ahead that fails (a worker out of memory) is no provider's failure: each is counted here.
    await this.counter
      .countAlongside?.(
        [
          header,
          hintText,
          ...sections.flatMap((section) =>
            section.items.flatMap((item, i) => (i === 0 ? [piece(section, textOf(item), true)] : []).concat(piece(section, textOf(item), false))),
          ),
        ],
        async () => {},
      )
      ?.catch(() => undefined);
    let used = cost(header) + cost(hintText);
    if (used > budgetTokens) {
      throw new ProviderError(
        `a summary needs at least ${used} tokens, more than the ${budgetTokens} allowed (what it replaces is too small to be worth summarizing); nothing was written`,
        this.name,
        'raise --target or prune more turns at once',
      );
    }
    // Round-robin over sections so each gets its most important items before any gets many.
    const chosen = sections.map(() => [] as Item[]);
    const cursor = sections.map(() => 0);
    let progress = true;
    while (progress) {
      progress = false;
      sections.forEach((section, s) => {
        const index = cursor[s] ?? 0;
        const item = section.items[index];
        if (item === undefined) return;
        cursor[s] = index + 1;
        const pieceCost = cost(piece(section, textOf(item), (chosen[s]?.length ?? 0) === 0));
        progress = true;
        if (used + pieceCost > budgetTokens) return;
        chosen[s]?.push(typeof item === 'string' ? { text: item, order: index } : item);
        used += pieceCost;
      });
    }
    const body = sections
      .map((section, s) => {
        const items = [...(chosen[s] ?? [])];
        if (items.length === 0) return '';
        if (section.inOrder) items.sort((a, b) => a.order - b.order);
        return `\n## ${section.title}\n${items.map((i) => `- ${i.text}`).join('\n')}`;
      })
      .join('');
    return `${header}${body}${hintText}`;
  }
}

function textOf(item: string | Item): string {
  return typeof item === 'string' ? item : item.text;
}

/** An item and its place when shown (sections shown in order list their items chronologically). */
interface Item {
  readonly text: string;
  readonly order: number;
}

const REQUEST_CAP = 300;
/** Source code quoted by a tool (format strings, escaped tabs, comments, diff lines), not a message. */
const CODE_LIKE = /%[vwsdq]\b|\\t|^\s*(?:\/\/|#|[+-]\s|\*\s)|\w\(["'`].*\)\s*$/;
/** A heading that introduces a list ("The remaining issues are:") says nothing alone. */
const LEAD_IN = /:\s*$/;
/** The latest request is kept whole, up to this (a pasted log is not a request). */
const LATEST_REQUEST_CAP = 4000;
const PLAN_LINES = 12;
const CONSTRAINT_LINE = /\b(must|must not|never|always|don't|do not|only|without|keep|avoid|should(?:n't| not)?|instead of|skip)\b/i;

/** The user's requests, latest first (kept first), shown in order; the latest whole. */
function requestItems(structure: SessionStructure): Item[] {
  const { requests } = structure;
  const items = requests.map((r, i) => ({
    // No turn id each (the lookup hints name the latest's): ids cost more tokens than short requests.
    text: i === requests.length - 1 ? clip(oneLine(r.text), LATEST_REQUEST_CAP) : clip(oneLine(r.text), REQUEST_CAP),
    order: i,
  }));
  return items.reverse();
}

/** The assistant's last words: its current state and next step, line by line. */
function planItems(structure: SessionStructure): Item[] {
  const lines = (structure.lastPlan?.text ?? '')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.length > 1 && !CODE_LINE.test(l));
  const items = lines.slice(0, PLAN_LINES).map((line, i) => ({ text: clip(line, 300), order: i }));
  // What it was doing when the span ends, after that message: kept first, shown last.
  const words =
    structure.lastWords?.text
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l.length > 1 && !CODE_LINE.test(l)) ?? [];
  const last = words.length > 0 ? [{ text: `then, last: ${clip(words.join(' '), 300)}`, order: PLAN_LINES }] : [];
  return [...last, ...items];
}

/** Files by what was done to them: changed files first, then by how often they were touched. */
function fileItems(structure: SessionStructure, mentioned: readonly string[]): string[] {
  const files = [...structure.files];
  const changes = (f: FileTouch): number => f.counts.edited + f.counts.created + f.counts.deleted;
  const total = (f: FileTouch): number => changes(f) + f.counts.read;
  files.sort((a, b) => Math.sign(changes(b)) - Math.sign(changes(a)) || total(b) - total(a) || a.first - b.first);
  const root = projectRoot(files.map((f) => f.path));
  const items = files.slice(0, 60).map((f) => {
    const what = (['created', 'edited', 'deleted', 'read'] as const)
      .filter((k) => f.counts[k] > 0)
      .map((k) => (f.counts[k] > 1 ? `${k} ${f.counts[k]}×` : k))
      .join(', ');
    return `${root && f.path.startsWith(root) ? f.path.slice(root.length) : f.path} — ${what}`;
  });
  if (root) items.unshift(`(paths below are relative to ${root})`);
  // Paths only named in the text (a format whose tool calls carry no inputs, or files a command touched).
  const touched = structure.files.map((f) => f.path);
  const named = [...new Set(mentioned)].filter((path) => !touched.some((t) => t === path || t.endsWith(`/${path}`))).map((path) => `${path} — mentioned`);
  return [...items, ...named].slice(0, 60);
}

/** A project's usual top-level folders: what comes before one is the project's root. */
const TOP_DIR = /\/(?:src|cmd|apps|packages|lib|libs|test|tests|docs|internal|pkg|app|scripts|bench|crates|server|client|web|\.github|\.claude)\//;

/**
 * The project folder most absolute paths share, when it saves repeating it: the folder before their
 * first usual top-level folder (`src/`, `cmd/`, `apps/`…), so what is left is the repository-relative
 * path people write; it must hold at least 60 % of them, and two or more.
 */
function projectRoot(paths: readonly string[]): string | undefined {
  const absolute = paths.filter((p) => p.startsWith('/'));
  if (absolute.length < 2) return undefined;
  const roots = new Map<string, number>();
  for (const path of absolute) {
    const top = TOP_DIR.exec(path);
    if (top) roots.set(path.slice(0, top.index + 1), (roots.get(path.slice(0, top.index + 1)) ?? 0) + 1);
  }
  const [root, n] = [...roots].sort((a, b) => b[1] - a[1])[0] ?? ['', 0];
  return n >= 2 && n >= absolute.length * 0.6 && root.length > 1 ? root : undefined;
}

/** Each distinct command once, with how many runs and how the last one ended; failures kept first. */
function commandItems(structure: SessionStructure): Item[] {
  const byCommand = new Map<string, { runs: number; last: CommandRun; order: number; failed: boolean }>();
  structure.commands.forEach((run, i) => {
    const key = run.command.trim();
    const seen = byCommand.get(key);
    const failed = run.outcome !== undefined && run.outcome !== 'ok';
    byCommand.set(key, { runs: (seen?.runs ?? 0) + 1, last: run, order: seen?.order ?? i, failed: (seen?.failed ?? false) || failed });
  });
  const items = [...byCommand.values()].map((c) => {
    const outcome =
      c.last.outcome === undefined ? '' : c.last.outcome === 'ok' ? ' → ok' : ` → ${c.last.outcome}${c.last.errorLine ? `: ${c.last.errorLine}` : ''}`;
    const runs = c.runs > 1 ? ` (${c.runs} runs)` : '';
    return { text: `\`${clip(oneLine(c.last.command), 240)}\`${outcome}${runs}`, order: c.order, failed: c.failed };
  });
  // Failed ones first, then the latest: a small budget keeps what went wrong and where things stand.
  return [...items.filter((i) => i.failed).reverse(), ...items.filter((i) => !i.failed).reverse()];
}

/** The errors a summary lists at most. */
const MAX_ERROR_ITEMS = 30;

/** Each failed tool call, its first error line, and what fixed it (a later success of the same command or file). */
function errorItems(structure: SessionStructure, facts: Pick<ExtractedFacts, 'errors'>): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const failure of structure.failures) {
    // Those after the first MAX_ERROR_ITEMS are never shown: no fix is looked for them.
    if (out.length >= MAX_ERROR_ITEMS) break;
    const signature = `${failure.key} ${failure.errorLine}`;
    if (seen.has(signature)) continue;
    seen.add(signature);
    out.push(`${failure.what} — ${failure.errorLine} (turn ${failure.resultTurnId})${fixOf(structure, failure)}`);
  }
  const quoted = new Set(structure.failures.map((f) => f.errorLine));
  for (const error of facts.errors) {
    const turnId = /\(turn ([^)\s]+)\)/.exec(error)?.[1] ?? '';
    if (structure.fileOutputTurnIds.has(turnId) || CODE_LIKE.test(error)) continue;
    if (![...quoted].some((line) => error.startsWith(clip(line, 200)))) out.push(error);
  }
  return out.slice(0, MAX_ERROR_ITEMS);
}

function fixOf(structure: SessionStructure, failure: ToolFailure): string {
  const later = structure.commands.find((c) => c.index > failure.index && commandKey(c.command) === failure.key && c.outcome === 'ok');
  const edited = structure.files
    .filter((f) => f.first > failure.index && f.first < (later?.index ?? Infinity) && f.counts.edited + f.counts.created > 0)
    .map((f) => f.path);
  if (later) return ` → fixed: \`${clip(oneLine(later.command), 120)}\` passed${edited.length > 0 ? ` after changing ${edited.slice(0, 4).join(', ')}` : ''}`;
  const { firstProse, firstCommand } = turnIndexes(structure);
  const failedAt = Math.min(firstProse.get(failure.resultTurnId) ?? Infinity, firstProse.get(failure.callTurnId) ?? Infinity);
  // A line whose turn's first prose line comes after `failedAt` comes after it too: the search
  // starts there (and there is none after no line).
  if (failedAt === Infinity) return '';
  for (let i = failedAt + 1; i < structure.prose.length; i++) {
    const p = structure.prose[i] as (typeof structure.prose)[number];
    if (
      p.role === 'assistant' &&
      p.turnId !== failure.callTurnId &&
      (firstCommand.get(p.turnId) ?? Infinity) > failure.index &&
      (firstProse.get(p.turnId) ?? -1) > failedAt
    ) {
      return ` → then: ${clip(p.line, 160)}`;
    }
  }
  return '';
}

const indexesOf = new WeakMap<SessionStructure, { firstProse: Map<string, number>; firstCommand: Map<string, number> }>();
/**
 * Per turn, its first prose line and its first tool call (by index), computed once per structure: a
 * prose line's turn comes after a failure when its first prose line does, and it acted on the failure
 * when its turn ran no command before it (a search per failure over every line was quadratic).
 */
function turnIndexes(structure: SessionStructure): { firstProse: Map<string, number>; firstCommand: Map<string, number> } {
  let indexes = indexesOf.get(structure);
  if (indexes === undefined) {
    const firstProse = new Map<string, number>();
    // A turn's prose lines come one after another: the map is asked once per run of them.
    let previous: string | undefined;
    for (let i = 0; i < structure.prose.length; i++) {
      const { turnId } = structure.prose[i] as (typeof structure.prose)[number];
      if (turnId !== previous && !firstProse.has(turnId)) firstProse.set(turnId, i);
      previous = turnId;
    }
    const firstCommand = new Map<string, number>();
    for (const c of structure.commands) firstCommand.set(c.turnId, Math.min(firstCommand.get(c.turnId) ?? Infinity, c.index));
    indexes = { firstProse, firstCommand };
    indexesOf.set(structure, indexes);
  }
  return indexes;
}

/** What the assistant decided and the user required, in their words. */
function decisionItems(structure: SessionStructure): string[] {
  const out = new Ordered();
  const statement = statementLines(structure);
  structure.prose.forEach((p, i) => {
    if (p.line.length > MAX_FACT_LINE || !statement(i)) return;
    if (p.role === 'assistant' && DECISION_LINE.test(p.line)) out.add(clip(p.line, 240));
    else if (p.role === 'user' && CONSTRAINT_LINE.test(p.line) && p.line.length > REQUEST_CAP) out.add(clip(p.line, 240));
  });
  return out.first(20);
}

/** The agent's open todo items (its latest list), then TODO lines it wrote. */
function todoItems(structure: SessionStructure): string[] {
  const out = new Ordered();
  for (const todo of structure.todos)
    if (todo.status !== 'completed') out.add(`${clip(oneLine(todo.text), 200)}${todo.status === 'pending' ? '' : ` (${todo.status})`}`);
  const statement = statementLines(structure);
  structure.prose.forEach((p, i) => {
    if (p.role === 'assistant' && TODO_LINE.test(p.line) && statement(i)) out.add(clip(p.line, 200));
  });
  return out.first(20);
}

function doneItems(structure: SessionStructure): string[] {
  const out = new Ordered();
  for (const todo of structure.todos) if (todo.status === 'completed') out.add(clip(oneLine(todo.text), 200));
  const statement = statementLines(structure);
  structure.prose.forEach((p, i) => {
    if (p.role === 'assistant' && p.line.length <= 200 && DONE_LINE.test(p.line) && statement(i)) out.add(p.line);
  });
  return out.first(20);
}

const statementsOf = new WeakMap<SessionStructure, Int8Array>();
/**
 * Whether prose line `i` is a statement, neither code (CODE_LINE) nor a heading that introduces a
 * list (LEAD_IN): found once per line for the structure, though three sections ask (1 yes, -1 no, 0
 * not yet asked).
 */
function statementLines(structure: SessionStructure): (i: number) => boolean {
  let known = statementsOf.get(structure);
  if (known === undefined) {
    known = new Int8Array(structure.prose.length);
    statementsOf.set(structure, known);
  }
  const seen = known;
  return (i) => {
    if (seen[i] === 0) {
      const { line } = structure.prose[i] as { line: string };
      seen[i] = CODE_LINE.test(line) || LEAD_IN.test(line) ? -1 : 1;
    }
    return seen[i] === 1;
  };
}

/**
 * [issue 15] What the turns' structure says, for a model's prompt: files touched, failed commands and
 * the identifiers worth keeping verbatim (`identifiers`, most repeated first, a summary is checked for).
 */
export function structuralFacts(turns: readonly ConversationTurn[]): { text: string; identifiers: string[] } {
  const structure = readStructure(turns);
  const files = fileItems(structure, prosePaths(structure)).slice(0, 25);
  const failed = structure.failures.slice(0, 10).map((f) => `${f.what} — ${f.errorLine} (turn ${f.resultTurnId})`);
  const identifiers = rankedIdentifiers(structure).slice(0, 40);
  const lines = [
    ...(files.length > 0 ? ['Files touched:', ...files.map((f) => `- ${f}`)] : []),
    ...(failed.length > 0 ? ['Commands and tools that failed:', ...failed.map((f) => `- ${f}`)] : []),
    ...(identifiers.length > 0 ? [`Identifiers to keep verbatim: ${identifiers.map((id) => `\`${id}\``).join(', ')}`] : []),
  ];
  return { text: lines.join('\n'), identifiers };
}

/** The file paths of each prose line, in order: found once per structure (the files and the identifiers both need them). */
const pathsOfProse = new WeakMap<SessionStructure, string[][]>();
function prosePathsByLine(structure: SessionStructure): string[][] {
  let paths = pathsOfProse.get(structure);
  if (paths === undefined) {
    paths = structure.prose.map((p) => filePathsIn(p.line));
    pathsOfProse.set(structure, paths);
  }
  return paths;
}

/** Paths the user and assistant named, most named first. */
function prosePaths(structure: SessionStructure): string[] {
  const counts = new Counter();
  // Each once per line that names it.
  prosePathsByLine(structure).forEach((paths, line) => {
    for (const path of paths) counts.addOnce(path, line);
  });
  return counts.top(60);
}

/** A URL's host and path (`/cursor.com/a.svg`), not a file. */
const WEB_PATH = /^\/*[\w-]+(?:\.[\w-]+)*\.(?:com|org|net|io|dev|ai|app|co)\//;

const IDENTIFIERS_PER_ITEM = 10;
/** A backticked span that starts with closing punctuation or ends with an opening bracket: the prose between two code spans. */
const PUNCTUATION_EDGE = /^[)\],.;:]|[([]$/;
/** Names, paths and `backticked` terms the user and assistant used, most repeated first, in groups. */
function identifierItems(structure: SessionStructure): string[] {
  const ids = rankedIdentifiers(structure);
  const items: string[] = [];
  for (let i = 0; i < ids.length; i += IDENTIFIERS_PER_ITEM)
    items.push(
      ids
        .slice(i, i + IDENTIFIERS_PER_ITEM)
        .map((id) => `\`${id}\``)
        .join(', '),
    );
  return items;
}

/**
 * The backticked terms, paths and identifiers of the prose lines, by how many lines name each (a line
 * names one once, however often it says it), ties in the order first named.
 */
function rankedIdentifiers(structure: SessionStructure): string[] {
  const counts = new Counter();
  const pathsByLine = prosePathsByLine(structure);
  const { prose } = structure;
  for (let i = 0; i < prose.length; i++) {
    const { line } = prose[i] as { line: string };
    // A span with space at an edge is the prose between two code spans (an odd backtick shifted the pairs).
    if (line.includes('`')) {
      LINE_BACKTICKED.lastIndex = 0;
      for (let m = LINE_BACKTICKED.exec(line); m !== null; m = LINE_BACKTICKED.exec(line))
        if (m[1] && m[1] === m[1].trim() && !PUNCTUATION_EDGE.test(m[1])) counts.addOnce(m[1], i);
    }
    for (const path of pathsByLine[i] ?? []) counts.addOnce(path, i);
    for (const id of identifiersIn(line)) counts.addOnce(id, i);
  }
  const ranked = counts.top(150).filter((id) => !id.includes('`'));
  // One that an earlier (more repeated) one contains adds nothing verbatim: `TeamSheet.tsx` after `src/TeamSheet.tsx`.
  return ranked.filter((id, i) => !ranked.slice(0, i).some((earlier) => earlier.includes(id))).slice(0, 120);
}

/** A section's items, most important first (what a small budget keeps). */
interface Section {
  readonly title: string;
  readonly items: readonly (string | Item)[];
  /** Show the kept items in their `order` rather than by importance. */
  readonly inOrder?: boolean;
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

const BACKTICKED = /`([^`\n]{2,80})`/g;
/** BACKTICKED's own copy for `rankedIdentifiers`, run with `exec` (matchAll copies the expression for each line). */
const LINE_BACKTICKED = new RegExp(BACKTICKED);
/** How tool output says something went wrong (not code that merely mentions an Error class). */
const ERROR_LINE =
  /^\s*(?:[\w./-]+:\d+(?::\d+)?:?\s*)?(?:error|ERROR|Error|fatal|FATAL)(?:\[[^\]]*\])?:\s|\berror TS\d+|\b\w+(?:Error|Exception):|\bTraceback\b|\bFAIL(?:ED)?\b|\bfailed\b|\bexit (?:code|status) [1-9]|\bpanic:|\bE(?:NOENT|ACCES|ADDRINUSE|CONNREFUSED)\b|command not found|No such file or directory/;
const MAX_FACT_LINE = 400;
/** The errors a summary lists (the first ones). */
const MAX_ERRORS = 20;
/** Lines that are code, not messages: they end mid-statement. */
const CODE_LINE = /[,{([;]\s*$|^\s*(?:const|let|var|return|import|export|if|throw|catch|function|def|class)\b/;
const DECISION_LINE = /\b(decided|decision|we will|we'll|i will|i'll use|let's use|chose|choose|going with|instead of|switch(?:ed)? to|prefer)\b/i;
const TODO_LINE = /\b(TODO|FIXME|next step|remaining|still need|not yet|follow[- ]up|left to do)\b/i;
const DONE_LINE = /\b(fixed|resolved|done|implemented|added|passes|passing|succeeded|works now|completed)\b/i;
const COMMAND_FIELD = /"(?:command|cmd)"\s*:\s*(?:\[\s*)?"((?:[^"\\]|\\.){1,300})"/g;

/** What the removed turns mention that later turns may need, most frequent (or first) first. */
export function extractFacts(turns: readonly ConversationTurn[]): ExtractedFacts;
/** Only the facts `kinds` names (what the caller reads): the others cost most of the time and are not looked for. */
export function extractFacts<K extends keyof ExtractedFacts>(turns: readonly ConversationTurn[], kinds: readonly K[]): Pick<ExtractedFacts, K>;
export function extractFacts(turns: readonly ConversationTurn[], kinds: readonly (keyof ExtractedFacts)[] = ALL_FACTS): Partial<ExtractedFacts> {
  return runSync(factsSteps(turns, kinds));
}

const ALL_FACTS: readonly (keyof ExtractedFacts)[] = ['files', 'identifiers', 'commands', 'errors', 'decisions', 'todos', 'done'];
/** What the summary reads of them (its other sections come from the turns' structure). */
const SUMMARY_FACTS = ['files', 'errors'] as const;

/** extractFacts, one removed turn per step. */
function* factsSteps<K extends keyof ExtractedFacts>(turns: readonly ConversationTurn[], kinds: readonly K[]): Generator<void, Pick<ExtractedFacts, K>> {
  const want = new Set<keyof ExtractedFacts>(kinds);
  const wantIdentifiers = want.has('identifiers');
  // The identifiers leave out what the files hold.
  const wantFiles = want.has('files') || wantIdentifiers;
  const wantCommands = want.has('commands');
  // A line is an error before it is anything else: with only the errors wanted, nothing else is tested.
  const wantProse = want.has('decisions') || want.has('todos') || want.has('done');
  const wantLines = wantProse || want.has('errors');
  const files = new Counter();
  const identifiers = new Counter();
  const commands = new Ordered();
  const errors = new Ordered();
  const decisions = new Ordered();
  const todos = new Ordered();
  const done = new Ordered();
  for (let t = 0; t < turns.length; t++) {
    const turn = turns[t] as ConversationTurn;
    const text = factText(turn.content);
    if (wantFiles) for (const path of filePathsIn(text)) files.add(path);
    if (wantIdentifiers) {
      for (const match of text.matchAll(BACKTICKED)) if (match[1] && !match[1].includes(' ')) identifiers.add(match[1]);
      for (const id of identifiersIn(text)) identifiers.add(id);
    }
    if (wantCommands && turn.type === 'tool_call') {
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
    // Only errors looked for, and the list is full: the lines say nothing more.
    if (!wantLines || (!wantProse && errors.size >= MAX_ERRORS)) {
      yield;
      continue;
    }
    const lines = readableText(text).split('\n');
    const prose = turn.type !== 'tool_result';
    // What followed this turn, found once (a test log has many error lines) and only while the
    // list of errors has room: later ones are never shown.
    let next: string | undefined | null = null;
    for (const raw of lines) {
      // Never a reader's line-number prefix, an injected reminder or a command caveat.
      const line = quotable(raw);
      if (line === undefined || line.length < 4 || line.length > MAX_FACT_LINE) continue;
      if (ERROR_LINE.test(line) && !CODE_LINE.test(line)) {
        if (errors.size >= MAX_ERRORS) continue;
        if (next === null) next = followUp(turns, t);
        errors.add(`${clip(line.trim(), 200)} (turn ${turn.id})${next ? ` → then: ${next}` : ''}`);
      } else if (!wantProse) continue;
      else if ((turn.type === 'message' || turn.type === 'reasoning') && DECISION_LINE.test(line)) decisions.add(clip(line.trim(), 240));
      else if (prose && TODO_LINE.test(line) && !CODE_LINE.test(line)) todos.add(clip(line.trim(), 200));
      else if (turn.role === 'assistant' && DONE_LINE.test(line)) done.add(clip(line.trim(), 200));
    }
    yield;
  }
  const found: { -readonly [F in keyof ExtractedFacts]?: ExtractedFacts[F] } = {};
  if (want.has('files')) found.files = files.top(60);
  if (wantIdentifiers) found.identifiers = identifiers.top(60).filter((id) => !files.has(id));
  if (wantCommands) found.commands = commands.first(40);
  if (want.has('errors')) found.errors = errors.first(MAX_ERRORS);
  if (want.has('decisions')) found.decisions = decisions.first(20);
  if (want.has('todos')) found.todos = todos.first(20);
  if (want.has('done')) found.done = done.first(20);
  // Each kind asked for is set above.
  return found as Pick<ExtractedFacts, K>;
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

/** A terminal colour code written into JSON (`\\u001b[31m`). */
const ESCAPED_ANSI = /\\u001b\[[0-9;]*[A-Za-z]/g;

/**
 * A turn's text as its facts are read: its head and tail, reminders cut out, terminal colour codes
 * (raw or JSON-escaped) dropped, JSON-escaped line breaks made real. Each is replaced only when the
 * text holds what it starts with: most hold none, and each expression would read the whole text.
 */
function factText(content: string): string {
  let text = stripReminders(headAndTail(content));
  if (text.includes('\x1b')) text = text.replace(ANSI_ESCAPE, '');
  if (text.includes('\\u001b')) text = text.replace(ESCAPED_ANSI, '');
  if (text.includes('\\n')) text = text.replace(/\\n/g, '\n');
  return text;
}

/** A huge tool output's facts are in its first and last pages; reading it all only costs time. */
const HEAD_CHARS = 24_000;
const TAIL_CHARS = 8_000;
function headAndTail(text: string): string {
  return text.length <= HEAD_CHARS + TAIL_CHARS ? text : `${headOf(text, HEAD_CHARS)}\n${tailOf(text, TAIL_CHARS)}`;
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
    for (const raw of readableText(stripReminders(headAndTail(turn.content))).split('\n')) {
      const line = quotable(raw) ?? '';
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
    if (next?.role !== 'assistant' || next.type === 'reasoning') continue;
    const text = cleanText(next.type === 'tool_call' ? splitToolCallTurn(next.content).prose.join('\n') : next.content);
    if (text.trim()) return firstLine(text, 160);
  }
  return undefined;
}

function firstLine(text: string, max: number): string {
  const line =
    text
      .trim()
      .split('\n')
      .find((l) => l.trim().length > 0) ?? '';
  return clip(line.trim(), max);
}

function unescapeJson(text: string): string {
  try {
    return JSON.parse(`"${text}"`) as string;
  } catch {
    return text;
  }
}

/**
 * Keys counted, in the order first added: a key's number in a map, its count and the last line that
 * added it in typed arrays (one lookup per key added; a removed span names tens of thousands).
 */
class Counter {
  private readonly numbers = new Map<string, number>();
  private readonly keys: string[] = [];
  private counts = new Int32Array(256);
  /** For `addOnce`: the line that last added each key (-1: none). */
  private lines = new Int32Array(256);

  add(key: string): void {
    const k = this.numbers.get(key);
    if (k === undefined) this.insert(key, -1);
    else this.counts[k] = (this.counts[k] as number) + 1;
  }

  /** `add`, at most once per `line` (no set per line: a summary reads every removed line). */
  addOnce(key: string, line: number): void {
    const k = this.numbers.get(key);
    if (k === undefined) this.insert(key, line);
    else if (this.lines[k] !== line) {
      this.lines[k] = line;
      this.counts[k] = (this.counts[k] as number) + 1;
    }
  }

  private insert(key: string, line: number): void {
    const k = this.keys.length;
    if (k === this.counts.length) {
      const counts = new Int32Array(k * 2);
      counts.set(this.counts);
      this.counts = counts;
      const lines = new Int32Array(k * 2);
      lines.set(this.lines);
      this.lines = lines;
    }
    this.keys.push(key);
    this.numbers.set(key, k);
    this.counts[k] = 1;
    this.lines[k] = line;
  }

  has(key: string): boolean {
    return this.numbers.has(key);
  }

  /** The `n` most counted keys, most first, ties in the order first added. */
  top(n: number): string[] {
    const { keys, counts } = this;
    const size = keys.length;
    // How many keys have each count, to find the lowest count the top n reach and how many of its keys they take.
    const keysWith = new Map<number, number>();
    for (let k = 0; k < size; k++) keysWith.set(counts[k] as number, (keysWith.get(counts[k] as number) ?? 0) + 1);
    const order = [...keysWith.keys()].sort((a, b) => b - a);
    let lowest = 0;
    let reached = 0;
    for (const count of order) {
      lowest = count;
      reached += keysWith.get(count) as number;
      if (reached >= n) break;
    }
    // How many keys of the lowest count are taken (all of them when the top n reaches no further).
    const room = n - (reached - (keysWith.get(lowest) ?? 0));
    // Only those keys, by count (one pass, in the order first added).
    const byCount = new Map<number, string[]>();
    for (let k = 0; k < size; k++) {
      const count = counts[k] as number;
      if (count < lowest) continue;
      const same = byCount.get(count);
      if (same === undefined) byCount.set(count, [keys[k] as string]);
      else if (count > lowest || same.length < room) same.push(keys[k] as string);
    }
    const out: string[] = [];
    for (const count of order) {
      if (count < lowest) break;
      for (const key of byCount.get(count) as string[]) {
        if (out.length >= n) return out;
        out.push(key);
      }
    }
    return out;
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
  get size(): number {
    return this.items.length;
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
