import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { TranscriptEdit } from '../src/core/prune/edit.js';
import { SUMMARY_PREFIX } from '../src/core/prune/edit.js';
import { buildUnits } from '../src/core/prune/units.js';
import { detectFormat } from '../src/formats/index.js';
import { openhandsAdapter } from '../src/formats/openhands/read.js';
import { openhandsWriter } from '../src/formats/openhands/write.js';
import type { Transcript } from '../src/formats/types.js';
import { writeTranscript } from '../src/formats/write.js';
import type { WrittenTranscript } from '../src/formats/write.js';
import { parseDocument } from '../src/io/jsonl.js';
import type { ParsedDocument } from '../src/io/jsonl.js';
import { contextShape, dropMiddleEdit, editOf, expectedContext, TEST_NOW } from './helpers/edits.js';
import { realdataFiles, realdataName, realdataSkip } from './helpers/realdata.js';
import { fixtureDoc, inlineDoc } from './helpers/transcripts.js';

const SUMMARY = `${SUMMARY_PREFIX}\nThe agent listed the repository.`;
const fixture = (name: string): ParsedDocument => fixtureDoc('openhands', name);

type Event = Record<string, unknown>;

function makeEdit(t: Transcript, dropped: readonly number[], masked: readonly number[] = []): TranscriptEdit {
  return editOf({ dropped, masked: masked.map((i) => [i, `[masked ${t.entries[i]?.turn.id}]`] as const), summaryText: SUMMARY });
}

/** Writes, then checks what every write must satisfy. */
function writeAndCheck(doc: ParsedDocument, edit: TranscriptEdit): WrittenTranscript {
  const t = openhandsAdapter.read(doc);
  const written = writeTranscript(doc, t, edit, openhandsWriter);
  assert.deepEqual(contextShape(written.readBack), expectedContext(t, edit));
  assert.equal(detectFormat(written.document).adapter.name, 'openhands');
  assert.equal(written.records.length, doc.records.length, 'one output line per input line');
  written.records.forEach((record, k) => {
    if (!('from' in record)) return;
    const source = doc.records[record.from]?.raw;
    assert.ok(source && written.document.records[k]?.raw?.equals(source), `output line ${k + 1} is not input line ${record.from + 1}`);
  });
  return written;
}

/** The active (last) run's history as written. */
function history(written: WrittenTranscript): Event[] {
  const line = written.document.records.filter((r) => r.values.length > 0).at(-1);
  return (line?.values[0] as { history: Event[] }).history;
}

test('the adapter links each action to its observation by tool_call_id', () => {
  const t = openhandsAdapter.read(fixture('one-run-tool-calls-and-usage.jsonl'));
  assert.deepEqual(
    t.entries.map((e) => e.links),
    [undefined, undefined, undefined, undefined, { calls: ['toolu_01'] }, { answers: ['toolu_01'] }, undefined, undefined, { calls: ['toolu_02'] }],
  );
  assert.deepEqual(
    buildUnits(t.entries).map((u) => u.entries),
    [[0], [1], [2], [3], [4, 5], [6], [7], [8]],
  );
});

test('drop a call with its observation: both events leave, the summary is a user message in their place', () => {
  const doc = fixture('one-run-tool-calls-and-usage.jsonl');
  const t = openhandsAdapter.read(doc);
  const written = writeAndCheck(doc, makeEdit(t, [4, 5]));
  assert.equal((written.records[0] as { replaces?: number }).replaces, 0);
  const events = history(written);
  assert.deepEqual(
    events.map((e) => e['id']),
    [0, 1, 2, 4, 11, 7, 8, 9, 10],
  );
  assert.deepEqual(events[4], { id: 11, timestamp: TEST_NOW, source: 'user', message: SUMMARY, action: 'message', args: { content: SUMMARY } });
  // The rest of the run (instance_id, metadata, metrics…) is as it was, in the same key order.
  const before = doc.records[0]?.values[0] as Record<string, unknown>;
  const after = written.document.records[0]?.values[0] as Record<string, unknown>;
  assert.deepEqual(Object.keys(after), Object.keys(before));
  assert.deepEqual({ ...after, history: null }, { ...before, history: null });
});

test('mask only: the observation keeps its place, id and call; only content is the placeholder', () => {
  const doc = fixture('one-run-tool-calls-and-usage.jsonl');
  const t = openhandsAdapter.read(doc);
  const written = writeAndCheck(doc, makeEdit(t, [], [5]));
  const before = (doc.records[0]?.values[0] as { history: Event[] }).history;
  const events = history(written);
  assert.equal(events.length, before.length);
  assert.deepEqual(events[5], { ...before[5], content: '[masked event-6]' });
  events.forEach((e, i) => {
    if (i !== 5) assert.deepEqual(e, before[i]);
  });
});

test('a dropped recall observation takes its recall action (never sent, tied by cause) with it', () => {
  const doc = fixture('one-run-tool-calls-and-usage.jsonl');
  const t = openhandsAdapter.read(doc);
  const written = writeAndCheck(doc, makeEdit(t, [3]));
  assert.deepEqual(
    history(written).map((e) => e['id']),
    [0, 1, 11, 5, 6, 7, 8, 9, 10],
  );
});

test("several drops, one summary at the first; the other runs' lines stay byte-identical", () => {
  const doc = fixture('several-runs-reads-last.jsonl');
  const t = openhandsAdapter.read(doc);
  // The workspace context (3) and the error observation (6) go; the summary sits where 3 was.
  const written = writeAndCheck(doc, makeEdit(t, [3, 6]));
  assert.deepEqual(written.records[0], { from: 0 });
  assert.deepEqual(
    history(written).map((e) => e['id']),
    [0, 1, 12, 5, 6, 8, 9, 10, 11],
  );
});

test('summary placement: after every kept entry before it, before every kept entry after it', () => {
  const doc = fixture('one-run-tool-calls-and-usage.jsonl');
  const t = openhandsAdapter.read(doc);
  const written = writeAndCheck(doc, makeEdit(t, [6, 7]));
  const contents = written.readBack.entries.map((e) => e.turn.content);
  const at = contents.indexOf(SUMMARY);
  assert.equal(contents[at - 1], 'README.md\nsrc');
  assert.match(contents[at + 1] ?? '', /finish/);
  assert.deepEqual(
    history(written).map((e) => e['id']),
    [0, 1, 2, 4, 5, 6, 11, 9, 10],
  );
});

test('parallel calls leave together with all their observations', () => {
  const meta = (id: string) => ({ function_name: 'execute_bash', tool_call_id: id, total_calls_in_response: 2 });
  const doc = inlineDoc({
    instance_id: 'p',
    history: [
      { id: 0, source: 'user', action: 'message', args: { content: 'task' } },
      { id: 1, source: 'agent', action: 'run', args: { command: 'ls' }, tool_call_metadata: meta('a') },
      { id: 2, source: 'agent', action: 'run', args: { command: 'pwd' }, tool_call_metadata: meta('b') },
      { id: 3, source: 'agent', observation: 'run', cause: 1, content: 'x', tool_call_metadata: meta('a') },
      { id: 4, source: 'agent', observation: 'run', cause: 2, content: '/w', tool_call_metadata: meta('b') },
      { id: 5, source: 'agent', action: 'message', args: { content: 'done' } },
    ],
  });
  const t = openhandsAdapter.read(doc);
  assert.deepEqual(
    buildUnits(t.entries).map((u) => u.entries),
    [[0], [1, 2, 3, 4], [5]],
  );
  const written = writeAndCheck(doc, makeEdit(t, [1, 2, 3, 4]));
  assert.deepEqual(
    history(written).map((e) => e['id']),
    [0, 6, 5],
  );
});

test('a run stored as one JSON document is rewritten whole', () => {
  const run = fixture('one-run-tool-calls-and-usage.jsonl').records[0]?.values[0] as Record<string, unknown>;
  const doc = parseDocument(Buffer.from(JSON.stringify(run, null, 2)), { path: 'run.json', keepRaw: true });
  assert.equal(doc.kind, 'json-document');
  const t = openhandsAdapter.read(doc);
  const edit = makeEdit(t, [4, 5]);
  const written = writeTranscript(doc, t, edit, openhandsWriter);
  assert.equal(written.records.length, 1);
  assert.equal(written.document.kind, 'json-document');
  assert.deepEqual(contextShape(written.readBack), expectedContext(t, edit));
  assert.deepEqual(
    (written.document.document as { history: Event[] }).history.map((e) => e['id']),
    [0, 1, 2, 4, 11, 7, 8, 9, 10],
  );
});

// ---- validator: it must catch corruption -------------------------------------------------------

const problemsOf = (doc: ParsedDocument): string[] => openhandsWriter.validate(doc, openhandsAdapter.read(doc));
const fixtureRun = (): { instance_id: string; history: Event[] } =>
  structuredClone(fixture('one-run-tool-calls-and-usage.jsonl').records[0]?.values[0]) as { instance_id: string; history: Event[] };

test('validate: the fixtures pass (finish ends a run unanswered)', () => {
  assert.deepEqual(problemsOf(fixture('one-run-tool-calls-and-usage.jsonl')), []);
  assert.deepEqual(problemsOf(fixture('several-runs-reads-last.jsonl')), []);
});

test('validate: an action left without its observation, or an observation without its action, is caught', () => {
  const noObservation = fixtureRun();
  noObservation.history.splice(5, 1);
  assert.match(problemsOf(inlineDoc(noObservation)).join('\n'), /tool call toolu_01 has no observation/);

  const noAction = fixtureRun();
  noAction.history.splice(4, 1);
  assert.match(problemsOf(inlineDoc(noAction)).join('\n'), /observation for tool call toolu_01, which no earlier action made/);

  // A call after the last observation was still running when the run stopped: not an error.
  const running = fixtureRun();
  running.history.splice(5);
  assert.deepEqual(problemsOf(inlineDoc(running)), []);
});

test('validate: duplicate event ids, a broken line, or no run at all are caught', () => {
  const dup = fixtureRun();
  dup.history.push({ id: 5, source: 'user', action: 'message', args: { content: 'again' } });
  assert.match(problemsOf(inlineDoc(dup)).join('\n'), /event id 5 appears twice/);

  const doc = fixture('several-runs-reads-last.jsonl');
  const t = openhandsAdapter.read(doc);
  const written = writeTranscript(doc, t, makeEdit(t, [4, 5]), openhandsWriter);
  const cut = parseDocument(written.bytes.subarray(0, written.bytes.length - 30), { path: 'cut.jsonl', keepRaw: true });
  assert.match(problemsOf(cut).join('\n'), /line 2: does not parse/);

  assert.match(problemsOf(inlineDoc({ role: 'user', content: 'hi' })).join('\n'), /no OpenHands run/);
});

// ---- real data -----------------------------------------------------------------------------------

for (const path of realdataFiles('trajectories/openhands')) {
  test(`real data: ${realdataName(path)} writes validly`, { skip: realdataSkip }, () => {
    const doc = parseDocument(readFileSync(path), { path, keepRaw: true });
    const t = openhandsAdapter.read(doc);
    for (const [keepHead, keepTail] of [
      [2, 5],
      [4, 10],
      [1, 1],
    ] as const) {
      const plain = dropMiddleEdit(t, { keepHead, keepTail });
      assert.ok(plain.dropped.size > 0);
      const written = writeAndCheck(doc, plain);
      // Only the active run's line changes.
      const changed = written.records.flatMap((r, k) => ('from' in r ? [] : [k]));
      assert.deepEqual(changed, [doc.records.length - 1]);
      assert.equal(written.readBack.entries.filter((e) => e.turn.content === plain.summary?.text).length, 1);

      // The same with every kept tool result masked.
      const results = t.entries.flatMap((e, i) => (e.turn.type === 'tool_result' && !plain.dropped.has(i) ? [i] : []));
      const masked = writeAndCheck(doc, dropMiddleEdit(t, { keepHead, keepTail, mask: results }));
      assert.equal(masked.readBack.entries.filter((e) => e.turn.content.startsWith('[devs-ctx: tool output masked')).length, results.length);
    }
  });
}
