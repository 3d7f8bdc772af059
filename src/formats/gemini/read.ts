import type { ConversationTurn, TurnType } from '../../core/turn.js';
import type { ReadIssue } from '../../core/issues.js';
import type { ParsedDocument } from '../../io/jsonl.js';
import type { FormatAdapter, RecordedUsage, SourceRef, Transcript, TranscriptEntry } from '../types.js';
import type { UsagePoint } from '../../core/transcript.js';
import { detectionSample, isRecord, type JsonObject, safeJson } from '../shared/json.js';
import { partsText, type PartsText } from './parts.js';
import { geminiSkeleton } from './skeleton.js';

/**
 * Reads Gemini CLI sessions: the JSONL form (header, message records where a re-appended id is an
 * update, `$set` patches and checkpoints, `$rewindTo`) and the legacy single JSON document.
 * Format, traps and decisions: docs/formats/gemini.md.
 */

const MESSAGE_TYPES = new Set(['user', 'gemini', 'info', 'error', 'warning']);
const NOTICE_TYPES = new Set(['info', 'error', 'warning']);

/** The fields every produced turn sets (the timestamp is added when the record has one). */
interface BaseTurn {
  readonly id: string;
  readonly role: ConversationTurn['role'];
  readonly type: TurnType;
  readonly content: string;
}

/** A header / partial metadata line: session identity, no message fields. */
export function isHeader(value: JsonObject): boolean {
  return typeof value['sessionId'] === 'string' && typeof value['projectHash'] === 'string' && !('type' in value);
}

/** A message record `{id, type, …}` (no `role`: that would be the native or OpenAI format). */
function isMessageRecord(value: unknown): value is JsonObject {
  return (
    isRecord(value) &&
    typeof value['id'] === 'string' &&
    typeof value['type'] === 'string' &&
    MESSAGE_TYPES.has(value['type']) &&
    !('role' in value) &&
    !('uuid' in value) &&
    !('payload' in value)
  );
}

/** A whole legacy session: header fields plus the message list. */
export function isLegacyDocument(value: unknown): value is JsonObject {
  return (
    isRecord(value) &&
    Array.isArray(value['messages']) &&
    (typeof value['sessionId'] === 'string' || typeof value['projectHash'] === 'string' || value['messages'].some(isMessageRecord))
  );
}

export function isSetPatch(value: JsonObject): value is { $set: JsonObject } {
  return isRecord(value['$set']);
}

/** One message as it stands in the active list, with where its bytes are. */
export interface MessageSlot {
  readonly message: JsonObject;
  readonly record: number;
  readonly line: number;
  /** Path of the message inside its record ('' when the record is the message). */
  readonly path: string;
}

export const geminiAdapter: FormatAdapter = {
  name: 'gemini',

  detect(doc) {
    if (doc.kind === 'json-document') {
      if (!isLegacyDocument(doc.document)) return 0;
      return typeof doc.document['sessionId'] === 'string' ? 10 : 8;
    }
    const sample = detectionSample(doc);
    let hits = 0;
    let header = false;
    for (const [i, value] of sample.entries()) {
      if (!isRecord(value)) continue;
      if (i === 0 && isLegacyDocument(value)) return typeof value['sessionId'] === 'string' ? 10 : 8;
      if (isHeader(value)) {
        hits++;
        if (i === 0) header = true;
      } else if (isMessageRecord(value) || isSetPatch(value) || typeof value['$rewindTo'] === 'string') {
        hits++;
      }
    }
    if (sample.length === 0 || hits === 0) return 0;
    const share = hits / sample.length;
    if (share >= 0.5) return header ? 10 : 8;
    return 3;
  },

  read(doc) {
    return readSession(doc);
  },

  skeleton: geminiSkeleton,
};

/** What reading the active messages collects. */
interface SessionReading {
  readonly issues: ReadIssue[];
  readonly entries: TranscriptEntry[];
  notices: number;
  thoughts: number;
  unknown: number;
  empty: number;
  sawUser: boolean;
  usage: { tokens: JsonObject; atEntry?: number } | undefined;
  readonly points: UsagePoint[];
  model: string | undefined;
  peakRecorded: number;
}

/** Where a message's turns come from, and how a turn gets its timestamp. */
interface SlotView {
  readonly slot: MessageSlot;
  readonly id: string;
  at(sub: string): SourceRef;
  turn(t: BaseTurn): ConversationTurn;
}

function readSession(doc: ParsedDocument): Transcript {
  const issues: ReadIssue[] = [];
  const notes: string[] = [];
  const slots = doc.kind === 'json-document' ? documentSlots(doc, issues) : jsonlSlots(doc, issues, notes);
  const reading: SessionReading = {
    issues,
    entries: [],
    notices: 0,
    thoughts: 0,
    unknown: 0,
    empty: 0,
    sawUser: false,
    usage: undefined,
    points: [],
    model: undefined,
    peakRecorded: 0,
  };
  for (const slot of slots) readMessage(reading, slot);

  const { notices, thoughts, empty, unknown, usage, model } = reading;
  if (notices > 0) notes.push(`${notices} UI notice record(s) (info/warning/error) are not sent to the model: skipped`);
  if (thoughts > 0) notes.push(`${thoughts} thought summary(ies) not counted: Gemini CLI does not resend thoughts`);
  if (empty > 0) notes.push(`${empty} empty gemini record(s) (no text, no tool calls) skipped`);
  if (unknown > 0) notes.push(`${unknown} message record(s) of an unknown type skipped`);

  let recorded: RecordedUsage | undefined;
  if (usage) {
    const input = numberField(usage.tokens, 'input');
    const output = numberField(usage.tokens, 'output');
    // `input` is the prompt of that call (cached tokens included); the answer (`output`) joins the
    // history for the next call; `thoughts` do not, so they are left out.
    recorded = {
      contextTokens: input + output,
      source: 'last gemini record tokens: input (prompt incl. cached) + output; thoughts are not kept in history',
      ...(usage.atEntry !== undefined ? { atEntry: usage.atEntry } : {}),
    };
  }
  return {
    format: 'gemini',
    entries: reading.entries,
    issues,
    notes,
    ...(recorded ? { recorded } : {}),
    usage: reading.points,
    model: { agent: 'gemini-cli', ...(model !== undefined ? { id: model } : {}) },
    lifetime: { compactions: [], peakRecorded: reading.peakRecorded },
  };
}

/** One message of the active list: a user turn, or a model answer with its tool calls and their results. */
function readMessage(reading: SessionReading, slot: MessageSlot): void {
  const { message } = slot;
  const { entries } = reading;
  const id = typeof message['id'] === 'string' ? message['id'] : `record-${slot.record}`;
  const type = typeof message['type'] === 'string' ? message['type'] : '';
  const timestamp = typeof message['timestamp'] === 'string' ? message['timestamp'] : undefined;
  const view: SlotView = {
    slot,
    id,
    at: (sub) => ({ records: [slot.record], ...(slot.path || sub ? { path: joinPath(slot.path, sub) } : {}) }),
    turn: (t) => (timestamp !== undefined ? { ...t, timestamp } : { ...t }),
  };
  if (NOTICE_TYPES.has(type)) {
    reading.notices++;
    return;
  }
  if (type === 'user') {
    const { text, blobs } = partsText(message['content']);
    let turnType: TurnType = 'message';
    if (!reading.sawUser && text.trimStart().startsWith('<session_context>')) turnType = 'system';
    else if (text.includes('<state_snapshot>')) turnType = 'summary';
    reading.sawUser = true;
    entries.push({ turn: view.turn({ id, role: 'user', type: turnType, content: text }), source: view.at(''), blobs });
    return;
  }
  if (type !== 'gemini') {
    reading.unknown++;
    return;
  }

  const firstEntry = entries.length;
  if (typeof message['model'] === 'string' && message['model'] !== '') reading.model = message['model'];
  const toolCalls = Array.isArray(message['toolCalls']) ? message['toolCalls'] : [];
  if (Array.isArray(message['thoughts'])) reading.thoughts += message['thoughts'].length;
  const { text, blobs } = partsText(message['content']);
  if (text.length > 0 || blobs.length > 0) {
    entries.push({ turn: view.turn({ id, role: 'assistant', type: 'message', content: text }), source: view.at(''), blobs });
  } else if (toolCalls.length === 0) {
    // Nothing the model would see (an aborted or placeholder response).
    reading.empty++;
  }
  toolCalls.forEach((call, i) => {
    readToolCall(reading, view, call, i);
  });
  if (isRecord(message['tokens']) && hasUsage(message['tokens'])) {
    const atEntry = Math.min(firstEntry, entries.length - 1);
    reading.usage = { tokens: message['tokens'], ...(atEntry >= 0 ? { atEntry } : {}) };
    // `input` is the prompt of this call: everything before this message.
    const input = numberField(message['tokens'], 'input');
    if (input > 0) reading.points.push({ entriesBefore: firstEntry, contextTokens: input });
    reading.peakRecorded = Math.max(reading.peakRecorded, input + numberField(message['tokens'], 'output'));
  }
}

/** A `toolCalls` entry: the call, and its result recorded in the same entry once the tool finished. */
function readToolCall(reading: SessionReading, view: SlotView, call: unknown, i: number): void {
  const { id, slot } = view;
  const path = `toolCalls[${i}]`;
  if (!isRecord(call)) {
    reading.issues.push({ line: slot.line, severity: 'warning', reason: `message ${id}: ${path} is not an object; skipped` });
    return;
  }
  const name = typeof call['name'] === 'string' ? call['name'] : 'unknown_tool';
  const args = call['args'] === undefined ? '{}' : safeJson(call['args']);
  const key = toolCallKey(call, id, i);
  reading.entries.push({
    turn: view.turn({ id: `${id}#call${i}`, role: 'assistant', type: 'tool_call', content: `${name} ${args}` }),
    source: view.at(path),
    blobs: [],
    links: { calls: [key] },
  });
  const result = resultText(call['result']);
  if (result === undefined) {
    const status = typeof call['status'] === 'string' ? ` (status ${call['status']})` : '';
    reading.issues.push({
      line: slot.line,
      severity: 'warning',
      reason: `message ${id}: tool call ${name}${status} has no recorded result`,
      hint: 'Gemini CLI records the result in the same toolCalls entry once the tool finishes',
    });
    return;
  }
  reading.entries.push({
    turn: view.turn({ id: `${id}#result${i}`, role: 'tool', type: 'tool_result', content: result.text }),
    source: view.at(`${path}.result`),
    blobs: result.blobs,
    links: { answers: [key] },
  });
}

/**
 * The id that ties a tool call to its result: the call's own `id`, or `${messageId}#${i}` when it
 * has none (call and result share the toolCalls entry, so the position is enough).
 */
function toolCallKey(call: JsonObject, messageId: string, index: number): string {
  return typeof call['id'] === 'string' && call['id'] !== '' ? call['id'] : `${messageId}#${index}`;
}

/**
 * The active message list as Gemini CLI resolves it (JSONL replayed, or the legacy document's
 * `messages`), notices included, with where each message's bytes are. For writers.
 */
export function geminiMessageSlots(doc: ParsedDocument): MessageSlot[] {
  const issues: ReadIssue[] = [];
  return doc.kind === 'json-document' ? documentSlots(doc, issues) : jsonlSlots(doc, issues, []);
}

function joinPath(base: string, sub: string): string {
  if (!base) return sub;
  if (!sub) return base;
  return `${base}.${sub}`;
}

/** A finite number, or 0 (and 0 for -0, which JSON writes as 0: a kept state reads the same). */
function numberField(object: JsonObject, key: string): number {
  const value = object[key];
  return typeof value === 'number' && Number.isFinite(value) ? value + 0 : 0;
}

/** A `tokens` object that carries a real count (some records hold all zeros). */
function hasUsage(tokens: JsonObject): boolean {
  return numberField(tokens, 'input') > 0 || numberField(tokens, 'total') > 0;
}

/** Legacy JSON document: every message of `messages`, in order. */
function documentSlots(doc: ParsedDocument, issues: ReadIssue[]): MessageSlot[] {
  const value = doc.document;
  if (!isLegacyDocument(value)) {
    issues.push({ line: 0, severity: 'error', reason: 'not a Gemini CLI session: no messages list' });
    return [];
  }
  return listSlots(value['messages'] as unknown[], 0, 1, 'messages', issues);
}

function listSlots(messages: readonly unknown[], record: number, line: number, base: string, issues: ReadIssue[]): MessageSlot[] {
  const slots: MessageSlot[] = [];
  messages.forEach((message, i) => {
    if (isRecord(message)) slots.push({ message, record, line, path: `${base}[${i}]` });
    else issues.push({ line, severity: 'warning', reason: `${base}[${i}] is not a message object; skipped` });
  });
  return slots;
}

/**
 * JSONL form: replays the file the way Gemini CLI loads it. Messages live in a Map keyed by id, so a
 * re-appended id replaces the message in place (last version, first position).
 */
function jsonlSlots(doc: ParsedDocument, issues: ReadIssue[], notes: string[]): MessageSlot[] {
  let messages = new Map<string, MessageSlot>();
  let checkpoints = 0;
  let rewinds = 0;
  let updates = 0;
  for (const record of doc.records) {
    record.values.forEach((value, k) => {
      if (!isRecord(value)) {
        issues.push({ line: record.line, severity: 'warning', reason: 'not a JSON object; skipped' });
        return;
      }
      if (isLegacyDocument(value)) {
        // A legacy document written on one line: its list is the whole history so far.
        checkpoints += messages.size > 0 ? 1 : 0;
        messages = keyed(listSlots(value['messages'] as unknown[], record.index, record.line, 'messages', issues));
        return;
      }
      if (isSetPatch(value)) {
        const set = value['$set'];
        if (Array.isArray(set['messages'])) {
          checkpoints++;
          messages = keyed(listSlots(set['messages'], record.index, record.line, '$set.messages', issues));
        }
        // Other `$set` keys are session metadata (lastUpdated, summary, directories…).
        return;
      }
      if ('$rewindTo' in value) {
        const target = value['$rewindTo'];
        if (typeof target !== 'string' || !messages.has(target)) {
          issues.push({
            line: record.line,
            severity: 'warning',
            reason: `$rewindTo ${safeJson(target)} names no message in the session; ignored`,
          });
          return;
        }
        rewinds++;
        let cut = false;
        for (const key of [...messages.keys()]) {
          if (key === target) cut = true;
          if (cut) messages.delete(key);
        }
        return;
      }
      if (isHeader(value)) return;
      if (typeof value['id'] === 'string' && typeof value['type'] === 'string') {
        if (messages.has(value['id'])) updates++;
        // Map.set on an existing key keeps its position and replaces the value.
        messages.set(value['id'], { message: value, record: record.index, line: record.line, path: '' });
        return;
      }
      issues.push({
        line: record.line,
        severity: 'warning',
        reason: `unrecognised Gemini CLI record${record.values.length > 1 ? ` (value ${k + 1} of the line)` : ''}; skipped`,
        hint: 'kept unchanged when the file is written back',
      });
    });
  }
  if (updates > 0) notes.push(`${updates} re-appended message version(s): the last version is used, at the first position`);
  if (checkpoints > 0) notes.push(`${checkpoints} $set.messages checkpoint(s): the message list restarts at the last one`);
  if (rewinds > 0) notes.push(`${rewinds} $rewindTo record(s) applied`);
  return [...messages.values()];
}

function keyed(slots: readonly MessageSlot[]): Map<string, MessageSlot> {
  const map = new Map<string, MessageSlot>();
  slots.forEach((slot, i) => {
    const id = typeof slot.message['id'] === 'string' ? slot.message['id'] : `#${i}`;
    map.set(id, slot);
  });
  return map;
}

/** The text of a tool call's `result` (a part list); undefined when nothing was recorded. */
export function resultText(result: unknown): PartsText | undefined {
  if (result === undefined || result === null) return undefined;
  if (Array.isArray(result) && result.length === 0) return undefined;
  return partsText(result);
}
