import type { ParsedDocument } from '../../io/jsonl.js';
import { isEnvelope } from './envelope.js';
import { ANSWERED_CALLS, rolloutHistory, type RolloutHistoryItem } from './read.js';
import { isRecord, str, type JsonObject } from '../shared/json.js';
import type { FormatWriter, OutputRecord, RefreshAppend, Transcript, TranscriptEdit } from '../types.js';

/**
 * Writes an edit of a Codex rollout the way Codex compacts a thread itself: every input line kept, a
 * `compacted` record with the pruned `replacement_history` appended (docs/formats/codex.md).
 */

/** `output` values Codex accepts for every `*_output` item; a content list stays a list. */
function maskedOutput(output: unknown, placeholder: string): unknown {
  return Array.isArray(output) ? [{ type: 'input_text', text: placeholder }] : placeholder;
}

function sourceKey(record: number, path: string | undefined): string {
  return `${record}\u0000${path ?? ''}`;
}

/** The Responses API item for one history item, after the edit (undefined when dropped). */
function editedItem(slot: RolloutHistoryItem, entry: number | undefined, edit: TranscriptEdit): JsonObject | undefined {
  if (entry !== undefined && edit.dropped.has(entry)) return undefined;
  const placeholder = entry !== undefined ? edit.masked.get(entry) : undefined;
  if (placeholder !== undefined) {
    const kind = str(slot.item['type']) ?? '';
    if (!kind.endsWith('_output') || !('output' in slot.item)) {
      // tool_search_output carries tool definitions (`tools`), not text: masking them would take the tools away.
      throw new Error(`codex writer: entry ${entry} (${kind}) has no \`output\` to mask`);
    }
    return { ...slot.item, output: maskedOutput(slot.item['output'], placeholder) };
  }
  if (slot.summary) {
    // A summary Codex rebuilt from an old `compacted.message`: written out as the message it stands for.
    const text = str(slot.item['content']) ?? '';
    return { type: 'message', role: 'user', content: [{ type: 'input_text', text }] };
  }
  return slot.item;
}

function summaryItem(text: string): JsonObject {
  return { type: 'message', role: 'user', content: [{ type: 'input_text', text }] };
}

/** `ordinal` of the last rollout record, when the build numbers its lines. */
function lastOrdinal(doc: ParsedDocument): number | undefined {
  for (let r = doc.records.length - 1; r >= 0; r--) {
    const values = doc.records[r]?.values ?? [];
    const value = values[values.length - 1];
    if (isEnvelope(value)) return typeof value['ordinal'] === 'number' ? value['ordinal'] : undefined;
  }
  return undefined;
}

function write(doc: ParsedDocument, transcript: Transcript, edit: TranscriptEdit): OutputRecord[] {
  if (doc.kind !== 'jsonl') throw new Error('codex writer: a Codex rollout is JSONL; this is one JSON document');
  const kept: OutputRecord[] = doc.records.map((r) => ({ from: r.index }));
  if (edit.dropped.size === 0 && edit.masked.size === 0 && !edit.summary) return kept;

  const history = rolloutHistory(doc);
  const slotOf = new Map<string, number>();
  history.forEach((slot, i) => {
    slotOf.set(sourceKey(slot.record, slot.path), i);
  });
  /** entry index of each history item that is an entry. */
  const entryOf = new Map<number, number>();
  transcript.entries.forEach((entry, i) => {
    const slot = slotOf.get(sourceKey(entry.source.records[0] ?? -1, entry.source.path));
    if (slot !== undefined) {
      entryOf.set(slot, i);
    } else if (edit.dropped.has(i) || edit.masked.has(i)) {
      throw new Error(
        `codex writer: entry ${i} (${entry.source.path ?? 'no path'}) is not part of the history (the session_meta system prompt is sent beside it) and cannot be dropped or masked`,
      );
    }
  });

  const replacement: JsonObject[] = [];
  let summaryPlaced = false;
  history.forEach((slot, i) => {
    const entry = entryOf.get(i);
    if (edit.summary && !summaryPlaced && entry !== undefined && entry >= edit.summary.at) {
      replacement.push(summaryItem(edit.summary.text));
      summaryPlaced = true;
    }
    const item = editedItem(slot, entry, edit);
    if (item) replacement.push(item);
  });
  if (edit.summary && !summaryPlaced) replacement.push(summaryItem(edit.summary.text));

  const ordinal = lastOrdinal(doc);
  const numbered = (n: number): { ordinal?: number } => (ordinal !== undefined ? { ordinal: ordinal + n } : {});
  const compacted = {
    timestamp: edit.now,
    ...numbered(1),
    type: 'compacted',
    payload: { message: edit.summary?.text ?? '', replacement_history: replacement },
  };
  const event = { timestamp: edit.now, ...numbered(2), type: 'event_msg', payload: { type: 'context_compacted' } };
  return [...kept, { text: JSON.stringify(compacted) }, { text: JSON.stringify(event) }];
}

/** Output kinds and the call kinds they answer (Codex pairs a local shell call with a function_call_output). */
const ANSWERS: Readonly<Record<string, readonly string[]>> = {
  function_call_output: ['function_call', 'local_shell_call'],
  custom_tool_call_output: ['custom_tool_call'],
  tool_search_output: ['tool_search_call'],
};

/**
 * Problems with the pairs of the final history: an output needs an earlier call of its kind with
 * its `call_id` (the API rejects it otherwise), and a call needs an output, except a call no
 * message follows: a session cut off mid-call, which Codex answers as aborted on resume.
 */
function pairProblems(history: readonly RolloutHistoryItem[]): string[] {
  const problems: string[] = [];
  const calls = new Map<string, Set<string>>();
  const answered = new Set<string>();
  history.forEach((slot, i) => {
    const kind = str(slot.item['type']) ?? '';
    const callId = str(slot.item['call_id']);
    if (callId === undefined) return;
    if (ANSWERED_CALLS.has(kind)) {
      const kinds = calls.get(callId) ?? new Set<string>();
      kinds.add(kind);
      calls.set(callId, kinds);
    } else if (kind.endsWith('_output')) {
      const wanted = ANSWERS[kind];
      const kinds = calls.get(callId);
      const matched = kinds !== undefined && (wanted === undefined || wanted.some((k) => kinds.has(k)));
      if (!matched) problems.push(`history item ${i}: ${kind} for call ${callId} has no earlier call`);
      else answered.add(callId);
    }
  });
  const lastMessage = history.findLastIndex((slot) => slot.item['type'] === 'message');
  history.forEach((slot, i) => {
    const kind = str(slot.item['type']) ?? '';
    const callId = str(slot.item['call_id']);
    if (!ANSWERED_CALLS.has(kind) || callId === undefined || answered.has(callId)) return;
    if (i > lastMessage) return;
    problems.push(`history item ${i}: ${kind} ${callId} has no output`);
  });
  return problems;
}

/** What Codex needs of an item to read the `compacted` record at all (one bad item loses the whole list). */
function itemProblems(item: unknown, where: string): string[] {
  if (!isRecord(item) || typeof item['type'] !== 'string') return [`${where} is not a Responses API item (an object with a type)`];
  const kind = item['type'];
  if (kind === 'message') {
    const problems: string[] = [];
    if (typeof item['role'] !== 'string') problems.push(`${where}: message without a role`);
    if (!Array.isArray(item['content'])) problems.push(`${where}: message content is not a list of parts`);
    return problems;
  }
  if ((ANSWERED_CALLS.has(kind) && kind !== 'local_shell_call') || kind.endsWith('_output')) {
    if (typeof item['call_id'] !== 'string') return [`${where}: ${kind} without a call_id`];
  }
  if (kind === 'function_call_output' || kind === 'custom_tool_call_output') {
    if (!('output' in item)) return [`${where}: ${kind} without an output`];
  }
  return [];
}

function validate(doc: ParsedDocument, _transcript: Transcript): string[] {
  if (doc.kind !== 'jsonl') return ['a Codex rollout is JSONL, not one JSON document'];
  const problems: string[] = [];
  const first = doc.records.find((r) => !r.blank);
  const meta = first?.values[0];
  if (first?.values.length !== 1 || !isEnvelope(meta) || meta.type !== 'session_meta') {
    problems.push('the first line is not a session_meta record (Codex reads the session from it)');
  }
  for (const record of doc.records) {
    for (const value of record.values) {
      // Lines that are not rollout records at all are skipped by Codex (and kept by the writer);
      // a record must be complete, or Codex drops it.
      if (!isRecord(value) || !('type' in value || 'payload' in value)) continue;
      if (typeof value['timestamp'] !== 'string') problems.push(`line ${record.line}: rollout record without a string timestamp`);
      if (typeof value['type'] !== 'string') problems.push(`line ${record.line}: rollout record without a string type`);
      if (!isRecord(value['payload'])) problems.push(`line ${record.line}: rollout record without an object payload`);
      if (value['type'] !== 'compacted' || !isRecord(value['payload'])) continue;
      const payload = value['payload'];
      if ('message' in payload && typeof payload['message'] !== 'string') problems.push(`line ${record.line}: compacted message is not a string`);
      const replacement = payload['replacement_history'];
      if (replacement === undefined || replacement === null) continue;
      if (!Array.isArray(replacement)) {
        problems.push(`line ${record.line}: compacted replacement_history is not a list`);
        continue;
      }
      replacement.forEach((item, i) => {
        problems.push(...itemProblems(item, `line ${record.line}: replacement_history[${i}]`));
      });
    }
  }
  problems.push(...pairProblems(rolloutHistory(doc)));
  return problems;
}

export const codexWriter: FormatWriter = { name: 'codex', write, validate, appendRefresh };

/**
 * A refresh in a Codex rollout: a user `message` response item appended (the
 * conversation is the response items; a `developer` message would read as pinned context and never
 * be pruned). Every existing line stays byte-identical.
 */
function appendRefresh(doc: ParsedDocument, _transcript: Transcript, refresh: RefreshAppend): OutputRecord[] {
  const item = {
    timestamp: refresh.now,
    type: 'response_item',
    payload: { type: 'message', role: 'user', content: [{ type: 'input_text', text: refresh.text }] },
  };
  return [...doc.records.map((r) => ({ from: r.index })), { text: JSON.stringify(item) }];
}
