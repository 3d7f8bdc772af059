import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { claudeCodeAdapter } from '../src/formats/claude-code/read.js';
import { countEntries } from '../src/core/accounting.js';
import { detectFormat } from '../src/formats/index.js';
import type { Transcript } from '../src/formats/types.js';
import { TurnSchema } from '../src/core/turn.js';
import { parseDocument, serializeDocument } from '../src/io/jsonl.js';
import type { ParsedDocument } from '../src/io/jsonl.js';
import { realdataFiles, realdataName, realdataSkip } from './helpers/realdata.js';
import { fixtureDoc } from './helpers/transcripts.js';

const fixture = (name: string): ParsedDocument => fixtureDoc('claude-code', name);
const read = (name: string): Transcript => claudeCodeAdapter.read(fixture(name));
const shape = (t: Transcript) => t.entries.map((e) => [e.turn.id, e.turn.role, e.turn.type]);
const inline = (text: string) => parseDocument(Buffer.from(text), { path: 'inline' });

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The content blocks of the values on one record (read from the file, not from the adapter). */
function blocksOf(doc: ParsedDocument, record: number): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const value of doc.records[record]?.values ?? []) {
    if (!isRecord(value) || !isRecord(value['message'])) continue;
    const content = value['message']['content'];
    if (Array.isArray(content)) out.push(...content.filter(isRecord));
  }
  return out;
}

test("two compactions: only the last boundary's summary and what follows are context", () => {
  const t = read('compact-boundary.jsonl');
  assert.deepEqual(shape(t), [
    ['s2', 'user', 'summary'],
    ['u3', 'user', 'message'],
    ['a3', 'assistant', 'message'],
  ]);
  assert.match(t.entries[0]?.turn.content ?? '', /Summary two\.$/);
  assert.ok(t.notes.includes('2 compact boundaries; counting after the last (Claude Code counted 157,925 before it)'));
  // a3's usage, not the larger pre-compaction calls: 3 + 2000 + 9000.
  assert.equal(t.recorded?.contextTokens, 11003);
  assert.equal(t.recorded?.atEntry, 2);
  assert.deepEqual(t.issues, []);
});

test('one API response split one block per line is one turn listing every line', () => {
  const t = read('multi-block-response.jsonl');
  assert.deepEqual(shape(t), [
    ['u1', 'user', 'message'],
    ['a1', 'assistant', 'tool_call'],
    ['r1', 'tool', 'tool_result'],
    ['a4', 'assistant', 'message'],
  ]);
  const response = t.entries[1];
  assert.deepEqual(response?.source, { records: [1, 2, 3] });
  assert.equal(response?.turn.content, 'The user wants a listing.\nListing them now.\nBash {"command":"ls"}');
  const first = fixture('multi-block-response.jsonl').records[1]?.values[0];
  assert.equal(response?.turn.timestamp, isRecord(first) ? first['timestamp'] : undefined, "the first line's timestamp");
  assert.equal(t.entries[2]?.turn.content, 'a.txt\nb.txt');
  assert.equal(t.recorded?.contextTokens, 2 + 40 + 21203);
  assert.equal(t.recorded?.atEntry, 3);
});

test('2.1.x parallel tool results on side branches are re-attached in file order', () => {
  const t = read('parallel-tool-calls-2.1.jsonl');
  assert.deepEqual(shape(t), [
    ['u1', 'user', 'message'],
    ['a1', 'assistant', 'tool_call'],
    ['r1', 'tool', 'tool_result'],
    ['r2', 'tool', 'tool_result'],
    ['r3', 'tool', 'tool_result'],
    ['a4', 'assistant', 'message'],
  ]);
  assert.deepEqual(t.entries[1]?.source.records, [1, 2, 3]);
  assert.deepEqual(
    t.entries.slice(2, 5).map((e) => e.turn.content),
    ['alpha', 'beta', 'gamma'],
  );
  assert.ok(t.notes.includes('2 tool results of parallel calls re-attached from side branches'));
  assert.deepEqual(t.issues, []);
});

test('2.0.x parallel tool results are chained after the last call: nothing to re-attach', () => {
  const t = read('parallel-tool-calls-2.0.jsonl');
  assert.deepEqual(
    t.entries.map((e) => e.turn.id),
    ['u1', 'a1', 'r2', 'r1', 'a3'],
  );
  assert.deepEqual(t.entries[1]?.source.records, [1, 2]);
  assert.ok(!t.notes.some((n) => n.includes('re-attached')));
  assert.deepEqual(t.issues, []);
});

test('a side-branch result is re-attached only when its uuid is not on the chain, and not from before the chain starts', () => {
  // The chain is u1 → a1 → a2 → r2 → a4; toolu_A (a1's call) has no result on it. User lines off
  // the chain answer it: one before the chain's first line, one that shares a chain line's uuid (the
  // file holds a2 twice; the chain takes the later line), and one on a side branch as 2.1.x writes them.
  const head = '{"isSidechain":false,"sessionId":"s","version":"2.1.20"';
  const user = (uuid: string, parent: string | null, content: unknown) =>
    `${head},"type":"user","parentUuid":${JSON.stringify(parent)},"uuid":"${uuid}","message":{"role":"user","content":${JSON.stringify(content)}}}`;
  const call = (uuid: string, parent: string, id: string) =>
    `${head},"type":"assistant","parentUuid":"${parent}","uuid":"${uuid}","message":{"role":"assistant","content":[{"type":"tool_use","id":"${id}","name":"Read","input":{}}]}}`;
  const result = (uuid: string, parent: string | null, id: string, text: string) =>
    user(uuid, parent, [{ type: 'tool_result', tool_use_id: id, content: text }]);
  const lines = (side: string[]) => [
    result('early', null, 'toolu_A', 'BEFORE THE CHAIN'),
    user('u1', null, 'read both'),
    call('a1', 'u1', 'toolu_A'),
    ...side,
    call('a2', 'a1', 'toolu_B'),
    result('r2', 'a2', 'toolu_B', 'beta'),
    `${head},"type":"assistant","parentUuid":"r2","uuid":"a4","message":{"role":"assistant","content":[{"type":"text","text":"done"}]}}`,
  ];
  const contents = (side: string[]) => claudeCodeAdapter.read(inline(`${lines(side).join('\n')}\n`)).entries.map((e) => e.turn.content);
  // Nothing on a side branch: the early line and the reused uuid are not context.
  assert.deepEqual(contents([result('a2', 'a1', 'toolu_A', 'REUSED UUID')]), ['read both', 'Read {}', 'Read {}', 'beta', 'done']);
  // A side branch's result is put back, in file order.
  assert.deepEqual(contents([result('r1', 'a1', 'toolu_A', 'alpha')]), ['read both', 'Read {}', 'alpha', 'Read {}', 'beta', 'done']);
});

test('progress, system, snapshot, queue, title, sidechain and <synthetic> lines are not turns', () => {
  const t = read('noise-lines-excluded.jsonl');
  assert.deepEqual(shape(t), [
    ['m1', 'user', 'message'], // isMeta injected context is still sent to the model
    ['u1', 'user', 'message'],
    ['a1', 'assistant', 'tool_call'],
    ['r1', 'tool', 'tool_result'], // its parent is a progress line: the chain goes through it
    ['a2', 'assistant', 'message'],
  ]);
  const all = t.entries.map((e) => e.turn.content).join('\n');
  for (const hidden of ['SUBAGENT CHATTER', 'SIDECHAIN PROMPT', 'No response requested.', 'Greeting session', 'typed while busy']) {
    assert.ok(!all.includes(hidden), hidden);
  }
  // The <synthetic> line is the newest assistant line but has no real usage: a2's call is used.
  assert.equal(t.recorded?.contextTokens, 8014);
  assert.equal(t.recorded?.atEntry, 4);
  const note = t.notes.join('\n');
  assert.match(note, /1 queue-operation, 1 file-history-snapshot, 1 summary, 2 progress on the chain, 1 sidechain, 1 <synthetic> assistant/);
  assert.deepEqual(t.issues, []);
});

test('toolUseResult (the UI copy of a tool output) is never counted', () => {
  const t = read('tool-use-result-not-counted.jsonl');
  assert.equal(t.entries[2]?.turn.type, 'tool_result');
  assert.equal(t.entries[2]?.turn.content, '     1\tshort line');
  assert.ok(!t.entries.some((e) => e.turn.content.includes('UI COPY ONLY')));
});

test('images are blobs with their pixel size, in a user message and inside a tool_result', () => {
  const t = read('image-blob.jsonl');
  assert.equal(t.entries[0]?.turn.content, 'what is in this screenshot?');
  assert.deepEqual(t.entries[0]?.blobs, [{ kind: 'image', provider: 'anthropic', base64Length: 60, mediaType: 'image/png', width: 640, height: 480 }]);
  assert.equal(t.entries[2]?.turn.type, 'tool_result');
  assert.equal(t.entries[2]?.turn.content, 'photo.jpg (300x200)');
  assert.deepEqual(t.entries[2]?.blobs, [{ kind: 'image', provider: 'anthropic', base64Length: 64, mediaType: 'image/jpeg', width: 300, height: 200 }]);
  assert.ok(!t.entries.some((e) => e.turn.content.includes('iVBOR')), 'no base64 in the text');
});

test('a parentUuid that is not in the file is a warning with its line; the rest is read', () => {
  const t = read('dangling-parent.jsonl');
  assert.deepEqual(
    t.entries.map((e) => e.turn.id),
    ['u1', 'a1', 'u2'],
  );
  assert.deepEqual(
    t.issues.map((i) => [i.line, i.severity]),
    [[1, 'warning']],
  );
  assert.match(t.issues[0]?.reason ?? '', /ffffffff-0000-4000-8000-000000000000.*dangling/);
});

test('an edited-and-resent prompt: the abandoned branch is not context', () => {
  const t = read('rewind-branch.jsonl');
  assert.deepEqual(
    t.entries.map((e) => e.turn.id),
    ['u1', 'a1', 'u2b', 'a2b'],
  );
  assert.equal(t.recorded?.contextTokens, 221);
});

test('a glued line is read, and a uuid rewritten later by a resumed session uses the later line', () => {
  const doc = fixture('glued-summary-line.jsonl');
  assert.equal(doc.records[3]?.values.length, 2);
  const t = claudeCodeAdapter.read(doc);
  assert.deepEqual(
    t.entries.map((e) => [e.turn.id, e.turn.content]),
    [
      ['u1', 'start'],
      ['a1', 'started'],
      ['u2', 'go on'],
      ['a2', 'rewritten copy'],
      ['u3', 'ok'],
    ],
  );
  assert.deepEqual(t.entries[3]?.source.records, [4]);
  assert.deepEqual(
    t.issues.map((i) => [i.line, i.severity]),
    [[5, 'warning']],
  );
  assert.match(t.issues[0]?.reason ?? '', /already used on line 4/);
  assert.match(t.notes.join('\n'), /1 summary/);
});

test('odd values are skipped with issues, never thrown', () => {
  const t = read('odd-values.jsonl');
  assert.deepEqual(shape(t), [
    ['u1', 'user', 'message'],
    ['u2', 'user', 'message'],
    ['a2', 'assistant', 'message'],
    ['u3', 'tool', 'tool_result'],
    ['a3', 'assistant', 'reasoning'],
  ]);
  assert.equal(t.entries[1]?.turn.content, '');
  assert.equal(t.entries[4]?.turn.content, 'hmm', 'the thinking text counts, its signature does not');
  assert.deepEqual(t.entries[4]?.blobs, [{ kind: 'encrypted', provider: 'anthropic', base64Length: 24 }]);
  assert.deepEqual(
    t.issues.map((i) => i.line),
    [2, 3, 4, 6],
  );
  assert.match(t.issues[3]?.reason ?? '', /toolu_nowhere has no tool_use/);
});

test('never throws on hostile shapes', () => {
  const docs = [
    '{"type":"assistant","uuid":"a","parentUuid":"a","sessionId":"s","message":{"id":"m","content":"x"}}\n',
    '{"type":"user","uuid":"u","parentUuid":null,"sessionId":"s","message":{"content":[{"type":"tool_result","content":{"weird":true}},{"type":"image"},{"type":"document","source":{"type":"text","data":"doc text"}}]}}\n',
    '{"type":"system","subtype":"compact_boundary","uuid":"b","parentUuid":null,"compactMetadata":null}\n',
    'null\n"text"\n42\n',
    '',
  ];
  for (const text of docs) {
    const t = claudeCodeAdapter.read(inline(text));
    assert.equal(t.format, 'claude-code');
  }
  const cycle = claudeCodeAdapter.read(inline(docs[0] ?? ''));
  assert.equal(cycle.issues[0]?.severity, 'error');
  assert.match(cycle.issues[0]?.reason ?? '', /cycle/);
  const doc = claudeCodeAdapter.read(inline(docs[1] ?? ''));
  assert.equal(doc.entries[0]?.turn.content, 'doc text');
  const json = claudeCodeAdapter.read(parseDocument(Buffer.from('{\n  "messages": []\n}\n'), { path: 'doc.json' }));
  assert.equal(json.entries.length, 0);
});

test('detect: Claude Code scores high; other formats score 0', () => {
  const line = (type: string, uuid: string, parent: string | null) =>
    JSON.stringify({ type, uuid, parentUuid: parent, sessionId: 's', message: { role: type, content: 'hi' } });
  const cases: [string, ParsedDocument, number][] = [
    ['three messages', inline(`${line('user', 'u1', null)}\n${line('assistant', 'a1', 'u1')}\n${line('user', 'u2', 'a1')}\n`), 9],
    ['one message', inline(`${line('user', 'u1', null)}\n`), 7],
    ['foreign first line', fixture('foreign-first-line.jsonl'), 8],
    [
      'queue operations only',
      inline(
        '{"type":"queue-operation","operation":"enqueue","timestamp":"t","sessionId":"s"}\n{"type":"queue-operation","operation":"dequeue","timestamp":"t","sessionId":"s"}\n',
      ),
      5,
    ],
    [
      'codex',
      inline('{"timestamp":"t","type":"session_meta","payload":{"id":"x"}}\n{"timestamp":"t","type":"response_item","payload":{"type":"message"}}\n'),
      0,
    ],
    ['devs', fixtureDoc('devs', 'basic-session.jsonl'), 0],
    ['openai chat', inline('{"role":"user","content":"hi"}\n{"role":"assistant","content":"yo"}\n'), 0],
    [
      'gemini',
      inline('{"sessionId":"s","projectHash":"h","startTime":"t"}\n{"id":"u1","timestamp":"t","type":"user","content":"hi"}\n{"$set":{"lastUpdated":"t"}}\n'),
      0,
    ],
    ['json document', parseDocument(Buffer.from('{\n  "sessionId": "s",\n  "messages": []\n}\n'), { path: 'doc.json' }), 0],
    ['empty', inline(''), 0],
  ];
  for (const [name, doc, score] of cases) assert.equal(claudeCodeAdapter.detect(doc), score, name);
});

// ---------------------------------------------------------------------------------------------
// Real data. The expected numbers were found independently of this adapter, with jq over the
// files (/tmp one-off): index lines by uuid, walk parentUuid from the last user/assistant line
// that is not a sidechain, cut after the last system/compact_boundary on that chain, add user
// lines off the chain whose tool_result answers a tool_use on the chain not answered on it, then
// turns = user lines + distinct assistant message.ids; contextTokens = max over the lines with the
// last chain assistant's message.id of input_tokens + cache_creation_input_tokens +
// cache_read_input_tokens. E.g. sample 01's last response (msg …, 2 lines) has 8 + 19061 + 86974.

interface Expected {
  readonly entries: number;
  readonly contextTokens: number;
  readonly reattached: number;
  readonly check?: (t: Transcript, doc: ParsedDocument) => void;
}

const EXPECTED: Record<string, Expected> = {
  '01-entire-v2.1.20-compaction+microcompact': {
    entries: 101, // 55 user lines + 46 responses after the boundary on line 801
    contextTokens: 106043,
    reattached: 6,
    check: (t) => {
      // The chain starts at the isCompactSummary user line after the second boundary (line 802).
      assert.deepEqual([t.entries[0]?.turn.id, t.entries[0]?.turn.type], ['d6148b47-29a0-4396-b56d-a217044f7005', 'summary']);
      assert.deepEqual(t.entries[0]?.source.records, [801]);
      assert.ok(t.notes.includes('2 compact boundaries; counting after the last (Claude Code counted 157,925 before it)'));
      assert.equal(t.recorded?.atEntry, 100);
    },
  },
  '04-entire-v2.1.7-malformed-concatenated-line': {
    entries: 89,
    contextTokens: 90454,
    reattached: 3,
    check: (t, doc) => {
      // Line 128 is an assistant line with a summary glued on; line 131 rewrites the same uuid
      // (resumed with 2.1.12 on another machine), and the chain goes through the later copy.
      assert.equal(doc.records[127]?.values.length, 2);
      const response = t.entries.find((e) => e.source.records.includes(130));
      assert.equal(response?.turn.id, 'bab39862-4f0b-409d-9354-c480f7723a7a'); // the response's first line (127)
      assert.deepEqual(response?.source.records, [126, 130]);
      assert.deepEqual(
        t.issues.map((i) => i.line),
        [131],
      );
      assert.match(t.issues[0]?.reason ?? '', /already used on line 128/);
    },
  },
  '06-spotter-v2.1.38-short-smoke': {
    entries: 5,
    contextTokens: 25353,
    reattached: 1,
    check: (t) => {
      assert.deepEqual(
        t.entries.map((e) => `${e.turn.role}/${e.turn.type}`),
        ['user/message', 'assistant/tool_call', 'tool/tool_result', 'tool/tool_result', 'user/message'],
      );
      // Five blocks of one response on lines 5-8 and 10 (a progress line sits between the calls).
      assert.deepEqual(t.entries[1]?.source.records, [4, 5, 6, 7, 9]);
      assert.equal(t.entries[4]?.turn.content, '[Request interrupted by user for tool use]');
    },
  },
  '07-alignment-hive-v2.0.76-raw-queue-ops': {
    entries: 39,
    contextTokens: 77948,
    reattached: 0,
    check: (t) => {
      // The response JQM1iL is written twice (line 101 as one 3-block line, lines 4035-4037 again):
      // only the copy on the chain is read, and its results on line 102-103 are not re-attached.
      const response = t.entries.find((e) => e.source.records.includes(4034));
      assert.deepEqual(response?.source.records, [4034, 4035, 4036]);
      assert.match(t.notes.join('\n'), /2,635 queue-operation, 1,316 file-history-snapshot/);
    },
  },
  '09-agentcmd-v2.0.26-tool-result-image': {
    entries: 30,
    contextTokens: 36911,
    reattached: 0,
    check: (t) => {
      // Line 16: a screenshot inside a tool_result (PNG header: 600x134).
      const blobs = t.entries.flatMap((e) => e.blobs);
      assert.deepEqual(blobs, [{ kind: 'image', provider: 'anthropic', base64Length: 18248, mediaType: 'image/png', width: 600, height: 134 }]);
      assert.deepEqual(t.entries.find((e) => e.blobs.length > 0)?.source.records, [15]);
    },
  },
  '10-agentcmd-v2.0.28-summary-lines': {
    entries: 9,
    contextTokens: 21430,
    reattached: 0,
    check: (t) => assert.match(t.notes.join('\n'), /16 summary/),
  },
};

for (const path of realdataFiles('claude-code')) {
  const name = realdataName(path);
  test(`realdata: ${name}`, { skip: realdataSkip }, () => {
    const bytes = readFileSync(path);
    const doc = parseDocument(bytes, { path, keepRaw: true });
    assert.ok(serializeDocument(doc).equals(bytes), 'round trip');

    const detected = detectFormat(doc);
    assert.equal(detected.adapter.name, 'claude-code');
    assert.ok(detected.score > 5);

    const t = claudeCodeAdapter.read(doc);
    const sample = name.split('/')[1] ?? '';
    const expected = EXPECTED[sample];
    assert.ok(expected, `expected facts for ${sample}`);
    assert.equal(t.entries.length, expected.entries);
    assert.equal(t.recorded?.contextTokens, expected.contextTokens);
    const note = t.notes.find((n) => n.includes('re-attached'));
    assert.equal(note ? Number.parseInt(note, 10) : 0, expected.reattached);
    assert.ok(!t.issues.some((i) => i.severity === 'error'));

    const calls = new Set<string>();
    for (const [i, entry] of t.entries.entries()) {
      assert.ok(TurnSchema.safeParse(entry.turn).success, `entry ${i} is a valid turn`);
      assert.ok(entry.source.records.length > 0);
      for (const r of entry.source.records) assert.ok(Number.isInteger(r) && r >= 0 && r < doc.records.length, `record ${r}`);
      for (const record of entry.source.records) {
        for (const block of blocksOf(doc, record)) {
          if (entry.turn.type === 'tool_call' && block['type'] === 'tool_use') calls.add(String(block['id']));
          if (entry.turn.type === 'tool_result' && block['type'] === 'tool_result') {
            assert.ok(calls.has(String(block['tool_use_id'])), `entry ${i}: result ${String(block['tool_use_id'])} follows its call`);
          }
        }
      }
    }
    expected.check?.(t, doc);
  });
}

test('microcompaction: results Claude Code cleared from the request stay turns but count 0', () => {
  const t = read('microcompact-cleared-results.jsonl');
  const results = t.entries.filter((e) => e.turn.type === 'tool_result');
  assert.equal(results.length, 2);
  assert.match(results[0]?.notSent ?? '', /microcompaction/);
  assert.match(results[0]?.turn.content ?? '', /^OLD LOG/);
  assert.equal(results[1]?.notSent, undefined);
  assert.ok(t.notes.some((n) => /1 microcompact boundary after the last compaction: the results of 1 tool call are cleared/.test(n)));
  const tokens = countEntries(t.entries, { count: (text) => text.length });
  assert.equal(tokens[t.entries.indexOf(results[0]!)]?.total, 0);
});

test('a response written twice counts each block once; blocks alike in type, id and lengths but not equal all count', () => {
  const line = (uuid: string, parentUuid: string | null, blocks: unknown[]) => ({
    type: 'assistant',
    uuid,
    parentUuid,
    sessionId: 's',
    message: { id: 'm1', role: 'assistant', model: 'claude-x', content: blocks },
  });
  const doc = parseDocument(
    Buffer.from(
      `${[
        { type: 'user', uuid: 'u0', parentUuid: null, sessionId: 's', message: { role: 'user', content: 'go' } },
        line('a1', 'u0', [{ type: 'thinking', thinking: 'abc', signature: 'x' }]),
        line('a2', 'a1', [{ type: 'text', text: 'one' }]),
        // Same length, other text: a different block.
        line('a3', 'a2', [{ type: 'text', text: 'two' }]),
        // Written again: the thinking and the first text, whole.
        line('a4', 'a3', [
          { type: 'thinking', thinking: 'abc', signature: 'x' },
          { type: 'text', text: 'one' },
        ]),
        // Same id and name, other input: two calls.
        line('a5', 'a4', [{ type: 'tool_use', id: 't1', name: 'Read', input: { p: 1 } }]),
        line('a6', 'a5', [{ type: 'tool_use', id: 't1', name: 'Read', input: { p: 2 } }]),
        line('a7', 'a6', [{ type: 'tool_use', id: 't1', name: 'Read', input: { p: 1 } }]),
      ]
        .map((v) => JSON.stringify(v))
        .join('\n')}\n`,
    ),
    { path: 'repeated.jsonl' },
  );
  const t = claudeCodeAdapter.read(doc);
  assert.equal(t.entries.length, 2);
  assert.equal(t.entries[1]?.turn.content, 'abc\none\ntwo\nRead {"p":1}\nRead {"p":2}');
  assert.deepEqual(t.entries[1]?.links?.calls, ['t1', 't1']);
  assert.ok(
    t.notes.some((n) => n.includes('3 repeated content blocks')),
    t.notes.join('; '),
  );
});

test('blocks with odd ids (an own toString key, an array nested 100,000 deep) are read, and one written twice counts once', () => {
  const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
  const block = (id: string) => `{"type":"text","text":"hi","id":${id}}`;
  const line = (uuid: string, parent: string, blocks: string[]) =>
    `{"type":"assistant","uuid":"${uuid}","parentUuid":"${parent}","sessionId":"s","message":{"id":"m1","role":"assistant","content":[${blocks.join(',')}]}}`;
  const text = [
    '{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s","message":{"role":"user","content":"go"}}',
    line('a1', 'u1', [block('{"toString":1}'), block(`[{"toString":null}]`)]),
    line('a2', 'a1', [block('{"toString":1}'), block(deep)]),
    line('a3', 'a2', [block(deep)]),
  ].join('\n');
  const t = claudeCodeAdapter.read(parseDocument(Buffer.from(`${text}\n`), { path: 'odd-ids.jsonl' }));
  assert.equal(t.entries[1]?.turn.content, 'hi\nhi\nhi');
  assert.ok(
    t.notes.some((n) => n.includes('2 repeated content blocks')),
    t.notes.join('; '),
  );
});
