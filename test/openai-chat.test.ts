import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { devsAdapter } from '../src/formats/devs/read.js';
import { geminiAdapter } from '../src/formats/gemini/read.js';
import { openaiChatAdapter } from '../src/formats/openai-chat/read.js';
import type { Transcript } from '../src/formats/types.js';
import { parseDocument, serializeDocument } from '../src/io/jsonl.js';
import { realdataFiles, realdataName, realdataSkip } from './helpers/realdata.js';
import { fixtureDoc } from './helpers/transcripts.js';
import type { ParsedDocument } from '../src/io/jsonl.js';

const fixture = (name: string): ParsedDocument => fixtureDoc('openai-chat', name);
const read = (name: string) => openaiChatAdapter.read(fixture(name));
const shape = (t: Transcript) => t.entries.map((e) => [e.turn.id, e.turn.role, e.turn.type]);
const inline = (text: string) => parseDocument(Buffer.from(text), { path: 'inline' });

test('one message per line: roles map to canonical turns', () => {
  const t = read('messages-per-line.jsonl');
  assert.deepEqual(shape(t), [
    ['line-1', 'system', 'system'],
    ['line-2', 'system', 'system'],
    ['line-3', 'user', 'message'],
    ['line-4', 'assistant', 'message'],
    ['line-5', 'user', 'message'],
    ['line-6', 'assistant', 'message'],
  ]);
  // reasoning_content is text the model produced; it is counted with the answer.
  assert.equal(t.entries[3]?.turn.content, 'The user wants a short definition.\nIt replays your commits on top of another base commit.');
  assert.equal(t.entries[4]?.turn.content, 'And git merge?');
  assert.equal(t.entries[5]?.turn.content, 'I can only answer one git question per session.');
  for (const [i, e] of t.entries.entries()) assert.deepEqual(e.source, { records: [i] });
  assert.deepEqual(t.issues, []);
  assert.equal(t.recorded, undefined);
});

test('assistant tool_calls are tool_call turns; each is answered by a tool message', () => {
  const t = read('tool-calls-answered.jsonl');
  assert.deepEqual(shape(t), [
    ['line-1', 'system', 'system'],
    ['line-2', 'user', 'message'],
    ['line-3', 'assistant', 'tool_call'],
    ['line-4', 'tool', 'tool_result'],
    ['line-5', 'tool', 'tool_result'],
    ['line-6', 'assistant', 'message'],
  ]);
  assert.equal(t.entries[2]?.turn.content, 'Checking both.\nget_weather {"city":"Paris"}\nget_weather {"city":"Oslo"}');
  assert.equal(t.entries[4]?.turn.content, '4 C, snow');
  assert.deepEqual(t.issues, []);
});

test('an unanswered call, an orphan tool message and a tool message without id are warnings', () => {
  const t = read('tool-call-unanswered.jsonl');
  assert.equal(t.entries.length, 5);
  assert.deepEqual(
    t.issues.map((i) => [i.line, i.severity]),
    [
      [4, 'warning'],
      [5, 'warning'],
      [2, 'warning'],
    ],
  );
  assert.match(t.issues[0]?.reason ?? '', /call_ghost, which no earlier assistant message called/);
  assert.match(t.issues[1]?.reason ?? '', /without tool_call_id/);
  assert.match(t.issues[2]?.reason ?? '', /call_cat \(cat\) is never answered/);
});

test('one conversation per line: the last line is the active context', () => {
  const t = read('conversations-per-line.jsonl');
  assert.deepEqual(shape(t), [
    ['msg-0', 'system', 'system'],
    ['msg-1', 'user', 'message'],
    ['msg-2', 'assistant', 'tool_call'],
    ['msg-3', 'tool', 'tool_result'],
    ['msg-4', 'assistant', 'message'],
  ]);
  assert.deepEqual(t.entries[3]?.source, { records: [2], path: 'messages[3]' });
  assert.deepEqual(t.issues, []);
  assert.match(t.notes.join('\n'), /3 conversations \(one per line\): reading the last \(line 3\)/);
});

test('SWE-agent tool messages answer their calls through a tool_call_ids list', () => {
  const t = read('swe-agent-tool-call-ids.jsonl');
  assert.deepEqual(shape(t), [
    ['line-1', 'system', 'system'],
    ['line-2', 'user', 'message'],
    ['line-3', 'assistant', 'tool_call'],
    ['line-4', 'tool', 'tool_result'],
  ]);
  assert.deepEqual(t.issues, []);
  assert.match(t.entries[3]?.turn.content ?? '', /^\[File: tests\/test_sum\.py/);
});

test('image_url parts are blobs: a data: URL gives its base64 length, an http URL gives 0', () => {
  const t = read('content-parts-images.jsonl');
  assert.equal(t.entries[0]?.turn.content, 'Compare these two images.');
  assert.deepEqual(t.entries[0]?.blobs, [
    { kind: 'image', provider: 'openai', base64Length: 96, mediaType: 'image/png' },
    { kind: 'image', provider: 'openai', base64Length: 0 },
  ]);
  assert.deepEqual(t.entries[1]?.blobs, []);
});

test('a pretty-printed {messages} document reads as one conversation', () => {
  const doc = fixture('conversation-document.json');
  assert.equal(doc.kind, 'json-document');
  const t = openaiChatAdapter.read(doc);
  assert.deepEqual(shape(t), [
    ['msg-0', 'system', 'system'],
    ['msg-1', 'user', 'message'],
    ['msg-2', 'assistant', 'message'],
  ]);
  assert.deepEqual(t.entries[2]?.source, { records: [0], path: 'messages[2]' });
  assert.equal(openaiChatAdapter.detect(doc), 7);
  assert.equal(geminiAdapter.detect(doc), 0);
  assert.ok(serializeDocument(doc).equals(readFileSync(doc.path)));
});

test('detect: chat lines score 7, conversations 8; native devs lines at most 2, other formats 0', () => {
  assert.equal(openaiChatAdapter.detect(fixture('messages-per-line.jsonl')), 7);
  assert.equal(openaiChatAdapter.detect(fixture('swe-agent-tool-call-ids.jsonl')), 7);
  assert.equal(openaiChatAdapter.detect(fixture('conversations-per-line.jsonl')), 8);
  const devs = fixtureDoc('devs', 'basic-session.jsonl');
  const chatScore = openaiChatAdapter.detect(devs);
  assert.ok(chatScore <= 2, `devs lines scored ${chatScore}`);
  assert.ok(devsAdapter.detect(devs) > chatScore);
  // And the other way round: chat lines are not native turns.
  assert.ok(devsAdapter.detect(fixture('messages-per-line.jsonl')) < 7);
  const claude = inline('{"type":"user","uuid":"u","parentUuid":null,"sessionId":"s","message":{"role":"user","content":"hi"}}\n');
  const codex = inline('{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"user"}}\n');
  const gemini = inline('{"sessionId":"s","projectHash":"p","startTime":"t"}\n{"id":"u1","timestamp":"t","type":"user","content":"hi"}\n');
  for (const [name, doc] of Object.entries({ claude, codex, gemini })) {
    assert.equal(openaiChatAdapter.detect(doc), 0, name);
  }
});

test('never throws on odd values: non-objects and unknown roles are warnings', () => {
  const t = openaiChatAdapter.read(inline('[1,2]\n{"role":"narrator","content":"x"}\n{"role":"user","content":"hi"}\n'));
  assert.deepEqual(
    t.entries.map((e) => e.turn.id),
    ['line-3'],
  );
  assert.deepEqual(
    t.issues.map((i) => i.line),
    [1, 2],
  );
});

// No real OpenAI chat transcript is shared; the real files of the other formats must not look like one.
for (const path of realdataFiles()) {
  test(`real data is not OpenAI chat: ${realdataName(path)}`, { skip: realdataSkip }, () => {
    const doc = parseDocument(readFileSync(path), { path });
    assert.equal(openaiChatAdapter.detect(doc), 0);
  });
}
