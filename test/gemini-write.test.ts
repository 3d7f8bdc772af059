import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { TranscriptEdit } from '../src/core/prune/edit.js';
import { SUMMARY_PREFIX } from '../src/core/prune/edit.js';
import { buildUnits } from '../src/core/prune/units.js';
import { geminiAdapter } from '../src/formats/gemini/read.js';
import { geminiWriter } from '../src/formats/gemini/write.js';
import { detectFormat } from '../src/formats/index.js';
import type { Transcript } from '../src/formats/types.js';
import { writeTranscript } from '../src/formats/write.js';
import type { WrittenTranscript } from '../src/formats/write.js';
import { parseDocument } from '../src/io/jsonl.js';
import type { ParsedDocument } from '../src/io/jsonl.js';
import { contextShape, dropMiddleEdit, editOf, expectedContext, TEST_NOW } from './helpers/edits.js';
import { realdataFiles, realdataName, realdataSkip } from './helpers/realdata.js';
import { fixtureDoc, inlineDoc } from './helpers/transcripts.js';

const SUMMARY = `${SUMMARY_PREFIX}\nThe user asked for files; they were read.`;
const fixture = (name: string): ParsedDocument => fixtureDoc('gemini', name);

function makeEdit(t: Transcript, dropped: readonly number[], masked: readonly number[] = []): TranscriptEdit {
  return editOf({ dropped, masked: masked.map((i) => [i, `[masked ${t.entries[i]?.turn.id}]`] as const), summaryText: SUMMARY });
}

/** Writes, then checks the things every write must satisfy; returns the written transcript. */
function writeAndCheck(doc: ParsedDocument, edit: TranscriptEdit): WrittenTranscript {
  const t = geminiAdapter.read(doc);
  const written = writeTranscript(doc, t, edit, geminiWriter);
  assert.deepEqual(contextShape(written.readBack), expectedContext(t, edit));
  assert.equal(detectFormat(written.document).adapter.name, 'gemini');
  written.records.forEach((record, k) => {
    if (!('from' in record)) return;
    const source = doc.records[record.from]?.raw;
    assert.ok(source && written.document.records[k]?.raw?.equals(source), `output line ${k + 1} is not input line ${record.from + 1}`);
  });
  return written;
}

/** The message list of the `$set.messages` checkpoint the writer appended (the output's last line). */
function checkpoint(written: WrittenTranscript): Array<Record<string, unknown>> {
  const last = written.document.records.filter((r) => !r.blank).at(-1)?.values[0] as { $set: { messages: Array<Record<string, unknown>> } };
  return last.$set.messages;
}

test('the adapter links each tool call to its result (the toolCall id, or messageId#i without one)', () => {
  const t = geminiAdapter.read(fixture('tool-calls-paired.jsonl'));
  assert.deepEqual(
    t.entries.map((e) => e.links),
    [undefined, undefined, { calls: ['r1'] }, { answers: ['r1'] }, { calls: ['r2'] }, { answers: ['r2'] }, undefined],
  );
  const idless = geminiAdapter.read(
    inlineDoc(
      { sessionId: 's', projectHash: 'p', startTime: 't', lastUpdated: 't' },
      {
        id: 'g9',
        type: 'gemini',
        content: '',
        toolCalls: [{ name: 'ls', args: {}, result: [{ functionResponse: { name: 'ls', response: { output: 'x' } } }] }],
      },
    ),
  );
  assert.deepEqual(
    idless.entries.map((e) => e.links),
    [{ calls: ['g9#0'] }, { answers: ['g9#0'] }],
  );
  // Different calls of one record are separate units; each call stays with its result.
  assert.deepEqual(
    buildUnits(t.entries).map((u) => u.entries),
    [[0], [1], [2, 3], [4, 5], [6]],
  );
});

test('JSONL: every input line is kept and one $set.messages checkpoint is appended', () => {
  const doc = fixture('tool-calls-paired.jsonl');
  const t = geminiAdapter.read(doc);
  const written = writeAndCheck(doc, makeEdit(t, [2, 3]));
  assert.deepEqual(
    written.records.slice(0, doc.records.length),
    doc.records.map((r) => ({ from: r.index })),
  );
  assert.equal(written.records.length, doc.records.length + 1);
  const last = written.document.records.at(-1)?.values[0] as { $set: Record<string, unknown> };
  assert.deepEqual(Object.keys(last.$set), ['messages', 'lastUpdated']);
  assert.equal(last.$set['lastUpdated'], TEST_NOW);
});

test('drop a middle call of a record: its toolCalls entry goes, the record splits around the summary', () => {
  const doc = fixture('tool-calls-paired.jsonl');
  const t = geminiAdapter.read(doc);
  // g1 = text (1), r1 call+result (2, 3), r2 call+result (4, 5): the summary falls between text and r2.
  const written = writeAndCheck(doc, makeEdit(t, [2, 3]));
  const messages = checkpoint(written);
  assert.deepEqual(
    messages.map((m) => m['id']),
    ['u1', 'g1', '00000000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-000000000002', 'g2'],
  );
  const [, first, summary, second] = messages;
  assert.equal(first?.['content'], 'Reading both.');
  assert.deepEqual(first?.['toolCalls'], []);
  // The record keeps its own fields (tokens, thoughts) in its first half.
  assert.deepEqual(first?.['tokens'], { input: 500, output: 40, cached: 0, thoughts: 25, tool: 0, total: 565 });
  assert.deepEqual(summary, { id: '00000000-0000-4000-8000-000000000001', timestamp: TEST_NOW, type: 'user', content: [{ text: SUMMARY }] });
  assert.equal(second?.['type'], 'gemini');
  assert.equal(second?.['content'], '');
  assert.deepEqual(
    (second?.['toolCalls'] as Array<{ id: string }>).map((c) => c.id),
    ['r2'],
  );
});

test("drop a record's text but keep its calls: content is emptied and the summary goes before it", () => {
  const doc = fixture('tool-calls-paired.jsonl');
  const t = geminiAdapter.read(doc);
  const written = writeAndCheck(doc, makeEdit(t, [1]));
  const messages = checkpoint(written);
  assert.deepEqual(
    messages.map((m) => m['id']),
    ['u1', '00000000-0000-4000-8000-000000000001', 'g1', 'g2'],
  );
  assert.equal(messages[2]?.['content'], '');
  assert.equal((messages[2]?.['toolCalls'] as unknown[]).length, 2);
});

test('drop a whole gemini record: it leaves the checkpoint and the summary takes its place', () => {
  const doc = fixture('tool-calls-paired.jsonl');
  const t = geminiAdapter.read(doc);
  const written = writeAndCheck(doc, makeEdit(t, [1, 2, 3, 4, 5]));
  assert.deepEqual(
    checkpoint(written).map((m) => m['id']),
    ['u1', '00000000-0000-4000-8000-000000000001', 'g2'],
  );
});

test('mask only: the result becomes one functionResponse with the placeholder; nothing else changes', () => {
  const doc = fixture('tool-calls-paired.jsonl');
  const t = geminiAdapter.read(doc);
  const edit = makeEdit(t, [], [5]);
  const written = writeAndCheck(doc, edit);
  const messages = checkpoint(written);
  assert.deepEqual(
    messages.map((m) => m['id']),
    ['u1', 'g1', 'g2'],
  );
  const calls = messages[1]?.['toolCalls'] as Array<Record<string, unknown>>;
  assert.deepEqual(calls[1]?.['result'], [{ functionResponse: { id: 'r2', name: 'read_file', response: { output: '[masked g1#result1]' } } }]);
  // The other call and the rest of the masked call are as they were.
  const original = doc.records[2]?.values[0] as { toolCalls: Array<Record<string, unknown>> };
  assert.deepEqual(calls[0], original.toolCalls[0]);
  assert.deepEqual({ ...calls[1], result: null }, { ...original.toolCalls[1], result: null });
  assert.equal(written.readBack.entries.filter((e) => e.turn.content.startsWith(SUMMARY_PREFIX)).length, 0);
});

test('the checkpoint holds the resolved list: last version of a re-appended id, rewound messages gone', () => {
  const lastWins = fixture('last-wins-ids.jsonl');
  const t = geminiAdapter.read(lastWins);
  // Drop g1's text and u2: several units, one summary at the first.
  const written = writeAndCheck(lastWins, makeEdit(t, [1, 4]));
  const messages = checkpoint(written);
  assert.deepEqual(
    messages.map((m) => m['id']),
    ['u1', '00000000-0000-4000-8000-000000000001', 'g1'],
  );
  assert.equal((messages[2]?.['toolCalls'] as Array<{ status: string }>)[0]?.status, 'success');

  const rewind = fixture('rewind-to.jsonl');
  const r = geminiAdapter.read(rewind);
  const rewound = writeAndCheck(rewind, makeEdit(r, [1]));
  assert.deepEqual(
    checkpoint(rewound).map((m) => m['id']),
    ['u1', '00000000-0000-4000-8000-000000000001', 'u4', 'g4'],
  );
});

test('summary placement: after every kept entry before it, before every kept entry after it', () => {
  const doc = fixture('set-messages-checkpoint.jsonl');
  const t = geminiAdapter.read(doc);
  // c1 (an earlier /compress snapshot) kept, c2 and g3 dropped: the summary sits between c1 and u3.
  const written = writeAndCheck(doc, makeEdit(t, [1, 3]));
  assert.deepEqual(
    contextShape(written.readBack).map(([role, type]) => `${role}/${type}`),
    ['user/summary', 'user/message', 'user/message'],
  );
  assert.equal(written.readBack.entries[1]?.turn.content, SUMMARY);
  assert.equal(written.readBack.entries[2]?.turn.content, 'continue');
});

test('notices and the pinned <session_context> bootstrap pass through', () => {
  const notices = fixture('info-records-skipped.jsonl');
  const n = geminiAdapter.read(notices);
  const written = writeAndCheck(notices, makeEdit(n, [1]));
  assert.deepEqual(
    checkpoint(written).map((m) => m['type']),
    ['user', 'info', 'warning', 'error', 'user'],
  );

  const bootstrap = fixture('session-context-bootstrap.jsonl');
  const b = geminiAdapter.read(bootstrap);
  const kept = writeAndCheck(bootstrap, makeEdit(b, [1]));
  assert.deepEqual(
    kept.readBack.entries.map((e) => e.turn.type),
    ['system', 'message', 'message'],
  );
});

test('legacy document: rewritten whole, 2-space indented, other fields kept, lastUpdated moved to now', () => {
  const doc = fixture('legacy-document.json');
  const t = geminiAdapter.read(doc);
  const written = writeAndCheck(doc, makeEdit(t, [2, 3]));
  assert.equal(written.records.length, 1);
  const record = written.records[0];
  assert.ok(record && 'text' in record && record.replaces === undefined);
  assert.ok(record.text.startsWith('{\n  "sessionId": "legacy-1",\n  "projectHash": "ph",'));
  assert.equal(written.document.kind, 'json-document');
  const before = doc.document as Record<string, unknown>;
  const after = written.document.document as Record<string, unknown>;
  assert.deepEqual(Object.keys(after), Object.keys(before));
  assert.deepEqual({ ...after, messages: null, lastUpdated: null }, { ...before, messages: null, lastUpdated: null });
  assert.equal(after['lastUpdated'], TEST_NOW);
  // m1's text stays, its only call is gone; the info notice and the empty record pass through. The
  // summary goes right before the next kept entry (m3), so after the notice.
  assert.deepEqual(
    (after['messages'] as Array<{ id: string }>).map((m) => m.id),
    ['m0', 'm1', 'm2', '00000000-0000-4000-8000-000000000001', 'm3', 'm4'],
  );
});

test('legacy document on one JSONL line: the line is rewritten in place, still one document', () => {
  const doc = fixture('legacy-document-one-line.jsonl');
  const t = geminiAdapter.read(doc);
  const written = writeAndCheck(doc, makeEdit(t, [1, 2, 3], []));
  assert.equal(written.records.length, 1);
  assert.equal((written.records[0] as { replaces?: number }).replaces, 0);
  assert.equal(written.document.records.length, 1);
  const value = written.document.records[0]?.values[0] as { sessionId: string; messages: Array<{ id: string }> };
  assert.equal(value.sessionId, 'legacy-1');
  assert.deepEqual(
    value.messages.map((m) => m.id),
    ['m0', 'm2', '00000000-0000-4000-8000-000000000001', 'm3', 'm4'],
  );
});

test('an input with a call still running at the end stays valid', () => {
  const doc = fixture('tool-call-without-result.jsonl');
  assert.deepEqual(geminiWriter.validate(doc, geminiAdapter.read(doc)), []);
});

// ---- validator: it must catch corruption -------------------------------------------------------

const header = { sessionId: 's-1', projectHash: 'ph', startTime: 't', lastUpdated: 't', kind: 'main' };
const call = (id: string, result = true): Record<string, unknown> => ({
  id,
  name: 'read_file',
  args: {},
  ...(result ? { result: [{ functionResponse: { id, name: 'read_file', response: { output: 'x' } } }] } : {}),
  status: result ? 'success' : 'executing',
});
const problemsOf = (doc: ParsedDocument): string[] => geminiWriter.validate(doc, geminiAdapter.read(doc));

test('validate: a well-formed checkpoint passes', () => {
  const doc = inlineDoc(header, {
    $set: {
      messages: [
        { id: 'u1', type: 'user', content: 'x' },
        { id: 'g1', type: 'gemini', content: '', toolCalls: [call('c1')] },
      ],
    },
  });
  assert.deepEqual(problemsOf(doc), []);
});

test('validate: a kept call without its result is caught (except in the last, still running message)', () => {
  const broken = inlineDoc(header, {
    $set: {
      messages: [
        { id: 'g1', type: 'gemini', content: '', toolCalls: [call('c1', false)] },
        { id: 'u2', type: 'user', content: 'next' },
      ],
    },
  });
  assert.match(problemsOf(broken).join('\n'), /tool call c1 has no result/);
  const running = inlineDoc(header, { id: 'u1', type: 'user', content: 'x' }, { id: 'g1', type: 'gemini', content: '', toolCalls: [call('c1', false)] });
  assert.deepEqual(problemsOf(running), []);
});

test('validate: duplicate ids in the checkpoint or the legacy document are caught', () => {
  const dup = inlineDoc(header, {
    $set: {
      messages: [
        { id: 'u1', type: 'user', content: 'a' },
        { id: 'u1', type: 'user', content: 'b' },
      ],
    },
  });
  assert.match(problemsOf(dup).join('\n'), /message id u1 appears twice/);
  const legacy = parseDocument(
    Buffer.from(
      JSON.stringify(
        {
          ...header,
          messages: [
            { id: 'm', type: 'user', content: 'a' },
            { id: 'm', type: 'user', content: 'b' },
          ],
        },
        null,
        2,
      ),
    ),
    { path: 'legacy.json', keepRaw: true },
  );
  assert.equal(legacy.kind, 'json-document');
  assert.match(problemsOf(legacy).join('\n'), /appears twice/);
});

test('validate: a toolCalls entry without id or name, or answered for another id, is caught', () => {
  const noName = inlineDoc(
    header,
    { id: 'g1', type: 'gemini', content: '', toolCalls: [{ ...call('c1'), name: undefined }] },
    { id: 'u2', type: 'user', content: 'x' },
  );
  assert.match(problemsOf(noName).join('\n'), /toolCalls\[0\] has no name/);
  const noId = inlineDoc(
    header,
    { id: 'g1', type: 'gemini', content: '', toolCalls: [{ ...call('c1'), id: undefined }] },
    { id: 'u2', type: 'user', content: 'x' },
  );
  assert.match(problemsOf(noId).join('\n'), /toolCalls\[0\] has no id/);
  const crossed = inlineDoc(
    header,
    { id: 'g1', type: 'gemini', content: '', toolCalls: [{ ...call('c2'), id: 'c1' }] },
    { id: 'u2', type: 'user', content: 'x' },
  );
  assert.match(problemsOf(crossed).join('\n'), /tool call c1 is answered by a functionResponse for c2/);
});

test('validate: no header first, or a cut-off last line, is caught', () => {
  const headless = inlineDoc({ id: 'u1', type: 'user', content: 'x' });
  assert.match(problemsOf(headless).join('\n'), /first line is not a session header/);

  const doc = fixture('tool-calls-paired.jsonl');
  const written = writeTranscript(doc, geminiAdapter.read(doc), makeEdit(geminiAdapter.read(doc), [2, 3]), geminiWriter);
  const cut = parseDocument(written.bytes.subarray(0, written.bytes.length - 20), { path: 'cut.jsonl', keepRaw: true });
  assert.match(problemsOf(cut).join('\n'), /the last line does not parse/);

  // A legacy document cut short is no longer a document at all.
  const legacy = fixture('legacy-document.json');
  const whole = writeTranscript(legacy, geminiAdapter.read(legacy), makeEdit(geminiAdapter.read(legacy), [2, 3]), geminiWriter);
  const truncated = parseDocument(whole.bytes.subarray(0, whole.bytes.length - 5), { path: 'cut.json', keepRaw: true });
  assert.notDeepEqual(problemsOf(truncated), []);
});

// ---- real data -----------------------------------------------------------------------------------

for (const path of realdataFiles('gemini')) {
  test(`real data: ${realdataName(path)} writes validly`, { skip: realdataSkip }, () => {
    const doc = parseDocument(readFileSync(path), { path, keepRaw: true });
    const t = geminiAdapter.read(doc);
    let droppedSomething = false;
    for (const [keepHead, keepTail] of [
      [2, 5],
      [1, 1],
      [3, 2],
    ] as const) {
      const plain = dropMiddleEdit(t, { keepHead, keepTail });
      droppedSomething ||= plain.dropped.size > 0;
      const written = writeAndCheck(doc, plain);
      if (doc.kind === 'json-document') assert.equal(written.document.kind, 'json-document');
      else
        assert.deepEqual(
          written.records.slice(0, doc.records.length),
          doc.records.map((r) => ({ from: r.index })),
        );
      assert.equal(written.readBack.entries.filter((e) => e.turn.content === plain.summary?.text).length, plain.summary ? 1 : 0);

      // The same with every kept tool result masked.
      const results = t.entries.flatMap((e, i) => (e.turn.type === 'tool_result' && !plain.dropped.has(i) ? [i] : []));
      const masked = dropMiddleEdit(t, { keepHead, keepTail, mask: results });
      const maskedWrite = writeAndCheck(doc, masked);
      const placeholders = maskedWrite.readBack.entries.filter((e) => e.turn.content.startsWith('[devs-ctx: tool output masked'));
      assert.equal(placeholders.length, results.length);
    }
    assert.ok(droppedSomething, 'at least one edit drops something');
  });
}
