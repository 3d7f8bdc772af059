import { UsageError } from '../../core/errors.js';
import type { FormatWriter, OutputRecord, Transcript, TranscriptEdit } from '../types.js';
import { findRuns, NOT_SENT_ACTIONS, NOT_SENT_OBSERVATIONS } from './read.js';
import { isRecord, str, type JsonObject } from '../shared/json.js';

/**
 * OpenHands writer: only the active run is rewritten, as one line replacing its own; every other line is
 * kept byte for byte (docs/formats/openhands.md).
 */

const HISTORY_PATH = /history\[(\d+)\](\.args\.tools)?$/;

export const openhandsWriter: FormatWriter = {
  name: 'openhands',

  appendRefresh() {
    throw new UsageError('an OpenHands evaluation output is a finished run: there is no agent to refresh');
  },

  write(doc, transcript, edit) {
    const active = findRuns(doc).runs.at(-1);
    if (!active) {
      if (edit.dropped.size > 0 || edit.masked.size > 0) throw new Error('openhands writer: the document holds no run to edit');
      return doc.records.map((r) => ({ from: r.index }));
    }
    const run: JsonObject = { ...active.run, history: prunedHistory(active.run.history, transcript, edit) };
    if (doc.kind === 'json-document') return [{ text: JSON.stringify(run, null, 2) }];
    return doc.records.map((record): OutputRecord => {
      if (record.index !== active.record) return { from: record.index };
      // Glued values on the run's line stay glued, in order.
      const text = record.values.map((value, k) => JSON.stringify(k === active.value ? run : value)).join('');
      return { text, replaces: record.index };
    });
  },

  validate(doc, transcript) {
    const problems: string[] = [];
    // Evaluation output is read with `pandas.read_json(lines=True)`, which rejects a broken line.
    for (const record of doc.records) {
      if (!record.blank && record.values.length === 0) problems.push(`line ${record.line}: does not parse`);
    }
    const active = findRuns(doc).runs.at(-1);
    if (!active) return [...problems, 'no OpenHands run (instance_id + history) in the file'];

    const history = active.run.history;
    const ids = new Set<string>();
    const calls = new Map<string, { at: number; finish: boolean; answered: boolean }>();
    let lastObservation = -1;
    history.forEach((event, i) => {
      const where = `line ${active.line} history[${i}]`;
      if (!isRecord(event)) {
        problems.push(`${where}: not an event object`);
        return;
      }
      const id = event['id'];
      if (typeof id === 'number' || typeof id === 'string') {
        if (ids.has(String(id))) problems.push(`${where}: event id ${id} appears twice`);
        ids.add(String(id));
      }
      if (typeof event['observation'] === 'string') lastObservation = i;
      const metadata = isRecord(event['tool_call_metadata']) ? event['tool_call_metadata'] : undefined;
      const callId = metadata ? str(metadata['tool_call_id']) : undefined;
      if (callId === undefined) return;
      if (typeof event['action'] === 'string') {
        if (calls.has(callId)) problems.push(`${where}: tool call ${callId} is made twice`);
        const finish = event['action'] === 'finish' || metadata?.['function_name'] === 'finish';
        calls.set(callId, { at: i, finish, answered: false });
      } else if (typeof event['observation'] === 'string') {
        const call = calls.get(callId);
        if (!call) problems.push(`${where}: observation for tool call ${callId}, which no earlier action made`);
        else call.answered = true;
      }
    });
    for (const [callId, call] of calls) {
      // `finish` ends the run unanswered; a call after the last observation was still running.
      if (call.answered || call.finish || call.at > lastObservation) continue;
      problems.push(`line ${active.line} history[${call.at}]: tool call ${callId} has no observation`);
    }
    for (const issue of transcript.issues) {
      if (issue.severity === 'error') problems.push(`line ${issue.line}: ${issue.reason}`);
    }
    return problems;
  },
};

/** The active run's history after the edit. */
function prunedHistory(history: readonly unknown[], transcript: Transcript, edit: TranscriptEdit): unknown[] {
  const removed = new Set<number>();
  const toolsRemoved = new Set<number>();
  const masked = new Map<number, string>();
  const eventOf: number[] = [];
  transcript.entries.forEach((entry, index) => {
    const match = HISTORY_PATH.exec(entry.source.path ?? '');
    if (!match) throw new Error(`openhands writer: entry ${index} (${entry.turn.id}) has no history path`);
    const event = Number(match[1]);
    eventOf.push(event);
    const placeholder = edit.masked.get(index);
    if (placeholder !== undefined) {
      if (entry.turn.type !== 'tool_result') throw new Error(`openhands writer: entry ${index} is masked but is not a tool result`);
      masked.set(event, placeholder);
    }
    if (!edit.dropped.has(index)) return;
    // The tool schemas are their own entry, read from the system event's `args.tools`.
    if (match[2]) toolsRemoved.add(event);
    else removed.add(event);
  });

  // Events never sent to the model follow the event they are tied to by `cause`.
  const idOf = (event: unknown): string | undefined =>
    isRecord(event) && (typeof event['id'] === 'number' || typeof event['id'] === 'string') ? String(event['id']) : undefined;
  const causeOf = (event: unknown): string | undefined =>
    isRecord(event) && (typeof event['cause'] === 'number' || typeof event['cause'] === 'string') ? String(event['cause']) : undefined;
  const removedIds = new Set([...removed].flatMap((i) => idOf(history[i]) ?? []));
  const removedCauses = new Set([...removed].flatMap((i) => causeOf(history[i]) ?? []));
  history.forEach((event, i) => {
    if (!notSent(event)) return;
    const id = idOf(event);
    const cause = causeOf(event);
    if ((cause !== undefined && removedIds.has(cause)) || (id !== undefined && removedCauses.has(id))) removed.add(i);
  });

  let summaryAt: number | undefined;
  if (edit.summary) {
    const at = edit.summary.at;
    const next = transcript.entries.findIndex((_, i) => i > at && !edit.dropped.has(i));
    summaryAt = next < 0 ? history.length : (eventOf[next] ?? history.length);
  }

  const out: unknown[] = [];
  history.forEach((event, i) => {
    if (i === summaryAt && edit.summary) out.push(summaryEvent(history, edit.summary.text, edit.now));
    if (removed.has(i)) return;
    if (!isRecord(event)) {
      out.push(event);
      return;
    }
    let written: JsonObject = event;
    const placeholder = masked.get(i);
    if (placeholder !== undefined) written = { ...written, content: placeholder };
    if (toolsRemoved.has(i) && isRecord(written['args'])) {
      const { tools: _tools, ...args } = written['args'];
      written = { ...written, args };
    }
    out.push(written);
  });
  if (summaryAt === history.length && edit.summary) out.push(summaryEvent(history, edit.summary.text, edit.now));
  return out;
}

/** An event the adapter does not turn into a turn (never sent to the model). */
function notSent(event: unknown): boolean {
  if (!isRecord(event)) return false;
  const action = str(event['action']);
  const observation = str(event['observation']);
  if (action !== undefined) return NOT_SENT_ACTIONS.has(action);
  if (observation !== undefined) return NOT_SENT_OBSERVATIONS.has(observation);
  return true;
}

/** A user message action, as OpenHands records what the user types. */
function summaryEvent(history: readonly unknown[], text: string, now: string): JsonObject {
  let max = -1;
  for (const event of history) {
    if (isRecord(event) && typeof event['id'] === 'number' && Number.isFinite(event['id'])) max = Math.max(max, event['id']);
  }
  return { id: max + 1, timestamp: now, source: 'user', message: text, action: 'message', args: { content: text } };
}
