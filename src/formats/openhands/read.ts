import type { ConversationTurn, TurnRole, TurnType } from '../../core/turn.js';
import type { ReadIssue } from '../../core/issues.js';
import type { ParsedDocument } from '../../io/jsonl.js';
import type { FormatAdapter, OpaqueBlob, RecordedUsage, Transcript, TranscriptEntry } from '../types.js';
import type { ModelRecord } from '../../core/transcript.js';
import { detectionSample, isRecord, str, num, safeJson, uniqueId as unique, type JsonObject } from '../shared/json.js';

/**
 * Reads OpenHands evaluation / resolver output (one task run per line; the last run is the context),
 * mapping events the way OpenHands' ConversationMemory does. Format and decisions: docs/formats/openhands.md.
 */

/** Events that are never turned into model messages. */
export const NOT_SENT_ACTIONS = new Set(['recall', 'change_agent_state', 'null', 'condensation', 'condensation_request']);
export const NOT_SENT_OBSERVATIONS = new Set(['agent_state_changed', 'null', 'user_rejected']);

/** One task run: an `instance_id` and a `history` list of events. */
function isRun(value: unknown): value is JsonObject & { history: unknown[] } {
  return isRecord(value) && Array.isArray(value['history']) && (typeof value['instance_id'] === 'string' || typeof value['instance_id'] === 'number');
}

/** A run and where it is: record `record`, value `value` of that record's glued values. */
export interface LocatedRun {
  readonly run: JsonObject & { history: unknown[] };
  readonly record: number;
  /** Index among the record's values (0 unless values are glued on the line). */
  readonly value: number;
  readonly line: number;
  /** Prefix of paths inside the record (`[k].` for the k-th of glued values). */
  readonly prefix: string;
}

export const openhandsAdapter: FormatAdapter = {
  name: 'openhands',

  detect(doc) {
    if (doc.kind === 'json-document') return isRun(doc.document) ? 9 : 0;
    const sample = detectionSample(doc);
    let runs = 0;
    let full = 0;
    for (const value of sample) {
      if (!isRun(value)) continue;
      runs++;
      if ('metadata' in value || 'metrics' in value) full++;
    }
    if (sample.length === 0 || runs === 0) return 0;
    if (runs / sample.length >= 0.5) return full > 0 ? 10 : 9;
    return 3;
  },

  read(doc) {
    return readRuns(doc);
  },
};

/** The events of the active run being mapped, and what they left open. */
interface RunReading {
  readonly active: LocatedRun;
  readonly issues: ReadIssue[];
  readonly entries: TranscriptEntry[];
  readonly ids: Set<string>;
  readonly skipped: Map<string, number>;
  /** Calls waiting for their observation. */
  readonly open: Map<string, { eventId: string; finish: boolean }>;
  usage: { prompt: number; completion: number; atEntry: number; response: string; event: string } | undefined;
  /** The model the last recorded `model_response` names. */
  model: string | undefined;
}

/** One event's fields, and how to add a turn for it. */
interface EventView {
  readonly event: JsonObject;
  readonly eventId: string;
  readonly path: string;
  readonly args: JsonObject;
  readonly metadata: JsonObject | undefined;
  readonly callId: string | undefined;
  readonly response: JsonObject | undefined;
  push(t: { id: string; role: TurnRole; type: TurnType; content: string; callId?: string }, at: string, blobs?: OpaqueBlob[]): void;
}

function readRuns(doc: ParsedDocument): Transcript {
  const issues: ReadIssue[] = [];
  const notes: string[] = [];
  const { runs, others } = findRuns(doc);
  const active = runs[runs.length - 1];
  if (!active) {
    issues.push({
      line: 0,
      severity: 'error',
      reason: 'no OpenHands run in the file: expected objects with instance_id and a history list',
    });
    return { format: 'openhands', entries: [], issues, notes };
  }
  const instance = String(active.run['instance_id']);
  if (runs.length > 1) {
    notes.push(`${runs.length} runs in file (one task per line); reading the last (instance_id ${instance}, line ${active.line})`);
  }
  if (others > 0) notes.push(`${others} value(s) that are not OpenHands runs ignored`);

  const reading: RunReading = { active, issues, entries: [], ids: new Set(), skipped: new Map(), open: new Map(), usage: undefined, model: undefined };
  active.run.history.forEach((event, i) => {
    readEvent(reading, event, i);
  });
  for (const [callId, { eventId, finish }] of reading.open) {
    // `finish` ends the run with a call that never gets an observation.
    if (finish) continue;
    issues.push({ line: active.line, severity: 'warning', reason: `${eventId}: tool call ${callId} has no observation` });
  }
  if (reading.skipped.size > 0) {
    notes.push(`events not sent to the model, skipped: ${[...reading.skipped].map(([k, n]) => `${k} ×${n}`).join(', ')}`);
  }

  const { usage, entries } = reading;
  let recorded: RecordedUsage | undefined;
  if (usage) {
    recorded = {
      contextTokens: usage.prompt + usage.completion,
      source: `last model_response.usage (${usage.event}): prompt_tokens + completion_tokens`,
      ...(usage.atEntry >= 0 ? { atEntry: usage.atEntry } : {}),
    };
  } else if (isRecord(active.run['metrics'])) {
    notes.push('no per-call usage recorded; metrics.accumulated_token_usage is a running sum, not a context size');
  }
  return { format: 'openhands', entries, issues, notes, ...(recorded ? { recorded } : {}), model: runModel(active.run, reading.model) };
}

/**
 * The run's model: the one the last `model_response` names (what the provider served), else the
 * run's `metadata.llm_config.model` (a LiteLLM id such as `anthropic/claude-…`); the window is
 * `llm_config.max_input_tokens` when the run set one (OpenHands' own input limit).
 */
function runModel(run: JsonObject, responded: string | undefined): ModelRecord {
  const metadata = isRecord(run['metadata']) ? run['metadata'] : undefined;
  const config = metadata && isRecord(metadata['llm_config']) ? metadata['llm_config'] : undefined;
  const id = responded ?? (config ? nonEmpty(config['model']) : undefined);
  const maxInput = config ? num(config['max_input_tokens']) : 0;
  return {
    agent: 'openhands',
    ...(id !== undefined ? { id } : {}),
    ...(maxInput > 0 ? { recordedWindow: maxInput, recordedWindowHow: 'metadata.llm_config.max_input_tokens' } : {}),
  };
}

function nonEmpty(value: unknown): string | undefined {
  const text = str(value);
  return text !== undefined && text.trim() !== '' ? text : undefined;
}

/** One history event: the turns it becomes, and the usage of the model response it carries. */
function readEvent(reading: RunReading, event: unknown, i: number): void {
  const { active, entries, ids } = reading;
  const path = `${active.prefix}history[${i}]`;
  if (!isRecord(event)) {
    reading.issues.push({ line: active.line, severity: 'warning', reason: `${path} is not an event object; skipped` });
    return;
  }
  const eventId = typeof event['id'] === 'number' || typeof event['id'] === 'string' ? `event-${event['id']}` : `history-${i}`;
  const timestamp = str(event['timestamp']);
  const push: EventView['push'] = (t, at, blobs = []) => {
    const turn: ConversationTurn = {
      id: unique(t.id, ids),
      role: t.role,
      type: t.type,
      content: t.content,
      ...(timestamp !== undefined ? { timestamp } : {}),
      ...(t.callId !== undefined ? { callId: t.callId } : {}),
    };
    // The tool_call_id ties an action to its observation, so a prune keeps or drops them together.
    const links =
      t.callId === undefined ? undefined : t.type === 'tool_call' ? { calls: [t.callId] } : t.type === 'tool_result' ? { answers: [t.callId] } : undefined;
    entries.push({ turn, source: { records: [active.record], path: at }, blobs, ...(links ? { links } : {}) });
  };

  const action = str(event['action']);
  const observation = str(event['observation']);
  const metadata = isRecord(event['tool_call_metadata']) ? event['tool_call_metadata'] : undefined;
  const callId = metadata ? str(metadata['tool_call_id']) : undefined;
  const response = metadata && isRecord(metadata['model_response']) ? metadata['model_response'] : undefined;
  const view: EventView = { event, eventId, path, args: isRecord(event['args']) ? event['args'] : {}, metadata, callId, response, push };
  const entryIndex = entries.length;
  if (action !== undefined) readAction(reading, view, action);
  else if (observation !== undefined) readObservation(reading, view, observation);
  else count(reading.skipped, 'event without action or observation');

  const served = response ? nonEmpty(response['model']) : undefined;
  if (served !== undefined) reading.model = served;
  const used = response ? usageOf(response) : undefined;
  if (used && used.prompt > 0) {
    const responseId = str(response?.['id']) ?? eventId;
    // Observations repeat their action's model_response: keep the first event of a response.
    if (!reading.usage || reading.usage.response !== responseId) {
      reading.usage = { ...used, atEntry: Math.min(entryIndex, entries.length - 1), response: responseId, event: eventId };
    }
  }
}

function readAction(reading: RunReading, view: EventView, action: string): void {
  const { event, eventId, path, args, metadata, callId, response, push } = view;
  if (action === 'system') {
    push({ id: eventId, role: 'system', type: 'system', content: str(args['content']) ?? str(event['message']) ?? '' }, path);
    const tools = args['tools'];
    if (Array.isArray(tools) && tools.length > 0) {
      push({ id: `${eventId}.tools`, role: 'system', type: 'system', content: safeJson(tools) }, `${path}.args.tools`);
    }
  } else if (metadata) {
    const name = str(metadata['function_name']) ?? action;
    const call = response ? responseCall(response, callId) : undefined;
    const text = call?.text ?? str(args['thought']) ?? '';
    const argumentsText = call?.arguments ?? safeJson(withoutBookkeeping(args));
    const content = [text, `${name} ${argumentsText}`].filter((p) => p.length > 0).join('\n');
    push({ id: eventId, role: 'assistant', type: 'tool_call', content, ...(callId !== undefined ? { callId } : {}) }, path);
    if (callId !== undefined) reading.open.set(callId, { eventId, finish: action === 'finish' || name === 'finish' });
  } else if (action === 'message') {
    const content = str(args['content']) ?? str(event['message']) ?? '';
    const blobs = imageBlobs(args['image_urls']);
    if (str(event['source']) === 'agent') push({ id: eventId, role: 'assistant', type: 'message', content }, path, blobs);
    else push({ id: eventId, role: 'user', type: 'message', content }, path, blobs);
  } else if (NOT_SENT_ACTIONS.has(action)) {
    count(reading.skipped, `action ${action}`);
  } else {
    // An action without tool-call metadata (older, non-function-calling runs): the model wrote it.
    push({ id: eventId, role: 'assistant', type: 'tool_call', content: `${action} ${safeJson(withoutBookkeeping(args))}` }, path);
  }
}

function readObservation(reading: RunReading, view: EventView, observation: string): void {
  const { event, eventId, path, metadata, callId, push } = view;
  const content = str(event['content']) ?? str(event['message']) ?? '';
  if (metadata) {
    if (callId !== undefined) {
      if (reading.open.has(callId)) reading.open.delete(callId);
      else {
        reading.issues.push({
          line: reading.active.line,
          severity: 'warning',
          reason: `${eventId}: observation for tool call ${callId}, which no earlier action made`,
        });
      }
    }
    push({ id: eventId, role: 'tool', type: 'tool_result', content, ...(callId !== undefined ? { callId } : {}) }, path);
  } else if (observation === 'recall') {
    push({ id: eventId, role: 'user', type: 'system', content: recallText(content, event['extras']) }, path);
  } else if (NOT_SENT_OBSERVATIONS.has(observation)) {
    count(reading.skipped, `observation ${observation}`);
  } else {
    // `error` and other observations without a call go back to the model as user messages.
    push({ id: eventId, role: 'user', type: 'message', content }, path);
  }
}

/** Every run in the document, in order (the last is the active one), and how many other values there are. */
export function findRuns(doc: ParsedDocument): { runs: LocatedRun[]; others: number } {
  const runs: LocatedRun[] = [];
  let others = 0;
  if (doc.kind === 'json-document') {
    if (isRun(doc.document)) runs.push({ run: doc.document, record: 0, value: 0, line: 1, prefix: '' });
    else others++;
  } else {
    for (const record of doc.records) {
      record.values.forEach((value, k) => {
        if (isRun(value)) {
          runs.push({ run: value, record: record.index, value: k, line: record.line, prefix: record.values.length > 1 ? `[${k}].` : '' });
        } else {
          others++;
        }
      });
    }
  }
  return { runs, others };
}

function count(map: Map<string, number>, key: string): void {
  map.set(key, (map.get(key) ?? 0) + 1);
}

/** `args` without the fields OpenHands adds for itself (they are not function arguments). */
function withoutBookkeeping(args: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(args)) {
    if (['thought', 'blocking', 'is_static', 'cwd', 'hidden', 'confirmation_state', 'security_risk'].includes(key)) continue;
    out[key] = value;
  }
  return out;
}

/** The model's text and this call's arguments, from the recorded `chat.completion`. */
function responseCall(response: JsonObject, callId: string | undefined): { text?: string; arguments?: string } {
  const choices = response['choices'];
  const message = Array.isArray(choices) && isRecord(choices[0]) && isRecord(choices[0]['message']) ? choices[0]['message'] : undefined;
  if (!message) return {};
  const text = str(message['content']);
  let args: string | undefined;
  const calls = message['tool_calls'];
  if (Array.isArray(calls)) {
    for (const call of calls) {
      if (!isRecord(call) || (callId !== undefined && call['id'] !== callId)) continue;
      const fn = call['function'];
      if (isRecord(fn)) args = str(fn['arguments']) ?? safeJson(fn['arguments'] ?? null);
      break;
    }
  }
  return { ...(text !== undefined ? { text } : {}), ...(args !== undefined ? { arguments: args } : {}) };
}

function usageOf(response: JsonObject): { prompt: number; completion: number } | undefined {
  const usage = response['usage'];
  if (!isRecord(usage)) return undefined;
  return { prompt: num(usage['prompt_tokens']), completion: num(usage['completion_tokens']) };
}

/** The recall observation's text plus its non-empty extras (repository info, runtime, knowledge). */
function recallText(content: string, extras: unknown): string {
  const parts = content ? [content] : [];
  if (isRecord(extras)) {
    for (const [key, value] of Object.entries(extras)) {
      if (key === 'recall_type' || value === null || value === '' || value === undefined) continue;
      if (Array.isArray(value) && value.length === 0) continue;
      if (isRecord(value) && Object.keys(value).length === 0) continue;
      parts.push(`${key}: ${typeof value === 'string' ? value : safeJson(value)}`);
    }
  }
  return parts.join('\n');
}

function imageBlobs(urls: unknown): OpaqueBlob[] {
  if (!Array.isArray(urls)) return [];
  const blobs: OpaqueBlob[] = [];
  for (const url of urls) {
    if (typeof url !== 'string') continue;
    const match = /^data:([^;,]+)(?:;[^,]*)?,/.exec(url);
    blobs.push({
      kind: 'image',
      provider: 'openai',
      base64Length: match ? url.length - match[0].length : 0,
      ...(match?.[1] ? { mediaType: match[1] } : {}),
    });
  }
  return blobs;
}
