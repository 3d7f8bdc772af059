import { isRecord, pick, sameKind, type JsonObject } from '../shared/json.js';
import { partsText } from './parts.js';

/**
 * A Gemini CLI JSONL line without its text, for a batch row read on from where the file ended
 * (FormatAdapter `skeleton`). Kept: what tells a header, a message, a `$set` patch or checkpoint and a
 * `$rewindTo` apart; a message's id, type, time, model, recorded tokens and how many thoughts it has;
 * a user message whole (the reader reads from its text whether it is the session context or a
 * compression's snapshot); whether a model answer has any text or inline data (it has a turn only
 * then), as one character; each tool call's id, name and status, and whether it has a result; a
 * checkpoint's or a one-line legacy document's messages, each as a message is kept. A resumed row
 * takes an old turn's tokens from what was kept, not from the line.
 */
export function geminiSkeleton(value: unknown): unknown {
  if (!isRecord(value)) return sameKind(value);
  const out = { ...pick(value, ['sessionId', 'projectHash', '$rewindTo']), ...messageSkeleton(value) };
  const messages = value['messages'];
  if (messages !== undefined) out['messages'] = Array.isArray(messages) ? messages.map(listed) : sameKind(messages);
  const set = value['$set'];
  if (set !== undefined) {
    out['$set'] = isRecord(set) ? (Array.isArray(set['messages']) ? { messages: set['messages'].map(listed) } : {}) : sameKind(set);
  }
  return out;
}

/** A message of a list (a checkpoint's, a legacy document's): its skeleton, or its kind. */
const listed = (message: unknown): unknown => (isRecord(message) ? messageSkeleton(message) : sameKind(message));

function messageSkeleton(message: JsonObject): JsonObject {
  // `role`, `uuid` and `payload` tell another format's line from a message by their presence.
  const out = pick(message, ['role', 'uuid', 'id', 'type', 'timestamp', 'model']);
  if ('payload' in message) out['payload'] = null;
  if ('content' in message) {
    if (message['type'] === 'user') out['content'] = message['content'];
    else if (message['type'] === 'gemini') {
      const { text, blobs } = partsText(message['content']);
      out['content'] = text.length > 0 || blobs.length > 0 ? 'x' : '';
    }
  }
  const thoughts = message['thoughts'];
  if (thoughts !== undefined) out['thoughts'] = Array.isArray(thoughts) ? thoughts.map(() => null) : sameKind(thoughts);
  const tokens = message['tokens'];
  if (tokens !== undefined) out['tokens'] = isRecord(tokens) ? pick(tokens, ['input', 'output', 'total']) : sameKind(tokens);
  const calls = message['toolCalls'];
  if (calls !== undefined) out['toolCalls'] = Array.isArray(calls) ? calls.map(callSkeleton) : sameKind(calls);
  return out;
}

function callSkeleton(call: unknown): unknown {
  if (!isRecord(call)) return sameKind(call);
  const out = pick(call, ['id', 'name', 'status']);
  const result = call['result'];
  // `resultText`: none for a missing, null or empty result; any other has a turn.
  if (result !== undefined) out['result'] = result === null || (Array.isArray(result) && result.length === 0) ? result : 'x';
  return out;
}
