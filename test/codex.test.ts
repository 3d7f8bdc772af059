import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { codexAdapter } from '../src/formats/codex/read.js';
import { devsAdapter } from '../src/formats/devs/read.js';
import { geminiAdapter } from '../src/formats/gemini/read.js';
import { openaiChatAdapter } from '../src/formats/openai-chat/read.js';
import type { Transcript } from '../src/formats/types.js';
import { parseDocument, serializeDocument } from '../src/io/jsonl.js';
import type { ParsedDocument } from '../src/io/jsonl.js';
import { realdataFiles, realdataName, realdataSkip } from './helpers/realdata.js';
import { assertTranscriptInvariants, fixtureDoc, inlineDoc } from './helpers/transcripts.js';

const fixture = (name: string): ParsedDocument => fixtureDoc('codex', name);
const inline = inlineDoc;
const shape = (t: Transcript) => t.entries.map((e) => [e.turn.role, e.turn.type, e.turn.content]);

function checkInvariants(doc: ParsedDocument, t: Transcript): void {
  assertTranscriptInvariants(doc, t);
}

test('basic session: system prompt, developer and injected context pinned, calls paired, event_msg ignored', () => {
  const doc = fixture('basic-session.jsonl');
  const t = codexAdapter.read(doc);
  assert.equal(t.format, 'codex');
  assert.deepEqual(
    t.entries.map((e) => [e.turn.id, e.turn.role, e.turn.type]),
    [
      ['line-1.instructions', 'system', 'system'],
      ['line-2', 'system', 'system'],
      ['line-3', 'user', 'system'],
      ['msg_user_1', 'user', 'message'],
      ['rs_1', 'assistant', 'reasoning'],
      ['call_1', 'assistant', 'tool_call'],
      ['call_1.output', 'tool', 'tool_result'],
      ['call_2', 'assistant', 'tool_call'],
      ['call_2.output', 'tool', 'tool_result'],
      ['line-14', 'assistant', 'message'],
    ],
  );
  assert.deepEqual(t.entries[0]?.source, { records: [0], path: 'payload.base_instructions' });
  assert.equal(t.entries[0]?.turn.content, 'You are Codex, a coding agent.');
  assert.equal(t.entries[5]?.turn.content, 'shell {"command":["ls"]}');
  assert.equal(t.entries[5]?.turn['callId'], 'call_1');
  assert.equal(t.entries[6]?.turn.content, 'a.txt\nb.txt\n');
  assert.equal(t.entries[7]?.turn.content, 'apply_patch *** Begin Patch\n*** Add File: c.txt\n+hi\n*** End Patch');
  assert.equal(t.entries[3]?.turn.timestamp, '2025-10-01T10:00:05.000Z');
  // The last token_count: 1400 + 25, recorded after the assistant message (entry 9).
  assert.deepEqual(t.recorded, {
    contextTokens: 1425,
    source: 'last token_count (line 16): last_token_usage input_tokens + output_tokens',
    contextWindow: 272000,
    atEntry: 9,
  });
  assert.deepEqual(t.issues, []);
  assert.ok(t.notes.some((n) => /5 event_msg record/.test(n)));
  checkInvariants(doc, t);
});

test('a compacted record with replacement_history replaces everything before it', () => {
  const doc = fixture('compacted-replaces-history.jsonl');
  const t = codexAdapter.read(doc);
  assert.deepEqual(shape(t), [
    ['system', 'system', 'You are Codex, a coding agent.'],
    ['system', 'system', 'developer context'],
    ['user', 'message', 'first question'],
    ['user', 'summary', ''],
    ['user', 'message', 'second question'],
    ['assistant', 'message', 'second answer'],
  ]);
  assert.deepEqual(
    t.entries.slice(1, 4).map((e) => e.source),
    [
      { records: [6], path: 'payload.replacement_history[0]' },
      { records: [6], path: 'payload.replacement_history[1]' },
      { records: [6], path: 'payload.replacement_history[2]' },
    ],
  );
  assert.deepEqual(t.entries[3]?.blobs, [{ kind: 'encrypted', provider: 'openai', base64Length: 26 }]);
  // The old call and its output are gone with the replaced history.
  assert.ok(!t.entries.some((e) => e.turn['callId'] === 'call_old'));
  // The only usage was recorded before the compaction: it describes a history that is gone.
  assert.equal(t.recorded, undefined);
  assert.ok(t.notes.some((n) => /predates a later compaction/.test(n)));
  assert.ok(t.notes.some((n) => /1 compacted record\(s\).*line 7.*replacement_history/.test(n)));
  checkInvariants(doc, t);
});

test('a compacted record without replacement_history keeps earlier user messages and adds its summary', () => {
  const doc = fixture('compacted-without-replacement-history.jsonl');
  const t = codexAdapter.read(doc);
  assert.deepEqual(shape(t), [
    ['system', 'system', 'You are Codex, a coding agent.'],
    ['user', 'system', '<environment_context>\n  <cwd>/repo</cwd>\n</environment_context>'],
    ['user', 'message', 'fix the bug'],
    ['user', 'message', 'also add a test'],
    ['user', 'summary', 'Summary: the bug is in x.c; a test is still to be added.'],
    ['assistant', 'message', 'adding the test now'],
  ]);
  assert.deepEqual(t.entries[4]?.source, { records: [7], path: 'payload.message' });
  assert.equal(t.entries[4]?.turn.id, 'line-8.summary');
  checkInvariants(doc, t);
});

test('event_msg records are never turns', () => {
  const t = codexAdapter.read(fixture('event-msg-not-turns.jsonl'));
  assert.deepEqual(shape(t), [
    ['system', 'system', 'You are Codex, a coding agent.'],
    ['user', 'message', 'hello'],
    ['assistant', 'message', 'hi there'],
  ]);
  assert.ok(t.notes.includes('6 event_msg record(s) (UI events, duplicates of response items) not counted'));
});

test('injected user context is typed system; an IDE context wrapping a request is a prompt', () => {
  const t = codexAdapter.read(fixture('injected-context-is-system.jsonl'));
  assert.deepEqual(
    t.entries.slice(1).map((e) => [e.turn.role, e.turn.type]),
    [
      ['user', 'system'], // <environment_context>
      ['user', 'system'], // # AGENTS.md instructions for
      ['user', 'system'], // <user_instructions>
      ['user', 'system'], // <INSTRUCTIONS>
      ['user', 'system'], // # Context from my IDE setup: without a request
      ['user', 'message'], // # Context from my IDE setup: … ## My request for Codex:
      ['user', 'message'],
      ['system', 'system'], // role system
    ],
  );
});

test('reasoning: summary and content texts are the content, encrypted_content an opaque blob', () => {
  const t = codexAdapter.read(fixture('reasoning-encrypted-blob.jsonl'));
  const [first, second] = t.entries.filter((e) => e.turn.type === 'reasoning');
  assert.equal(first?.turn.role, 'assistant');
  assert.equal(first?.turn.content, '**Plan**\nThen act.\nraw chain');
  assert.deepEqual(first?.blobs, [{ kind: 'encrypted', provider: 'openai', base64Length: 36 }]);
  assert.equal(second?.turn.content, '');
  assert.deepEqual(second?.blobs, [{ kind: 'encrypted', provider: 'openai', base64Length: 8 }]);
});

test("reasoning of earlier turns is not sent; current-turn reasoning carries its call's recorded tokens", () => {
  const t = codexAdapter.read(
    inline(
      { timestamp: 't', type: 'response_item', payload: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'first task' }] } },
      {
        timestamp: 't',
        type: 'event_msg',
        payload: { type: 'token_count', info: { last_token_usage: { input_tokens: 10, output_tokens: 5, reasoning_output_tokens: 40 } } },
      },
      {
        timestamp: 't',
        type: 'response_item',
        payload: { type: 'reasoning', summary: [{ type: 'summary_text', text: 'old' }], encrypted_content: 'A'.repeat(4000) },
      },
      {
        timestamp: 't',
        type: 'response_item',
        payload: { type: 'message', role: 'user', content: [{ type: 'input_text', text: '<environment_context>cwd</environment_context>' }] },
      },
      { timestamp: 't', type: 'response_item', payload: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'second task' }] } },
      {
        timestamp: 't',
        type: 'event_msg',
        payload: { type: 'token_count', info: { last_token_usage: { input_tokens: 20, output_tokens: 5, reasoning_output_tokens: 77 } } },
      },
      {
        timestamp: 't',
        type: 'response_item',
        payload: { type: 'reasoning', summary: [{ type: 'summary_text', text: 'new' }], encrypted_content: 'B'.repeat(4000) },
      },
    ),
  );
  const reasoning = t.entries.filter((e) => e.turn.type === 'reasoning');
  assert.match(reasoning[0]?.notSent ?? '', /earlier turn/);
  assert.equal(reasoning[0]?.blobs[0]?.recordedTokens, 40);
  assert.equal(reasoning[1]?.notSent, undefined);
  assert.equal(reasoning[1]?.blobs[0]?.recordedTokens, 77);
  assert.ok(t.notes.some((n) => n.startsWith('1 reasoning item(s) from earlier turns counted as 0')));
});

test('token_count with info null: the last one with usage is used, and a note says so', () => {
  const t = codexAdapter.read(fixture('token-count-null-info.jsonl'));
  assert.equal(t.recorded?.contextTokens, 5120);
  assert.equal(t.recorded?.contextWindow, 258400);
  assert.equal(t.recorded?.atEntry, 2);
  assert.ok(t.notes.includes('1 token_count event(s) with info null (rate limits only)'));
  // Only null info: nothing recorded, never a throw.
  const only = codexAdapter.read(inline({ timestamp: 'x', type: 'event_msg', payload: { type: 'token_count', info: null } }));
  assert.equal(only.recorded, undefined);
  assert.deepEqual(only.entries, []);
});

test('forward compatible: unknown record and item types, ordinal, non-ISO timestamps', () => {
  const doc = fixture('unknown-types-forward-compatible.jsonl');
  const t = codexAdapter.read(doc);
  assert.deepEqual(shape(t), [
    ['system', 'system', 'sys'],
    ['user', 'message', 'hi'],
    ['user', 'message', 'from another agent'],
    ['assistant', 'message', 'hello'],
  ]);
  assert.equal(t.entries[1]?.turn.timestamp, '1759312801');
  assert.deepEqual(t.entries[2]?.blobs, [{ kind: 'encrypted', provider: 'openai', base64Length: 4 }]);
  assert.ok(t.notes.includes('unknown record type(s) skipped: world_state ×1, inter_agent_communication_metadata ×1'));
  assert.ok(t.notes.includes('response item kind(s) not sent to the model or unknown, skipped: ghost_snapshot ×1, future_item ×2'));
  assert.deepEqual(
    t.issues.map((i) => [i.line, i.severity]),
    [[10, 'warning']],
  );
  checkInvariants(doc, t);
});

test('tool outputs: 0.40 JSON string as sent, content lists, single parts, images as blobs, orphans reported', () => {
  const doc = fixture('tool-output-shapes.jsonl');
  const t = codexAdapter.read(doc);
  const byId = new Map(t.entries.map((e) => [e.turn.id, e]));
  assert.deepEqual(t.entries[0]?.source, { records: [0], path: 'payload.instructions' });
  assert.equal(t.entries[0]?.turn.content, 'legacy instructions string');
  assert.equal(byId.get('call_s.output')?.turn.content, '{"output":"hi\\n","metadata":{"exit_code":0,"duration_seconds":0.1}}');
  assert.equal(byId.get('call_i.output')?.turn.content, 'image a.png:');
  assert.deepEqual(byId.get('call_i.output')?.blobs, [{ kind: 'image', provider: 'openai', base64Length: 24, mediaType: 'image/png' }]);
  assert.equal(byId.get('call_o.output')?.turn.content, 'a.png\n');
  assert.equal(byId.get('call_l')?.turn.content, 'local_shell {"type":"exec","command":["pwd"]}');
  assert.equal(byId.get('ws_1')?.turn.content, 'web_search {"type":"search","query":"codex rollout"}');
  assert.equal(byId.get('call_t')?.turn.content, 'tool_search {"query":"git"}');
  assert.equal(byId.get('call_t.output')?.turn.content, '[{"type":"function","name":"git_status"}]');
  assert.deepEqual(
    t.issues.map((i) => [i.line, i.reason]),
    [
      [14, 'tool output for call call_missing has no call in the active context'],
      [15, 'tool call call_open has no output in the active context'],
    ],
  );
});

test('detect: Codex lines score high, other shapes 0', () => {
  assert.equal(codexAdapter.detect(fixture('basic-session.jsonl')), 10);
  assert.equal(codexAdapter.detect(fixture('event-msg-not-turns.jsonl')), 10);
  const withoutMeta = inline(
    { timestamp: 't', type: 'response_item', payload: { type: 'message', role: 'user', content: [] } },
    { timestamp: 't', type: 'event_msg', payload: { type: 'token_count', info: null } },
  );
  assert.equal(codexAdapter.detect(withoutMeta), 9);
  const claude = inline({
    type: 'user',
    uuid: '7e0c…',
    parentUuid: null,
    sessionId: 's',
    timestamp: '2025-01-01T00:00:00Z',
    message: { role: 'user', content: 'hi' },
  });
  assert.equal(codexAdapter.detect(claude), 0);
  const native = inline({ id: 't1', role: 'user', type: 'message', content: 'hi' });
  assert.equal(codexAdapter.detect(native), 0);
  assert.equal(codexAdapter.detect(inline({ role: 'user', content: 'hi' })), 0);
  assert.equal(codexAdapter.detect(parseDocument(Buffer.from(''), { path: 'empty' })), 0);
  // …and the other adapters do not claim a Codex rollout.
  const codex = fixture('basic-session.jsonl');
  for (const other of [devsAdapter, geminiAdapter, openaiChatAdapter]) {
    assert.ok(other.detect(codex) < codexAdapter.detect(codex), `${other.name} outscores codex`);
  }
});

test('never throws on broken input', () => {
  const doc = parseDocument(
    Buffer.from(
      [
        '{"timestamp":"t","type":"session_meta","payload":null}',
        '{"timestamp":"t","type":"response_item","payload":"nope"}',
        '{"timestamp":"t","type":"compacted","payload":{"replacement_history":[1,{"type":"message","role":"user","content":"kept"}]}}',
        '{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"alien","content":[]}}',
        '{"timestamp":"t","type":"response_item","payload":{"type":"function_call_output"}}',
        'not json',
        '[1,2]',
      ].join('\n'),
    ),
    { path: 'broken' },
  );
  const t = codexAdapter.read(doc);
  assert.deepEqual(shape(t), [
    ['user', 'message', 'kept'],
    ['tool', 'tool_result', ''],
  ]);
  assert.deepEqual(
    t.issues.map((i) => i.line),
    [2, 3, 7],
  );
  // Arguments nested deeper than JSON.stringify can go: written out all the same (so counted), not a crash.
  const depth = 20000;
  const deep = parseDocument(
    Buffer.from(
      `{"timestamp":"t","type":"response_item","payload":{"type":"function_call","name":"n","call_id":"c","arguments":${'['.repeat(depth)}${']'.repeat(depth)}}}`,
    ),
    { path: 'deep' },
  );
  assert.equal(codexAdapter.read(deep).entries[0]?.turn.content, `n ${'['.repeat(depth)}${']'.repeat(depth)}`);
});

// ---- real data -------------------------------------------------------------------------------------

const codexFiles = realdataFiles('codex');

for (const path of codexFiles) {
  test(`real data: ${realdataName(path)} reads, round-trips and keeps its invariants`, { skip: realdataSkip }, () => {
    const bytes = readFileSync(path);
    const doc = parseDocument(bytes, { path, keepRaw: true });
    assert.ok(codexAdapter.detect(doc) > 5);
    const t = codexAdapter.read(doc);
    assert.ok(t.entries.length > 0);
    checkInvariants(doc, t);
    assert.ok(serializeDocument(doc).equals(bytes), 'write-back differs from the file');
  });
}

const sample01 = codexFiles.find((p) => p.includes('01-agentcmd-v0.40.0'));
test('real data: Codex 0.40 VS Code rollout (sample 01)', { skip: realdataSkip || (sample01 ? false : 'sample 01 missing') }, () => {
  const path = sample01 ?? '';
  const t = codexAdapter.read(parseDocument(readFileSync(path), { path, keepRaw: true }));
  // jq: 395 response_items (24 message, 125 reasoning, 123 function_call, 123 function_call_output);
  // session_meta.instructions is null, so there is no system entry; no compacted records.
  assert.equal(t.entries.length, 395);
  const count = (role: string, type: string) => t.entries.filter((e) => e.turn.role === role && e.turn.type === type).length;
  assert.equal(count('assistant', 'tool_call'), 123);
  assert.equal(count('tool', 'tool_result'), 123);
  assert.equal(count('assistant', 'reasoning'), 125);
  // 2 <environment_context> messages are pinned; the 13 IDE-context messages all hold "## My request for Codex:".
  assert.equal(count('user', 'system'), 2);
  assert.equal(count('user', 'message'), 13);
  assert.equal(count('assistant', 'message'), 9);
  // jq: every reasoning item has encrypted_content; their lengths sum to 540240.
  const encrypted = t.entries.flatMap((e) => e.blobs).filter((b) => b.kind === 'encrypted');
  assert.equal(encrypted.length, 125);
  assert.equal(
    encrypted.reduce((sum, b) => sum + b.base64Length, 0),
    540240,
  );
  // node one-off over the raw lines: the last real user message is line 762; 115 reasoning items
  // precede it (dropped by the API: counted as 0) and 10 follow it, whose preceding token_counts
  // record 384 reasoning_output_tokens in all.
  assert.equal(t.entries.filter((e) => e.turn.type === 'reasoning' && e.notSent !== undefined).length, 115);
  const current = t.entries.filter((e) => e.turn.type === 'reasoning' && e.notSent === undefined);
  assert.equal(current.length, 10);
  assert.equal(
    current.flatMap((e) => e.blobs).reduce((sum, b) => sum + (b.recordedTokens ?? 0), 0),
    384,
  );
  // jq: the last token_count with info is line 821: last_token_usage input 93537 + output 157; window 272000.
  assert.equal(t.recorded?.contextTokens, 93694);
  assert.equal(t.recorded?.contextWindow, 272000);
  assert.deepEqual(t.issues, []);
  // The 0.40 output is the JSON string as sent.
  const firstOutput = t.entries.find((e) => e.turn.type === 'tool_result');
  assert.ok(firstOutput?.turn.content.startsWith('{"output":'));
});

const sample03 = codexFiles.find((p) => p.includes('03-agent-sessions'));
test('real data: Codex 0.146 schema zoo (sample 03): only the last compaction and what follows', {
  skip: realdataSkip || (sample03 ? false : 'sample 03 missing'),
}, () => {
  const path = sample03 ?? '';
  const doc = parseDocument(readFileSync(path), { path, keepRaw: true });
  const t = codexAdapter.read(doc);
  // jq: 6 compacted records, the last on line 111 (record 110) with 13 replacement items (12 messages +
  // a compaction item); then 3 response_items (lines 114–116). Plus the first session_meta's prompt.
  assert.equal(t.entries.length, 17);
  assert.deepEqual(t.entries[0]?.source, { records: [0], path: 'payload.base_instructions' });
  assert.deepEqual(
    t.entries.slice(1, 14).map((e) => e.source.records[0]),
    Array.from({ length: 13 }, () => 110),
  );
  assert.deepEqual(
    t.entries.slice(1, 14).map((e) => e.source.path),
    Array.from({ length: 13 }, (_, i) => `payload.replacement_history[${i}]`),
  );
  assert.deepEqual(
    t.entries.slice(14).map((e) => e.source.records[0]),
    [113, 114, 115],
  );
  assert.deepEqual(
    t.entries.slice(14).map((e) => e.turn.type),
    ['tool_call', 'tool_result', 'message'],
  );
  assert.equal(t.entries.filter((e) => e.turn.type === 'tool_call').length, 1);
  assert.equal(t.entries.filter((e) => e.turn.type === 'summary').length, 1);
  // Three developer messages in the replacement history are system turns (plus the base instructions).
  assert.equal(t.entries.filter((e) => e.turn.role === 'system').length, 4);
  // jq: token_count on line 22 (16341 + 81) is the only non-zero usage (line 86 info null, line 87 all
  // zeros), and compactions follow it: nothing is reported as the current context.
  assert.equal(t.recorded, undefined);
  assert.ok(t.notes.some((n) => n.includes('line 22, 16422 tokens')));
  assert.ok(t.notes.includes('unknown record type(s) skipped: world_state ×5, inter_agent_communication_metadata ×1'));
  // The trimmed fixture repeats ids ("[trimmed for fixture]"): they are made unique.
  assert.equal(new Set(t.entries.map((e) => e.turn.id)).size, 17);
});
