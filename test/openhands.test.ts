import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { codexAdapter } from '../src/formats/codex/read.js';
import { devsAdapter } from '../src/formats/devs/read.js';
import { openaiChatAdapter } from '../src/formats/openai-chat/read.js';
import { openhandsAdapter } from '../src/formats/openhands/read.js';
import type { Transcript } from '../src/formats/types.js';
import { parseDocument, serializeDocument } from '../src/io/jsonl.js';
import type { ParsedDocument } from '../src/io/jsonl.js';
import { realdataFiles, realdataName, realdataSkip } from './helpers/realdata.js';
import { assertTranscriptInvariants, fixtureDoc, inlineDoc } from './helpers/transcripts.js';

const fixture = (name: string): ParsedDocument => fixtureDoc('openhands', name);
const inline = inlineDoc;

function checkInvariants(doc: ParsedDocument, t: Transcript): void {
  assertTranscriptInvariants(doc, t, { resultsNeedCallId: true });
}

test('one run: system prompt and tools, user task, workspace context, calls, results, finish', () => {
  const doc = fixture('one-run-tool-calls-and-usage.jsonl');
  const t = openhandsAdapter.read(doc);
  assert.equal(t.format, 'openhands');
  assert.deepEqual(
    t.entries.map((e) => [e.turn.id, e.turn.role, e.turn.type, e.source.path]),
    [
      ['event-0', 'system', 'system', 'history[0]'],
      ['event-0.tools', 'system', 'system', 'history[0].args.tools'],
      ['event-1', 'user', 'message', 'history[1]'],
      ['event-4', 'user', 'system', 'history[3]'],
      ['event-5', 'assistant', 'tool_call', 'history[4]'],
      ['event-6', 'tool', 'tool_result', 'history[5]'],
      ['event-7', 'user', 'message', 'history[6]'],
      ['event-8', 'assistant', 'message', 'history[7]'],
      ['event-9', 'assistant', 'tool_call', 'history[8]'],
    ],
  );
  const byId = new Map(t.entries.map((e) => [e.turn.id, e.turn]));
  assert.equal(byId.get('event-0')?.content, 'You are OpenHands agent.');
  assert.equal(byId.get('event-0.tools')?.content, '[{"type":"function","function":{"name":"execute_bash","parameters":{"type":"object"}}}]');
  assert.equal(byId.get('event-4')?.content, 'Added workspace context\nruntime_hosts: {"http://localhost:50995":50995}\ndate: 2025-04-30');
  // The model's text, then the function and its arguments as the model sent them.
  assert.equal(byId.get('event-5')?.content, 'Let me look around.\nexecute_bash {"command": "ls"}');
  assert.equal(byId.get('event-5')?.['callId'], 'toolu_01');
  assert.equal(byId.get('event-6')?.content, 'README.md\nsrc');
  assert.equal(byId.get('event-6')?.['callId'], 'toolu_01');
  assert.equal(byId.get('event-7')?.content, "Parameter 'command' is invalid.");
  assert.equal(byId.get('event-9')?.content, 'Done.\nfinish {"message": "fixed"}');
  assert.equal(byId.get('event-1')?.timestamp, '2025-04-30T17:56:40.641714');
  // Last model_response.usage (event 9): 1500 + 30; accumulated sums (2500) are not used.
  assert.deepEqual(t.recorded, {
    contextTokens: 1530,
    source: 'last model_response.usage (event-9): prompt_tokens + completion_tokens',
    atEntry: 8,
  });
  // The finish call has no observation, and that is not an issue.
  assert.deepEqual(t.issues, []);
  assert.deepEqual(t.notes, ['events not sent to the model, skipped: action recall ×1, observation agent_state_changed ×1']);
  checkInvariants(doc, t);
});

test('several runs in a file: the last is the active context, with a note', () => {
  const doc = fixture('several-runs-reads-last.jsonl');
  const t = openhandsAdapter.read(doc);
  assert.ok(t.notes.includes('2 runs in file (one task per line); reading the last (instance_id org__repo-2, line 2)'));
  assert.equal(t.entries[2]?.turn.content, 'Fix org__repo-2');
  assert.ok(t.entries.every((e) => e.source.records[0] === 1));
  assert.deepEqual(t.entries.at(-1)?.turn, { id: 'event-11', role: 'user', type: 'message', content: 'one more thing' });
  checkInvariants(doc, t);
});

test('observation whose call is missing and a non-finish call without observation are reported', () => {
  const doc = inline({
    instance_id: 'x',
    history: [
      { id: 1, source: 'agent', observation: 'run', content: 'out', tool_call_metadata: { function_name: 'execute_bash', tool_call_id: 'c9' } },
      {
        id: 2,
        source: 'agent',
        action: 'run',
        args: { command: 'ls', thought: '' },
        tool_call_metadata: { function_name: 'execute_bash', tool_call_id: 'c1' },
      },
      'not an event',
      { id: 3 },
    ],
  });
  const t = openhandsAdapter.read(doc);
  assert.deepEqual(
    t.entries.map((e) => [e.turn.role, e.turn.type, e.turn.content]),
    [
      ['tool', 'tool_result', 'out'],
      // Without model_response the arguments come from args, less OpenHands' own fields.
      ['assistant', 'tool_call', 'execute_bash {"command":"ls"}'],
    ],
  );
  assert.deepEqual(
    t.issues.map((i) => i.reason),
    [
      'event-1: observation for tool call c9, which no earlier action made',
      'history[2] is not an event object; skipped',
      'event-2: tool call c1 has no observation',
    ],
  );
  assert.equal(t.recorded, undefined);
  assert.ok(t.notes.includes('events not sent to the model, skipped: event without action or observation ×1'));
  // Arguments nested deeper than JSON.stringify can go: written out all the same (so counted), not a crash.
  const depth = 20000;
  const deep = parseDocument(
    Buffer.from(
      `{"instance_id":"x","history":[{"id":1,"source":"agent","action":"run","args":{"command":${'['.repeat(depth)}${']'.repeat(depth)}},"tool_call_metadata":{"tool_call_id":"c"}}]}`,
    ),
    { path: 'deep' },
  );
  assert.equal(openhandsAdapter.read(deep).entries[0]?.turn.content, `run {"command":${'['.repeat(depth)}${']'.repeat(depth)}}`);
});

test('a run as one pretty-printed JSON document is read too', () => {
  const run = { instance_id: 'y', history: [{ id: 0, source: 'user', action: 'message', args: { content: 'hi' } }] };
  const doc = parseDocument(Buffer.from(JSON.stringify(run, null, 2)), { path: 'run.json' });
  assert.equal(doc.kind, 'json-document');
  assert.equal(openhandsAdapter.detect(doc), 9);
  assert.deepEqual(
    openhandsAdapter.read(doc).entries.map((e) => [e.turn.content, e.source]),
    [['hi', { records: [0], path: 'history[0]' }]],
  );
});

test('detect: runs score high, other shapes 0, and no file at all never throws', () => {
  assert.equal(openhandsAdapter.detect(fixture('one-run-tool-calls-and-usage.jsonl')), 10);
  assert.equal(openhandsAdapter.detect(inline({ instance_id: 'a', history: [] })), 9);
  const claude = inline({ type: 'user', uuid: 'u1', parentUuid: null, message: { role: 'user', content: 'hi' } });
  assert.equal(openhandsAdapter.detect(claude), 0);
  assert.equal(openhandsAdapter.detect(inline({ id: 't1', role: 'user', type: 'message', content: 'hi' })), 0);
  assert.equal(openhandsAdapter.detect(inline({ timestamp: 't', type: 'session_meta', payload: {} })), 0);
  assert.equal(openhandsAdapter.detect(inline({ history: [] })), 0);
  const none = openhandsAdapter.read(inline({ role: 'user', content: 'hi' }));
  assert.deepEqual(none.entries, []);
  assert.equal(none.issues[0]?.severity, 'error');
  const run = fixture('one-run-tool-calls-and-usage.jsonl');
  for (const other of [devsAdapter, codexAdapter, openaiChatAdapter]) {
    assert.ok(other.detect(run) < openhandsAdapter.detect(run), `${other.name} outscores openhands`);
  }
});

// ---- real data -------------------------------------------------------------------------------------

const trajectoryFiles = realdataFiles('trajectories');

for (const path of trajectoryFiles.filter((p) => p.includes('openhands'))) {
  test(`real data: ${realdataName(path)} reads, round-trips and keeps its invariants`, { skip: realdataSkip }, () => {
    const bytes = readFileSync(path);
    const doc = parseDocument(bytes, { path, keepRaw: true });
    assert.ok(openhandsAdapter.detect(doc) > 5);
    const t = openhandsAdapter.read(doc);
    checkInvariants(doc, t);
    assert.ok(serializeDocument(doc).equals(bytes), 'write-back differs from the file');
  });
}

const multi = trajectoryFiles.find((p) => p.endsWith('multi_swe_bench_output.jsonl'));
test('real data: OpenHands multi_swe_bench output: the last of 3 runs', { skip: realdataSkip || (multi ? false : 'file missing') }, () => {
  const path = multi ?? '';
  const t = openhandsAdapter.read(parseDocument(readFileSync(path), { path, keepRaw: true }));
  assert.ok(t.notes.includes('3 runs in file (one task per line); reading the last (instance_id ponylang__ponyc-4588, line 3)'));
  // jq on line 3: 103 history events; the user `recall` action is not sent (102 left) and the system
  // event adds a second entry for its tool schemas: 103 entries.
  assert.equal(t.entries.length, 103);
  assert.ok(t.entries.every((e) => e.source.records[0] === 2));
  // jq: 49 actions and 49 observations carry tool_call_metadata (24 run, 16 edit, 8 read, 1 think).
  assert.equal(t.entries.filter((e) => e.turn.type === 'tool_call').length, 49);
  assert.equal(t.entries.filter((e) => e.turn.type === 'tool_result').length, 49);
  // One `error` observation without a call goes back as a user message, beside the task itself.
  assert.equal(t.entries.filter((e) => e.turn.role === 'user' && e.turn.type === 'message').length, 2);
  assert.equal(t.entries.filter((e) => e.turn.role === 'user' && e.turn.type === 'system').length, 1);
  // jq: the last action with model_response.usage is event 102: prompt_tokens 27127 + completion_tokens 55.
  // (metrics.accumulated_token_usage.prompt_tokens is 938015: a sum over all calls.)
  assert.equal(t.recorded?.contextTokens, 27182);
  assert.equal(t.entries[t.recorded?.atEntry ?? -1]?.turn.id, 'event-102');
  assert.deepEqual(t.issues, []);
});
