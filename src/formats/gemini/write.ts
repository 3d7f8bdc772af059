import type { ParsedDocument } from '../../io/jsonl.js';
import type { FormatWriter, OutputRecord, RefreshAppend, Transcript, TranscriptEdit, TranscriptEntry } from '../types.js';
import { geminiMessageSlots, isHeader, isLegacyDocument, isSetPatch, resultText, type MessageSlot } from './read.js';
import { isNoOp, refreshAsEdit } from '../shared/edit.js';
import { isRecord, type JsonObject } from '../shared/json.js';

/**
 * Gemini CLI writer: the resolved message list pruned at the record level, appended as a `$set.messages`
 * checkpoint (JSONL) or written into the legacy document (docs/formats/gemini.md).
 */

/** What one entry is, inside the message its slot holds. */
type Part = { readonly kind: 'text' } | { readonly kind: 'call' | 'result'; readonly call: number };

interface SlotEntries {
  text?: number;
  /** toolCalls index → its call and result entries. */
  readonly calls: Map<number, { call?: number; result?: number }>;
  /** Every entry index of the slot, in order. */
  readonly all: number[];
}

const TOOL_PATH = /^(?:(.*)\.)?toolCalls\[(\d+)\](\.result)?$/;

export const geminiWriter: FormatWriter = {
  name: 'gemini',
  appendRefresh,

  write(doc, transcript, edit) {
    if (isNoOp(edit)) return doc.records.map((r) => ({ from: r.index }));
    const slots = geminiMessageSlots(doc);
    const messages = prunedMessages(slots, transcript, edit);

    if (doc.kind === 'json-document') {
      if (!isRecord(doc.document)) throw new Error('gemini writer: the document is not a JSON object');
      return [{ text: JSON.stringify(withMessages(doc.document, messages, edit.now), null, 2) }];
    }

    const lines = doc.records.filter((r) => !r.blank);
    const only = lines.length === 1 ? lines[0] : undefined;
    const sole = only?.values.length === 1 ? only.values[0] : undefined;
    if (only && isLegacyDocument(sole)) {
      // A legacy document written on one line: keep it one (legacy) document, rewritten in place.
      return doc.records.map(
        (r): OutputRecord => (r.index === only.index ? { text: JSON.stringify(withMessages(sole, messages, edit.now)), replaces: r.index } : { from: r.index }),
      );
    }

    const header = doc.records.flatMap((r) => r.values).find((v) => isRecord(v) && isHeader(v));
    const set: JsonObject = { messages };
    if (isRecord(header) && 'lastUpdated' in header) set['lastUpdated'] = edit.now;
    return [...doc.records.map((r): OutputRecord => ({ from: r.index })), { text: JSON.stringify({ $set: set }) }];
  },

  validate(doc, transcript) {
    const problems: string[] = [];
    if (doc.kind === 'json-document') {
      if (!isLegacyDocument(doc.document)) problems.push('the document is not a Gemini CLI session (no messages list)');
    } else {
      const lines = doc.records.filter((r) => !r.blank);
      const first = lines[0];
      const head = first?.values.length === 1 ? first.values[0] : undefined;
      // Without a header Gemini CLI falls back to the legacy parser, which cannot read JSONL.
      if (!isRecord(head) || !(isHeader(head) || (isLegacyDocument(head) && typeof head['sessionId'] === 'string'))) {
        problems.push(`line ${first?.line ?? 1}: the first line is not a session header {sessionId, projectHash, …}`);
      }
      const last = lines[lines.length - 1];
      // Gemini skips unparseable lines, but the last one is where a written checkpoint ends up.
      if (last && last.values.length === 0) problems.push(`line ${last.line}: the last line does not parse`);
    }
    for (const [where, ids] of finalLists(doc)) {
      const seen = new Set<string>();
      for (const id of ids) {
        if (seen.has(id)) problems.push(`${where}: message id ${id} appears twice`);
        seen.add(id);
      }
    }

    const slots = geminiMessageSlots(doc);
    const ids = new Set<string>();
    slots.forEach((slot, n) => {
      const { message } = slot;
      const id = message['id'];
      const where = `message ${typeof id === 'string' ? id : `#${n}`} (line ${slot.line})`;
      if (typeof id !== 'string' || id === '') problems.push(`${where}: no id`);
      else if (ids.has(id)) problems.push(`${where}: id appears twice in the message list`);
      else ids.add(id);
      if (typeof message['type'] !== 'string') problems.push(`${where}: no type`);
      const toolCalls = message['toolCalls'];
      if (toolCalls === undefined) return;
      if (!Array.isArray(toolCalls)) {
        problems.push(`${where}: toolCalls is not a list`);
        return;
      }
      // The last message may still be running its tools: Gemini records results when they finish.
      const inFlight = n === slots.length - 1;
      toolCalls.forEach((call, i) => {
        if (!isRecord(call)) {
          problems.push(`${where}: toolCalls[${i}] is not an object`);
          return;
        }
        const callId = call['id'];
        if (typeof callId !== 'string' || callId === '') problems.push(`${where}: toolCalls[${i}] has no id`);
        if (typeof call['name'] !== 'string' || call['name'] === '') problems.push(`${where}: toolCalls[${i}] has no name`);
        if (resultText(call['result']) === undefined) {
          if (!inFlight) problems.push(`${where}: tool call ${String(callId)} has no result`);
          return;
        }
        for (const response of functionResponses(call['result'])) {
          if (typeof response['id'] === 'string' && typeof callId === 'string' && response['id'] !== callId) {
            problems.push(`${where}: tool call ${callId} is answered by a functionResponse for ${response['id']}`);
          }
        }
      });
    });
    for (const issue of transcript.issues) {
      if (issue.severity === 'error') problems.push(`line ${issue.line}: ${issue.reason}`);
    }
    return problems;
  },
};

/** The message lists whose ids must be unique as written: the legacy document's, and the last checkpoint. */
function finalLists(doc: ParsedDocument): Array<[string, string[]]> {
  const idsOf = (list: unknown[]): string[] => list.flatMap((m) => (isRecord(m) && typeof m['id'] === 'string' ? [m['id']] : []));
  if (doc.kind === 'json-document') {
    return isLegacyDocument(doc.document) ? [['messages', idsOf(doc.document['messages'] as unknown[])]] : [];
  }
  let last: [string, string[]] | undefined;
  for (const record of doc.records) {
    for (const value of record.values) {
      if (!isRecord(value)) continue;
      if (isSetPatch(value) && Array.isArray(value.$set['messages'])) last = [`line ${record.line} $set.messages`, idsOf(value.$set['messages'])];
      else if (isLegacyDocument(value)) last = [`line ${record.line} messages`, idsOf((value as JsonObject)['messages'] as unknown[])];
    }
  }
  return last ? [last] : [];
}

function functionResponses(result: unknown): JsonObject[] {
  const parts = Array.isArray(result) ? result : [result];
  return parts.flatMap((p) => (isRecord(p) && isRecord(p['functionResponse']) ? [p['functionResponse']] : []));
}

/** The document with `messages` replaced (and `lastUpdated` moved to now, as every Gemini save does); key order kept. */
function withMessages(document: JsonObject, messages: JsonObject[], now: string): JsonObject {
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(document)) {
    out[key] = key === 'messages' ? messages : key === 'lastUpdated' ? now : value;
  }
  return out;
}

/** Which slot and which part of it each entry is, from its source path (and id, for glued lines). */
function locateEntries(slots: readonly MessageSlot[], entries: readonly TranscriptEntry[]): SlotEntries[] {
  const slotKey = (record: number, path: string, id: string): string => `${record}\u0000${path}\u0000${id}`;
  const byKey = new Map<string, number>();
  slots.forEach((slot, n) => {
    const id = typeof slot.message['id'] === 'string' ? slot.message['id'] : `record-${slot.record}`;
    byKey.set(slotKey(slot.record, slot.path, id), n);
  });
  const located: SlotEntries[] = slots.map(() => ({ calls: new Map(), all: [] }));
  entries.forEach((entry, index) => {
    const path = entry.source.path ?? '';
    const tool = TOOL_PATH.exec(path);
    const part: Part = tool ? { kind: tool[3] ? 'result' : 'call', call: Number(tool[2]) } : { kind: 'text' };
    const slotPath = tool ? (tool[1] ?? '') : path;
    // The adapter names a record's turns `${id}`, `${id}#call${i}` and `${id}#result${i}`.
    const suffix = part.kind === 'text' ? '' : `#${part.kind}${part.call}`;
    const id = entry.turn.id.endsWith(suffix) ? entry.turn.id.slice(0, entry.turn.id.length - suffix.length) : entry.turn.id;
    const n = byKey.get(slotKey(entry.source.records[0] ?? -1, slotPath, id));
    const slot = n === undefined ? undefined : located[n];
    if (!slot) throw new Error(`gemini writer: entry ${index} (${entry.turn.id}) matches no message of the document`);
    slot.all.push(index);
    if (part.kind === 'text') {
      slot.text = index;
      return;
    }
    const pair = slot.calls.get(part.call) ?? {};
    if (part.kind === 'call') pair.call = index;
    else pair.result = index;
    slot.calls.set(part.call, pair);
  });
  return located;
}

/** The message list after the edit: records removed, calls removed, results masked, the summary placed. */
function prunedMessages(slots: readonly MessageSlot[], transcript: Transcript, edit: TranscriptEdit): JsonObject[] {
  const located = locateEntries(slots, transcript.entries);
  for (const index of edit.masked.keys()) {
    if (transcript.entries[index]?.turn.type !== 'tool_result') throw new Error(`gemini writer: entry ${index} is masked but is not a tool result`);
  }
  const kept = (index: number | undefined): boolean => index !== undefined && !edit.dropped.has(index);

  // The summary goes right before the first kept entry after the removed ones (or at the end).
  let firstAfter: number | undefined;
  if (edit.summary) {
    const at = edit.summary.at;
    firstAfter = transcript.entries.findIndex((_, i) => i > at && kept(i));
    if (firstAfter < 0) firstAfter = undefined;
  }
  const summaryRecord = (text: string): JsonObject => ({ id: edit.newId(), timestamp: edit.now, type: 'user', content: [{ text }] });

  const out: JsonObject[] = [];
  let summaryPlaced = false;
  slots.forEach((slot, n) => {
    const where: SlotEntries = located[n] ?? { calls: new Map(), all: [] };
    const message = slot.message;
    // Records that produced entries and lost them all leave; records that produced none pass through.
    if (where.all.length > 0 && where.all.every((i) => !kept(i))) return;

    // The summary belongs inside this record when its first kept entry after the removed ones is
    // here: before the whole record if that entry is the record's first kept one, else between the
    // record's earlier parts and its calls from that entry on (the record is split).
    const split = edit.summary && !summaryPlaced && firstAfter !== undefined && where.all.includes(firstAfter) ? firstAfter : undefined;
    const firstKept = where.all.find((i) => kept(i));
    if (split !== undefined && split === firstKept && edit.summary) {
      out.push(summaryRecord(edit.summary.text));
      summaryPlaced = true;
    }

    const rewritten: JsonObject = { ...message };
    if (where.text !== undefined && !kept(where.text)) rewritten['content'] = '';
    const toolCalls = message['toolCalls'];
    if (!Array.isArray(toolCalls)) {
      out.push(rewritten);
      return;
    }
    const before: unknown[] = [];
    const after: unknown[] = [];
    toolCalls.forEach((call, i) => {
      const pair = where.calls.get(i);
      // A call and its result leave together: they are one toolCalls entry.
      if (pair && ((pair.call !== undefined && !kept(pair.call)) || (pair.result !== undefined && !kept(pair.result)))) return;
      const masked = pair?.result === undefined ? undefined : edit.masked.get(pair.result);
      const written = masked !== undefined && isRecord(call) ? maskedCall(call, masked) : call;
      const inSecondHalf = split !== undefined && !summaryPlaced && pair?.call !== undefined && pair.call >= split;
      (inSecondHalf ? after : before).push(written);
    });
    rewritten['toolCalls'] = before;
    out.push(rewritten);
    if (after.length > 0 && edit.summary) {
      // The summary falls inside this record: the later calls become a new gemini record after it.
      out.push(summaryRecord(edit.summary.text));
      summaryPlaced = true;
      out.push({ id: edit.newId(), timestamp: edit.now, type: 'gemini', content: '', toolCalls: after });
    }
  });
  if (edit.summary && !summaryPlaced) out.push(summaryRecord(edit.summary.text));
  return out;
}

/** The toolCalls entry with its result replaced by one functionResponse carrying the placeholder. */
function maskedCall(call: JsonObject, placeholder: string): JsonObject {
  const original = functionResponses(call['result'])[0];
  const id = original?.['id'] ?? call['id'];
  const name = original?.['name'] ?? call['name'];
  return {
    ...call,
    result: [{ functionResponse: { ...(id !== undefined ? { id } : {}), ...(name !== undefined ? { name } : {}), response: { output: placeholder } } }],
  };
}

/**
 * A refresh in a Gemini CLI session: a `user` message record appended to a JSONL
 * session (how Gemini CLI records a new message; every existing line stays byte-identical), or, for
 * a legacy document, the document rewritten with the message at the end of `messages`.
 */
function appendRefresh(doc: ParsedDocument, transcript: Transcript, refresh: RefreshAppend): OutputRecord[] {
  const lines = doc.records.filter((r) => !r.blank);
  const legacy = doc.kind === 'json-document' || (lines.length === 1 && lines[0]?.values.length === 1 && isLegacyDocument(lines[0].values[0]));
  if (legacy) {
    const edit = refreshAsEdit(transcript, refresh);
    return geminiWriter.write(doc, transcript, edit);
  }
  const record = { id: refresh.id, timestamp: refresh.now, type: 'user', content: [{ text: refresh.text }] };
  return [...doc.records.map((r) => ({ from: r.index })), { text: JSON.stringify(record) }];
}
