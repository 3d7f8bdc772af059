import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { TranscriptEdit } from '../src/core/prune/edit.js';
import { SUMMARY_PREFIX } from '../src/core/prune/edit.js';
import { toolIds } from '../src/core/prune/units.js';
import type { ConversationTurn } from '../src/core/turn.js';
import { devsAdapter } from '../src/formats/devs/read.js';
import { devsWriter } from '../src/formats/devs/write.js';
import { detectFormat, readTranscript } from '../src/formats/index.js';
import type { Transcript } from '../src/formats/types.js';
import { InvalidOutputError, writeTranscript } from '../src/formats/write.js';
import type { WrittenTranscript } from '../src/formats/write.js';
import { parseDocument } from '../src/io/jsonl.js';
import type { ParsedDocument } from '../src/io/jsonl.js';
import { dropMiddleEdit, editOf, TEST_NOW } from './helpers/edits.js';
import { realdataFiles, realdataName, realdataSkip } from './helpers/realdata.js';
import { fixtureDoc, inlineDoc } from './helpers/transcripts.js';

const fixture = (name: string): ParsedDocument => fixtureDoc('devs', name);
const SUMMARY = `${SUMMARY_PREFIX}\nThe exporter was read, written and tested.`;
const FIRST_ID = '00000000-0000-4000-8000-000000000001';

/** An edit by hand: the listed entries dropped (summary at the first), the listed ones masked. */
function makeEdit(dropped: readonly number[], masked: Readonly<Record<number, string>> = {}): TranscriptEdit {
  return editOf({ dropped, masked: Object.entries(masked).map(([i, text]) => [Number(i), text] as const), summaryText: SUMMARY });
}

function write(doc: ParsedDocument, edit: TranscriptEdit, transcript: Transcript = devsAdapter.read(doc)): WrittenTranscript {
  return writeTranscript(doc, transcript, edit, devsWriter);
}

/** The turns a correct write reads back as: kept turns in order, masked ones with the placeholder, the summary in place. */
function expectedTurns(t: Transcript, edit: TranscriptEdit, summary?: ConversationTurn): ConversationTurn[] {
  const out: ConversationTurn[] = [];
  t.entries.forEach((e, i) => {
    if (summary && i === edit.summary?.at) out.push(summary);
    if (edit.dropped.has(i)) return;
    const placeholder = edit.masked.get(i);
    if (placeholder === undefined) out.push(e.turn);
    else {
      const { tokenCount: _stale, ...rest } = e.turn;
      out.push({ ...rest, content: placeholder });
    }
  });
  if (summary && edit.summary && edit.summary.at >= t.entries.length) out.push(summary);
  return out;
}

const summaryTurn = (node?: string): ConversationTurn => ({
  id: FIRST_ID,
  role: 'system',
  type: 'summary',
  content: SUMMARY,
  timestamp: TEST_NOW,
  ...(node !== undefined ? { node } : {}),
});

/**
 * Every `{from}` line is byte-identical in the output, and every input line the edit does not touch
 * (no dropped or masked entry on it) comes back as `{from}`.
 */
function assertUntouchedLinesKept(input: ParsedDocument, t: Transcript, edit: TranscriptEdit, written: WrittenTranscript): void {
  assert.equal(written.document.records.length, written.records.length, 'one output line per record');
  const touched = new Set<number>();
  t.entries.forEach((e, i) => {
    if (edit.dropped.has(i) || edit.masked.has(i)) for (const r of e.source.records) touched.add(r);
  });
  const from = new Set<number>();
  written.records.forEach((record, j) => {
    if (!('from' in record)) return;
    from.add(record.from);
    const original = input.records[record.from]?.raw;
    const copy = written.document.records[j]?.raw;
    assert.ok(original && copy?.equals(original), `output line ${j + 1} is input line ${record.from + 1}, byte for byte`);
  });
  for (const record of input.records) {
    if (!touched.has(record.index)) assert.ok(from.has(record.index), `untouched input line ${record.line} is kept as it was`);
    else assert.ok(!from.has(record.index), `touched input line ${record.line} is not copied`);
  }
}

test('drop: the dropped lines go and one summary turn takes their place, in the node of the turn before it', () => {
  const doc = fixture('basic-session.jsonl');
  const t = devsAdapter.read(doc);
  const edit = makeEdit([5, 6, 7, 8]);
  const written = write(doc, edit, t);
  assert.deepEqual(
    written.readBack.entries.map((e) => e.turn),
    expectedTurns(t, edit, summaryTurn('implement')),
  );
  assert.deepEqual(
    written.readBack.entries.map((e) => e.turn.id),
    ['t1', 't2', 't3', 't4', 't5', FIRST_ID, 't10', 't11', 't12', 't13', 't14', 't15'],
  );
  // The summary line is a plain native turn, in the schema's key order.
  assert.deepEqual(written.records[5], {
    text: `{"id":"${FIRST_ID}","role":"system","type":"summary","content":${JSON.stringify(SUMMARY)},"timestamp":"${TEST_NOW}","node":"implement"}`,
  });
  assertUntouchedLinesKept(doc, t, edit, written);
  assert.equal(detectFormat(written.document).adapter.name, 'devs');
  assert.deepEqual(devsWriter.validate(written.document, written.readBack), []);
});

test('mask: content replaced in place, every other field and the key order kept, the stale tokenCount removed', () => {
  const result = {
    id: 'r1',
    role: 'tool',
    type: 'tool_result',
    content: 'a long listing',
    timestamp: 'T',
    callId: 'c1',
    tokenCount: 3,
    extra: { keep: [1] },
    node: 'n',
  };
  const doc = inlineDoc(
    { id: 's', role: 'system', type: 'system', content: 'sys' },
    { id: 'c', role: 'assistant', type: 'tool_call', content: 'ls', callId: 'c1' },
    result,
    { id: 'a', role: 'assistant', type: 'message', content: 'done' },
  );
  const t = devsAdapter.read(doc);
  const edit = makeEdit([], { 2: '[masked r1]' });
  const written = write(doc, edit, t);
  const { tokenCount: _stale, ...rest } = result;
  const masked = { ...rest, content: '[masked r1]' };
  assert.deepEqual(written.records, [{ from: 0 }, { from: 1 }, { text: JSON.stringify(masked), replaces: 2 }, { from: 3 }]);
  assert.deepEqual(Object.keys(JSON.parse((written.records[2] as { text: string }).text)), Object.keys(masked));
  assert.deepEqual(
    written.readBack.entries.map((e) => e.turn),
    expectedTurns(t, edit),
  );
  assert.equal(written.readBack.entries[2]?.turn['callId'], 'c1', 'still answers the same call');
});

test('summary placement: after every kept turn before the first dropped one, before every kept turn after it', () => {
  const doc = fixture('basic-session.jsonl');
  const t = devsAdapter.read(doc);
  for (const [first, last] of [
    [2, 2],
    [3, 10],
    [9, 9],
    [14, 14],
  ] as const) {
    const dropped = Array.from({ length: last - first + 1 }, (_, k) => first + k);
    const edit = makeEdit(dropped);
    const written = write(doc, edit, t);
    const ids = written.readBack.entries.map((e) => e.turn.id);
    assert.equal(ids.indexOf(FIRST_ID), first, `summary where entry ${first} was`);
    assert.deepEqual(
      written.readBack.entries.map((e) => e.turn),
      expectedTurns(t, edit, { ...summaryTurn(), ...nodeBefore(t, first) }),
    );
    assertUntouchedLinesKept(doc, t, edit, written);
  }
});

/** The node the summary should carry: the kept turn before it, else the first dropped one. */
function nodeBefore(t: Transcript, at: number): { node?: string } {
  const node = t.entries[at - 1]?.turn.node ?? t.entries[at]?.turn.node;
  return node !== undefined ? { node } : {};
}

test('multi-drop: two separate ranges go, one summary stands at the first', () => {
  const doc = fixture('basic-session.jsonl');
  const t = devsAdapter.read(doc);
  const edit = makeEdit([5, 6, 9, 10, 11]);
  const written = write(doc, edit, t);
  assert.deepEqual(
    written.readBack.entries.map((e) => e.turn.id),
    ['t1', 't2', 't3', 't4', 't5', FIRST_ID, 't8', 't9', 't13', 't14', 't15'],
  );
  assert.deepEqual(
    written.readBack.entries.map((e) => e.turn),
    expectedTurns(t, edit, summaryTurn('implement')),
  );
  assert.equal(written.readBack.entries.filter((e) => e.turn.content.startsWith(SUMMARY_PREFIX)).length, 1);
  assertUntouchedLinesKept(doc, t, edit, written);
});

test('nothing dropped, only masked: no summary, same number of lines, only the masked lines change', () => {
  const doc = fixture('basic-session.jsonl');
  const t = devsAdapter.read(doc);
  const edit = makeEdit([], { 6: '[masked t7]', 10: '[masked t11]' });
  const written = write(doc, edit, t);
  assert.equal(written.records.length, doc.records.length);
  assert.deepEqual(
    written.readBack.entries.map((e) => e.turn),
    expectedTurns(t, edit),
  );
  assert.ok(!written.readBack.entries.some((e) => e.turn.type === 'summary'));
  assertUntouchedLinesKept(doc, t, edit, written);
});

test('an edit that changes nothing writes the same bytes', () => {
  for (const name of ['basic-session.jsonl', 'bom-crlf-no-final-newline.jsonl', 'malformed-lines.jsonl', 'saop-envelopes.jsonl']) {
    const doc = fixture(name);
    const written = write(doc, makeEdit([]));
    assert.ok(written.bytes.equals(readFileSync(doc.path)), name);
  }
});

test('blank and malformed lines stay in place, also between dropped turns; an edited glued line becomes one line per value', () => {
  const doc = fixture('malformed-lines.jsonl');
  const t = devsAdapter.read(doc);
  // Entries: t1 t2 t4 t5 (t4, t5 glued on line 6) t7 t8 t9 t10 t11 t12. Drop t5 … t9.
  assert.deepEqual(
    t.entries.map((e) => e.turn.id),
    ['t1', 't2', 't4', 't5', 't7', 't8', 't9', 't10', 't11', 't12'],
  );
  const edit = makeEdit([3, 4, 5, 6]);
  const written = write(doc, edit, t);
  assert.deepEqual(
    written.readBack.entries.map((e) => e.turn),
    expectedTurns(t, edit, summaryTurn('implement')),
  );
  // Lines 3 (blank), 4 (truncated), 5 (no role), 7 (blank), 8 (not JSON), 9 (bad role) stay, as they were.
  const kept = written.records.flatMap((r) => ('from' in r ? [r.from] : []));
  for (const index of [2, 3, 4, 6, 7, 8]) assert.ok(kept.includes(index), `input line ${index + 1} kept`);
  // The glued line: t4 is written alone, then the summary where t5 was.
  const glued = written.records.findIndex((r) => 'replaces' in r && r.replaces === 5);
  assert.equal(JSON.parse((written.records[glued] as { text: string }).text).id, 't4');
  assert.equal(JSON.parse((written.records[glued + 1] as { text: string }).text).id, FIRST_ID);
  // Reading the output reports the same bad lines as before (at their new positions), nothing new.
  assert.equal(written.document.issues.length, doc.issues.length - 1, 'the glued-line warning is gone, the errors stay');
});

test('BOM and CRLF are kept; new lines end like the others; a last line without newline stays without', () => {
  const doc = fixture('bom-crlf-no-final-newline.jsonl');
  const t = devsAdapter.read(doc);
  const edit = makeEdit([2, 3], { 4: '[masked]' });
  const written = write(doc, edit, t);
  assert.ok(written.bytes.subarray(0, 3).equals(Buffer.from([0xef, 0xbb, 0xbf])));
  assert.ok(written.document.records.slice(0, -1).every((r) => r.eol === '\r\n'));
  assert.equal(written.document.records.at(-1)?.eol, '');
  // Neither t2 (before) nor t3 (the first dropped) has a node: the summary has none either.
  assert.deepEqual(
    written.readBack.entries.map((e) => e.turn),
    expectedTurns(t, edit, summaryTurn()),
  );
});

test('SAOP envelopes: dropped like turns; the summary takes the node of the envelopes it replaces; masking one is refused', () => {
  const doc = fixture('saop-envelopes.jsonl');
  const t = devsAdapter.read(doc);
  const edit = makeEdit([2, 3]);
  const written = write(doc, edit, t);
  assert.deepEqual(
    written.readBack.entries.map((e) => e.turn),
    expectedTurns(t, edit, summaryTurn('review')),
  );
  assert.throws(() => devsWriter.write(doc, t, makeEdit([], { 4: '[masked]' })), /SAOP envelope/);
});

test('a summary at the end (every turn after the head dropped) is the last line', () => {
  const doc = fixture('unknown-fields-kept.jsonl');
  const t = devsAdapter.read(doc);
  const edit = makeEdit([1]);
  const written = write(doc, edit, t);
  assert.deepEqual(
    written.readBack.entries.map((e) => e.turn),
    [t.entries[0]?.turn, summaryTurn()],
  );
});

// ---- validate() must catch real corruption ----

test('validate: duplicate ids, a result without its call, and a call whose result is gone are problems', () => {
  const call = { id: 'c', role: 'assistant', type: 'tool_call', content: 'ls', callId: 'k1' };
  const result = { id: 'r', role: 'tool', type: 'tool_result', content: 'a b', callId: 'k1' };
  const next = { id: 'm', role: 'user', type: 'message', content: 'next' };
  const check = (...lines: unknown[]): string[] => {
    const doc = inlineDoc(...lines);
    return devsWriter.validate(doc, devsAdapter.read(doc));
  };
  assert.deepEqual(check(call, result, next), []);
  // A call still waiting for its result at the very end is an agent mid-call, not corruption.
  assert.deepEqual(check(next, call), []);
  assert.match(check(call, result, { ...next, id: 'c' }).join('\n'), /turn id c is used twice/);
  assert.match(check(result, next).join('\n'), /answers tool call k1, which no earlier turn makes/);
  assert.match(check(result, call, next).join('\n'), /answers tool call k1, which no earlier turn makes/);
  assert.match(check(call, next).join('\n'), /tool call k1 \(c\) has no result/);
  assert.match(check({ ...result, toolCallId: 'k9', callId: undefined }).join('\n'), /k9/);
});

test('validate: a JSON document is not a native transcript', () => {
  const doc = parseDocument(Buffer.from('[\n{"id":"a","role":"user","type":"message","content":"x"}\n]\n'), { path: 'x', keepRaw: true });
  assert.equal(doc.kind, 'json-document');
  const t = devsAdapter.read(doc);
  assert.ok(t.entries.length > 0);
  assert.match(devsWriter.validate(doc, t).join('\n'), /no longer one JSON value per line/);
});

test('writeTranscript refuses an edit that would separate a call from its result', () => {
  const doc = inlineDoc(
    { id: 's', role: 'system', type: 'system', content: 'sys' },
    { id: 'c', role: 'assistant', type: 'tool_call', content: 'ls', callId: 'k1' },
    { id: 'r', role: 'tool', type: 'tool_result', content: 'a b', callId: 'k1' },
    { id: 'm', role: 'user', type: 'message', content: 'next' },
  );
  assert.throws(
    () => write(doc, makeEdit([1])),
    (error) => error instanceof InvalidOutputError && /answers tool call k1/.test(error.message),
  );
  assert.throws(
    () => write(doc, makeEdit([2])),
    (error) => error instanceof InvalidOutputError && /has no result/.test(error.message),
  );
});

// ---- real data ----

/** Writes `doc` with drop-middle edits (plain, with masks, masks only) and checks everything a prune promises. */
function assertRealWrite(doc: ParsedDocument): void {
  const t = devsAdapter.read(doc);
  assert.ok(t.entries.length > 0, 'turns were read');
  assert.deepEqual(devsWriter.validate(doc, t), [], 'the input itself is valid');
  const n = t.entries.length;
  const plain = dropMiddleEdit(t);
  const keptResults = t.entries.flatMap((e, i) => (e.turn.type === 'tool_result' && !plain.dropped.has(i) ? [i] : []));
  const allResults = t.entries.flatMap((e, i) => (e.turn.type === 'tool_result' ? [i] : []));
  const edits = [plain, dropMiddleEdit(t, { mask: keptResults }), dropMiddleEdit(t, { keepHead: n, mask: allResults })];
  for (const edit of edits) {
    const written = write(doc, edit, t);
    const summary = edit.summary ? { ...summaryTurn(), content: edit.summary.text, ...nodeBefore(t, edit.summary.at) } : undefined;
    assert.deepEqual(
      written.readBack.entries.map((e) => e.turn),
      expectedTurns(t, edit, summary),
    );
    assertUntouchedLinesKept(doc, t, edit, written);
    assert.equal(detectFormat(written.document).adapter.name, 'devs');
  }
}

for (const path of realdataFiles('devs')) {
  test(`real devs transcript written with drop-middle edits: ${realdataName(path)}`, { skip: realdataSkip }, () => {
    assertRealWrite(parseDocument(readFileSync(path), { path, keepRaw: true }));
  });
}

/**
 * No native transcript is shared, so the real transcripts of the other formats are turned into native
 * ones (their turns, one per line, with a `callId` where a turn makes or answers exactly one call):
 * real content, real sizes, real tool use, in this format.
 */
function asNative(t: Transcript): ParsedDocument {
  const answered = new Set(t.entries.flatMap((e) => (e.turn.type === 'tool_result' ? toolIds(e).answers : [])));
  const called = new Set<string>();
  const lines = t.entries.map((e) => {
    const { callId: _a, toolCallId: _b, tool_call_id: _c, ...turn } = e.turn;
    const { calls, answers } = toolIds(e);
    const [call] = calls;
    if (e.turn.type === 'tool_call' && calls.length === 1 && call !== undefined && answered.has(call)) {
      called.add(call);
      return { ...turn, callId: call };
    }
    const [answer] = answers;
    if (e.turn.type === 'tool_result' && answers.length === 1 && answer !== undefined && called.has(answer)) return { ...turn, callId: answer };
    return turn;
  });
  return parseDocument(Buffer.from(lines.map((l) => `${JSON.stringify(l)}\n`).join('')), { path: 'native', keepRaw: true });
}

for (const path of realdataFiles()) {
  test(`real content as a native transcript, written with drop-middle edits: ${realdataName(path)}`, { skip: realdataSkip }, () => {
    const source = readTranscript(parseDocument(readFileSync(path), { path }));
    const doc = asNative(source);
    assert.equal(detectFormat(doc).adapter.name, 'devs');
    assertRealWrite(doc);
  });
}
