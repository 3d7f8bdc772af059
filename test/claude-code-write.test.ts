import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { TranscriptEdit } from '../src/core/prune/edit.js';
import { buildUnits } from '../src/core/prune/units.js';
import { claudeCodeAdapter } from '../src/formats/claude-code/read.js';
import { claudeCodeWriter } from '../src/formats/claude-code/write.js';
import { detectFormat } from '../src/formats/index.js';
import type { Transcript } from '../src/formats/types.js';
import { InvalidOutputError, writeTranscript, type WrittenTranscript } from '../src/formats/write.js';
import { parseDocument } from '../src/io/jsonl.js';
import type { ParsedDocument } from '../src/io/jsonl.js';
import { TEST_NOW, dropMiddleEdit, sequentialIds } from './helpers/edits.js';
import { realdataFiles, realdataName, realdataSkip } from './helpers/realdata.js';
import { fixtureDoc, inlineDoc } from './helpers/transcripts.js';

type Json = Record<string, unknown>;
const SUMMARY = '[Context Summary]\nEarlier work, summarised.';
const mask = (id: string): string => `[devs-ctx: tool output masked; recall ${id}]`;
const fixture = (name: string): ParsedDocument => fixtureDoc('claude-code', name);
const isJson = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

function edit(parts: { dropped?: number[]; masked?: [number, string][]; summaryAt?: number }): TranscriptEdit {
  return {
    dropped: new Set(parts.dropped ?? []),
    masked: new Map(parts.masked ?? []),
    ...(parts.summaryAt !== undefined ? { summary: { text: SUMMARY, at: parts.summaryAt } } : {}),
    now: TEST_NOW,
    newId: sequentialIds(),
  };
}

function write(doc: ParsedDocument, e: (t: Transcript) => TranscriptEdit): { t: Transcript; e: TranscriptEdit; w: WrittenTranscript } {
  const t = claudeCodeAdapter.read(doc);
  const theEdit = e(t);
  return { t, e: theEdit, w: writeTranscript(doc, t, theEdit, claudeCodeWriter) };
}

/** Every value of a document, one per physical line (the writer never glues). */
function values(doc: ParsedDocument): Json[] {
  return doc.records.flatMap((r) => r.values.filter(isJson));
}
const byUuid = (doc: ParsedDocument, uuid: string): Json | undefined => values(doc).findLast((v) => v['uuid'] === uuid);
const boundaries = (doc: ParsedDocument): Json[] => values(doc).filter((v) => v['type'] === 'system' && v['subtype'] === 'compact_boundary');

/** The text a masked tool-result line reads back as: the placeholder per tool_result, other text blocks as they were. */
function maskedContent(doc: ParsedDocument, record: number, placeholder: string): string {
  const message = doc.records[record]?.values[0];
  const content = isJson(message) && isJson(message['message']) ? message['message']['content'] : undefined;
  const blocks = Array.isArray(content) ? content.filter(isJson) : [];
  return blocks
    .map((b) => (b['type'] === 'tool_result' ? placeholder : b['type'] === 'text' ? String(b['text']) : ''))
    .filter((s) => s.length > 0)
    .join('\n');
}

type Shape = [id: string, type: string, content: string];
/** Meaning of an edit (2, 4): kept entries in order, masked with the placeholder, the summary where the removed turns were. */
function expected(doc: ParsedDocument, t: Transcript, e: TranscriptEdit, summaryId?: string): Shape[] {
  const out: Shape[] = [];
  const summary: Shape | undefined = e.summary ? [summaryId ?? '?', 'summary', e.summary.text] : undefined;
  let placed = false;
  t.entries.forEach((entry, i) => {
    if (e.dropped.has(i)) return;
    if (summary && !placed && i > (e.summary?.at ?? Infinity)) {
      out.push(summary);
      placed = true;
    }
    const placeholder = e.masked.get(i);
    const content = placeholder === undefined ? entry.turn.content : maskedContent(doc, entry.source.records[0] ?? -1, placeholder);
    out.push([entry.turn.id, entry.turn.type, content]);
  });
  if (summary && !placed) out.push(summary);
  return out;
}
const shape = (t: Transcript): Shape[] => t.entries.map((e) => [e.turn.id, e.turn.type, e.turn.content]);

/** The id the writer gave the summary (the second id of the edit: the boundary takes the first). */
const SUMMARY_ID = '00000000-0000-4000-8000-000000000002';
const BOUNDARY_ID = '00000000-0000-4000-8000-000000000001';

/**
 * Nothing is deleted: every input line comes back once, in order, byte for byte (`from`) or replaced;
 * a replaced line differs from its input only in the allowed fields.
 */
function assertOnlyRelinkedOrMasked(doc: ParsedDocument, w: WrittenTranscript, maskedRecords: ReadonlySet<number> = new Set()): void {
  const seen: number[] = [];
  w.records.forEach((record, i) => {
    const out = w.document.records[i];
    if ('from' in record) {
      seen.push(record.from);
      assert.ok(out?.raw?.equals(doc.records[record.from]?.raw ?? Buffer.alloc(0)), `line ${record.from + 1} is not byte-identical`);
      return;
    }
    if (record.replaces === undefined) return;
    seen.push(record.replaces);
    const before = doc.records[record.replaces]?.values[0];
    const after = out?.values[0];
    assert.ok(isJson(before) && isJson(after));
    assert.deepEqual(Object.keys(after), Object.keys(before), 'keys keep their order');
    for (const key of Object.keys(before)) {
      if (JSON.stringify(before[key]) === JSON.stringify(after[key])) continue;
      const allowed = ['parentUuid', 'logicalParentUuid', 'sourceToolAssistantUUID', ...(maskedRecords.has(record.replaces) ? ['message'] : [])];
      assert.ok(allowed.includes(key), `line ${record.replaces + 1}: ${key} changed`);
    }
  });
  assert.deepEqual(
    seen,
    doc.records.map((r) => r.index),
    'every input line once, in order',
  );
}

/** A tiny session builder: the envelope Claude Code 2.1 writes. */
const SESSION = 'c0ffee00-0000-4000-8000-0000000000aa';
let clock = 0;
function line(uuid: string, parentUuid: string | null, type: string, body: Json): Json {
  clock++;
  return {
    parentUuid,
    isSidechain: false,
    userType: 'external',
    cwd: '/home/dev/app',
    sessionId: SESSION,
    version: '2.1.20',
    gitBranch: 'main',
    type,
    ...body,
    uuid,
    timestamp: `2026-03-01T10:00:${String(clock % 60).padStart(2, '0')}.000Z`,
  };
}
const user = (uuid: string, parent: string | null, content: unknown, extra: Json = {}): Json =>
  line(uuid, parent, 'user', { message: { role: 'user', content }, ...extra });
const said = (uuid: string, parent: string, id: string, block: Json): Json =>
  line(uuid, parent, 'assistant', {
    message: {
      id,
      type: 'message',
      role: 'assistant',
      model: 'claude-opus-4-5',
      content: [block],
      stop_reason: null,
      usage: { input_tokens: 3, cache_read_input_tokens: 1000, output_tokens: 1 },
    },
    requestId: `req_${id}`,
  });
const text = (uuid: string, parent: string, id: string, t: string): Json => said(uuid, parent, id, { type: 'text', text: t });
const call = (uuid: string, parent: string, id: string, toolId: string): Json =>
  said(uuid, parent, id, { type: 'tool_use', id: toolId, name: 'Bash', input: { command: `run ${toolId}` } });
const result = (uuid: string, parent: string, toolId: string, content: unknown, source?: string): Json =>
  user(uuid, parent, [{ tool_use_id: toolId, type: 'tool_result', content, is_error: false }], {
    toolUseResult: { stdout: `UI copy of ${toolId}` },
    ...(source ? { sourceToolAssistantUUID: source } : {}),
  });

/** 12 turns: two tool calls (one with a progress line between call and result), prompts, replies. */
function session(): ParsedDocument {
  return inlineDoc(
    {
      type: 'file-history-snapshot',
      messageId: 'm0',
      snapshot: { messageId: 'm0', trackedFileBackups: {}, timestamp: '2026-03-01T10:00:00.000Z' },
      isSnapshotUpdate: false,
    },
    user('u1', null, 'start'), // 0
    text('a1', 'u1', 'msg_1', 'ok'), // 1
    user('u2', 'a1', 'task two'), // 2
    call('a2', 'u2', 'msg_2', 'toolu_2'), // 3
    result('r2', 'a2', 'toolu_2', 'two output', 'a2'), // 4
    text('a3', 'r2', 'msg_3', 'two done'), // 5
    user('u3', 'a3', 'task three'), // 6
    call('a4', 'u3', 'msg_4', 'toolu_4'), // 7
    line('p4', 'a4', 'progress', { data: { type: 'bash_progress', output: 'still running' }, toolUseID: 'toolu_4', parentToolUseID: 'toolu_4' }),
    result('r4', 'p4', 'toolu_4', [{ type: 'text', text: 'four output' }], 'a4'), // 8
    text('a5', 'r4', 'msg_5', 'four done'), // 9
    user('u5', 'a5', 'task five'), // 10
    text('a6', 'u5', 'msg_6', 'all done'), // 11
    line('t6', 'a6', 'system', { subtype: 'turn_duration', durationMs: 1200, isMeta: false }),
  );
}

// --- (a) fixture cases -------------------------------------------------------------------------

test('drop: the dropped turns stay in the file off the chain; a boundary roots the chain, the summary bridges the gap', () => {
  const doc = session();
  const { t, e, w } = write(doc, () => edit({ dropped: [2, 3, 4, 5, 6, 7, 8], summaryAt: 2 }));
  assert.deepEqual(shape(w.readBack), expected(doc, t, e, SUMMARY_ID));
  assert.deepEqual(
    shape(w.readBack).map((s) => s[0]),
    ['u1', 'a1', SUMMARY_ID, 'a5', 'u5', 'a6'],
  );
  assertOnlyRelinkedOrMasked(doc, w);

  // New chain: boundary → u1 → a1 → summary → a5 (was r4's child) → u5 → a6.
  const out = w.document;
  const boundary = byUuid(out, BOUNDARY_ID);
  assert.deepEqual(boundary, {
    parentUuid: null,
    logicalParentUuid: 'a6',
    isSidechain: false,
    userType: 'external',
    cwd: '/home/dev/app',
    sessionId: SESSION,
    version: '2.1.20',
    gitBranch: 'main',
    type: 'system',
    subtype: 'compact_boundary',
    content: 'Conversation compacted',
    isMeta: false,
    timestamp: TEST_NOW,
    uuid: BOUNDARY_ID,
    level: 'info',
    compactMetadata: { trigger: 'manual', preTokens: 1003 },
    devsCtx: true,
  });
  assert.deepEqual(byUuid(out, SUMMARY_ID), {
    parentUuid: 'a1',
    isSidechain: false,
    userType: 'external',
    cwd: '/home/dev/app',
    sessionId: SESSION,
    version: '2.1.20',
    gitBranch: 'main',
    type: 'user',
    message: { role: 'user', content: SUMMARY },
    isVisibleInTranscriptOnly: true,
    isCompactSummary: true,
    uuid: SUMMARY_ID,
    timestamp: TEST_NOW,
  });
  assert.equal(byUuid(out, 'u1')?.['parentUuid'], BOUNDARY_ID);
  assert.equal(byUuid(out, 'a5')?.['parentUuid'], SUMMARY_ID);
  // Only the two re-linked lines changed; the dropped ones are all still there, untouched.
  assert.deepEqual(
    w.records.filter((r) => 'replaces' in r).map((r) => ('replaces' in r ? r.replaces : -1)),
    [1, 11],
  );
  for (const uuid of ['u2', 'a2', 'r2', 'a3', 'u3', 'a4', 'p4', 'r4']) assert.deepEqual(byUuid(out, uuid), byUuid(doc, uuid));
  // File order: the boundary right before the chain's first line, the summary right before a5.
  const order = values(out).map((v) => v['uuid'] ?? v['type']);
  assert.deepEqual(order.slice(0, 3), ['file-history-snapshot', BOUNDARY_ID, 'u1']);
  assert.equal(order.indexOf(SUMMARY_ID) + 1, order.indexOf('a5'));
  assert.equal(boundaries(out).length, 1);
});

test('mask: only the tool_result content changes; call id, is_error and the UI copy stay; no boundary', () => {
  const doc = session();
  const { t, e, w } = write(doc, () =>
    edit({
      masked: [
        [4, mask('r2')],
        [8, mask('r4')],
      ],
    }),
  );
  assert.deepEqual(shape(w.readBack), expected(doc, t, e));
  assert.equal(w.readBack.entries[4]?.turn.content, mask('r2'));
  assert.equal(w.readBack.entries[8]?.turn.content, mask('r4'));
  assertOnlyRelinkedOrMasked(doc, w, new Set([5, 10]));
  assert.deepEqual(
    w.records.flatMap((r): (number | string | undefined)[] => ('from' in r ? [] : [r.replaces ?? 'new line'])),
    [5, 10],
  );
  assert.equal(boundaries(w.document).length, 0);

  const r2 = byUuid(w.document, 'r2');
  assert.deepEqual(r2?.['message'], { role: 'user', content: [{ tool_use_id: 'toolu_2', type: 'tool_result', content: mask('r2'), is_error: false }] });
  assert.deepEqual(r2?.['toolUseResult'], { stdout: 'UI copy of toolu_2' });
  // A list of parts stays a list (of one text part).
  const r4 = byUuid(w.document, 'r4');
  assert.deepEqual(r4?.['message'], {
    role: 'user',
    content: [{ tool_use_id: 'toolu_4', type: 'tool_result', content: [{ type: 'text', text: mask('r4') }], is_error: false }],
  });
});

test('mask: an image inside a tool_result goes with its text', () => {
  const doc = fixture('image-blob.jsonl');
  const { w } = write(doc, () => edit({ masked: [[2, mask('r1')]] }));
  assert.equal(w.readBack.entries[2]?.turn.content, mask('r1'));
  assert.deepEqual(w.readBack.entries[2]?.blobs, []);
  assert.equal(w.readBack.entries[0]?.blobs.length, 1, "the prompt's own image is untouched");
});

test('summary placement: after every kept turn before `at`, before every kept turn after it', () => {
  const doc = session();
  for (const [dropped, at] of [
    [[2, 3, 4, 5], 2],
    [[6, 7, 8, 9], 6],
    [[1], 1],
    [[0, 1], 0],
  ] as const) {
    const { t, e, w } = write(doc, () => edit({ dropped: [...dropped], summaryAt: at }));
    assert.deepEqual(shape(w.readBack), expected(doc, t, e, SUMMARY_ID), `dropped ${dropped.join(',')}`);
    assertOnlyRelinkedOrMasked(doc, w);
    const summary = w.readBack.entries.find((x) => x.turn.id === SUMMARY_ID);
    assert.equal(summary?.turn.type, 'summary');
    assert.equal(summary?.turn.content, SUMMARY);
  }
  // Nothing kept before the summary: the boundary sits right above it, the summary is the chain's first line.
  const { w } = write(doc, () => edit({ dropped: [0, 1], summaryAt: 0 }));
  assert.equal(byUuid(w.document, SUMMARY_ID)?.['parentUuid'], BOUNDARY_ID);
  assert.equal(byUuid(w.document, 'u2')?.['parentUuid'], SUMMARY_ID);
});

test('summary at the end: when the last turns go, the summary is appended and becomes the line Claude Code resumes from', () => {
  const doc = session();
  const { t, e, w } = write(doc, () => edit({ dropped: [6, 7, 8, 9, 10, 11], summaryAt: 6 }));
  assert.deepEqual(shape(w.readBack), expected(doc, t, e, SUMMARY_ID));
  assert.equal((w.document.records.at(-1)?.values[0] as Json)['uuid'], SUMMARY_ID);
  assert.equal(byUuid(w.document, SUMMARY_ID)?.['parentUuid'], 'a3');
});

test('multi-drop: each gap is bridged, the later one to its nearest kept predecessor; progress lines in a gap go with it', () => {
  const doc = session();
  const { t, e, w } = write(doc, () => edit({ dropped: [2, 3, 4, 7, 8], summaryAt: 2 }));
  assert.deepEqual(shape(w.readBack), expected(doc, t, e, SUMMARY_ID));
  assert.deepEqual(
    shape(w.readBack).map((s) => s[0]),
    ['u1', 'a1', SUMMARY_ID, 'a3', 'u3', 'a5', 'u5', 'a6'],
  );
  assert.equal(byUuid(w.document, 'a3')?.['parentUuid'], SUMMARY_ID);
  assert.equal(byUuid(w.document, 'a5')?.['parentUuid'], 'u3', 'past the dropped call, its progress line and result');
  assert.equal(
    w.readBack.notes.some((n) => /progress on the chain/.test(n)),
    false,
    'the progress line left the chain',
  );
  assertOnlyRelinkedOrMasked(doc, w);
  assert.equal(boundaries(w.document).length, 1, 'one boundary per write, however many gaps');
});

test('drop and mask together, and a second prune of the pruned file', () => {
  const doc = session();
  const first = write(doc, () => edit({ dropped: [2, 3, 4], masked: [[8, mask('r4')]], summaryAt: 2 }));
  assert.deepEqual(shape(first.w.readBack), expected(doc, first.t, first.e, SUMMARY_ID));
  assertOnlyRelinkedOrMasked(doc, first.w, new Set([10]));

  // Prune the output again (new ids, as a real run makes): the first summary goes with the middle.
  const again = parseDocument(first.w.bytes, { path: 'again.jsonl', keepRaw: true });
  const secondSummary = 'ffffffff-0000-4000-8000-000000000002';
  const { t, e, w } = write(again, (t2) => ({
    ...dropMiddleEdit(t2, { keepHead: 2, keepTail: 2 }),
    newId: (
      (ids) => () =>
        ids().replace('00000000', 'ffffffff')
    )(sequentialIds()),
  }));
  assert.ok(e.dropped.has(2), 'the first summary is dropped');
  assert.deepEqual(shape(w.readBack), expected(again, t, e, secondSummary));
  assert.equal(boundaries(w.document).length, 2, 'one more boundary; the first one is left without children');
  assertOnlyRelinkedOrMasked(again, w);
});

test('2.1 parallel calls: results on side branches move with their calls and are re-attached when kept', () => {
  const doc = fixture('parallel-tool-calls-2.1.jsonl');
  // Keep the parallel group (entries 1–4), drop the first prompt: the boundary is the group's root now.
  const kept = write(doc, () => edit({ dropped: [0], summaryAt: 0 }));
  assert.deepEqual(shape(kept.w.readBack), expected(doc, kept.t, kept.e, SUMMARY_ID));
  assert.match(kept.w.readBack.notes.join('\n'), /2 tool results of parallel calls re-attached/);
  assertOnlyRelinkedOrMasked(doc, kept.w);
  // Drop the group: none of its results comes back.
  const dropped = write(doc, (t) => dropMiddleEdit(t, { keepHead: 1, keepTail: 1 }));
  assert.deepEqual(
    shape(dropped.w.readBack).map((s) => s[0]),
    ['u1', SUMMARY_ID, 'a4'],
  );
  assertOnlyRelinkedOrMasked(doc, dropped.w);
});

test('the adapter links calls and results, so a parallel group and its side-branch results are one unit', () => {
  const t = claudeCodeAdapter.read(fixture('parallel-tool-calls-2.1.jsonl'));
  assert.deepEqual(
    t.entries.map((e) => e.links),
    [
      undefined,
      { calls: ['toolu_A', 'toolu_B', 'toolu_C'], answers: [] },
      { calls: [], answers: ['toolu_A'] },
      { calls: [], answers: ['toolu_B'] },
      { calls: [], answers: ['toolu_C'] },
      undefined,
    ],
  );
  assert.deepEqual(
    buildUnits(t.entries).map((u) => u.entries),
    [[0], [1, 2, 3, 4], [5]],
  );
});

test('an earlier compaction: its summary stays first in the context, under the new boundary', () => {
  const doc = fixture('compact-boundary.jsonl');
  const { t, e, w } = write(doc, () => edit({ dropped: [1], summaryAt: 1 }));
  assert.deepEqual(shape(w.readBack), expected(doc, t, e, SUMMARY_ID));
  assert.deepEqual(
    w.readBack.entries.map((x) => x.turn.type),
    ['summary', 'summary', 'message'],
  );
  assert.equal(byUuid(w.document, 's2')?.['parentUuid'], BOUNDARY_ID);
  assert.deepEqual(byUuid(w.document, 'b2'), byUuid(doc, 'b2'), 'the old boundary is left as it was');
  assert.equal(boundaries(w.document).length, boundaries(doc).length + 1);
  assertOnlyRelinkedOrMasked(doc, w);
});

test('a glued line on the chain that must change is written one value per line', () => {
  const glued = `${JSON.stringify(text('a1', 'u1', 'msg_1', 'started'))}${JSON.stringify({ type: 'summary', summary: 'A title', leafUuid: 'a3' })}`;
  const lines = [user('u1', null, 'start'), user('u2', 'u1', 'more'), text('x1', 'u1', 'msg_x', 'a side branch')].map((v) => JSON.stringify(v));
  lines.push(glued, JSON.stringify(user('u3', 'a1', 'go on')), JSON.stringify(text('a3', 'u3', 'msg_3', 'ok')));
  const doc = parseDocument(Buffer.from(`${lines.join('\n')}\n`), { path: 'glued.jsonl', keepRaw: true });
  // Chain: u1 → a1 (glued with a title) → u3 → a3; u2 and x1 are side branches.
  const { t, e, w } = write(doc, (t0) => {
    assert.deepEqual(
      t0.entries.map((x) => x.turn.id),
      ['u1', 'a1', 'u3', 'a3'],
    );
    return edit({ dropped: [0], summaryAt: 0 });
  });
  assert.deepEqual(shape(w.readBack), expected(doc, t, e, SUMMARY_ID));
  assert.ok(
    w.document.records.every((r) => r.values.length <= 1),
    'no glued line left',
  );
  assert.equal(byUuid(w.document, 'a1')?.['parentUuid'], SUMMARY_ID);
  assert.ok(
    values(w.document).some((v) => v['type'] === 'summary' && v['summary'] === 'A title'),
    'the title is kept',
  );
});

test('refuses edits it cannot write validly, and transcripts from another document', () => {
  const doc = session();
  const t = claudeCodeAdapter.read(doc);
  assert.throws(() => claudeCodeWriter.write(doc, t, edit({ dropped: [10, 11] })), /last line/);
  assert.throws(() => claudeCodeWriter.write(doc, t, edit({ dropped: [99] })), /entry 99/);
  assert.throws(() => claudeCodeWriter.write(doc, t, edit({ masked: [[0, mask('u1')]] })), /no tool_result/);
  assert.throws(() => claudeCodeWriter.write(fixture('image-blob.jsonl'), t, edit({ dropped: [1] })), /not read from this document/);
  // An edit that changes nothing gives the input back, line for line.
  assert.deepEqual(
    claudeCodeWriter.write(doc, t, edit({})),
    doc.records.map((r) => ({ from: r.index })),
  );
});

test('every fixture writes validly with a prune-like edit', () => {
  for (const name of [
    'compact-boundary.jsonl',
    'dangling-parent.jsonl',
    'glued-summary-line.jsonl',
    'image-blob.jsonl',
    'microcompact-cleared-results.jsonl',
    'multi-block-response.jsonl',
    'noise-lines-excluded.jsonl',
    'odd-values.jsonl',
    'parallel-tool-calls-2.0.jsonl',
    'parallel-tool-calls-2.1.jsonl',
    'rewind-branch.jsonl',
    'tool-use-result-not-counted.jsonl',
  ]) {
    const doc = fixture(name);
    const { t, e, w } = write(doc, (t0) => dropMiddleEdit(t0, { keepHead: 1, keepTail: 1 }));
    assert.deepEqual(shape(w.readBack), expected(doc, t, e, SUMMARY_ID), name);
    assertOnlyRelinkedOrMasked(doc, w);
  }
});

// --- (b) real data -----------------------------------------------------------------------------

for (const path of realdataFiles('claude-code')) {
  const doc = (): ParsedDocument => parseDocument(readFileSync(path), { path, keepRaw: true });
  for (const variant of ['drop', 'drop+mask', 'drop most'] as const) {
    test(`real data ${realdataName(path)}: ${variant}`, { skip: realdataSkip }, () => {
      const input = doc();
      const { t, e, w } = write(input, (t0) => {
        const base = variant === 'drop most' ? dropMiddleEdit(t0, { keepHead: 1, keepTail: 2 }) : dropMiddleEdit(t0);
        if (variant !== 'drop+mask') return base;
        // Mask every kept tool result.
        const mask = t0.entries.flatMap((x, i) => (x.turn.type === 'tool_result' && !base.dropped.has(i) ? [i] : []));
        assert.ok(mask.length > 0, 'something to mask');
        return dropMiddleEdit(t0, { mask });
      });
      const summaryId = e.summary ? SUMMARY_ID : undefined;
      assert.deepEqual(shape(w.readBack), expected(input, t, e, summaryId));
      for (const i of e.masked.keys()) {
        const back = w.readBack.entries.find((x) => x.turn.id === t.entries[i]?.turn.id);
        assert.deepEqual(back?.blobs, [], 'a masked result carries no image');
      }
      const maskedRecords = new Set([...e.masked.keys()].flatMap((i) => t.entries[i]?.source.records ?? []));
      assertOnlyRelinkedOrMasked(input, w, maskedRecords);
      assert.equal(boundaries(w.document).length, boundaries(input).length + (e.dropped.size > 0 ? 1 : 0));
      assert.equal(detectFormat(w.document).adapter.name, 'claude-code');
      assert.deepEqual(claudeCodeWriter.validate(w.document, w.readBack), []);
      // Read back taking the input's parse of every line copied from it (not parsing it again): the
      // document a plain parse of the output gives.
      assert.deepEqual(w.document, parseDocument(w.bytes, { path, keepRaw: true }));
      const inputValues = new Set(input.records.map((r) => r.values));
      const copies = w.records.filter((r) => 'from' in r && (input.records[r.from]?.values.length ?? 0) === 1).length;
      assert.equal(w.document.records.filter((r) => inputValues.has(r.values)).length, copies, 'each line copied from the input shares its parse');
      // The pruned context is smaller by what was dropped, and nothing dropped is still read.
      const keptIds = new Set(w.readBack.entries.map((x) => x.turn.id));
      for (const i of e.dropped) assert.ok(!keptIds.has(t.entries[i]?.turn.id ?? ''), `dropped entry ${i} is back`);
    });
  }
}

// --- (c) the validator catches real corruption ---------------------------------------------------

const validate = (doc: ParsedDocument): string[] => claudeCodeWriter.validate(doc, claudeCodeAdapter.read(doc));

test('validate: a written file is valid; a tool_use left without its tool_result is not', () => {
  assert.deepEqual(validate(session()), []);
  const { w } = write(session(), () => edit({ dropped: [2, 3, 4], summaryAt: 2 }));
  assert.deepEqual(validate(w.document), []);
  // Re-link around a tool_result only (what a careless writer would do): the call loses its answer.
  const lines = values(session())
    .filter((v) => v['uuid'] !== 'r2')
    .map((v) => (v['uuid'] === 'a3' ? { ...v, parentUuid: 'a2' } : v));
  assert.deepEqual(validate(inlineDoc(...lines)), ['tool_use toolu_2 (a2) has no tool_result on the active chain']);
  // And the other way round: a result whose call was dropped.
  const orphan = values(session())
    .filter((v) => v['uuid'] !== 'a2')
    .map((v) => (v['uuid'] === 'r2' ? { ...v, parentUuid: 'u2' } : v));
  assert.deepEqual(validate(inlineDoc(...orphan)), ['r2 answers tool_use toolu_2, which is not earlier on the active chain']);
});

test('validate: parent links that do not resolve, or resolve only later', () => {
  const dangling = values(session()).map((v) => (v['uuid'] === 'a5' ? { ...v, parentUuid: 'nowhere' } : v));
  assert.deepEqual(validate(inlineDoc(...dangling)), ['line a5: its parent nowhere is not in the file']);
  const all = values(session());
  const a1 = all.findIndex((v) => v['uuid'] === 'a1');
  const forward = [...all];
  forward.splice(a1, 1);
  forward.push(all[a1] as Json); // a1 after its child u2
  assert.ok(validate(inlineDoc(...forward)).includes('line u2: its parent a1 comes later in the file'));
  const badType = all.map((v) => (v['uuid'] === 'u2' ? { ...v, parentUuid: 7 } : v));
  assert.ok(validate(inlineDoc(...badType)).includes('line u2: parentUuid is a number, not a uuid or null'));
});

test('validate: repeated uuids, boundaries with a parent, glued and non-compact lines, a summary that is not text', () => {
  const all = values(session());
  assert.ok(validate(inlineDoc(...all, { ...all[1], timestamp: 'later' })).includes('uuid u1 is used by more than one line'));

  const { w } = write(session(), () => edit({ dropped: [2, 3, 4], summaryAt: 2 }));
  const out = values(w.document);
  const withParent = out.map((v) => (v['uuid'] === BOUNDARY_ID ? { ...v, parentUuid: 'u1' } : v));
  assert.ok(validate(inlineDoc(...withParent)).includes(`line ${BOUNDARY_ID}: a compact_boundary must be a root (parentUuid null)`));
  const listSummary = out.map((v) => (v['uuid'] === SUMMARY_ID ? { ...v, message: { role: 'user', content: [{ type: 'text', text: SUMMARY }] } } : v));
  assert.deepEqual(validate(inlineDoc(...listSummary)), [`compact summary ${SUMMARY_ID}: message.content must be non-empty text`]);

  // u5 glued onto a5: Claude Code cannot parse the line, so the chain would break there.
  const texts = all.map((v) => JSON.stringify(v));
  const a5 = all.findIndex((v) => v['uuid'] === 'a5');
  const glued = [...texts.slice(0, a5), `${texts[a5]}${texts[a5 + 1]}`, ...texts.slice(a5 + 2)].join('\n');
  assert.deepEqual(validate(parseDocument(Buffer.from(`${glued}\n`), { path: 'glued', keepRaw: true })), [
    'a line holding 2 JSON values glued together (uuids a5, u5) is part of the active context, but Claude Code cannot read it',
    'line a6: its parent u5 is on a line Claude Code cannot read',
  ]);
  // The same line pretty-printed.
  const spaced = texts.map((l, i) => (i === a5 ? JSON.stringify(all[a5], null, 1).replace(/\n/g, '') : l)).join('\n');
  assert.deepEqual(validate(parseDocument(Buffer.from(`${spaced}\n`), { path: 'spaced', keepRaw: true })), [
    'line a5 is not compact JSON (Claude Code writes JSON.stringify output)',
  ]);
  // Copied byte for byte from the input (`copied`): the input had it (writeTranscript would not count
  // it against the writer), and a check of the line alone is not made again; its links still are.
  const spacedDoc = parseDocument(Buffer.from(`${spaced}\n`), { path: 'spaced', keepRaw: true });
  assert.deepEqual(claudeCodeWriter.validate(spacedDoc, claudeCodeAdapter.read(spacedDoc), new Set([a5])), []);
  assert.deepEqual(claudeCodeWriter.validate(spacedDoc, claudeCodeAdapter.read(spacedDoc), new Set([a5 - 1, a5 + 1])), [
    'line a5 is not compact JSON (Claude Code writes JSON.stringify output)',
  ]);
  const danglingDoc = inlineDoc(...all.map((v) => (v['uuid'] === 'a5' ? { ...v, parentUuid: 'nowhere' } : v)));
  assert.deepEqual(claudeCodeWriter.validate(danglingDoc, claudeCodeAdapter.read(danglingDoc), new Set([a5])), [
    'line a5: its parent nowhere is not in the file',
  ]);
});

test('a line-alone problem the writer adds is refused even where the input has the same problem on a line the output copies (a review found the check skipping copies let it through)', () => {
  const env = { isSidechain: false, sessionId: 's1', cwd: '/x', version: '2.0.0', userType: 'external' };
  const line = (value: Json): string => JSON.stringify(value);
  const u1 = line({
    parentUuid: null,
    ...env,
    type: 'user',
    message: { role: 'user', content: 'please run ls' },
    uuid: 'u1',
    timestamp: '2026-01-01T00:00:00Z',
  });
  const a1 = line({
    parentUuid: 'u1',
    ...env,
    type: 'assistant',
    message: { id: 'm1', role: 'assistant', model: 'claude', content: [{ type: 'tool_use', id: 't1', name: 'Bash', input: { command: 'ls' } }] },
    uuid: 'a1',
    timestamp: '2026-01-01T00:00:01Z',
  });
  const r1 = line({
    parentUuid: 'a1',
    ...env,
    type: 'user',
    message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'x'.repeat(5000) }] },
    uuid: 'r1',
    timestamp: '2026-01-01T00:00:02Z',
  });
  const a2 = line({
    parentUuid: 'r1',
    ...env,
    type: 'assistant',
    message: { id: 'm2', role: 'assistant', model: 'claude', content: [{ type: 'text', text: 'done' }] },
    uuid: 'a2',
    timestamp: '2026-01-01T00:00:03Z',
  });
  const inputDoc = (lines: string[]): ParsedDocument => parseDocument(Buffer.from(`${lines.join('\n')}\n`), { path: 'odd.jsonl', keepRaw: true });
  // A line without a uuid, not compact JSON: glued behind r1's line, and on a line of its own.
  const odd = '{"type": "custom-title", "customTitle": "t", "sessionId": "s1"}';
  const input = inputDoc([u1, a1, `${r1}${odd}`, a2, odd]);
  const t = claudeCodeAdapter.read(input);
  // The input has it once (and its glued line is its own problem).
  assert.deepEqual(claudeCodeWriter.validate(input, t).filter((problem) => problem.includes('not compact JSON')).length, 1);
  // Masking r1 splits the glued line: its other value becomes a line of its own, written as it was
  // (not compact), while the line alone is copied. The output has the problem twice, the input once.
  const r1Entry = t.entries.findIndex((e) => e.turn.id === 'r1');
  const masked = { dropped: new Set<number>(), masked: new Map([[r1Entry, mask('r1')]]), now: TEST_NOW, newId: sequentialIds() };
  assert.throws(
    () => writeTranscript(input, t, masked, claudeCodeWriter),
    (error: unknown) => error instanceof InvalidOutputError && /not compact JSON/.test(error.message),
  );
  // A writer that copies one input line twice adds the problem too.
  const plain = inputDoc([u1, odd, a1, r1, a2]);
  const twice = { ...claudeCodeWriter, write: (...args: Parameters<typeof claudeCodeWriter.write>) => [...claudeCodeWriter.write(...args), { from: 1 }] };
  const none = { dropped: new Set<number>(), masked: new Map<number, string>(), now: TEST_NOW, newId: sequentialIds() };
  assert.throws(
    () => writeTranscript(plain, claudeCodeAdapter.read(plain), none, twice),
    (error: unknown) => error instanceof InvalidOutputError && /not compact JSON/.test(error.message),
  );
  // Copied once, as a prune copies it: the input's own problem, accepted.
  assert.doesNotThrow(() => writeTranscript(plain, claudeCodeAdapter.read(plain), none, claudeCodeWriter));
});

test('validate: damage the input already had is reported the same way, so writeTranscript can tell it apart', () => {
  // The dangling root of this fixture is the input's own; a write that keeps it is still accepted.
  const doc = fixture('dangling-parent.jsonl');
  assert.deepEqual(validate(doc), ['line u1: its parent ffffffff-0000-4000-8000-000000000000 is not in the file']);
  const { w } = write(doc, () => edit({ dropped: [1], summaryAt: 1 }));
  assert.deepEqual(validate(w.document), [], 'the dropped head is re-rooted on the boundary');
});
