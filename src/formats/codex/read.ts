import type { ConversationTurn, TurnRole, TurnType } from '../../core/turn.js';
import type { ReadIssue } from '../../core/issues.js';
import type { ParsedDocument } from '../../io/jsonl.js';
import type { FormatAdapter, OpaqueBlob, RecordedUsage, SourceRef, ToolLinks, Transcript, TranscriptEntry } from '../types.js';
import type { CompactionRecord, UsagePoint } from '../../core/transcript.js';
import { contentPartsText } from '../shared/content-parts.js';
import { isEnvelope } from './envelope.js';
import { codexSkeleton } from './skeleton.js';
import { detectionSample, isRecord, str, num, safeJson, uniqueId as unique, type JsonObject } from '../shared/json.js';

/**
 * Reads OpenAI Codex CLI rollouts (`{timestamp, type, payload}` lines): the history Codex rebuilds on
 * resume, compactions applied. Format, traps and decisions: docs/formats/codex.md.
 */

const ENVELOPE_TYPES = new Set(['session_meta', 'response_item', 'event_msg', 'turn_context', 'compacted']);
const INJECTED_PREFIXES = ['<environment_context>', '<user_instructions>', '# AGENTS.md instructions for', '<INSTRUCTIONS>', '# Context from my IDE setup:'];
const IDE_PREFIX = '# Context from my IDE setup:';
const IDE_REQUEST = '## My request for Codex:';
/** Tool calls that the client answers with an `*_output` item (hosted tools like web search do not). */
export const ANSWERED_CALLS: ReadonlySet<string> = new Set(['function_call', 'custom_tool_call', 'local_shell_call', 'tool_search_call']);
/** Item kinds that are kept in the rollout but never sent to the model. */
const NOT_SENT = new Set(['ghost_snapshot']);

/** One item of the history being rebuilt, with where its bytes are. */
interface HistoryItem {
  readonly item: JsonObject;
  readonly record: number;
  readonly line: number;
  readonly path: string;
  readonly fallbackId: string;
  readonly timestamp?: string;
  /** A summary synthesised from `compacted.message`. */
  readonly summary?: boolean;
  /** For a reasoning item: `reasoning_output_tokens` of the call that produced it (0.40 writes that call's token_count just before its items). */
  readonly reasoningTokens?: number;
}

interface UsageMark {
  readonly input: number;
  readonly output: number;
  readonly window: number;
  readonly line: number;
  /** How many history items existed when it was recorded, and in which compaction epoch. */
  readonly historyLength: number;
  readonly epoch: number;
}

export const codexAdapter: FormatAdapter = {
  name: 'codex',

  detect(doc) {
    if (doc.kind !== 'jsonl') return 0;
    const sample = detectionSample(doc);
    let envelopes = 0;
    let known = 0;
    let firstIsMeta = false;
    for (const [i, value] of sample.entries()) {
      if (!isEnvelope(value)) continue;
      envelopes++;
      if (ENVELOPE_TYPES.has(value.type) && isRecord(value['payload'])) {
        known++;
        if (i === 0 && value.type === 'session_meta') firstIsMeta = true;
      }
    }
    if (sample.length === 0 || known === 0) return 0;
    if (envelopes / sample.length >= 0.5) return firstIsMeta ? 10 : 9;
    return 3;
  },

  read(doc) {
    return readRollout(doc);
  },

  skeleton: codexSkeleton,
};

/**
 * The turns of a Codex session's whole life, in order: every response item of the file, through the
 * agent's compactions (their summaries and replacement histories left out). `replay` walks them.
 */
export function codexWholeLife(doc: ParsedDocument): readonly TranscriptEntry[] {
  return readRollout(doc, { wholeLife: true }).entries;
}

/** What reading a rollout collects, record by record. */
interface RolloutScan {
  readonly issues: ReadIssue[];
  history: HistoryItem[];
  system: HistoryItem | undefined;
  sessionMetas: number;
  events: number;
  nullInfo: number;
  emptyUsage: number;
  epoch: number;
  usage: UsageMark | undefined;
  /** Every usage mark of the current compaction epoch. */
  marks: UsageMark[];
  model: string | undefined;
  recordedWindow: number;
  peakRecorded: number;
  readonly lifetime: CompactionRecord[];
  /** reasoning_output_tokens of the latest token_count, given to the reasoning items that follow it. */
  lastReasoningTokens: number | undefined;
  readonly compactions: { line: number; replaced: boolean }[];
  readonly unknownRecords: Map<string, number>;
  /** Every response item of the file: a compaction does not replace the history (`codexWholeLife`). */
  readonly wholeLife: boolean;
}

function readRollout(doc: ParsedDocument, options: { readonly wholeLife?: boolean } = {}): Transcript {
  const scan: RolloutScan = {
    issues: [],
    history: [],
    system: undefined,
    sessionMetas: 0,
    events: 0,
    nullInfo: 0,
    emptyUsage: 0,
    epoch: 0,
    usage: undefined,
    marks: [],
    model: undefined,
    recordedWindow: 0,
    peakRecorded: 0,
    lifetime: [],
    lastReasoningTokens: undefined,
    compactions: [],
    unknownRecords: new Map(),
    wholeLife: options.wholeLife === true,
  };
  const { issues } = scan;
  if (doc.kind === 'json-document') {
    issues.push({ line: 0, severity: 'error', reason: 'a Codex rollout is JSONL; this is one JSON document' });
    return { format: 'codex', entries: [], issues, notes: [] };
  }
  for (const record of doc.records) {
    record.values.forEach((value, k) => {
      scanValue(scan, record, value, k);
    });
  }
  const mapped = mapHistory(scan.history, scan.system);
  checkPairs(mapped.entries, scan.history, issues);
  const notes = rolloutNotes(scan, mapped);
  const { recorded, points } = rolloutUsage(scan, mapped.entriesAfter, notes);
  const { model, recordedWindow } = scan;
  return {
    format: 'codex',
    entries: mapped.entries,
    issues,
    notes,
    ...(recorded ? { recorded } : {}),
    usage: points,
    model: {
      agent: 'codex',
      ...(model !== undefined ? { id: model } : {}),
      ...(recordedWindow > 0 ? { recordedWindow, recordedWindowHow: 'token_count model_context_window' } : {}),
    },
    lifetime: { compactions: scan.lifetime, peakRecorded: scan.peakRecorded },
  };
}

/** One value of a rollout line: history items, compactions, the system prompt and recorded usage. */
function scanValue(scan: RolloutScan, record: ParsedDocument['records'][number], value: unknown, k: number): void {
  const { issues } = scan;
  const where = record.values.length > 1 ? ` (value ${k + 1} of the line)` : '';
  if (!isEnvelope(value)) {
    issues.push({
      line: record.line,
      severity: 'warning',
      reason: `not a Codex rollout record${where}: expected {timestamp, type, payload}; skipped`,
      hint: 'kept unchanged when the file is written back',
    });
    return;
  }
  const payload = value['payload'];
  const timestamp = str(value['timestamp']);
  const base = { record: record.index, line: record.line, ...(timestamp !== undefined ? { timestamp } : {}) };
  const lineId = record.values.length > 1 ? `line-${record.line}.${k}` : `line-${record.line}`;
  const prefix = record.values.length > 1 ? `[${k}].` : '';
  switch (value.type) {
    case 'session_meta': {
      scan.sessionMetas++;
      if (scan.system || !isRecord(payload)) return;
      const found = instructionsOf(payload);
      if (found) {
        scan.system = {
          ...base,
          item: { type: 'message', role: 'system', content: found.text },
          path: `${prefix}payload.${found.key}`,
          fallbackId: `${lineId}.instructions`,
        };
      }
      return;
    }
    case 'response_item':
      if (!isRecord(payload)) {
        issues.push({ line: record.line, severity: 'warning', reason: `response_item without an object payload${where}; skipped` });
        return;
      }
      scan.history.push({
        ...base,
        item: payload,
        path: `${prefix}payload`,
        fallbackId: lineId,
        ...(payload['type'] === 'reasoning' && scan.lastReasoningTokens !== undefined ? { reasoningTokens: scan.lastReasoningTokens } : {}),
      });
      return;
    case 'compacted': {
      if (!isRecord(payload)) {
        issues.push({ line: record.line, severity: 'warning', reason: `compacted record without an object payload${where}; ignored` });
        return;
      }
      scan.epoch++;
      const { usage } = scan;
      scan.lifetime.push({
        preTokens: usage && usage.epoch === scan.epoch - 1 ? usage.input + usage.output : 0,
        trigger: 'auto',
        ...(timestamp !== undefined ? { timestamp } : {}),
      });
      scan.marks = [];
      scan.compactions.push({ line: record.line, replaced: Array.isArray(payload['replacement_history']) });
      if (!scan.wholeLife) scan.history = historyAfterCompaction(scan.history, payload, { ...base, lineId, prefix }, issues);
      return;
    }
    case 'event_msg':
      scan.events++;
      if (isRecord(payload) && payload['type'] === 'token_count') scanTokenCount(scan, payload, record.line);
      return;
    case 'turn_context':
      if (isRecord(payload) && typeof payload['model'] === 'string' && payload['model'] !== '') scan.model = payload['model'];
      return;
    default:
      scan.unknownRecords.set(value.type, (scan.unknownRecords.get(value.type) ?? 0) + 1);
  }
}

/** A `token_count` event: the usage of the call that just ended, and the window it was made in. */
function scanTokenCount(scan: RolloutScan, payload: JsonObject, line: number): void {
  const info = payload['info'];
  if (!isRecord(info)) {
    scan.nullInfo++;
    return;
  }
  const last = info['last_token_usage'];
  if (isRecord(last) && typeof last['reasoning_output_tokens'] === 'number') scan.lastReasoningTokens = num(last['reasoning_output_tokens']);
  const input = isRecord(last) ? num(last['input_tokens']) : 0;
  const output = isRecord(last) ? num(last['output_tokens']) : 0;
  if (input + output === 0) {
    scan.emptyUsage++;
    return;
  }
  const usage: UsageMark = {
    input,
    output,
    window: num(info['model_context_window']),
    line,
    historyLength: scan.history.length,
    epoch: scan.epoch,
  };
  scan.usage = usage;
  scan.marks.push(usage);
  if (usage.window > 0) scan.recordedWindow = usage.window;
  scan.peakRecorded = Math.max(scan.peakRecorded, input + output);
}

interface MappedHistory {
  readonly entries: TranscriptEntry[];
  /** entries.length after each history item, to place the recorded usage. */
  readonly entriesAfter: number[];
  readonly skipped: Map<string, number>;
  readonly droppedReasoning: number;
}

/** The final history (after the system prompt) mapped to entries. */
function mapHistory(history: readonly HistoryItem[], system: HistoryItem | undefined): MappedHistory {
  const entries: TranscriptEntry[] = [];
  const ids = new Set<string>();
  const skipped = new Map<string, number>();
  const entriesAfter: number[] = [];
  if (system) entries.push(...mapItem(system, ids, skipped));
  // The Responses API drops reasoning items of earlier turns from the request; within the current
  // turn (after the last real user message) they are sent. Fitted on a real 0.40 rollout: with this
  // rule the estimate comes within 3 % of the recorded usage, against 2× without it.
  const currentTurnStart = lastUserMessageIndex(history);
  let droppedReasoning = 0;
  history.forEach((h, i) => {
    const dropped = i < currentTurnStart && h.item['type'] === 'reasoning';
    for (const entry of mapItem(h, ids, skipped)) {
      if (dropped) droppedReasoning++;
      entries.push(dropped ? { ...entry, notSent: 'reasoning from an earlier turn: the Responses API drops it from the request' } : entry);
    }
    entriesAfter.push(entries.length);
  });
  return { entries, entriesAfter, skipped, droppedReasoning };
}

function rolloutNotes(scan: RolloutScan, mapped: MappedHistory): string[] {
  const notes: string[] = [];
  const { compactions, events, unknownRecords, nullInfo, emptyUsage } = scan;
  if (scan.sessionMetas > 1) {
    notes.push(`${scan.sessionMetas} session_meta records (fork/resume/sub-agents): the system prompt is the first one's`);
  }
  if (compactions.length > 0) {
    const last = compactions[compactions.length - 1];
    const how = last?.replaced ? 'its replacement_history' : 'earlier user messages + its summary';
    notes.push(`${compactions.length} compacted record(s): the context restarts at the last (line ${last?.line}) with ${how}`);
  }
  if (mapped.droppedReasoning > 0) {
    notes.push(`${mapped.droppedReasoning} reasoning item(s) from earlier turns counted as 0: the Responses API drops them from the request`);
  }
  if (events > 0) notes.push(`${events} event_msg record(s) (UI events, duplicates of response items) not counted`);
  if (unknownRecords.size > 0) notes.push(`unknown record type(s) skipped: ${countList(unknownRecords)}`);
  if (mapped.skipped.size > 0) notes.push(`response item kind(s) not sent to the model or unknown, skipped: ${countList(mapped.skipped)}`);
  if (nullInfo > 0) notes.push(`${nullInfo} token_count event(s) with info null (rate limits only)`);
  if (emptyUsage > 0) notes.push(`${emptyUsage} token_count event(s) with zero usage ignored`);
  return notes;
}

/** The last recorded usage (unless a compaction came after it) and every usage point of the current epoch. */
function rolloutUsage(scan: RolloutScan, entriesAfter: readonly number[], notes: string[]): { recorded: RecordedUsage | undefined; points: UsagePoint[] } {
  const { usage, system, epoch } = scan;
  const at = (mark: UsageMark): number => (mark.historyLength === 0 ? (system ? 1 : 0) : (entriesAfter[mark.historyLength - 1] ?? 0));
  let recorded: RecordedUsage | undefined;
  if (usage && usage.epoch !== epoch) {
    notes.push(`last recorded usage (line ${usage.line}, ${usage.input + usage.output} tokens) predates a later compaction: not reported`);
  } else if (usage) {
    const before = at(usage);
    recorded = {
      contextTokens: usage.input + usage.output,
      source: `last token_count (line ${usage.line}): last_token_usage input_tokens + output_tokens`,
      ...(usage.window > 0 ? { contextWindow: usage.window } : {}),
      ...(before > 0 ? { atEntry: before - 1 } : {}),
    };
  }
  const points: UsagePoint[] = scan.marks.map((mark) => ({ entriesBefore: at(mark), contextTokens: mark.input + mark.output }));
  return { recorded, points };
}

/** Where a record's value sits: its record, line and timestamp, and how ids and paths are made for it. */
interface RecordPlace {
  readonly record: number;
  readonly line: number;
  readonly timestamp?: string;
  /** `line-<n>` (or `line-<n>.<k>` for the k-th value of a glued line). */
  readonly lineId: string;
  /** `` (or `[k].` for the k-th value of a glued line), the start of every path into the value. */
  readonly prefix: string;
}

/**
 * The history after a `compacted` record: its `replacement_history` replaces everything; without
 * one (older builds) Codex rebuilds it as the earlier user/developer messages + the summary.
 */
function historyAfterCompaction(history: readonly HistoryItem[], payload: JsonObject, place: RecordPlace, issues: ReadIssue[]): HistoryItem[] {
  const base = { record: place.record, line: place.line, ...(place.timestamp !== undefined ? { timestamp: place.timestamp } : {}) };
  const replacement = payload['replacement_history'];
  if (Array.isArray(replacement)) {
    const next: HistoryItem[] = [];
    replacement.forEach((item, i) => {
      if (!isRecord(item)) {
        issues.push({ line: place.line, severity: 'warning', reason: `replacement_history[${i}] is not an object; skipped` });
        return;
      }
      next.push({ ...base, item, path: `${place.prefix}payload.replacement_history[${i}]`, fallbackId: `${place.lineId}.${i}` });
    });
    return next;
  }
  const kept = history.filter((h) => !h.summary && isContextMessage(h.item));
  kept.push({
    ...base,
    item: { type: 'message', role: 'user', content: str(payload['message']) ?? '' },
    path: `${place.prefix}payload.message`,
    fallbackId: `${place.lineId}.summary`,
    summary: true,
  });
  return kept;
}

/** One item of a rollout's final history (what Codex would send on resume), with where it came from. */
export interface RolloutHistoryItem {
  /** The Responses API item as it is stored (a summary rebuilt from an old `compacted.message` is `{type:'message', role:'user', content:<string>}`). */
  readonly item: JsonObject;
  /** Index into `ParsedDocument.records`. */
  readonly record: number;
  /** Path into the record, as in the entries' `SourceRef.path`. */
  readonly path: string;
  /** Rebuilt from an old `compacted.message` (not an item of the file). */
  readonly summary: boolean;
}

/**
 * The final history of a rollout, built by the same rules as `codexAdapter.read` (items the
 * adapter skips, like `ghost_snapshot`, included), so a writer can map entries back to items by
 * `SourceRef` (`record` + `path`).
 */
export function rolloutHistory(doc: ParsedDocument): RolloutHistoryItem[] {
  let history: HistoryItem[] = [];
  const ignored: ReadIssue[] = [];
  if (doc.kind !== 'jsonl') return [];
  for (const record of doc.records) {
    record.values.forEach((value, k) => {
      if (!isEnvelope(value) || !isRecord(value['payload'])) return;
      const glued = record.values.length > 1;
      const place: RecordPlace = {
        record: record.index,
        line: record.line,
        lineId: glued ? `line-${record.line}.${k}` : `line-${record.line}`,
        prefix: glued ? `[${k}].` : '',
      };
      const payload = value['payload'];
      if (value.type === 'response_item') {
        history.push({ record: record.index, line: record.line, item: payload, path: `${place.prefix}payload`, fallbackId: place.lineId });
      } else if (value.type === 'compacted') {
        history = historyAfterCompaction(history, payload, place, ignored);
      }
    });
  }
  return history.map((h) => ({ item: h.item, record: h.record, path: h.path, summary: h.summary === true }));
}

/** Index in `history` of the last user message that is a real prompt (not injected context), or 0. */
function lastUserMessageIndex(history: readonly HistoryItem[]): number {
  for (let i = history.length - 1; i >= 0; i--) {
    const item = history[i]?.item;
    if (item && item['type'] === 'message' && item['role'] === 'user' && !isInjected(messageText(item))) return i;
  }
  return 0;
}

function messageText(item: JsonObject): string {
  const content = item['content'];
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((part) => (isRecord(part) ? (str(part['text']) ?? '') : '')).join('');
}

function countList(counts: ReadonlyMap<string, number>): string {
  return [...counts].map(([kind, n]) => `${kind} ×${n}`).join(', ');
}

/** The system prompt of a `session_meta`: `base_instructions.text` (newer) or `instructions` (older). */
function instructionsOf(payload: JsonObject): { text: string; key: string } | undefined {
  const base = payload['base_instructions'];
  if (isRecord(base) && typeof base['text'] === 'string' && base['text'].length > 0) {
    return { text: base['text'], key: 'base_instructions' };
  }
  if (typeof base === 'string' && base.length > 0) return { text: base, key: 'base_instructions' };
  const old = payload['instructions'];
  if (typeof old === 'string' && old.length > 0) return { text: old, key: 'instructions' };
  return undefined;
}

/** A message Codex keeps when it rebuilds a history from a summary: user, developer or system. */
function isContextMessage(item: JsonObject): boolean {
  const role = item['role'];
  return item['type'] === 'message' && (role === 'user' || role === 'developer' || role === 'system');
}

/** Whether a user message is context Codex injected (pinned), not something the user typed. */
function isInjected(text: string): boolean {
  const head = text.trimStart();
  if (head.startsWith(IDE_PREFIX)) return !head.includes(IDE_REQUEST);
  return INJECTED_PREFIXES.some((p) => head.startsWith(p));
}

interface Mapped {
  readonly role: TurnRole;
  readonly type: TurnType;
  readonly content: string;
  readonly blobs: OpaqueBlob[];
  readonly callId?: string;
}

function mapItem(h: HistoryItem, ids: Set<string>, skipped: Map<string, number>): TranscriptEntry[] {
  const mapped = mapPayload(h);
  if (!mapped) {
    const kind = str(h.item['type']) ?? '(no type)';
    skipped.set(kind, (skipped.get(kind) ?? 0) + 1);
    return [];
  }
  const kind = str(h.item['type']) ?? '';
  const callId = str(h.item['call_id']);
  const own = str(h.item['id']);
  let id = own && own.length > 0 ? own : undefined;
  if (!id && callId) id = kind.endsWith('_output') ? `${callId}.output` : callId;
  const turn: ConversationTurn = {
    id: unique(id ?? h.fallbackId, ids),
    role: mapped.role,
    type: mapped.type,
    content: mapped.content,
    ...(h.timestamp !== undefined ? { timestamp: h.timestamp } : {}),
    ...(mapped.callId !== undefined ? { callId: mapped.callId } : {}),
  };
  const source: SourceRef = { records: [h.record], path: h.path };
  // Links let the pruner keep a call and its output together (`call_id` is the pair's key).
  let links: ToolLinks | undefined;
  if (mapped.callId !== undefined && mapped.type === 'tool_call') links = { calls: [mapped.callId] };
  if (mapped.callId !== undefined && mapped.type === 'tool_result') links = { answers: [mapped.callId] };
  // tool_search_output carries tool definitions, not output text: the writer cannot mask it.
  const maskable = str(h.item['type']) === 'tool_search_output' ? { maskable: false as const } : {};
  return [{ turn, source, blobs: mapped.blobs, ...(links ? { links } : {}), ...maskable }];
}

function mapPayload(h: HistoryItem): Mapped | undefined {
  const item = h.item;
  const kind = str(item['type']) ?? '';
  const callId = str(item['call_id']);
  const withCall = callId !== undefined ? { callId } : {};
  if (h.summary) {
    return { role: 'user', type: 'summary', content: str(item['content']) ?? '', blobs: [] };
  }
  switch (kind) {
    case 'message': {
      const blobs: OpaqueBlob[] = [];
      const content = partsText(item['content'], blobs);
      const role = item['role'];
      if (role === 'developer' || role === 'system') return { role: 'system', type: 'system', content, blobs };
      if (role === 'assistant') return { role: 'assistant', type: 'message', content, blobs };
      if (role === 'user') return { role: 'user', type: isInjected(content) ? 'system' : 'message', content, blobs };
      return undefined;
    }
    case 'reasoning': {
      const blobs: OpaqueBlob[] = [];
      const texts: string[] = [];
      const summary = partsText(item['summary'], blobs);
      if (summary) texts.push(summary);
      const content = partsText(item['content'], blobs);
      if (content) texts.push(content);
      const encrypted = str(item['encrypted_content']);
      if (encrypted) {
        blobs.push({
          kind: 'encrypted',
          provider: 'openai',
          base64Length: encrypted.length,
          ...(h.reasoningTokens !== undefined ? { recordedTokens: h.reasoningTokens } : {}),
        });
      }
      return { role: 'assistant', type: 'reasoning', content: texts.join('\n'), blobs };
    }
    case 'function_call':
      return { role: 'assistant', type: 'tool_call', content: callText(item['name'], item['arguments']), blobs: [], ...withCall };
    case 'custom_tool_call':
      return { role: 'assistant', type: 'tool_call', content: callText(item['name'], item['input']), blobs: [], ...withCall };
    case 'local_shell_call':
      return { role: 'assistant', type: 'tool_call', content: callText('local_shell', item['action']), blobs: [], ...withCall };
    case 'web_search_call':
      return { role: 'assistant', type: 'tool_call', content: callText('web_search', item['action']), blobs: [], ...withCall };
    case 'tool_search_call':
      return { role: 'assistant', type: 'tool_call', content: callText('tool_search', item['arguments']), blobs: [], ...withCall };
    case 'image_generation_call': {
      // Hosted tool: the call and its generated image are one item, with no separate output.
      const result = str(item['result']);
      const blobs: OpaqueBlob[] = result ? [{ kind: 'image', provider: 'openai', base64Length: result.length }] : [];
      return { role: 'assistant', type: 'message', content: str(item['revised_prompt']) ?? '', blobs };
    }
    case 'compaction': {
      const encrypted = str(item['encrypted_content']);
      const blobs: OpaqueBlob[] = encrypted ? [{ kind: 'encrypted', provider: 'openai', base64Length: encrypted.length }] : [];
      return { role: 'user', type: 'summary', content: '', blobs };
    }
    case 'agent_message': {
      const blobs: OpaqueBlob[] = [];
      return { role: 'user', type: 'message', content: partsText(item['content'], blobs), blobs };
    }
    default:
      break;
  }
  if (NOT_SENT.has(kind)) return undefined;
  if (kind.endsWith('_output')) {
    const blobs: OpaqueBlob[] = [];
    let content = '';
    if ('output' in item) content = outputText(item['output'], blobs);
    else if ('tools' in item) content = safeJson(item['tools'] ?? null);
    return { role: 'tool', type: 'tool_result', content, blobs, ...withCall };
  }
  return undefined;
}

/** `name arguments`, arguments as they are sent (a JSON string stays as it is). */
function callText(name: unknown, args: unknown): string {
  const label = str(name) ?? 'unknown_tool';
  if (args === undefined || args === null) return label;
  return `${label} ${typeof args === 'string' ? args : safeJson(args)}`;
}

/** Text of a Responses API content list (or a plain string, or one part); images and files become blobs. */
function partsText(content: unknown, blobs: OpaqueBlob[]): string {
  return contentPartsText(isRecord(content) ? [content] : content, (part) => {
    const type = part['type'];
    if (type === 'input_image') blobs.push(imageBlob(part['image_url']));
    else if (type === 'input_file') {
      const data = str(part['file_data']);
      blobs.push({ kind: 'document', provider: 'openai', base64Length: data ? base64Part(data).length : 0 });
    } else if (type === 'encrypted_content') {
      const data = str(part['encrypted_content']);
      blobs.push({ kind: 'encrypted', provider: 'openai', base64Length: data?.length ?? 0 });
    }
  });
}

/**
 * A tool output as it is sent: a string as it is (in 0.40 that is itself a JSON string
 * `{"output":…,"metadata":…}`), a content list as its text parts, one content part as its text.
 */
function outputText(output: unknown, blobs: OpaqueBlob[], depth = 0): string {
  if (typeof output === 'string') return output;
  if (Array.isArray(output)) return partsText(output, blobs);
  if (isRecord(output)) {
    if ('text' in output || output['type'] === 'input_image') return partsText([output], blobs);
    // Older `FunctionCallOutputPayload {content, success}` shape.
    if ('content' in output && depth < 8) return outputText(output['content'], blobs, depth + 1);
  }
  return output === undefined ? '' : safeJson(output);
}

function imageBlob(url: unknown): OpaqueBlob {
  const value = str(url);
  const match = value ? /^data:([^;,]+)(?:;[^,]*)?,/.exec(value) : null;
  if (!value || !match) return { kind: 'image', provider: 'openai', base64Length: 0 };
  return { kind: 'image', provider: 'openai', base64Length: value.length - match[0].length, ...(match[1] ? { mediaType: match[1] } : {}) };
}

function base64Part(data: string): string {
  const comma = data.startsWith('data:') ? data.indexOf(',') : -1;
  return comma >= 0 ? data.slice(comma + 1) : data;
}

/** Every result needs an earlier call with its call_id; every answered-kind call needs a result. */
function checkPairs(entries: readonly TranscriptEntry[], history: readonly HistoryItem[], issues: ReadIssue[]): void {
  const lineOf = new Map<number, number>();
  for (const h of history) lineOf.set(h.record, h.line);
  const open = new Map<string, TranscriptEntry>();
  const answered = new Set<string>();
  for (const entry of entries) {
    const callId = entry.turn['callId'];
    if (typeof callId !== 'string') continue;
    const line = lineOf.get(entry.source.records[0] ?? -1) ?? 0;
    if (entry.turn.type === 'tool_call') {
      open.set(callId, entry);
    } else if (entry.turn.type === 'tool_result') {
      if (open.has(callId) || answered.has(callId)) {
        open.delete(callId);
        answered.add(callId);
      } else {
        issues.push({
          line,
          severity: 'warning',
          reason: `tool output for call ${callId} has no call in the active context`,
          hint: 'the Responses API rejects an output without its call; drop it or restore the call',
        });
      }
    }
  }
  for (const [callId, entry] of open) {
    const kind = history.find((h) => h.record === entry.source.records[0] && str(h.item['call_id']) === callId);
    if (kind && !ANSWERED_CALLS.has(str(kind.item['type']) ?? '')) continue;
    issues.push({
      line: lineOf.get(entry.source.records[0] ?? -1) ?? 0,
      severity: 'warning',
      reason: `tool call ${callId} has no output in the active context`,
      hint: 'normal at the end of a session that was interrupted; Codex answers it as aborted on resume',
    });
  }
}
