import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { TranscriptEdit } from '../src/core/prune/edit.js';
import { SUMMARY_PREFIX } from '../src/core/prune/edit.js';
import { buildUnits, toolIds } from '../src/core/prune/units.js';
import { detectFormat, readTranscript } from '../src/formats/index.js';
import { openaiChatAdapter } from '../src/formats/openai-chat/read.js';
import { openaiChatWriter } from '../src/formats/openai-chat/write.js';
import type { Transcript } from '../src/formats/types.js';
import { InvalidOutputError, writeTranscript } from '../src/formats/write.js';
import type { WrittenTranscript } from '../src/formats/write.js';
import { parseDocument } from '../src/io/jsonl.js';
import type { ParsedDocument } from '../src/io/jsonl.js';
import { dropMiddleEdit, editOf } from './helpers/edits.js';
import { realdataFiles, realdataName, realdataSkip } from './helpers/realdata.js';
import { fixtureDoc, inlineDoc } from './helpers/transcripts.js';

const fixture = (name: string): ParsedDocument => fixtureDoc('openai-chat', name);
const SUMMARY = `${SUMMARY_PREFIX}\nThe user asked about the weather; both cities were looked up.`;
const bytesDoc = (text: string): ParsedDocument => parseDocument(Buffer.from(text), { path: 'inline', keepRaw: true });

function makeEdit(dropped: readonly number[], masked: Readonly<Record<number, string>> = {}): TranscriptEdit {
  return editOf({ dropped, masked: Object.entries(masked).map(([i, text]) => [Number(i), text] as const), summaryText: SUMMARY });
}

function write(doc: ParsedDocument, edit: TranscriptEdit, transcript: Transcript = openaiChatAdapter.read(doc)): WrittenTranscript {
  return writeTranscript(doc, transcript, edit, openaiChatWriter);
}

type Shape = [role: string, type: string, content: string];
const shape = (t: Transcript): Shape[] => t.entries.map((e) => [e.turn.role, e.turn.type, e.turn.content]);

/** Turn ids are positional in this format, so a read-back is compared on role, type and content. */
function expectedShape(t: Transcript, edit: TranscriptEdit): Shape[] {
  const summary: Shape | undefined = edit.summary ? ['user', 'message', edit.summary.text] : undefined;
  const out: Shape[] = [];
  t.entries.forEach((e, i) => {
    if (summary && i === edit.summary?.at) out.push(summary);
    if (edit.dropped.has(i)) return;
    out.push([e.turn.role, e.turn.type, edit.masked.get(i) ?? e.turn.content]);
  });
  if (summary && edit.summary && edit.summary.at >= t.entries.length) out.push(summary);
  return out;
}

/** `{from}` lines are byte-identical, and every line the edit does not touch comes back as `{from}`. */
function assertUntouchedLinesKept(input: ParsedDocument, touched: ReadonlySet<number>, written: WrittenTranscript): void {
  assert.equal(written.document.records.length, written.records.length, 'one output line per record');
  const from = new Set<number>();
  written.records.forEach((record, j) => {
    if (!('from' in record)) return;
    from.add(record.from);
    const original = input.records[record.from]?.raw;
    assert.ok(original && written.document.records[j]?.raw?.equals(original), `output line ${j + 1} is input line ${record.from + 1}, byte for byte`);
  });
  for (const record of input.records) {
    assert.equal(from.has(record.index), !touched.has(record.index), `input line ${record.line} ${touched.has(record.index) ? 'rewritten' : 'kept'}`);
  }
}

/** Input lines holding a dropped or masked entry (one message per line). */
function touchedLines(t: Transcript, edit: TranscriptEdit): Set<number> {
  const out = new Set<number>();
  t.entries.forEach((e, i) => {
    if (edit.dropped.has(i) || edit.masked.has(i)) for (const r of e.source.records) out.add(r);
  });
  return out;
}

test('links: an assistant message makes its tool_calls ids, tool messages answer theirs, and they form one unit', () => {
  const t = openaiChatAdapter.read(fixture('tool-calls-answered.jsonl'));
  assert.deepEqual(
    t.entries.map((e) => e.links),
    [undefined, undefined, { calls: ['call_paris', 'call_oslo'] }, { answers: ['call_paris'] }, { answers: ['call_oslo'] }, undefined],
  );
  assert.deepEqual(
    buildUnits(t.entries).map((u) => u.entries),
    [[0], [1], [2, 3, 4], [5]],
  );
  const swe = openaiChatAdapter.read(fixture('swe-agent-tool-call-ids.jsonl'));
  assert.deepEqual(swe.entries[3]?.links, { answers: ['toolu_01'] });
});

test('one message per line, drop: the lines go and a user message with exactly the summary text stands in their place', () => {
  const doc = fixture('messages-per-line.jsonl');
  const t = openaiChatAdapter.read(doc);
  const edit = makeEdit([2, 3]);
  const written = write(doc, edit, t);
  assert.deepEqual(written.records, [{ from: 0 }, { from: 1 }, { text: JSON.stringify({ role: 'user', content: SUMMARY }) }, { from: 4 }, { from: 5 }]);
  assert.deepEqual(shape(written.readBack), expectedShape(t, edit));
  assert.equal(written.readBack.entries[2]?.turn.content, SUMMARY);
  assertUntouchedLinesKept(doc, touchedLines(t, edit), written);
  assert.equal(detectFormat(written.document).adapter.name, 'openai-chat');
});

test('one message per line: a call and both its answers are dropped together; the output still validates', () => {
  const doc = fixture('tool-calls-answered.jsonl');
  const t = openaiChatAdapter.read(doc);
  const edit = dropMiddleEdit(t, { keepHead: 2, keepTail: 1, summaryText: SUMMARY });
  assert.deepEqual([...edit.dropped], [2, 3, 4]);
  const written = write(doc, edit, t);
  assert.deepEqual(shape(written.readBack), expectedShape(t, edit));
  assertUntouchedLinesKept(doc, touchedLines(t, edit), written);
});

test('mask: the content becomes the placeholder string; tool_call_id, name and other fields stay, in order', () => {
  const doc = fixture('tool-calls-answered.jsonl');
  const t = openaiChatAdapter.read(doc);
  const edit = makeEdit([], { 4: '[masked call_oslo]' });
  const written = write(doc, edit, t);
  const original = doc.records[4]?.values[0] as Record<string, unknown>;
  assert.deepEqual(written.records[4], { text: JSON.stringify({ ...original, content: '[masked call_oslo]' }), replaces: 4 });
  assert.deepEqual(Object.keys(JSON.parse((written.records[4] as { text: string }).text)), ['role', 'tool_call_id', 'name', 'content']);
  assert.deepEqual(shape(written.readBack), expectedShape(t, edit));
  assert.deepEqual(written.readBack.entries[4]?.links, { answers: ['call_oslo'] });

  // SWE-agent: the tool_call_ids list and the agent's own fields stay.
  const swe = fixture('swe-agent-tool-call-ids.jsonl');
  const sweWritten = write(swe, makeEdit([], { 3: '[masked]' }));
  const masked = JSON.parse((sweWritten.records[3] as { text: string }).text);
  assert.deepEqual(masked, { ...(swe.records[3]?.values[0] as object), content: '[masked]' });
  assert.equal(sweWritten.readBack.entries[3]?.turn.content, '[masked]');
});

test('summary placement and multi-drop: one summary where the first dropped message was, the rest in order', () => {
  const doc = fixture('messages-per-line.jsonl');
  const t = openaiChatAdapter.read(doc);
  for (const dropped of [[1], [2, 4], [2, 3, 5], [5]]) {
    const edit = makeEdit(dropped);
    const written = write(doc, edit, t);
    assert.deepEqual(shape(written.readBack), expectedShape(t, edit), `dropping ${dropped.join(',')}`);
    const contents = written.readBack.entries.map((e) => e.turn.content);
    assert.equal(contents.indexOf(SUMMARY), dropped[0]);
    assert.equal(contents.filter((c) => c.startsWith(SUMMARY_PREFIX)).length, 1);
    assertUntouchedLinesKept(doc, touchedLines(t, edit), written);
  }
});

test('nothing dropped, only masked: no summary, same lines; an edit that changes nothing gives the same bytes', () => {
  const doc = fixture('tool-calls-answered.jsonl');
  const t = openaiChatAdapter.read(doc);
  const edit = makeEdit([], { 3: '[m1]', 4: '[m2]' });
  const written = write(doc, edit, t);
  assert.equal(written.records.length, doc.records.length);
  assert.deepEqual(shape(written.readBack), expectedShape(t, edit));
  assertUntouchedLinesKept(doc, touchedLines(t, edit), written);
  for (const name of ['messages-per-line.jsonl', 'conversations-per-line.jsonl', 'conversation-document.json', 'swe-agent-tool-call-ids.jsonl']) {
    const unchanged = fixture(name);
    assert.ok(write(unchanged, makeEdit([])).bytes.equals(readFileSync(unchanged.path)), name);
  }
});

test('one conversation per line: only the last (active) line is rewritten, compact, its other keys kept', () => {
  const doc = fixture('conversations-per-line.jsonl');
  const t = openaiChatAdapter.read(doc);
  const edit = makeEdit([2, 3], { 4: '[masked]' });
  const written = write(doc, edit, t);
  const last = doc.records[2]?.values[0] as { messages: unknown[]; tools: unknown[] };
  const messages = [last.messages[0], last.messages[1], { role: 'user', content: SUMMARY }, { ...(last.messages[4] as object), content: '[masked]' }];
  assert.deepEqual(written.records, [{ from: 0 }, { from: 1 }, { text: JSON.stringify({ messages, tools: last.tools }), replaces: 2 }]);
  assert.deepEqual(shape(written.readBack), expectedShape(t, edit));
  assert.equal(detectFormat(written.document).adapter.name, 'openai-chat');
});

test('a JSON document is rewritten whole, indented and terminated like the input', () => {
  const doc = fixture('conversation-document.json');
  const t = openaiChatAdapter.read(doc);
  const edit = makeEdit([1]);
  const written = write(doc, edit, t);
  const input = doc.document as { messages: unknown[]; tools: unknown[] };
  const expected = { messages: [input.messages[0], { role: 'user', content: SUMMARY }, input.messages[2]], tools: [] };
  assert.deepEqual(written.records, [{ text: JSON.stringify(expected, null, 2) }]);
  assert.equal(written.document.kind, 'json-document');
  assert.deepEqual(shape(written.readBack), expectedShape(t, edit));

  // A bare array, tab-indented, with CRLF.
  const messages = [
    { role: 'system', content: 's' },
    { role: 'user', content: 'u' },
    { role: 'assistant', content: 'a' },
  ];
  const tabbed = bytesDoc(`${JSON.stringify(messages, null, '\t').replace(/\n/g, '\r\n')}\r\n`);
  assert.equal(tabbed.kind, 'json-document');
  const out = write(tabbed, makeEdit([1]));
  const text = `${JSON.stringify([messages[0], { role: 'user', content: SUMMARY }, messages[2]], null, '\t').replace(/\n/g, '\r\n')}\r\n`;
  assert.equal(out.bytes.toString('utf8'), text);
});

test('messages the reader skips (unknown roles, non-objects) stay where they are', () => {
  const doc = bytesDoc(
    '{"messages":[{"role":"system","content":"s"},7,{"role":"user","content":"u1"},{"role":"narrator","content":"n"},{"role":"assistant","content":"a"},{"role":"user","content":"u2"}]}\n',
  );
  const t = openaiChatAdapter.read(doc);
  const written = write(doc, makeEdit([1, 2]));
  const value = written.document.records[0]?.values[0] as { messages: unknown[] };
  assert.deepEqual(value.messages, [
    { role: 'system', content: 's' },
    7,
    { role: 'user', content: SUMMARY },
    { role: 'narrator', content: 'n' },
    { role: 'user', content: 'u2' },
  ]);
  assert.deepEqual(shape(written.readBack), expectedShape(t, makeEdit([1, 2])));
  // Line per message: a non-message line between dropped messages is kept.
  const lines = inlineDoc(
    { role: 'system', content: 's' },
    { role: 'user', content: 'u1' },
    [1, 2],
    { role: 'assistant', content: 'a' },
    { role: 'user', content: 'u2' },
  );
  const lineOut = write(lines, makeEdit([1, 2]));
  assert.deepEqual(lineOut.records, [{ from: 0 }, { text: JSON.stringify({ role: 'user', content: SUMMARY }) }, { from: 2 }, { from: 4 }]);
});

// ---- validate() must catch real corruption ----

const call = {
  role: 'assistant',
  content: null,
  tool_calls: [
    { id: 'c1', type: 'function', function: { name: 'ls', arguments: '{}' } },
    { id: 'c2', type: 'function', function: { name: 'cat', arguments: '{}' } },
  ],
};
const answer = (id: string) => ({ role: 'tool', tool_call_id: id, content: `result ${id}` });
const user = { role: 'user', content: 'next' };

function problemsOf(doc: ParsedDocument): string {
  return openaiChatWriter.validate(doc, openaiChatAdapter.read(doc)).join('\n');
}

test('validate: a complete conversation passes; a call still pending at the very end is allowed', () => {
  assert.equal(problemsOf(inlineDoc(user, call, answer('c1'), answer('c2'), user)), '');
  assert.equal(problemsOf(inlineDoc(user, call, answer('c2'), answer('c1'))), '');
  assert.equal(problemsOf(inlineDoc(user, call)), '');
  assert.equal(problemsOf(inlineDoc(user, call, { role: 'tool', tool_call_ids: ['c1', 'c2'], content: 'both' }, user)), '');
});

test('validate: an unanswered call, an orphan, a duplicate answer, a tool message without id are problems', () => {
  assert.match(problemsOf(inlineDoc(user, call, answer('c1'), user)), /tool call c2 \(line-2\) is not answered before line-4/);
  assert.match(problemsOf(inlineDoc(user, call, answer('c1'), call)), /tool call c2 .* is not answered/);
  assert.match(problemsOf(inlineDoc(user, answer('c1'))), /line-2 answers tool call c1, which the assistant message before it did not make/);
  assert.match(problemsOf(inlineDoc(user, call, answer('c1'), answer('c1'), answer('c2'))), /line-4 answers tool call c1/);
  assert.match(problemsOf(inlineDoc(user, call, answer('c1'), answer('c2'), { role: 'tool', content: 'x' })), /tool message without tool_call_id/);
  // In one conversation per line, it is the active conversation that is checked.
  const conversations = inlineDoc({ messages: [user, call, answer('c1'), answer('c2')] }, { messages: [user, call, user] });
  assert.match(problemsOf(conversations), /tool call c1 .* not answered/);
});

test('validate: a document without a messages list, or nothing that parses, is a problem', () => {
  assert.match(problemsOf(bytesDoc('{\n  "history": []\n}\n')), /no messages list/);
  assert.match(problemsOf(bytesDoc('not json\nnor this\n')), /nothing in the output parses/);
});

test('writeTranscript refuses an edit that drops a call but keeps its answers, or the other way round', () => {
  const doc = inlineDoc({ role: 'system', content: 's' }, user, call, answer('c1'), answer('c2'), { role: 'assistant', content: 'done' });
  assert.throws(
    () => write(doc, makeEdit([2])),
    (e) => e instanceof InvalidOutputError && /answers tool call c1/.test(e.message),
  );
  assert.throws(
    () => write(doc, makeEdit([4])),
    (e) => e instanceof InvalidOutputError && /c2 .* not answered/.test(e.message),
  );
});

// ---- real data ----

type Message = Record<string, unknown>;

/** Writes `doc` with drop-middle edits (plain, with masks, masks only) and checks what a prune promises. */
function assertRealWrite(doc: ParsedDocument, shapeName: string): void {
  const t = openaiChatAdapter.read(doc);
  assert.ok(t.entries.length > 0, 'messages were read');
  assert.deepEqual(openaiChatWriter.validate(doc, t), [], 'the input itself is valid');
  const n = t.entries.length;
  const plain = dropMiddleEdit(t);
  const keptResults = t.entries.flatMap((e, i) => (e.turn.type === 'tool_result' && !plain.dropped.has(i) ? [i] : []));
  const allResults = t.entries.flatMap((e, i) => (e.turn.type === 'tool_result' ? [i] : []));
  for (const edit of [plain, dropMiddleEdit(t, { mask: keptResults }), dropMiddleEdit(t, { keepHead: n, mask: allResults })]) {
    const written = write(doc, edit, t);
    assert.deepEqual(shape(written.readBack), expectedShape(t, edit));
    assert.equal(detectFormat(written.document).adapter.name, 'openai-chat');
    if (shapeName === 'lines') assertUntouchedLinesKept(doc, touchedLines(t, edit), written);
    else if (shapeName === 'conversations') {
      // Only the active conversation's line changes (when anything does).
      const active = t.entries[0]?.source.records[0] ?? -1;
      const changes = edit.dropped.size > 0 || edit.masked.size > 0;
      assertUntouchedLinesKept(doc, new Set(changes ? [active] : []), written);
    } else assert.equal(written.document.kind, 'json-document');
  }
}

for (const path of realdataFiles('openai-chat')) {
  test(`real OpenAI chat file written with drop-middle edits: ${realdataName(path)}`, { skip: realdataSkip }, () => {
    const doc = parseDocument(readFileSync(path), { path, keepRaw: true });
    assertRealWrite(doc, doc.kind === 'json-document' ? 'document' : openaiChatAdapter.read(doc).entries[0]?.source.path ? 'conversations' : 'lines');
  });
}

/**
 * No real OpenAI chat file is shared, so the real transcripts of the other formats are turned into chat
 * messages (tool calls with their ids, answers with `tool_call_id`, or a `tool_call_ids` list when one
 * turn answers several), keeping only calls answered before the next message, as the API requires.
 */
function asChatMessages(t: Transcript): Message[] {
  const raw: Message[] = t.entries.map((e) => {
    const { calls, answers } = toolIds(e);
    if (e.turn.role === 'tool' || (e.turn.type === 'tool_result' && answers.length > 0)) {
      return { role: 'tool', content: e.turn.content, ...(answers.length === 1 ? { tool_call_id: answers[0] } : { tool_call_ids: answers }) };
    }
    if (e.turn.role === 'assistant') {
      const toolCalls = calls.map((id) => ({ id, type: 'function', function: { name: 'tool', arguments: '{}' } }));
      return { role: 'assistant', content: e.turn.content, ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}) };
    }
    return { role: e.turn.role, content: e.turn.content };
  });
  // Keep the pairs the API accepts: answers right after their assistant message, calls all answered.
  const out: Message[] = [];
  let assistant: Message | undefined;
  let open = new Set<string>();
  let answered = new Set<string>();
  const close = (): void => {
    if (assistant && Array.isArray(assistant['tool_calls'])) {
      const kept = (assistant['tool_calls'] as { id: string }[]).filter((c) => answered.has(c.id));
      if (kept.length > 0) assistant['tool_calls'] = kept;
      else delete assistant['tool_calls'];
    }
    assistant = undefined;
    open = new Set();
    answered = new Set();
  };
  for (const message of raw) {
    if (message['role'] === 'tool') {
      const ids = typeof message['tool_call_id'] === 'string' ? [message['tool_call_id']] : (message['tool_call_ids'] as string[]);
      if (ids.length === 0 || !ids.every((id) => open.has(id))) continue;
      for (const id of ids) {
        open.delete(id);
        answered.add(id);
      }
      out.push(message);
      continue;
    }
    close();
    if (message['role'] === 'assistant') {
      assistant = message;
      open = new Set(((message['tool_calls'] as { id: string }[] | undefined) ?? []).map((c) => c.id));
    }
    out.push(message);
  }
  close();
  return out;
}

const jsonl = (values: readonly unknown[]): ParsedDocument => bytesDoc(values.map((v) => `${JSON.stringify(v)}\n`).join(''));

for (const path of realdataFiles()) {
  test(`real content as OpenAI chat (lines, conversations, document), written with drop-middle edits: ${realdataName(path)}`, { skip: realdataSkip }, () => {
    const messages = asChatMessages(readTranscript(parseDocument(readFileSync(path), { path })));
    const lines = jsonl(messages);
    assert.equal(detectFormat(lines).adapter.name, 'openai-chat');
    assertRealWrite(lines, 'lines');
    // An older conversation first: the last line is the active one.
    assertRealWrite(
      jsonl([
        { messages: messages.slice(0, 3), tools: [] },
        { messages, tools: [] },
      ]),
      'conversations',
    );
    assertRealWrite(bytesDoc(`${JSON.stringify({ messages }, null, 2)}\n`), 'document');
  });
}
