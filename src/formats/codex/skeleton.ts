import { isRecord, pick, sameKind, type JsonObject } from '../shared/json.js';
import { isEnvelope } from './envelope.js';

/**
 * A Codex rollout line without its text, for a batch row read on from where the file ended
 * (FormatAdapter `skeleton`): what `read` looks at to rebuild the history, with the text of the
 * instructions, assistant messages, reasoning, tool calls and outputs, and summaries left out. Kept:
 * the envelope's type and time; a response item's type, role and ids; a user message whole (whether
 * it is context Codex injected, and where the current turn starts, are read from its text); a
 * compaction's replacement history item by item; a token count's usage and window; a turn context's
 * model; and of the instructions only whether there are any. A number no JSON can hold (`1e999`
 * parses to Infinity) is 0, as the reader reads it. Images and files are left out too: a resumed row
 * takes an old turn's blob tokens from what was kept, not from the line.
 */
export function codexSkeleton(value: unknown): unknown {
  if (!isEnvelope(value)) return sameKind(value);
  const out = pick(value, ['type', 'timestamp']);
  const payload = value['payload'];
  if (!isRecord(payload)) {
    out['payload'] = sameKind(payload);
    return out;
  }
  switch (value.type) {
    case 'session_meta':
      out['payload'] = metaSkeleton(payload);
      break;
    case 'response_item':
      out['payload'] = itemSkeleton(payload);
      break;
    case 'compacted':
      out['payload'] = compactedSkeleton(payload);
      break;
    case 'event_msg':
      out['payload'] = eventSkeleton(payload);
      break;
    case 'turn_context':
      out['payload'] = typeof payload['model'] === 'string' ? { model: payload['model'] } : {};
      break;
    default:
      out['payload'] = {};
  }
  return out;
}

/** Whether the instructions are there: a text that is not empty stands as one character. */
function metaSkeleton(payload: JsonObject): JsonObject {
  const out: JsonObject = {};
  const some = (text: unknown): unknown => (typeof text === 'string' ? (text.length > 0 ? 'x' : '') : sameKind(text));
  const base = payload['base_instructions'];
  if (base !== undefined) out['base_instructions'] = isRecord(base) ? ('text' in base ? { text: some(base['text']) } : {}) : some(base);
  if ('instructions' in payload) out['instructions'] = some(payload['instructions']);
  return out;
}

function itemSkeleton(item: JsonObject): JsonObject {
  if (item['type'] === 'message' && item['role'] === 'user') return item;
  const out = pick(item, ['type', 'role', 'id', 'call_id']);
  // What the reader turns into text only: present, with none.
  for (const key of ['content', 'summary', 'output']) if (key in item) out[key] = '';
  if ('tools' in item) out['tools'] = null;
  return out;
}

function compactedSkeleton(payload: JsonObject): JsonObject {
  const out: JsonObject = {};
  if ('message' in payload) out['message'] = sameKind(payload['message']);
  const history = payload['replacement_history'];
  if (history !== undefined) {
    out['replacement_history'] = Array.isArray(history) ? history.map((item) => (isRecord(item) ? itemSkeleton(item) : sameKind(item))) : sameKind(history);
  }
  return out;
}

const USAGE = ['reasoning_output_tokens', 'input_tokens', 'output_tokens'] as const;

function eventSkeleton(payload: JsonObject): JsonObject {
  if (payload['type'] !== 'token_count') return { type: payload['type'] as JsonObject[string] };
  const out: JsonObject = { type: 'token_count' };
  const info = payload['info'];
  if (!isRecord(info)) {
    if (info !== undefined) out['info'] = sameKind(info);
    return out;
  }
  const kept: JsonObject = {};
  if ('model_context_window' in info) kept['model_context_window'] = finite(info['model_context_window']);
  const last = info['last_token_usage'];
  if (last !== undefined) {
    if (isRecord(last)) {
      const usage: JsonObject = {};
      for (const key of USAGE) if (key in last) usage[key] = finite(last[key]);
      kept['last_token_usage'] = usage;
    } else kept['last_token_usage'] = sameKind(last);
  }
  out['info'] = kept;
  return out;
}

/** A number as JSON keeps it: one that is not finite is read as 0 (`num`), and JSON would make it null. */
function finite(value: unknown): unknown {
  return typeof value === 'number' && !Number.isFinite(value) ? 0 : value;
}
