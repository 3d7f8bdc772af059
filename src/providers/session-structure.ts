import type { ConversationTurn } from '../core/turn.js';
import { clip, headOf } from '../core/text-cut.js';

/**
 * What a span of turns did, read from its structure rather than its prose: the user's requests, the
 * tool calls (name and JSON input, as every format reader writes them: `Name {json}` on a line of a
 * `tool_call` turn) paired with their results, what happened to each file, which commands ran and
 * how they ended, the assistant's stated decisions, its last plan and its todo list. Pure: no I/O.
 */
export interface SessionStructure {
  /** The user's own requests, in order (meta lines, reminders and command caveats left out). */
  readonly requests: readonly { readonly turnId: string; readonly text: string }[];
  readonly files: readonly FileTouch[];
  readonly commands: readonly CommandRun[];
  /** The assistant's last message in the span (its current state and next step), cleaned. */
  readonly lastPlan?: { readonly turnId: string; readonly text: string };
  /** The latest todo list the agent wrote (TodoWrite, update_plan, write_todos). */
  readonly todos: readonly { readonly text: string; readonly status: string }[];
  /** Lines of user and assistant text (never tool output), cleaned, with their turn. */
  readonly prose: readonly { readonly turnId: string; readonly role: 'user' | 'assistant'; readonly line: string }[];
  /** Tool calls whose results carry an error (commands included), in order. */
  readonly failures: readonly ToolFailure[];
  /** Results of tools that show files or search them: their text is code, not messages. */
  readonly fileOutputTurnIds: ReadonlySet<string>;
  /** The assistant's text after its last message (what it was doing when the span ends). */
  readonly lastWords?: { readonly turnId: string; readonly text: string };
}

type FileAction = 'read' | 'edited' | 'created' | 'deleted';

export interface FileTouch {
  readonly path: string;
  readonly counts: Readonly<Record<FileAction, number>>;
  /** Index of the first call that touched it. */
  readonly first: number;
}

export interface CommandRun {
  readonly command: string;
  readonly turnId: string;
  /** `ok`, `exit N`, `error`, or undefined when no result was seen. */
  readonly outcome?: string;
  /** The first line of the result that says what went wrong. */
  readonly errorLine?: string;
  /** Position among all tool calls (to find what came after a failure). */
  readonly index: number;
}

export interface ToolFailure {
  readonly index: number;
  readonly callTurnId: string;
  readonly resultTurnId: string;
  /** `Bash: npm test` or `Edit src/a.ts`. */
  readonly what: string;
  readonly errorLine: string;
  /** Same command or same file, to find a later success. */
  readonly key: string;
}

interface ToolCall {
  readonly name: string;
  readonly input: Record<string, unknown>;
  readonly turnId: string;
  readonly index: number;
}

const CALL_LINE = /^([A-Za-z_][\w.:/-]{0,80}) (\{.*\})\s*$/;
/** A reader's line-number prefixes: Claude Code's `   155→`, `cat -n`'s `   155\t`. */
const LINE_NUMBER = /^\s*\d+(?:→|\t)/;
const REMINDER_START = '<system-reminder>';
const REMINDER_BLOCK = /<system-reminder>[\s\S]*?(?:<\/system-reminder>|$)/g;
/** Injected or meta text that is never quoted (a new form must keep `mayBeMeta` true for what it matches). */
const META_LINE =
  /<\/?(?:system-reminder|command-name|command-message|command-args|local-command-stdout|local-command-stderr|local-command-caveat|persisted-output|user-prompt-submit-hook)>|^Caveat: The messages below|^\[Request interrupted by user|^Base directory for this skill:|^This session is being continued from a previous conversation|^\[devs-ctx:|^\[Context Summary\]|^\[CONTEXT REFRESH\]/;
/** A user turn that is not the user typing: skill bodies, caveats, hook output, interruptions. */
const META_TURN =
  /^\s*(?:<system-reminder>|Caveat: The messages below|<local-command-|<command-message>|\[Request interrupted by user|Base directory for this skill:|This session is being continued from a previous conversation|<user-prompt-submit-hook>|<bash-stdout>|<bash-stderr>|<environment_context>|<user_instructions>|Added workspace context\b|\[devs-ctx:|\[Context Summary\]|\[CONTEXT REFRESH\])/;
/** Codex wraps the request in IDE context; the request is what follows this heading. */
const IDE_REQUEST = /^## My request for Codex:\s*$/m;
const BASH_INPUT = /^\s*<bash-input>([\s\S]*?)<\/bash-input>\s*$/;
const SLASH_COMMAND = /<command-name>([^<]*)<\/command-name>[\s\S]*?(?:<command-args>([^<]*)<\/command-args>)?/;

const ERROR_LINE =
  /^\s*(?:[\w./-]+:\d+(?::\d+)?:?\s*)?(?:error|ERROR|Error|fatal|FATAL)(?:\[[^\]]*\])?:\s|\berror TS\d+|\b\w+(?:Error|Exception):|\bTraceback\b|\bFAIL(?:ED)?\b|\bfailed\b|\bexit (?:code|status):? [1-9]|\bpanic:|\bE(?:NOENT|ACCES|ADDRINUSE|CONNREFUSED)\b|command not found|No such file or directory|not found|<tool_use_error>/;

// biome-ignore lint/suspicious/noControlCharactersInRegex: ESC starts the terminal colour codes a command's output may carry
export const ANSI_ESCAPE = /\x1b\[[0-9;]*[A-Za-z]/g;

const SHELL_TOOLS = new Set([
  'bash',
  'shell',
  'local_shell',
  'run_shell_command',
  'execute_bash',
  'exec_command',
  'container.exec',
  'run_command',
  'terminal',
  'cmd',
  'powershell',
]);
const READ_TOOLS = new Set(['read', 'read_file', 'notebookread', 'view_file', 'open_file', 'read_many_files']);
const EDIT_TOOLS = new Set(['edit', 'multiedit', 'notebookedit', 'replace', 'edit_file', 'str_replace', 'insert', 'search_replace']);
const WRITE_TOOLS = new Set(['write', 'write_file', 'create_file']);
const EDITOR_TOOLS = new Set(['str_replace_editor', 'str_replace_based_edit_tool', 'edit_tool', 'text_editor']);
const TODO_TOOLS = new Set(['todowrite', 'update_plan', 'write_todos', 'todo_write']);
const SEARCH_TOOLS = new Set([
  'grep',
  'glob',
  'search_file_content',
  'glob_files',
  'find_files',
  'list_directory',
  'ls',
  'webfetch',
  'web_fetch',
  'websearch',
  'google_web_search',
]);
const PATH_KEYS = ['file_path', 'absolute_path', 'notebook_path', 'path', 'filename', 'file', 'target_file'] as const;

/** A line fit to quote: reader line-number prefixes stripped; undefined for injected or meta text. */
export function quotable(line: string): string | undefined {
  const stripped = line.replace(LINE_NUMBER, '').trim();
  if (!stripped || (mayBeMeta(stripped) && META_LINE.test(stripped))) return undefined;
  return stripped;
}

/**
 * Whether META_LINE can match `line`: each of its forms holds a `<` or starts the line with `C`,
 * `[`, `B` or `T`. Most lines have neither, and are not run through its many forms (a summary reads
 * every removed line).
 */
function mayBeMeta(line: string): boolean {
  const first = line.charCodeAt(0);
  return first === 67 || first === 91 || first === 66 || first === 84 || line.includes('<');
}

/** Text with injected `<system-reminder>` blocks cut out. */
export function stripReminders(text: string): string {
  // Looked for first: most texts hold none, and the expression would be tried at every `<`.
  return text.includes(REMINDER_START) ? text.replace(REMINDER_BLOCK, '') : text;
}

/** Text with reminders cut out and every line made quotable (meta lines dropped). */
export function cleanText(text: string): string {
  return stripReminders(text)
    .split('\n')
    .map((l) => quotable(l))
    .filter((l): l is string => l !== undefined)
    .join('\n');
}

/** The prose and tool calls of a `tool_call` turn's content. */
export function splitToolCallTurn(content: string): { prose: string[]; calls: { name: string; input: Record<string, unknown> }[] } {
  const prose: string[] = [];
  const calls: { name: string; input: Record<string, unknown> }[] = [];
  for (const line of content.split('\n')) {
    const match = CALL_LINE.exec(line);
    if (match?.[1] && match[2]) {
      try {
        const input: unknown = JSON.parse(match[2]);
        if (input && typeof input === 'object' && !Array.isArray(input)) {
          calls.push({ name: match[1], input: input as Record<string, unknown> });
          continue;
        }
      } catch {
        // prose that happens to look like a call
      }
    }
    prose.push(line);
  }
  return { prose, calls };
}

export function readStructure(turns: readonly ConversationTurn[]): SessionStructure {
  const steps = structureSteps(turns);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/** readStructure, one turn per step (the summarizer runs it paced, so a signal is seen within a slice). */
export function* structureSteps(turns: readonly ConversationTurn[]): Generator<void, SessionStructure> {
  const reader = new StructureReader();
  for (const turn of turns) {
    yield;
    reader.add(turn);
  }
  return reader.result();
}

/** What readStructure gathers, turn by turn. */
class StructureReader {
  private readonly requests: { turnId: string; text: string }[] = [];
  private readonly prose: { turnId: string; role: 'user' | 'assistant'; line: string }[] = [];
  private readonly files = new Map<string, { counts: Record<FileAction, number>; first: number }>();
  private readonly commands: CommandRun[] = [];
  private readonly failures: ToolFailure[] = [];
  private todos: { text: string; status: string }[] = [];
  private lastPlan: { turnId: string; text: string } | undefined;
  private lastWords: { turnId: string; text: string } | undefined;
  private readonly fileOutputTurnIds = new Set<string>();
  /** Tool calls waiting for their results, in order. */
  private readonly pending: ToolCall[] = [];
  private index = 0;

  add(turn: ConversationTurn): void {
    if (turn.type === 'summary' || turn.type === 'refresh') return;
    if (turn.role === 'user' && turn.type !== 'tool_result') this.userTurn(turn);
    else if (turn.role === 'assistant' && turn.type === 'tool_call') this.toolCallTurn(turn);
    else if (turn.type === 'tool_result') this.toolResult(turn);
    else if (turn.role === 'assistant' && (turn.type === 'message' || turn.type === 'plan')) this.assistantMessage(turn);
  }

  result(): SessionStructure {
    const { lastPlan, lastWords } = this;
    return {
      requests: this.requests,
      files: [...this.files].map(([path, v]) => ({ path, counts: v.counts, first: v.first })),
      commands: this.commands,
      ...(lastPlan ? { lastPlan } : {}),
      ...(lastWords ? { lastWords } : {}),
      fileOutputTurnIds: this.fileOutputTurnIds,
      todos: this.todos,
      prose: this.prose,
      failures: this.failures,
    };
  }

  private touch(path: string, action: FileAction, at: number): void {
    const clean = path.trim();
    if (!clean || clean.length > 300 || /\s{2}|\n/.test(clean)) return;
    const entry = this.files.get(clean) ?? { counts: { read: 0, edited: 0, created: 0, deleted: 0 }, first: at };
    entry.counts[action]++;
    this.files.set(clean, entry);
  }

  private addProse(turnId: string, role: 'user' | 'assistant', text: string): void {
    this.addCleanProse(turnId, role, cleanText(text));
  }

  /** addProse of a text already cleaned (cleanText). */
  private addCleanProse(turnId: string, role: 'user' | 'assistant', cleaned: string): void {
    for (const line of cleaned.split('\n')) if (line.length >= 4) this.prose.push({ turnId, role, line });
  }

  /** A request the user typed (slash commands and `!` shell lines included; meta turns left out). */
  private userTurn(turn: ConversationTurn): void {
    const slash = SLASH_COMMAND.exec(turn.content);
    if (slash?.[1]) {
      const text = `${slash[1].trim()} ${(slash[2] ?? '').trim()}`.trim();
      if (text && !/^\/(?:exit|clear|compact|cost|help|status|model|resume|config|login|logout)\b/.test(text)) this.requests.push({ turnId: turn.id, text });
      return;
    }
    if (META_TURN.test(turn.content)) return;
    const bash = BASH_INPUT.exec(turn.content);
    if (bash?.[1]) {
      this.requests.push({ turnId: turn.id, text: `! ${bash[1].trim()}` });
      return;
    }
    const ide = IDE_REQUEST.exec(turn.content);
    const typed = ide ? turn.content.slice((ide.index ?? 0) + ide[0].length) : turn.content;
    const text = cleanText(typed).trim();
    if (!text) return;
    this.requests.push({ turnId: turn.id, text });
    this.addProse(turn.id, 'user', text);
  }

  private toolCallTurn(turn: ConversationTurn): void {
    const { prose: words, calls } = splitToolCallTurn(turn.content);
    const said = words.join('\n').trim();
    if (said) {
      const clean = cleanText(said);
      this.addCleanProse(turn.id, 'assistant', clean);
      const cleaned = clean.trim();
      if (cleaned) this.lastWords = { turnId: turn.id, text: cleaned };
    }
    for (const call of calls) this.toolCall({ ...call, turnId: turn.id, index: this.index++ });
  }

  /** Todo lists, commands and the files a call names. */
  private toolCall(call: ToolCall): void {
    this.pending.push(call);
    const name = call.name.toLowerCase();
    if (TODO_TOOLS.has(name)) {
      const list = todoList(call.input);
      if (list.length > 0) this.todos = list;
    }
    const command = SHELL_TOOLS.has(name) ? shellCommand(call.input) : undefined;
    if (command !== undefined) {
      this.commands.push({ command, turnId: call.turnId, index: call.index });
      for (const path of deletedByShell(command)) this.touch(path, 'deleted', call.index);
      for (const [path, action] of patchFiles(command)) this.touch(path, action, call.index);
    }
    if (name === 'apply_patch') {
      const patch = typeof call.input['input'] === 'string' ? call.input['input'] : typeof call.input['patch'] === 'string' ? call.input['patch'] : '';
      for (const [path, action] of patchFiles(patch)) this.touch(path, action, call.index);
    }
    const path = pathOf(call.input);
    if (path !== undefined) {
      if (READ_TOOLS.has(name)) this.touch(path, 'read', call.index);
      else if (EDIT_TOOLS.has(name)) this.touch(path, 'edited', call.index);
      else if (EDITOR_TOOLS.has(name)) {
        const sub = String(call.input['command'] ?? '');
        this.touch(path, sub === 'view' ? 'read' : sub === 'create' ? 'created' : 'edited', call.index);
      }
    }
    if (name === 'read_many_files' && Array.isArray(call.input['paths'])) {
      for (const p of call.input['paths']) if (typeof p === 'string') this.touch(p, 'read', call.index);
    }
  }

  /** A result answers the oldest pending call: files written, a command's outcome, a failure. */
  private toolResult(turn: ConversationTurn): void {
    const call = this.pending.shift();
    if (!call) return;
    const name = call.name.toLowerCase();
    if (READ_TOOLS.has(name) || SEARCH_TOOLS.has(name) || (EDITOR_TOOLS.has(name) && call.input['command'] === 'view')) this.fileOutputTurnIds.add(turn.id);
    const outcome = outcomeOf(turn.content);
    const path = pathOf(call.input);
    if (WRITE_TOOLS.has(name) && path !== undefined && outcome.failed === false) {
      const existed = this.files.has(path) || /\b(?:updated|overwrote|overwritten)\b/i.test(turn.content.slice(0, 400));
      this.touch(path, existed ? 'edited' : 'created', call.index);
    }
    const run = this.commands.find((c) => c.index === call.index);
    if (run) {
      const at = this.commands.indexOf(run);
      this.commands[at] = { ...run, outcome: outcome.label, ...(outcome.errorLine ? { errorLine: outcome.errorLine } : {}) };
    }
    if (!outcome.failed) return;
    const command = run?.command;
    const what = command !== undefined ? `${call.name}: ${clip(oneLine(command), 160)}` : `${call.name}${path ? ` ${path}` : ''}`;
    this.failures.push({
      index: call.index,
      callTurnId: call.turnId,
      resultTurnId: turn.id,
      what,
      errorLine: outcome.errorLine ?? outcome.label,
      key: command !== undefined ? commandKey(command) : `${name} ${path ?? ''}`,
    });
  }

  private assistantMessage(turn: ConversationTurn): void {
    const clean = cleanText(turn.content);
    this.addCleanProse(turn.id, 'assistant', clean);
    const cleaned = clean.trim();
    if (cleaned) {
      this.lastPlan = { turnId: turn.id, text: cleaned };
      this.lastWords = undefined;
    }
  }
}

/** Did a tool result fail, and its first error line: from the shapes each agent writes. */
export function outcomeOf(content: string): { failed: boolean; label: string; errorLine?: string } {
  const head = headOf(content, 20_000);
  let exit: number | undefined;
  let failed = false;
  let body = head;
  const trimmed = head.trimStart();
  if (trimmed.startsWith('{')) {
    try {
      const value = JSON.parse(content) as Record<string, unknown>;
      if (typeof value['error'] === 'string' && value['error']) {
        failed = true;
        body = value['error'];
      } else {
        const meta = value['metadata'] as Record<string, unknown> | undefined;
        const code = meta?.['exit_code'] ?? value['exit_code'] ?? value['exitCode'];
        if (typeof code === 'number') exit = code;
        if (typeof value['output'] === 'string') body = value['output'];
      }
    } catch {
      // not JSON
    }
  }
  const exitMatch =
    /^Exit code (\d+)/.exec(trimmed) ??
    /^Exit Code: (\d+)$/m.exec(head) ??
    /Process exited with code (\d+)/.exec(head) ??
    /\[Command finished with exit code (\d+)\]/.exec(head) ??
    /\bexit code: (\d+)/.exec(head.slice(0, 400));
  if (exit === undefined && exitMatch?.[1]) exit = Number(exitMatch[1]);
  if (exit !== undefined && exit !== 0) failed = true;
  if (/^\s*<tool_use_error>/.test(head) || (/^Error: (?!\(none\))/m.test(head.slice(0, 200)) && /^(?:Command: |Error: )/m.test(head.slice(0, 200))))
    failed = true;
  if (/^The user doesn't want to proceed with this tool use/.test(trimmed))
    return { failed: true, label: 'rejected by the user', errorLine: 'rejected by the user' };
  if (!failed) return { failed: false, label: exit === 0 ? 'ok' : 'ok' };
  const lines = body.replace(/<\/?tool_use_error>/g, '').split('\n');
  const candidates = lines
    .map((l) => quotable(l.replace(ANSI_ESCAPE, '')))
    .filter(
      (l): l is string =>
        l !== undefined &&
        !/^(?:Exit code \d+|Exit Code: \d+|Command: |Directory: |Signal: |Background PIDs|Process Group PGID|Error: \(none\)|Output: \(empty\))/.test(l),
    );
  const errorLine = candidates.find((l) => ERROR_LINE.test(l)) ?? candidates[0];
  return { failed: true, label: exit !== undefined ? `exit ${exit}` : 'error', ...(errorLine ? { errorLine: clip(errorLine, 200) } : {}) };
}

function todoList(input: Record<string, unknown>): { text: string; status: string }[] {
  const list = input['todos'] ?? input['plan'] ?? input['items'];
  if (!Array.isArray(list)) return [];
  const out: { text: string; status: string }[] = [];
  for (const item of list) {
    if (!item || typeof item !== 'object') continue;
    const record = item as Record<string, unknown>;
    const text = record['content'] ?? record['step'] ?? record['description'] ?? record['title'];
    if (typeof text === 'string' && text.trim()) out.push({ text: text.trim(), status: String(record['status'] ?? 'pending') });
  }
  return out;
}

function pathOf(input: Record<string, unknown>): string | undefined {
  for (const key of PATH_KEYS) {
    const value = input[key];
    if (typeof value === 'string' && value.trim()) return value.trim();
  }
  return undefined;
}

/** The shell command of a call: a string, or an argv (`["bash","-lc","npm test"]` gives `npm test`). */
function shellCommand(input: Record<string, unknown>): string | undefined {
  const command = input['command'] ?? input['cmd'];
  if (typeof command === 'string') return command;
  if (Array.isArray(command) && command.every((c) => typeof c === 'string')) {
    const parts = command as string[];
    if (parts.length === 3 && /(?:^|\/)(?:ba|z|da)?sh$/.test(parts[0] ?? '') && /^-\w*c$/.test(parts[1] ?? '')) return parts[2];
    return parts.join(' ');
  }
  return undefined;
}

/** Files an `rm`/`git rm` in a command deletes (flags and globs left out). */
function deletedByShell(command: string): string[] {
  const out: string[] = [];
  for (const segment of command.split(/&&|\|\||;|\n/)) {
    const match = /^\s*(?:git\s+)?rm\s+(.*)$/.exec(segment);
    if (!match?.[1]) continue;
    for (const word of match[1].split(/\s+/)) if (word && !word.startsWith('-') && !/[*?$`|>]/.test(word)) out.push(word.replace(/^['"]|['"]$/g, ''));
  }
  return out;
}

/** Files an apply_patch text adds, updates or deletes. */
function patchFiles(text: string): [string, FileAction][] {
  const out: [string, FileAction][] = [];
  for (const match of text.matchAll(/^\*\*\* (Add|Update|Delete) File: (.+)$/gm)) {
    const path = match[2]?.trim();
    if (path) out.push([path, match[1] === 'Add' ? 'created' : match[1] === 'Delete' ? 'deleted' : 'edited']);
  }
  return out;
}

/** Two runs are the same command when their first words match (`npm test -- a` ≈ `npm test`). */
export function commandKey(command: string): string {
  return `$ ${command
    .trim()
    .split(/\s+/)
    .filter((w) => !w.startsWith('-'))
    .slice(0, 2)
    .join(' ')}`;
}

export function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ⏎ ').trim();
}
