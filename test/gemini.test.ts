import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { devsAdapter } from '../src/formats/devs/read.js';
import { geminiAdapter } from '../src/formats/gemini/read.js';
import { openaiChatAdapter } from '../src/formats/openai-chat/read.js';
import type { Transcript } from '../src/formats/types.js';
import { parseDocument, serializeDocument } from '../src/io/jsonl.js';
import { realdataFiles, realdataName, realdataSkip } from './helpers/realdata.js';
import { fixtureDoc } from './helpers/transcripts.js';
import type { ParsedDocument } from '../src/io/jsonl.js';

const fixture = (name: string): ParsedDocument => fixtureDoc('gemini', name);
const read = (name: string) => geminiAdapter.read(fixture(name));
const shape = (t: Transcript) => t.entries.map((e) => [e.turn.id, e.turn.role, e.turn.type]);
const inline = (text: string) => parseDocument(Buffer.from(text), { path: 'inline' });

test('a re-appended id replaces the message in place: last version, first position', () => {
  const t = read('last-wins-ids.jsonl');
  assert.deepEqual(shape(t), [
    ['u1', 'user', 'message'],
    ['g1', 'assistant', 'message'],
    ['g1#call0', 'assistant', 'tool_call'],
    ['g1#result0', 'tool', 'tool_result'],
    ['u2', 'user', 'message'],
  ]);
  assert.equal(t.entries[1]?.turn.content, 'Listing now.');
  // The version used is on line 6 (record 5); the first version (record 2) had no result yet.
  assert.deepEqual(t.entries[1]?.source, { records: [5] });
  assert.deepEqual(t.entries[3]?.source, { records: [5], path: 'toolCalls[0].result' });
  assert.equal(t.entries[3]?.turn.content, 'a.txt\nb.txt');
  assert.equal(t.entries[0]?.turn.timestamp, '2026-05-01T10:00:01.000Z');
  assert.equal(t.issues.length, 0);
  assert.match(t.notes.join('\n'), /1 re-appended message version/);
  assert.equal(t.recorded?.contextTokens, 1020);
  assert.equal(t.recorded?.atEntry, 1);
});

test('$rewindTo deletes the named message and everything after it', () => {
  const t = read('rewind-to.jsonl');
  assert.deepEqual(
    t.entries.map((e) => e.turn.id),
    ['u1', 'g1', 'u4', 'g4'],
  );
  assert.equal(t.recorded?.contextTokens, 145);
  assert.equal(t.issues.length, 0);
  assert.match(t.notes.join('\n'), /1 \$rewindTo/);
});

test('$rewindTo to an unknown id is reported and ignored', () => {
  const t = read('rewind-to-unknown-id.jsonl');
  assert.deepEqual(
    t.entries.map((e) => e.turn.id),
    ['u1', 'g1'],
  );
  assert.deepEqual(
    t.issues.map((i) => [i.line, i.severity]),
    [[3, 'warning']],
  );
  assert.match(t.issues[0]?.reason ?? '', /no-such-message/);
});

test('a $set.messages checkpoint replaces the message list; the snapshot is a summary turn', () => {
  const t = read('set-messages-checkpoint.jsonl');
  assert.deepEqual(shape(t), [
    ['c1', 'user', 'summary'],
    ['c2', 'assistant', 'message'],
    ['u3', 'user', 'message'],
    ['g3', 'assistant', 'message'],
  ]);
  assert.deepEqual(t.entries[0]?.source, { records: [4], path: '$set.messages[0]' });
  assert.deepEqual(t.entries[1]?.source, { records: [4], path: '$set.messages[1]' });
  assert.deepEqual(t.entries[2]?.source, { records: [5] });
  // The usage before the checkpoint (90,500) is gone with the messages that carried it.
  assert.equal(t.recorded?.contextTokens, 1230);
  assert.match(t.notes.join('\n'), /1 \$set\.messages checkpoint/);
});

test('a $set metadata patch changes no message', () => {
  const t = read('set-metadata-patch.jsonl');
  assert.deepEqual(
    t.entries.map((e) => e.turn.id),
    ['u1', 'g1'],
  );
  assert.equal(t.issues.length, 0);
  assert.deepEqual(t.notes, []);
  assert.equal(t.recorded, undefined);
});

test('info / warning / error records are UI notices, not turns', () => {
  const t = read('info-records-skipped.jsonl');
  assert.deepEqual(
    t.entries.map((e) => e.turn.id),
    ['u1', 'g1'],
  );
  assert.match(t.notes.join('\n'), /^3 UI notice record/m);
});

test('each toolCalls entry is a call turn followed by its result turn', () => {
  const t = read('tool-calls-paired.jsonl');
  assert.deepEqual(shape(t), [
    ['u1', 'user', 'message'],
    ['g1', 'assistant', 'message'],
    ['g1#call0', 'assistant', 'tool_call'],
    ['g1#result0', 'tool', 'tool_result'],
    ['g1#call1', 'assistant', 'tool_call'],
    ['g1#result1', 'tool', 'tool_result'],
    ['g2', 'assistant', 'message'],
  ]);
  const content = t.entries.map((e) => e.turn.content);
  assert.equal(content[1], 'Reading both.');
  assert.equal(content[2], 'read_file {"absolute_path":"/w/a.txt"}');
  assert.equal(content[3], 'contents of a');
  // An error response has no `output`: its JSON is what the model sees.
  assert.equal(content[5], '{"error":"File not found: /w/missing.txt"}');
  assert.deepEqual(t.entries[4]?.source, { records: [2], path: 'toolCalls[1]' });
  // Thoughts are not resent by Gemini CLI: no turn, only a note.
  assert.match(t.notes.join('\n'), /1 thought summary/);
  assert.equal(t.recorded?.contextTokens, 638);
  assert.equal(t.recorded?.atEntry, 6);
});

test('a tool call without a recorded result is a warning, and no result turn is made', () => {
  const t = read('tool-call-without-result.jsonl');
  assert.deepEqual(
    t.entries.map((e) => e.turn.id),
    ['u1', 'g1#call0'],
  );
  assert.deepEqual(
    t.issues.map((i) => i.line),
    [3],
  );
  assert.match(t.issues[0]?.reason ?? '', /run_shell_command \(status executing\) has no recorded result/);
});

test('inlineData parts become blobs (image or document by mimeType)', () => {
  const t = read('inline-data-blobs.jsonl');
  assert.equal(t.entries[0]?.turn.content, 'What is in this screenshot and this PDF?');
  assert.deepEqual(t.entries[0]?.blobs, [
    { kind: 'image', provider: 'gemini', base64Length: 96, mediaType: 'image/png' },
    { kind: 'document', provider: 'gemini', base64Length: 12, mediaType: 'application/pdf' },
  ]);
});

test('the first user record with a <session_context> bootstrap is pinned system context', () => {
  const t = read('session-context-bootstrap.jsonl');
  assert.deepEqual(shape(t), [
    ['u0', 'user', 'system'],
    ['g0', 'assistant', 'message'],
    ['u1', 'user', 'message'],
  ]);
});

test('legacy document: pretty-printed and one-line forms read the same', () => {
  const pretty = fixture('legacy-document.json');
  const oneLine = fixture('legacy-document-one-line.jsonl');
  assert.equal(pretty.kind, 'json-document');
  assert.equal(oneLine.kind, 'jsonl');
  const a = geminiAdapter.read(pretty);
  const b = geminiAdapter.read(oneLine);
  assert.deepEqual(shape(a), [
    ['m0', 'user', 'message'],
    ['m1', 'assistant', 'message'],
    ['m1#call0', 'assistant', 'tool_call'],
    ['m1#result0', 'tool', 'tool_result'],
    ['m3', 'assistant', 'message'],
  ]);
  assert.deepEqual(
    a.entries.map((e) => e.turn),
    b.entries.map((e) => e.turn),
  );
  assert.deepEqual(
    a.entries.map((e) => e.source),
    [
      { records: [0], path: 'messages[0]' },
      { records: [0], path: 'messages[1]' },
      { records: [0], path: 'messages[1].toolCalls[0]' },
      { records: [0], path: 'messages[1].toolCalls[0].result' },
      { records: [0], path: 'messages[3]' },
    ],
  );
  // m4 is empty with all-zero tokens: skipped, and its zeros are not the recorded usage.
  assert.equal(a.recorded?.contextTokens, 12350 + 51);
  assert.match(a.notes.join('\n'), /1 empty gemini record/);
  assert.match(a.notes.join('\n'), /1 UI notice/);
  assert.equal(geminiAdapter.detect(pretty), 10);
  assert.equal(geminiAdapter.detect(oneLine), 10);
  assert.deepEqual(serializeDocument(pretty), readFileSync(pretty.path));
});

test('detect: Gemini shapes score high; Claude Code, Codex, devs and OpenAI chat score 0', () => {
  for (const name of ['last-wins-ids.jsonl', 'rewind-to.jsonl', 'set-messages-checkpoint.jsonl']) {
    assert.equal(geminiAdapter.detect(fixture(name)), 10, name);
  }
  // Without the header line, message records alone still read as Gemini.
  const headless = inline('{"id":"u1","timestamp":"t","type":"user","content":"hi"}\n{"$set":{"lastUpdated":"t"}}\n');
  assert.equal(geminiAdapter.detect(headless), 8);
  const claude = inline('{"type":"user","uuid":"u","parentUuid":null,"sessionId":"s","message":{"role":"user","content":"hi"}}\n');
  const codex = inline('{"timestamp":"t","type":"response_item","payload":{"type":"message"}}\n');
  const chat = inline('{"role":"user","content":"hi"}\n{"messages":[{"role":"user","content":"hi"}]}\n');
  const devs = fixtureDoc('devs', 'basic-session.jsonl');
  for (const [name, doc] of Object.entries({ claude, codex, chat, devs })) {
    assert.equal(geminiAdapter.detect(doc), 0, name);
  }
  assert.equal(devsAdapter.detect(fixture('rewind-to.jsonl')), 0);
});

/**
 * Facts checked independently with jq on the files (not with this adapter):
 *   jq '[.messages[]|select(.type=="user")]|length'                  → users
 *   jq '[.messages[]|select(.type=="gemini" and ((.content|length)>0 or ((.toolCalls//[])|length)==0))]|length'
 *                                                                     → assistant messages
 *   jq '[.messages[]|.toolCalls[]?]|length'                           → tool calls (= results here)
 *   jq '[.messages[]|select(.tokens.input>0)|.tokens]|last|.input+.output' → contextTokens
 * (for 03, the same over `jq -s` of the JSONL lines).
 */
const REAL: Record<string, { entries: number; users: number; messages: number; calls: number; context: number; kind: string }> = {
  // 18 messages (3 user, 15 gemini), 13 tool calls (one cancelled, one error), last tokens 9198 + 101.
  'session-2025-10-27T19-55-981c87cb.json': { entries: 43, users: 3, messages: 14, calls: 13, context: 9299, kind: 'json-document' },
  // 13 messages (1 user, 11 gemini, 1 info), 9 tool calls, last tokens 14200 + 38.
  'full.jsonl': { entries: 29, users: 1, messages: 10, calls: 9, context: 14238, kind: 'json-document' },
  // JSONL v0.40: header, 2 gemini records, 1 tool call; last tokens 12069 + 147.
  'jsonl_v040.jsonl': { entries: 4, users: 1, messages: 1, calls: 1, context: 12216, kind: 'jsonl' },
};

for (const path of realdataFiles('gemini')) {
  test(`real data: ${realdataName(path)}`, { skip: realdataSkip }, () => {
    const bytes = readFileSync(path);
    const doc = parseDocument(bytes, { path, keepRaw: true });
    const t = geminiAdapter.read(doc);
    const expected = REAL[basename(path)];
    if (!expected) throw new Error(`no expectations written for ${realdataName(path)}`);
    assert.equal(doc.kind, expected.kind);
    assert.equal(t.entries.length, expected.entries);
    const count = (role: string, type: string) => t.entries.filter((e) => e.turn.role === role && e.turn.type === type).length;
    assert.equal(count('user', 'message'), expected.users);
    assert.equal(count('assistant', 'message'), expected.messages);
    assert.equal(count('assistant', 'tool_call'), expected.calls);
    assert.equal(count('tool', 'tool_result'), expected.calls);
    assert.equal(t.recorded?.contextTokens, expected.context);
    assert.deepEqual(t.issues, []);
    for (const e of t.entries) {
      assert.ok(e.source.records.length > 0, e.turn.id);
      for (const r of e.source.records) assert.ok(r >= 0 && r < doc.records.length, `${e.turn.id}: record ${r}`);
    }
    assert.equal(new Set(t.entries.map((e) => e.turn.id)).size, t.entries.length, 'turn ids are unique');
    const score = geminiAdapter.detect(doc);
    assert.ok(score > 5, `score ${score}`);
    assert.ok(score > openaiChatAdapter.detect(doc));
    // Byte-identical round trip (for 02, the pretty-printed document under a .jsonl name).
    assert.ok(serializeDocument(doc).equals(bytes));
  });
}
