/**
 * The agent's own history, compactions included: every turn the file still holds (also the ones an
 * agent compacted away) and every compaction with its summary. Claude Code keeps the lines before
 * each `compact_boundary` in the file; Codex keeps the items before each `compacted` record
 * (docs/formats/claude-code.md, docs/formats/codex.md). Pure: it reads parsed records, never the file system.
 */
import { SUMMARY_PREFIX } from './prune/edit.js';

/** One record of the input, as the JSONL reader gives it (only what this module reads). */
export interface HistoryRecord {
  readonly index: number;
  readonly line: number;
  readonly values: readonly unknown[];
}

type HistoryRole = 'user' | 'assistant' | 'tool';

/** One turn of the agent's history. */
export interface HistoryTurn {
  /** The format's own id (Claude Code `uuid`) or `line-N` where it has none. */
  readonly id: string;
  /** 1-based line of the file. */
  readonly line: number;
  readonly role: HistoryRole;
  /** `prompt` for a person's request, `tool_call`/`tool_result`, else `message`. */
  readonly kind: 'prompt' | 'message' | 'tool_call' | 'tool_result';
  readonly timestamp?: string;
  readonly text: string;
  /** Which compaction summarised this turn away (index into `compactions`); undefined: still live. */
  readonly compactedBy?: number;
  /** Tool name, for a tool call. */
  readonly tool?: string;
  /** The shell command, for a shell tool call. */
  readonly command?: string;
}

/** One compaction the agent made. */
export interface AgentCompaction {
  readonly index: number;
  readonly line: number;
  readonly timestamp?: string;
  readonly trigger?: string;
  /** The agent's own count of the context just before (Claude Code `compactMetadata.preTokens`). */
  readonly preTokens?: number;
  /** What the agent kept: its summary (and, for Codex, the replacement history's text). */
  readonly summary: string;
  /** Turns it compacted: `turns.slice(from, to)`. */
  readonly from: number;
  readonly to: number;
}

export interface AgentHistory {
  readonly turns: readonly HistoryTurn[];
  readonly compactions: readonly AgentCompaction[];
}

type Json = Record<string, unknown>;

function isRecord(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** Text of a content value (string or list of blocks) in any of the formats' shapes. */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const parts: string[] = [];
  for (const block of content) {
    if (typeof block === 'string') parts.push(block);
    else if (isRecord(block)) {
      const text = str(block['text']) ?? (block['type'] === 'tool_result' ? contentText(block['content']) : undefined);
      if (text) parts.push(text);
    }
  }
  return parts.join('\n');
}

/** Injected Claude Code user text that is not a person's request (docs/formats/claude-code.md, Traps). */
const INJECTED =
  /^\s*(<command-|<local-command-|<bash-|<system-reminder>|<task-notification>|<agent-notification>|Caveat: The messages below|\[Request interrupted)/;

/** Reads a Claude Code session file's whole history. */
function claudeCodeHistory(records: readonly HistoryRecord[]): AgentHistory {
  const turns: HistoryTurn[] = [];
  const compactions: { index: number; line: number; timestamp?: string; trigger?: string; preTokens?: number; summary: string; from: number }[] = [];
  const push = (turn: HistoryTurn): void => {
    if (turn.text.trim()) turns.push(turn);
  };
  for (const record of records) {
    for (const value of record.values) {
      if (!isRecord(value) || value['isSidechain'] === true) continue;
      const type = value['type'];
      const id = str(value['uuid']) ?? `line-${record.line}`;
      const timestamp = str(value['timestamp']);
      const at = { line: record.line, ...(timestamp !== undefined ? { timestamp } : {}) };
      // devs-ctx's own boundary (a prune's: marked, or carrying its fit, as before the mark) is not one
      // of the agent's compactions; the agent's summary it re-linked after it stays with the agent's.
      if (type === 'system' && value['subtype'] === 'compact_boundary' && (value['devsCtx'] === true || value['devsCtxCalibration'] !== undefined)) continue;
      if (type === 'system' && value['subtype'] === 'compact_boundary') {
        const meta = isRecord(value['compactMetadata']) ? value['compactMetadata'] : {};
        const trigger = str(meta['trigger']);
        const pre = meta['preTokens'];
        compactions.push({
          index: compactions.length,
          ...at,
          ...(trigger !== undefined ? { trigger } : {}),
          ...(typeof pre === 'number' ? { preTokens: pre } : {}),
          summary: '',
          from: 0,
        });
        continue;
      }
      const message = value['message'];
      if ((type !== 'user' && type !== 'assistant') || !isRecord(message)) continue;
      if (type === 'user' && value['isCompactSummary'] === true) {
        // devs-ctx's `[Context Summary]` is no compaction's summary.
        if (contentText(message['content']).startsWith(SUMMARY_PREFIX)) continue;
        const last = compactions[compactions.length - 1];
        if (last) last.summary += `${last.summary ? '\n' : ''}${contentText(message['content'])}`;
        continue;
      }
      if (message['model'] === '<synthetic>') continue;
      const content = message['content'];
      if (type === 'user') {
        if (typeof content === 'string' || !Array.isArray(content) || !content.some((b) => isRecord(b) && b['type'] === 'tool_result')) {
          const text = contentText(content);
          push({ id, ...at, role: 'user', kind: value['isMeta'] === true || INJECTED.test(text) ? 'message' : 'prompt', text });
        } else {
          push({ id, ...at, role: 'tool', kind: 'tool_result', text: contentText(content) });
        }
        continue;
      }
      for (const block of Array.isArray(content) ? content : [content]) {
        if (typeof block === 'string') push({ id, ...at, role: 'assistant', kind: 'message', text: block });
        else if (isRecord(block) && block['type'] === 'text') push({ id, ...at, role: 'assistant', kind: 'message', text: str(block['text']) ?? '' });
        else if (isRecord(block) && block['type'] === 'tool_use') {
          const input = isRecord(block['input']) ? block['input'] : {};
          const name = str(block['name']) ?? 'tool';
          const command = str(input['command']);
          push({
            id,
            ...at,
            role: 'assistant',
            kind: 'tool_call',
            tool: name,
            ...(command !== undefined ? { command } : {}),
            text: `${name} ${JSON.stringify(input)}`,
          });
        }
      }
    }
  }
  return close(turns, compactions);
}

/** Codex: the shell command of a function call's JSON arguments, when there is one. */
function codexCommand(args: unknown): string | undefined {
  if (typeof args !== 'string') return undefined;
  try {
    const parsed: unknown = JSON.parse(args);
    if (!isRecord(parsed)) return undefined;
    const command = parsed['command'] ?? parsed['cmd'];
    if (typeof command === 'string') return command;
    if (Array.isArray(command) && command.every((c) => typeof c === 'string')) {
      // ["bash", "-lc", "npm test"]: the script is what was run.
      const script = command[command.length - 1] as string;
      return command.length >= 3 && /sh$/.test(String(command[0])) ? script : command.join(' ');
    }
  } catch {
    return undefined;
  }
  return undefined;
}

/** Codex user messages that are injected context, not requests (docs/formats/codex.md). */
const CODEX_INJECTED = /^\s*(<environment_context>|<user_instructions>|# AGENTS\.md instructions for|<INSTRUCTIONS>|# Context from my IDE setup:)/;

function codexItem(item: Json, id: string, at: { line: number; timestamp?: string }): HistoryTurn | undefined {
  switch (item['type']) {
    case 'message': {
      const role = item['role'];
      const text = contentText(item['content']);
      if (role === 'user') return { id, ...at, role: 'user', kind: CODEX_INJECTED.test(text) ? 'message' : 'prompt', text };
      if (role === 'assistant') return { id, ...at, role: 'assistant', kind: 'message', text };
      return undefined;
    }
    case 'function_call':
    case 'custom_tool_call':
    case 'local_shell_call': {
      const name = str(item['name']) ?? String(item['type']);
      const args = item['arguments'] ?? item['input'] ?? JSON.stringify(item['action'] ?? {});
      const command = codexCommand(item['arguments']) ?? (isRecord(item['action']) ? codexCommand(JSON.stringify(item['action'])) : undefined);
      return {
        id,
        ...at,
        role: 'assistant',
        kind: 'tool_call',
        tool: name,
        ...(command !== undefined ? { command } : {}),
        text: `${name} ${typeof args === 'string' ? args : JSON.stringify(args)}`,
      };
    }
    case 'function_call_output':
    case 'custom_tool_call_output': {
      const output = item['output'];
      return { id, ...at, role: 'tool', kind: 'tool_result', text: typeof output === 'string' ? output : contentText(output) };
    }
    default:
      return undefined;
  }
}

/** Reads a Codex rollout's whole history. */
function codexHistory(records: readonly HistoryRecord[]): AgentHistory {
  const turns: HistoryTurn[] = [];
  const compactions: { index: number; line: number; timestamp?: string; summary: string; from: number }[] = [];
  for (const record of records) {
    for (const value of record.values) {
      if (!isRecord(value) || !isRecord(value['payload'])) continue;
      const payload = value['payload'];
      const timestamp = str(value['timestamp']);
      const at = { line: record.line, ...(timestamp !== undefined ? { timestamp } : {}) };
      if (value['type'] === 'compacted') {
        const kept = Array.isArray(payload['replacement_history'])
          ? payload['replacement_history'].filter(isRecord).map((item) => codexItem(item, '', at)?.text ?? '')
          : [];
        compactions.push({ index: compactions.length, ...at, summary: [str(payload['message']) ?? '', ...kept].filter((t) => t.trim()).join('\n'), from: 0 });
        continue;
      }
      if (value['type'] !== 'response_item') continue;
      const turn = codexItem(payload, str(payload['id']) ?? `line-${record.line}`, at);
      if (turn?.text.trim()) turns.push(turn);
    }
  }
  return close(turns, compactions);
}

function geminiTurn(message: Json, line: number): HistoryTurn | undefined {
  const id = str(message['id']) ?? `line-${line}`;
  const timestamp = str(message['timestamp']);
  const at = { line, ...(timestamp !== undefined ? { timestamp } : {}) };
  const text = contentText(message['content']);
  if (message['type'] === 'user') return { id, ...at, role: 'user', kind: text.trim().startsWith('/') ? 'message' : 'prompt', text };
  if (message['type'] !== 'gemini') return undefined;
  const calls = Array.isArray(message['toolCalls']) ? message['toolCalls'].filter(isRecord) : [];
  const parts = [
    text,
    ...calls.map(
      (c) =>
        `${str(c['name']) ?? 'tool'} ${JSON.stringify(c['args'] ?? {})}\n${contentText(Array.isArray(c['result']) ? c['result'].map((r) => (isRecord(r) && isRecord(r['functionResponse']) ? JSON.stringify(r['functionResponse']['response'] ?? '') : '')) : [])}`,
    ),
  ];
  const command = calls.map((c) => (isRecord(c['args']) ? str(c['args']['command']) : undefined)).find((c) => c !== undefined);
  return {
    id,
    ...at,
    role: 'assistant',
    kind: calls.length > 0 ? 'tool_call' : 'message',
    ...(command !== undefined ? { command } : {}),
    text: parts.filter((p) => p.trim()).join('\n'),
  };
}

/**
 * Reads a Gemini CLI JSONL session's whole history: message records in file order (a re-appended
 * id is its latest version); a `{"$set":{"messages":[…]}}` checkpoint whose first user message holds
 * a `<state_snapshot>` is a compression, and the checkpoint's text is what it kept (docs/formats/gemini.md).
 */
function geminiHistory(records: readonly HistoryRecord[]): AgentHistory {
  const turns: HistoryTurn[] = [];
  const byId = new Map<string, number>();
  const compactions: { index: number; line: number; timestamp?: string; summary: string; from: number }[] = [];
  for (const record of records) {
    for (const value of record.values) {
      if (!isRecord(value)) continue;
      const set = value['$set'];
      if (isRecord(set) && Array.isArray(set['messages'])) {
        const kept = set['messages'].filter(isRecord);
        const first = kept[0] ? contentText(kept[0]['content']) : '';
        if (!first.includes('<state_snapshot>')) continue;
        const timestamp = kept[0] ? str(kept[0]['timestamp']) : undefined;
        compactions.push({
          index: compactions.length,
          line: record.line,
          ...(timestamp !== undefined ? { timestamp } : {}),
          summary: kept.map((m) => geminiTurn(m, record.line)?.text ?? '').join('\n'),
          from: 0,
        });
        continue;
      }
      if (typeof value['id'] !== 'string' || (value['type'] !== 'user' && value['type'] !== 'gemini')) continue;
      const turn = geminiTurn(value, record.line);
      if (!turn?.text.trim()) continue;
      const at = byId.get(turn.id);
      if (at !== undefined && (turns[at]?.line ?? 0) > (compactions[compactions.length - 1]?.line ?? 0))
        turns[at] = { ...turn, line: turns[at]?.line ?? turn.line };
      else {
        byId.set(turn.id, turns.length);
        turns.push(turn);
      }
    }
  }
  return close(turns, compactions);
}

/** Marks each turn with the compaction that came after it and sets each compaction's span. */
function close(
  turns: HistoryTurn[],
  compactions: readonly { index: number; line: number; timestamp?: string; trigger?: string; preTokens?: number; summary: string }[],
): AgentHistory {
  const out: AgentCompaction[] = [];
  let start = 0;
  for (const c of compactions) {
    let end = start;
    while (end < turns.length && (turns[end]?.line ?? Infinity) < c.line) end++;
    for (let i = start; i < end; i++) turns[i] = { ...(turns[i] as HistoryTurn), compactedBy: c.index };
    out.push({ ...c, from: start, to: end });
    start = end;
  }
  return { turns, compactions: out };
}

/** The history of a Claude Code, Codex or Gemini CLI (JSONL) session file; other formats have no compaction record to read. */
export function readAgentHistory(records: readonly HistoryRecord[], format: string): AgentHistory {
  if (format === 'claude-code') return claudeCodeHistory(records);
  if (format === 'codex') return codexHistory(records);
  if (format === 'gemini') return geminiHistory(records);
  return { turns: [], compactions: [] };
}
