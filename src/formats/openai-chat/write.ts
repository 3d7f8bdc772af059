import type { ParsedDocument } from '../../io/jsonl.js';
import { rewriteLines } from '../devs/write.js';
import { isNoOp, refreshAsEdit } from '../shared/edit.js';
import { isRecord, type JsonObject, safeJson } from '../shared/json.js';
import { answeredIds, locateMessages, readsAsMessage, toolCalls } from './read.js';
import type { FormatWriter, OutputRecord, Transcript, TranscriptEdit } from '../types.js';
import { dominantEol } from '../shared/eol.js';

/**
 * Writes an edit back to OpenAI chat messages in the shape they were read from; the summary is a user
 * message (docs/formats/openai-chat.md).
 */
export const openaiChatWriter: FormatWriter = {
  name: 'openai-chat',

  /** A refresh is a user message at the end: the summary of an edit that drops nothing. */
  appendRefresh(doc, transcript, refresh) {
    return openaiChatWriter.write(doc, transcript, refreshAsEdit(transcript, refresh));
  },

  write(doc, transcript, edit) {
    if (isNoOp(edit)) return doc.records.map((r) => ({ from: r.index }));
    const summary = edit.summary ? summaryMessage(edit.summary.text) : undefined;

    if (doc.kind === 'json-document') {
      const rewritten = rewriteDocument(doc.document, transcript, edit, summary);
      return [{ text: formatLike(doc, rewritten) }];
    }
    const conversation = activeConversation(doc, transcript);
    if (conversation) {
      const record = doc.records[conversation.record];
      if (!record) throw new Error(`no input record ${conversation.record}`);
      const values = record.values.map((value, k) => (k === conversation.value ? rewriteDocument(value, transcript, edit, summary) : value));
      // Other values glued on the same line stay glued, so the last conversation stays the last.
      const text = values.map(safeJson).join('');
      return doc.records.map((r): OutputRecord => (r.index === conversation.record ? { text, replaces: r.index } : { from: r.index }));
    }
    return rewriteLines(doc, transcript, edit, {
      isEntry: readsAsMessage,
      mask: (value, placeholder) => maskMessage(value, placeholder),
      summary: () => summary,
    });
  },

  validate(doc, transcript) {
    const problems: string[] = [];
    if (doc.kind === 'json-document') {
      const value = doc.document;
      if (!Array.isArray(value) && !(isRecord(value) && Array.isArray(value['messages']))) {
        problems.push('the document has no messages list');
      }
    } else if (doc.records.length > 0 && doc.records.every((r) => r.values.length === 0)) {
      problems.push('nothing in the output parses as JSON');
    }
    problems.push(...pairingProblems(doc));
    if (transcript.entries.length === 0 && problems.length === 0 && doc.records.some((r) => r.values.length > 0)) {
      problems.push('no messages read back from the output');
    }
    return problems;
  },
};

/** The summary message: a user message whose text is exactly the summary. */
function summaryMessage(text: string): JsonObject {
  return { role: 'user', content: text };
}

/** A masked tool message: the placeholder as its content; the call ids and everything else stay. */
function maskMessage(value: unknown, placeholder: string): unknown {
  if (!isRecord(value)) throw new Error('a masked entry is not a message object');
  return { ...value, content: placeholder };
}

/** Position of a message in its list, from the entry's source path (`messages[3]`, `[3]`). */
function messageIndex(path: string | undefined): number {
  const match = path === undefined ? null : /\[(\d+)\]$/.exec(path);
  if (!match?.[1]) throw new Error(`entry source path ${String(path)} does not name a message`);
  return Number(match[1]);
}

/** The record and value holding the active conversation, when the file is one conversation per line. */
function activeConversation(doc: ParsedDocument, transcript: Transcript): { record: number; value: number } | undefined {
  const first = transcript.entries[0];
  if (first?.source.path === undefined) return undefined;
  const record = first.source.records[0];
  const values = record === undefined ? undefined : doc.records[record]?.values;
  if (record === undefined || !values) return undefined;
  // The reader takes the last conversation, so within its line the last value with messages.
  for (let k = values.length - 1; k >= 0; k--) {
    const value = values[k];
    if (isRecord(value) && Array.isArray(value['messages'])) return { record, value: k };
  }
  return undefined;
}

/** A `{messages:[…]}` object (other keys kept, in order) or a bare message array, with the edit applied. */
function rewriteDocument(value: unknown, transcript: Transcript, edit: TranscriptEdit, summary: JsonObject | undefined): unknown {
  if (Array.isArray(value)) return rewriteMessages(value, transcript, edit, summary);
  if (isRecord(value) && Array.isArray(value['messages'])) {
    return { ...value, messages: rewriteMessages(value['messages'], transcript, edit, summary) };
  }
  throw new Error('the document has no messages list to rewrite');
}

function rewriteMessages(messages: readonly unknown[], transcript: Transcript, edit: TranscriptEdit, summary: JsonObject | undefined): unknown[] {
  const entryOf = new Map<number, number>();
  transcript.entries.forEach((entry, i) => {
    entryOf.set(messageIndex(entry.source.path), i);
  });
  let summaryBefore: number | undefined;
  if (edit.summary) {
    const at = transcript.entries[edit.summary.at];
    summaryBefore = at ? messageIndex(at.source.path) : messages.length;
  }
  const out: unknown[] = [];
  messages.forEach((message, m) => {
    if (m === summaryBefore) out.push(summary);
    const i = entryOf.get(m);
    // Messages the reader skipped (not objects, unknown roles) are not entries: they stay.
    if (i === undefined) {
      out.push(message);
      return;
    }
    if (edit.dropped.has(i)) return;
    const placeholder = edit.masked.get(i);
    out.push(placeholder === undefined ? message : maskMessage(message, placeholder));
  });
  if (summaryBefore === messages.length) out.push(summary);
  return out;
}

/**
 * JSON text laid out like the input document: the indent of its first indented line (two spaces
 * when none is), and its usual line terminator.
 */
function formatLike(doc: ParsedDocument, value: unknown): string {
  let indent = '  ';
  for (const record of doc.records.slice(1)) {
    const leading = /^[ \t]+/.exec(record.raw?.toString('utf8') ?? '');
    if (leading) {
      indent = leading[0];
      break;
    }
  }
  const text = JSON.stringify(value, null, indent);
  return dominantEol(doc) === '\r\n' ? text.replace(/\n/g, '\r\n') : text;
}

/**
 * What the Chat Completions API rejects in the active conversation: a call from an assistant message
 * not answered by a tool message before the next assistant or user message, a tool message answering
 * no open call, a tool message without a call id. A call still pending at the very end is allowed (the
 * agent was waiting for its result).
 */
function pairingProblems(doc: ParsedDocument): string[] {
  const problems: string[] = [];
  let open = new Map<string, string>();
  const closeOpen = (before: string): void => {
    for (const [id, from] of open) problems.push(`tool call ${id} (${from}) is not answered before ${before}`);
    open = new Map();
  };
  for (const { message, id } of locateMessages(doc)) {
    switch (message['role']) {
      case 'assistant':
        closeOpen(id);
        for (const call of toolCalls(message)) if (call.id !== undefined) open.set(call.id, id);
        break;
      case 'user':
        closeOpen(id);
        break;
      case 'tool':
      case 'function': {
        const ids = answeredIds(message);
        if (message['role'] === 'tool' && ids.length === 0) problems.push(`${id}: tool message without tool_call_id`);
        for (const callId of ids) {
          if (open.has(callId)) open.delete(callId);
          else problems.push(`${id} answers tool call ${callId}, which the assistant message before it did not make (or another message already answered)`);
        }
        break;
      }
      default:
        break;
    }
  }
  return problems;
}
