import { createHash } from 'node:crypto';
import { closeSync, constants, fstatSync, openSync, readFileSync } from 'node:fs';
import type { TextTokenCounter } from '../core/accounting.js';
import { countEntries } from '../core/accounting.js';
import { readAgentHistory } from '../core/agent-history.js';
import type { AgentHistory, HistoryTurn } from '../core/agent-history.js';
import { lookupHints } from '../core/identifiers.js';
import type { Identifier } from '../core/identifiers.js';
import { formatRefresh } from '../core/refresh/context-refresher.js';
import type { Transcript } from '../core/transcript.js';
import { readTranscript } from '../formats/index.js';
import type { Archive } from '../archive/archive.js';
import type { PruneEventInput, PruneEventSummary } from '../archive/records.js';
import { archivedTurns } from '../archive/prune-event.js';
import { InputError } from '../core/errors.js';
import { fileKind } from '../io/input.js';
import { parseDocument } from '../io/jsonl.js';
import type { ParsedDocument } from '../io/jsonl.js';
import type { AgentName } from '../io/agent-sessions.js';
import type { PinnedDocument } from '../io/project-docs.js';
import { headOf } from '../core/text-cut.js';

/** What devs-ctx knows of one agent session file: the active window and the whole history. */
export interface AgentSession {
  readonly path: string;
  readonly bytes: Buffer;
  readonly doc: ParsedDocument;
  readonly transcript: Transcript;
  readonly history: AgentHistory;
}

/** Reads a session file whole (bytes kept, so it can be archived exactly as it is). */
export function loadAgentSession(path: string): AgentSession {
  const bytes = readSessionFile(path);
  const doc = parseDocument(bytes, { path, keepRaw: true });
  const transcript = readTranscript(doc);
  return { path, bytes, doc, transcript, history: readAgentHistory(doc.records, transcript.format) };
}

/**
 * A session file's bytes: a regular file only. A hook's `transcript_path` is the agent's word, not
 * checked by anyone: `/dev/zero` would be read until memory ran out, and a FIFO waited on for good.
 */
function readSessionFile(path: string): Buffer {
  // Non-blocking: opening a FIFO no one writes returns at once (a regular file reads as usual).
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new InputError(`${path}: is ${fileKind(stat)}, not a session file`);
    return readFileSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** The strategy a compaction event is archived under (a prune's is recency or relevance). */
const COMPACTION_STRATEGY = 'compaction';

/**
 * Archives the session's current window before the agent compacts it [issue 17]: one `compaction`
 * event holding every turn of the active context, indexed for search. The file is not changed, so
 * the event's output is the input itself. An unchanged file already archived is not archived twice.
 */
export async function archiveWindow(
  store: Archive,
  session: AgentSession,
  options: { readonly trigger: string; readonly counter: TextTokenCounter; readonly now?: Date },
): Promise<{ eventId: string; turns: number; tokens: number; alreadyArchived: boolean }> {
  const { doc, transcript } = session;
  const sha = createHash('sha256').update(session.bytes).digest('hex');
  // One id per file and content: two hooks archiving the same window at once (installed for the
  // project and the user) make one event, the second's insert refused as already there.
  const eventId = compactionEventId(session.path, sha);
  const already = async (): Promise<PruneEventSummary | undefined> =>
    (await store.getEvent(eventId)) ??
    (await store.listEvents({ sourcePath: session.path, limit: 20 })).find((e) => e.strategy === COMPACTION_STRATEGY && e.original.sha256 === sha);
  const previous = await already();
  if (previous) return { eventId: previous.id, turns: previous.removedTurnCount, tokens: previous.tokensBefore, alreadyArchived: true };
  const tokens = countEntries(transcript.entries, options.counter);
  const total = tokens.reduce((sum, t) => sum + t.total, 0);
  const event: PruneEventInput = {
    id: eventId,
    createdAt: (options.now ?? new Date()).toISOString(),
    sourcePath: session.path,
    format: transcript.format,
    strategy: COMPACTION_STRATEGY,
    targetTokens: 0,
    urgency: options.trigger,
    tokensBefore: total,
    tokensAfter: total,
    removedTurnCount: transcript.entries.length,
    maskedTurnCount: 0,
    tokensSaved: 0,
    input: doc,
    output: { records: doc.records.map((r) => ({ from: r.index })), bytes: session.bytes },
    turns: archivedTurns(
      transcript.entries,
      tokens.map((t) => t.total),
      transcript.entries.map((_, i) => i),
      () => 'dropped',
    ),
  };
  try {
    // The window overwrites nothing: a commit that cannot be synced is kept (synced when the archive's
    // last connection closes, as before) rather than taken out, which would leave the compaction unarchived.
    await store.recordPrune(event, { keepUnsynced: true });
  } catch (error) {
    // Another hook archived this very window meanwhile: its event stands.
    const meanwhile = await already();
    if (meanwhile) return { eventId: meanwhile.id, turns: meanwhile.removedTurnCount, tokens: meanwhile.tokensBefore, alreadyArchived: true };
    throw error;
  }
  // The SQLite store indexes new turns at the next search, PostgreSQL as it writes them: either way a
  // recall right after this finds them.
  return { eventId, turns: transcript.entries.length, tokens: total, alreadyArchived: false };
}

/** A compaction event's id: UUID-shaped, from the session file's path and content (see archiveWindow). */
function compactionEventId(path: string, sha: string): string {
  const h = createHash('sha256').update(`${path}\0${sha}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

/**
 * Whether the agent's latest compaction was archived before it happened [issue 17]: a `compaction`
 * event of this file whose bytes are the file's first bytes, every line of the compacted turns
 * among them (the agent appends to its session file, and the hook archived the file as it was
 * then). Undefined when the file records no compaction; false with no archive (`store` undefined).
 */
export async function lastCompactionArchived(store: Archive | undefined, session: AgentSession): Promise<boolean | undefined> {
  const last = session.history.compactions[session.history.compactions.length - 1];
  if (!last) return undefined;
  if (!store) return false;
  const span = lastCompactedSpan(session.history);
  const lastLine = span.length > 0 ? Math.max(...span.map((t) => t.line)) : last.line - 1;
  const covered = lineEnd(session.bytes, lastLine);
  const events = await store.listEvents({ sourcePath: session.path, limit: 50 });
  return events.some(
    (e) =>
      e.strategy === COMPACTION_STRATEGY &&
      e.original.length >= covered &&
      e.original.length <= session.bytes.length &&
      createHash('sha256').update(session.bytes.subarray(0, e.original.length)).digest('hex') === e.original.sha256,
  );
}

/** Where line `line` (1-based) of `bytes` ends, its line break included (0 for line 0). */
function lineEnd(bytes: Buffer, line: number): number {
  let at = 0;
  for (let k = 0; k < line; k++) {
    const next = bytes.indexOf(0x0a, at);
    if (next < 0) return bytes.length;
    at = next + 1;
  }
  return at;
}

/** The turns the agent's latest compaction summarised (the span just before its last boundary). */
function lastCompactedSpan(history: AgentHistory): readonly HistoryTurn[] {
  const last = history.compactions[history.compactions.length - 1];
  return last ? history.turns.slice(last.from, last.to) : [];
}

/** The `[CONTEXT REFRESH]` text of the project's pinned documents, each cut to its share of `maxChars`. */
export function pinnedRefresh(docs: readonly PinnedDocument[], maxChars: number): string {
  if (docs.length === 0) return '';
  const share = Math.max(200, Math.floor(maxChars / Math.max(2, docs.length)));
  const cut = (text: string): string => (text.length > share ? `${headOf(text, share - 1).trimEnd()}…` : text.trim());
  const tas = docs.find((d) => d.kind === 'tas');
  const prd = docs.find((d) => d.kind === 'prd');
  const others = docs.filter((d) => d.kind !== 'tas' && d.kind !== 'prd');
  const head = formatRefresh(tas ? cut(tas.text) : '(no TAS in the project)', prd ? cut(prd.text) : '(no PRD in the project)');
  return [head, ...others.map((d) => `## ${d.kind[0]?.toUpperCase()}${d.kind.slice(1)} (${d.path})\n${cut(d.text)}`)].join('\n\n');
}

/** One line per lookup hint, with the recall query that brings it back. */
function renderHints(hints: readonly Identifier[]): string {
  return hints.map((h) => `- ${h.kind}: ${h.text}  (recall "${h.recallQuery}")`).join('\n');
}

/**
 * The re-grounding an agent gets right after it compacted: its pinned documents' refresh, the ten
 * most useful lookup hints of what it just summarised, and how to get any of it back.
 */
export function regrounding(input: {
  readonly agent: AgentName;
  readonly history: AgentHistory;
  readonly docs: readonly PinnedDocument[];
  /** Whether devs-ctx archived the window before this compaction (undefined: not known). */
  readonly archived: boolean | undefined;
}): string {
  const span = lastCompactedSpan(input.history);
  const hints = lookupHints(span.length > 0 ? span : input.history.turns, 10);
  const parts = [
    input.archived === true
      ? '[devs-ctx] Your context was just compacted. What the summary may have dropped is archived and searchable.'
      : input.archived === false
        ? '[devs-ctx] Your context was just compacted, and devs-ctx could not archive it first: what the summary dropped is searchable only where the session file still holds it.'
        : '[devs-ctx] Your context was just compacted. What devs-ctx archived before compactions is searchable.',
  ];
  const refresh = pinnedRefresh(input.docs, 6000);
  if (refresh) parts.push(refresh);
  if (hints.length > 0) parts.push(`Lookup hints from the compacted turns:\n${renderHints(hints)}`);
  parts.push(
    'The devs-ctx MCP tool `recall` (query: words, a file name, an error) finds any earlier turn, archived or compacted, and `get_turn` reads one back whole; `pinned_context` gives the project documents again.',
  );
  return parts.join('\n\n');
}
