import { test } from 'node:test';
import assert from 'node:assert/strict';
import { devsAdapter } from '../src/formats/devs/read.js';
import { detectFormat } from '../src/formats/index.js';
import { parseDocument } from '../src/io/jsonl.js';
import { fixtureDoc } from './helpers/transcripts.js';
import type { ParsedDocument } from '../src/io/jsonl.js';

const fixture = (name: string): ParsedDocument => fixtureDoc('devs', name);

test('reads a native session: every line one turn, linked to its line', () => {
  const doc = fixture('basic-session.jsonl');
  const t = devsAdapter.read(doc);
  assert.equal(t.entries.length, 15);
  assert.deepEqual(
    t.entries.slice(0, 3).map((e) => [e.turn.id, e.turn.role, e.turn.type]),
    [
      ['t1', 'system', 'system'],
      ['t2', 'user', 'prd'],
      ['t3', 'user', 'tas'],
    ],
  );
  assert.equal(t.entries[2]?.turn.pinned, true);
  assert.equal(t.entries[3]?.turn.node, 'implement');
  for (const [i, e] of t.entries.entries()) assert.deepEqual(e.source.records, [i]);
  assert.equal(t.issues.length, 0);
  assert.equal(detectFormat(doc).adapter.name, 'devs');
});

test('unknown fields are kept on the turn', () => {
  const t = devsAdapter.read(fixture('unknown-fields-kept.jsonl'));
  assert.deepEqual(t.entries[0]?.turn['custom'], { keep: [1, 2, 3] });
  assert.equal(t.entries[1]?.turn['extra_field'], 'stays');
});

test('BOM, CRLF and a missing final newline read like a clean file', () => {
  const t = devsAdapter.read(fixture('bom-crlf-no-final-newline.jsonl'));
  const clean = devsAdapter.read(fixture('basic-session.jsonl'));
  assert.deepEqual(
    t.entries.map((e) => e.turn),
    clean.entries.slice(0, 6).map((e) => e.turn),
  );
});

test('malformed lines are reported with line numbers and the rest is read', () => {
  const doc = fixture('malformed-lines.jsonl');
  const t = devsAdapter.read(doc);
  assert.deepEqual(
    doc.issues.map((i) => [i.line, i.severity]),
    [
      [4, 'error'],
      [6, 'warning'],
      [8, 'error'],
    ],
  );
  assert.deepEqual(
    t.issues.map((i) => i.line),
    [5, 9],
  );
  assert.match(t.issues[0]?.reason ?? '', /role/);
  assert.match(t.issues[1]?.reason ?? '', /role must be one of system\|user\|assistant\|tool/);
  // 2 good + 2 from the glued line + 6 good at the end.
  assert.deepEqual(
    t.entries.map((e) => e.turn.id),
    ['t1', 't2', 't4', 't5', 't7', 't8', 't9', 't10', 't11', 't12'],
  );
  assert.deepEqual(t.entries[2]?.source.records, t.entries[3]?.source.records);
});

test("a line zod rejects is described in zod's English words, key by key", () => {
  const doc = parseDocument(
    Buffer.from(
      `${JSON.stringify({ id: '', role: 'user', type: 'message', content: 'a' })}\n${JSON.stringify({ id: 'b', role: 'user', type: 'message', content: 7, tokenCount: 1.5 })}\n`,
    ),
    { path: 'zod-words.jsonl' },
  );
  assert.deepEqual(
    devsAdapter.read(doc).issues.map((i) => i.reason),
    [
      'not a devs turn: id: Too small: expected string to have >=1 characters',
      'not a devs turn: content: Invalid input: expected string, received number; tokenCount: Invalid input: expected int, received number',
    ],
  );
});

test('SAOP envelope lines are read as assistant turns with their reasoning', () => {
  const t = devsAdapter.read(fixture('saop-envelopes.jsonl'));
  assert.equal(t.entries.length, 5);
  const e = t.entries[2]?.turn;
  assert.equal(e?.id, 'e1');
  assert.equal(e?.role, 'assistant');
  assert.equal(e?.node, 'review');
  assert.match(e?.content ?? '', /^Read the exporter\.\n\{"tool":"read_file"/);
});

test('detect: native lines score 10; other shapes score low', () => {
  assert.equal(devsAdapter.detect(fixture('basic-session.jsonl')), 10);
  const claude = parseDocument(Buffer.from('{"type":"user","uuid":"u","parentUuid":null,"sessionId":"s","message":{"role":"user","content":"hi"}}\n'), {
    path: 'c',
  });
  const codex = parseDocument(Buffer.from('{"timestamp":"t","type":"response_item","payload":{"type":"message"}}\n'), { path: 'c' });
  assert.equal(devsAdapter.detect(claude), 0);
  assert.equal(devsAdapter.detect(codex), 0);
});
