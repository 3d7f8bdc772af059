import type { AgentCompaction, HistoryTurn } from './agent-history.js';
import { clipLine, headOf } from './text-cut.js';

/**
 * The identifiers of a span of turns that a summary has to keep for the agent not to redo work:
 * file paths, error messages, commands, user instructions, and code names (Letta's "preserve
 * identifiers verbatim"). Pure. Each comes with the words that bring it back through `recall`.
 */

type IdentifierKind = 'file' | 'error' | 'command' | 'instruction' | 'symbol';

export interface Identifier {
  readonly kind: IdentifierKind;
  /** As it appeared (shortened). */
  readonly text: string;
  /** What a summary must contain for the identifier to count as kept (lower case). */
  readonly key: string;
  /** Turns of the span it appears in. */
  readonly occurrences: number;
  /** The first turn it appeared in. */
  readonly turnId: string;
  /** The query that finds it again: `recall` (MCP) or `devs-ctx recall`. */
  readonly recallQuery: string;
}

const MAX_TEXT = 120;
// Every repetition is bounded, so no text (a long base64 run, a minified line) makes matching slow.
const FILE =
  /(?:~|\.{1,2})?\/?(?:[\w@.+-]{1,80}\/){1,12}[\w@+-]{1,80}\.[A-Za-z]\w{0,9}\b|\b[\w-]{1,80}\.(?:ts|tsx|js|mjs|cjs|jsx|json|jsonl|py|rs|go|java|rb|md|toml|yaml|yml|sql|sh|css|html|c|h|cpp|kt|swift)\b/g;
const ERROR_LINE =
  /\b((?:[A-Z]\w{0,40})?(?:Error|Exception)\b:?[^\n\\]{0,100}|error(?:\[\w{1,10}\])?:[^\n\\]{3,100}|FAIL(?:ED)?\b[^\n\\]{3,100}|panicked at[^\n\\]{3,100})/g;
const SYMBOL =
  /\b(?:[a-z]{1,30}(?:[A-Z][a-z0-9]{1,30}){1,6}|[A-Z][a-z0-9]{1,30}(?:[A-Z][a-z0-9]{1,30}){1,6}|[a-z0-9]{1,30}(?:_[a-z0-9]{1,30}){1,6}|[A-Z0-9]{1,30}(?:_[A-Z0-9]{1,30}){1,6})\b/g;
const INSTRUCTION = /[^.!?\n]{0,160}\b(?:always|never|don't|do not|must|make sure|please|should|instead of|avoid|prefer|use)\b[^.!?\n]{0,160}/gi;
/** Longest text scanned per turn: identifiers of a huge tool output are in its head. */
const MAX_SCAN = 50_000;
const STOP = new Set([
  'the',
  'and',
  'that',
  'this',
  'with',
  'from',
  'have',
  'should',
  'must',
  'please',
  'make',
  'sure',
  'always',
  'never',
  'dont',
  'into',
  'your',
  'for',
  'not',
  'are',
  'use',
  'when',
  'then',
  'them',
  'they',
  'what',
  'will',
  'would',
  'could',
  'there',
  'here',
  'also',
  'just',
  'only',
  'instead',
  'avoid',
  'prefer',
]);

/** Distinctive words of a phrase (for instructions and errors, where wording varies). */
function words(text: string): string[] {
  return [...new Set(text.toLowerCase().match(/[a-z0-9_./-]{4,}/g) ?? [])].filter((w) => !STOP.has(w.replace(/'/g, '')));
}

interface Draft {
  kind: IdentifierKind;
  text: string;
  key: string;
  turnId: string;
  turns: Set<string>;
  recallQuery: string;
}

/** Identifiers of the given turns, most frequent first within each kind's weight. */
export function extractIdentifiers(turns: readonly HistoryTurn[]): Identifier[] {
  const found = new Map<string, Draft>();
  const add = (kind: IdentifierKind, text: string, key: string, turn: HistoryTurn, recallQuery = key): void => {
    const k = `${kind}\u0000${key}`;
    const draft = found.get(k);
    if (draft) draft.turns.add(turn.id);
    else found.set(k, { kind, text: clipLine(text, MAX_TEXT), key, turnId: turn.id, turns: new Set([turn.id]), recallQuery });
  };
  for (const turn of turns) {
    const text = turn.text.length > MAX_SCAN ? headOf(turn.text, MAX_SCAN) : turn.text;
    for (const match of text.matchAll(FILE)) {
      const path = match[0].replace(/^\.\//, '');
      if (/^\d|^https?:|\.{3}/.test(path) || path.length < 4) continue;
      const base = path.slice(path.lastIndexOf('/') + 1);
      add('file', path, base.toLowerCase(), turn, base);
    }
    if (turn.kind === 'tool_result' || turn.role === 'assistant') {
      for (const match of text.matchAll(ERROR_LINE)) {
        const line = (match[1] ?? '').trim();
        const key = words(line).slice(0, 3);
        if (key.length === 0) continue;
        add('error', line, key.join(' '), turn);
      }
    }
    if (turn.command) {
      const head = turn.command.trim().split(/\s+/).slice(0, 3).join(' ');
      if (head) add('command', turn.command, head.toLowerCase(), turn, head);
    }
    if (turn.kind === 'prompt') {
      for (const match of text.matchAll(INSTRUCTION)) {
        const sentence = match[0].trim();
        const key = words(sentence).slice(0, 4);
        if (sentence.length < 12 || key.length < 2) continue;
        add('instruction', sentence, key.join(' '), turn);
      }
    }
    if (turn.kind !== 'tool_result') {
      for (const match of text.matchAll(SYMBOL)) {
        const name = match[0];
        if (name.length < 6 || /^\d/.test(name)) continue;
        add('symbol', name, name.toLowerCase(), turn, name);
      }
    }
  }
  const weight: Record<IdentifierKind, number> = { error: 5, instruction: 4, file: 3, command: 2, symbol: 1 };
  return [...found.values()]
    .map((d): Identifier => ({ kind: d.kind, text: d.text, key: d.key, occurrences: d.turns.size, turnId: d.turnId, recallQuery: d.recallQuery }))
    .sort((a, b) => weight[b.kind] - weight[a.kind] || b.occurrences - a.occurrences || a.key.localeCompare(b.key));
}

/** Whether a summary keeps an identifier: its key verbatim, or (errors, instructions) most of its words. */
function keptIn(identifier: Identifier, summaryLower: string): boolean {
  if (identifier.kind === 'error' || identifier.kind === 'instruction') {
    const parts = identifier.key.split(' ');
    const present = parts.filter((w) => summaryLower.includes(w)).length;
    return present * 2 >= parts.length + (parts.length > 1 ? 1 : 0);
  }
  return summaryLower.includes(identifier.key);
}

export interface CompactionAudit {
  readonly index: number;
  readonly line: number;
  readonly timestamp?: string;
  readonly trigger?: string;
  readonly compactedTurns: number;
  /** Tokens of the compacted span (estimate) and the agent's own count where it recorded one. */
  readonly tokensBefore: number;
  readonly recordedTokensBefore?: number;
  /** Tokens of the summary the agent kept. */
  readonly tokensAfter: number;
  readonly identifiers: number;
  readonly kept: readonly Identifier[];
  readonly lost: readonly Identifier[];
  /** kept / identifiers (1 when there were none). */
  readonly keptShare: number;
}

/** Per compaction: what of the compacted span's identifiers its summary kept and lost. */
export function auditCompactions(
  history: { readonly turns: readonly HistoryTurn[]; readonly compactions: readonly AgentCompaction[] },
  count: (text: string) => number,
): CompactionAudit[] {
  return history.compactions.map((c) => {
    const span = history.turns.slice(c.from, c.to);
    const identifiers = extractIdentifiers(span);
    const summaryLower = c.summary.toLowerCase();
    const kept = identifiers.filter((id) => keptIn(id, summaryLower));
    const lost = identifiers.filter((id) => !keptIn(id, summaryLower));
    return {
      index: c.index,
      line: c.line,
      ...(c.timestamp !== undefined ? { timestamp: c.timestamp } : {}),
      ...(c.trigger !== undefined ? { trigger: c.trigger } : {}),
      compactedTurns: span.length,
      tokensBefore: span.reduce((sum, t) => sum + count(t.text), 0),
      ...(c.preTokens !== undefined ? { recordedTokensBefore: c.preTokens } : {}),
      tokensAfter: count(c.summary),
      identifiers: identifiers.length,
      kept,
      lost,
      keptShare: identifiers.length === 0 ? 1 : kept.length / identifiers.length,
    };
  });
}

/** The most useful lookup hints of a span: errors, instructions and files first, then the rest. */
export function lookupHints(turns: readonly HistoryTurn[], limit = 10): Identifier[] {
  const all = extractIdentifiers(turns);
  // One of each kind first, so ten hints are not all file names.
  const picked: Identifier[] = [];
  for (const kind of ['error', 'instruction', 'file', 'command', 'symbol'] as const) {
    const first = all.find((id) => id.kind === kind);
    if (first) picked.push(first);
  }
  for (const id of all) {
    if (picked.length >= limit) break;
    if (!picked.includes(id)) picked.push(id);
  }
  return picked.slice(0, limit);
}
