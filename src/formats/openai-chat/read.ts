import { TurnTypeSchema } from '../../core/turn.js';
import type { ConversationTurn, TurnType } from '../../core/turn.js';
import type { ReadIssue } from '../../core/issues.js';
import type { ParsedDocument } from '../../io/jsonl.js';
import type { FormatAdapter, OpaqueBlob, SourceRef, ToolLinks, TranscriptEntry } from '../types.js';
import { contentPartsText } from '../shared/content-parts.js';
import { detectionSample, isRecord, type JsonObject, safeJson } from '../shared/json.js';

/**
 * Reads OpenAI Chat Completions messages: one per line, one conversation per line (the last is read),
 * or one JSON document. Format, traps and decisions: docs/formats/openai-chat.md.
 */

const ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool', 'function']);
/** The native `devs` turn types: a line with `role` and one of these is a native line, not chat. */
const NATIVE_TYPES: ReadonlySet<string> = new Set(TurnTypeSchema.options);

/** A value the reader turns into an entry (an object with a known role); anything else is skipped. */
export function readsAsMessage(value: unknown): value is JsonObject {
  return isRecord(value) && typeof value['role'] === 'string' && ROLES.has(value['role']);
}

function isChatMessage(value: unknown): value is JsonObject {
  return isRecord(value) && typeof value['role'] === 'string' && ROLES.has(value['role']) && !('type' in value);
}

/** A line shaped like a native `devs` turn (role + native type + id + content). */
function isNativeLike(value: unknown): boolean {
  return (
    isRecord(value) &&
    typeof value['role'] === 'string' &&
    typeof value['type'] === 'string' &&
    NATIVE_TYPES.has(value['type']) &&
    'id' in value &&
    'content' in value
  );
}

/** `{messages:[…]}` whose messages are chat messages (judged on the first few). */
function isConversation(value: unknown): value is JsonObject & { messages: unknown[] } {
  if (!isRecord(value) || !Array.isArray(value['messages'])) return false;
  const head = value['messages'].slice(0, 5);
  return head.length > 0 && head.every(isChatMessage);
}

function isMessageArray(value: unknown): value is unknown[] {
  if (!Array.isArray(value)) return false;
  const head = value.slice(0, 5);
  return head.length > 0 && head.every(isChatMessage);
}

/** One message to map, with where it sits. */
export interface Located {
  readonly message: JsonObject;
  readonly id: string;
  readonly source: SourceRef;
  /** Line for issues (0 = the whole document). */
  readonly line: number;
}

export const openaiChatAdapter: FormatAdapter = {
  name: 'openai-chat',

  detect(doc) {
    if (doc.kind === 'json-document') {
      if (isConversation(doc.document)) return 7;
      return isMessageArray(doc.document) ? 6 : 0;
    }
    const sample = detectionSample(doc);
    let messages = 0;
    let conversations = 0;
    let native = 0;
    for (const value of sample) {
      if (isChatMessage(value)) messages++;
      else if (isConversation(value)) conversations++;
      else if (isNativeLike(value)) native++;
    }
    if (sample.length === 0) return 0;
    const share = (messages + conversations) / sample.length;
    if (share >= 0.5) return conversations > messages ? 8 : 7;
    if (messages + conversations > 0) return 3;
    // role + a native type: the `devs` format (which scores 10) is the better reading.
    return native > 0 ? 2 : 0;
  },

  read(doc) {
    const issues: ReadIssue[] = [];
    const notes: string[] = [];
    const located = locate(doc, issues, notes);
    const entries: TranscriptEntry[] = [];
    /** Call ids still waiting for their tool message, with the line of the call. */
    const open = new Map<string, { line: number; name: string }>();

    for (const { message, id, source, line } of located) {
      const role = message['role'];
      const blobs: OpaqueBlob[] = [];
      const text = contentText(message['content'], blobs);
      const push = (turnRole: ConversationTurn['role'], type: TurnType, content: string, links?: ToolLinks): void => {
        entries.push({ turn: { id, role: turnRole, type, content }, source, blobs, ...(links ? { links } : {}) });
      };
      switch (role) {
        case 'system':
        case 'developer':
          push('system', 'system', text);
          break;
        case 'user':
          push('user', 'message', text);
          break;
        case 'assistant': {
          const reasoning = typeof message['reasoning_content'] === 'string' ? message['reasoning_content'] : '';
          const refusal = typeof message['refusal'] === 'string' ? message['refusal'] : '';
          const calls = toolCalls(message);
          const parts = [reasoning, text, refusal].filter((p) => p.length > 0);
          for (const call of calls) {
            parts.push(`${call.name} ${call.arguments}`);
            if (call.id !== undefined) open.set(call.id, { line, name: call.name });
          }
          // The call ids tie this message to its tool messages, so a prune keeps or drops them together.
          const ids = calls.flatMap((call) => (call.id !== undefined ? [call.id] : []));
          push('assistant', calls.length > 0 ? 'tool_call' : 'message', parts.join('\n'), ids.length > 0 ? { calls: ids } : undefined);
          break;
        }
        case 'tool':
        case 'function': {
          const ids = answeredIds(message);
          if (role === 'tool' && ids.length === 0) {
            issues.push({ line, severity: 'warning', reason: `${id}: tool message without tool_call_id` });
          }
          for (const callId of ids) {
            if (open.has(callId)) open.delete(callId);
            else {
              issues.push({
                line,
                severity: 'warning',
                reason: `${id}: tool result for ${callId}, which no earlier assistant message called`,
                hint: 'an orphan tool message is rejected by the API; drop it or restore its call',
              });
            }
          }
          push('tool', 'tool_result', text, ids.length > 0 ? { answers: ids } : undefined);
          break;
        }
        default:
          issues.push({ line, severity: 'warning', reason: `${id}: unknown role ${safeJson(role)}; skipped` });
      }
    }
    for (const [callId, call] of open) {
      issues.push({
        line: call.line,
        severity: 'warning',
        reason: `tool call ${callId} (${call.name}) is never answered by a tool message`,
        hint: 'the API rejects a request where a tool call has no result',
      });
    }
    return { format: 'openai-chat', entries, issues, notes };
  },
};

/** The active context's messages (the same ones `read` maps), for the writer's validation. */
export function locateMessages(doc: ParsedDocument): Located[] {
  return locate(doc, [], []);
}

/** Finds the active message list and gives each message its id and source. */
function locate(doc: ParsedDocument, issues: ReadIssue[], notes: string[]): Located[] {
  if (doc.kind === 'json-document') {
    const value = doc.document;
    if (isRecord(value) && Array.isArray(value['messages'])) return fromList(value['messages'], 0, 0, 'messages', issues);
    if (Array.isArray(value)) return fromList(value, 0, 0, '', issues);
    issues.push({ line: 0, severity: 'error', reason: 'not an OpenAI chat document: no messages list' });
    return [];
  }

  const lines: { value: unknown; index: number; line: number; k: number; glued: boolean }[] = [];
  for (const record of doc.records) {
    record.values.forEach((value, k) => {
      lines.push({ value, index: record.index, line: record.line, k, glued: record.values.length > 1 });
    });
  }
  const conversations = lines.filter((l) => isRecord(l.value) && Array.isArray(l.value['messages']));
  if (conversations.length > 0) {
    const last = conversations[conversations.length - 1];
    if (conversations.length > 1) {
      notes.push(`${conversations.length} conversations (one per line): reading the last (line ${last?.line}) as the active context`);
    }
    const stray = lines.length - conversations.length;
    if (stray > 0) notes.push(`${stray} line value(s) outside the conversations ignored`);
    if (!last || !isRecord(last.value) || !Array.isArray(last.value['messages'])) return [];
    return fromList(last.value['messages'], last.index, last.line, 'messages', issues);
  }

  const out: Located[] = [];
  for (const l of lines) {
    if (!isRecord(l.value)) {
      issues.push({ line: l.line, severity: 'warning', reason: 'not a JSON object; skipped' });
      continue;
    }
    out.push({
      message: l.value,
      id: l.glued ? `line-${l.line}.${l.k + 1}` : `line-${l.line}`,
      source: { records: [l.index] },
      line: l.line,
    });
  }
  return out;
}

function fromList(messages: readonly unknown[], record: number, line: number, base: string, issues: ReadIssue[]): Located[] {
  const out: Located[] = [];
  messages.forEach((message, i) => {
    const path = base ? `${base}[${i}]` : `[${i}]`;
    if (!isRecord(message)) {
      issues.push({ line, severity: 'warning', reason: `${path} is not a message object; skipped` });
      return;
    }
    out.push({ message, id: `msg-${i}`, source: { records: [record], path }, line });
  });
  return out;
}

export interface Call {
  readonly id: string | undefined;
  readonly name: string;
  readonly arguments: string;
}

/** `tool_calls[]` (and the legacy single `function_call`). */
export function toolCalls(message: JsonObject): Call[] {
  const calls: Call[] = [];
  const add = (id: unknown, fn: unknown): void => {
    const f = isRecord(fn) ? fn : {};
    const args = f['arguments'];
    calls.push({
      id: typeof id === 'string' ? id : undefined,
      name: typeof f['name'] === 'string' ? f['name'] : 'unknown_tool',
      // `arguments` is a JSON-encoded string; keep it as written.
      arguments: typeof args === 'string' ? args : safeJson(args ?? {}),
    });
  };
  const list = message['tool_calls'];
  if (Array.isArray(list)) {
    for (const call of list) if (isRecord(call)) add(call['id'], call['function']);
  }
  if (isRecord(message['function_call'])) add(undefined, message['function_call']);
  return calls;
}

/** The call ids a tool message answers: `tool_call_id`, or SWE-agent's `tool_call_ids` list. */
export function answeredIds(message: JsonObject): string[] {
  const ids: string[] = [];
  if (typeof message['tool_call_id'] === 'string') ids.push(message['tool_call_id']);
  const list = message['tool_call_ids'];
  if (Array.isArray(list)) {
    for (const id of list) if (typeof id === 'string' && !ids.includes(id)) ids.push(id);
  }
  return ids;
}

/** Text of `content` (string, null, or a list of parts); images and files become blobs. */
function contentText(content: unknown, blobs: OpaqueBlob[]): string {
  return contentPartsText(content, (part) => {
    const image = part['image_url'];
    if (image !== undefined) {
      const url = typeof image === 'string' ? image : isRecord(image) && typeof image['url'] === 'string' ? image['url'] : '';
      blobs.push(urlBlob('image', url));
    }
    const file = part['file'];
    if (isRecord(file)) {
      const data = typeof file['file_data'] === 'string' ? file['file_data'] : '';
      blobs.push(urlBlob('document', data));
    }
  });
}

/**
 * A blob from a URL: a `data:` URL gives the base64 payload's length; a remote URL gives 0; bare
 * base64 (a `file_data` may be sent that way) gives its own length.
 */
function urlBlob(kind: 'image' | 'document', url: string): OpaqueBlob {
  const match = /^data:([^;,]+)?(?:;[^,]*)?,/.exec(url);
  if (!match) {
    const bare = url.length > 0 && !/^[a-z][a-z0-9+.-]*:/i.test(url);
    return { kind, provider: 'openai', base64Length: bare ? url.length : 0 };
  }
  const mediaType = match[1];
  return {
    kind,
    provider: 'openai',
    base64Length: url.length - match[0].length,
    ...(mediaType !== undefined ? { mediaType } : {}),
  };
}
