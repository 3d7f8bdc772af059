import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { TranscriptEdit } from '../src/core/prune/edit.js';
import { codexAdapter } from '../src/formats/codex/read.js';
import { codexWriter } from '../src/formats/codex/write.js';
import { detectFormat } from '../src/formats/index.js';
import type { Transcript } from '../src/formats/types.js';
import { writeTranscript, type WrittenTranscript } from '../src/formats/write.js';
import { parseDocument } from '../src/io/jsonl.js';
import type { ParsedDocument } from '../src/io/jsonl.js';
import { TEST_NOW, dropMiddleEdit, sequentialIds } from './helpers/edits.js';
import { realdataFiles, realdataName, realdataSkip } from './helpers/realdata.js';
import { fixtureDoc, inlineDoc } from './helpers/transcripts.js';

const fixture = (name: string): ParsedDocument => fixtureDoc('codex', name);
const SUMMARY = '[Context Summary]\nThe files were listed.';
const mask = (id: string): string => `[devs-ctx: tool output masked; recall ${id}]`;

type Shape = [role: string, type: string, content: string, callId: unknown];
const shape = (t: Transcript): Shape[] => t.entries.map((e) => [e.turn.role, e.turn.type, e.turn.content, e.turn['callId']]);

function edit(parts: { dropped?: number[]; masked?: [number, string][]; summaryAt?: number; summaryText?: string }): TranscriptEdit {
  return {
    dropped: new Set(parts.dropped ?? []),
    masked: new Map(parts.masked ?? []),
    ...(parts.summaryAt !== undefined ? { summary: { text: parts.summaryText ?? SUMMARY, at: parts.summaryAt } } : {}),
    now: TEST_NOW,
    newId: sequentialIds(),
  };
}

/**
 * What the output must read back as (meaning of an edit, 2 and 4): the kept entries in order,
 * masked ones with the placeholder, and the summary (a user message) before the first kept entry
 * after `summary.at`. A summary Codex rebuilt from an old `compacted.message` is written as the
 * user message it stands for, so it reads back as one.
 */
function expectedShape(t: Transcript, e: TranscriptEdit): Shape[] {
  const out: Shape[] = [];
  const summary: Shape | undefined = e.summary ? ['user', 'message', e.summary.text, undefined] : undefined;
  let placed = false;
  t.entries.forEach((entry, i) => {
    if (e.dropped.has(i)) return;
    if (summary && !placed && i > (e.summary?.at ?? Infinity)) {
      out.push(summary);
      placed = true;
    }
    const rebuilt = entry.turn.type === 'summary' && entry.source.path?.endsWith('payload.message');
    out.push([entry.turn.role, rebuilt ? 'message' : entry.turn.type, e.masked.get(i) ?? entry.turn.content, entry.turn['callId']]);
  });
  if (summary && !placed) out.push(summary);
  return out;
}

/** The input's payload objects, by record index. */
const payloadOf = (doc: ParsedDocument, record: number): unknown => (doc.records[record]?.values[0] as { payload: unknown }).payload;

function lastValues(written: WrittenTranscript, n: number): Record<string, unknown>[] {
  return written.document.records.slice(-n).map((r) => r.values[0] as Record<string, unknown>);
}

function replacementOf(written: WrittenTranscript): unknown[] {
  const [compacted] = lastValues(written, 2);
  return (compacted?.['payload'] as { replacement_history: unknown[] }).replacement_history;
}

/** Every input line comes back first, byte for byte; then exactly the compacted record and its event. */
function assertAppendedOnly(doc: ParsedDocument, written: WrittenTranscript): void {
  assert.deepEqual(
    written.records.slice(0, doc.records.length),
    doc.records.map((r) => ({ from: r.index })),
  );
  assert.equal(written.records.length, doc.records.length + 2);
  for (const record of doc.records) {
    assert.ok(written.document.records[record.index]?.raw?.equals(record.raw ?? Buffer.alloc(0)), `line ${record.line} changed`);
  }
  const [compacted, event] = lastValues(written, 2);
  assert.equal(compacted?.['type'], 'compacted');
  assert.equal(compacted?.['timestamp'], TEST_NOW);
  const { ordinal, ...plainEvent } = event ?? {};
  assert.deepEqual(plainEvent, { timestamp: TEST_NOW, type: 'event_msg', payload: { type: 'context_compacted' } });
  // Builds that number their lines (`ordinal`) get numbered lines.
  const last = doc.records.findLast((r) => typeof (r.values[0] as { type?: unknown } | undefined)?.type === 'string');
  assert.equal(ordinal !== undefined, typeof (last?.values[0] as { ordinal?: unknown }).ordinal === 'number');
  assert.equal(detectFormat(written.document).adapter.name, 'codex');
}

function writeAndCheck(doc: ParsedDocument, e: TranscriptEdit): WrittenTranscript {
  const t = codexAdapter.read(doc);
  const written = writeTranscript(doc, t, e, codexWriter);
  assertAppendedOnly(doc, written);
  assert.deepEqual(shape(written.readBack), expectedShape(t, e));
  return written;
}

/** A written output changed by hand, read back, and validated. */
function tampered(written: WrittenTranscript, change: (lines: Record<string, unknown>[]) => void): string[] {
  const lines = written.bytes
    .toString('utf8')
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  change(lines);
  const doc = parseDocument(Buffer.from(`${lines.map((l) => JSON.stringify(l)).join('\n')}\n`), { path: 'tampered', keepRaw: true });
  return codexWriter.validate(doc, codexAdapter.read(doc));
}

const compactedItems = (lines: Record<string, unknown>[]): Record<string, unknown>[] =>
  (lines.at(-2)?.['payload'] as Record<string, unknown>)['replacement_history'] as Record<string, unknown>[];

// basic-session.jsonl entries: 0 system prompt, 1 developer, 2 environment, 3 prompt, 4 reasoning,
// 5 call_1, 6 its output, 7 call_2 (apply_patch), 8 its output, 9 answer.

test('tool calls and outputs carry links by call_id', () => {
  const t = codexAdapter.read(fixture('basic-session.jsonl'));
  assert.deepEqual(
    t.entries.map((e) => e.links),
    [
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
      { calls: ['call_1'] },
      { answers: ['call_1'] },
      { calls: ['call_2'] },
      { answers: ['call_2'] },
      undefined,
    ],
  );
});

test('drop: the compacted record holds the kept items verbatim, the summary where the dropped ones were', () => {
  const doc = fixture('basic-session.jsonl');
  const written = writeAndCheck(doc, edit({ dropped: [4, 5, 6], summaryAt: 4 }));
  // Records: 1 developer, 2 environment, 5 prompt, 11 apply_patch, 12 its output, 13 answer.
  assert.deepEqual(replacementOf(written), [
    payloadOf(doc, 1),
    payloadOf(doc, 2),
    payloadOf(doc, 5),
    { type: 'message', role: 'user', content: [{ type: 'input_text', text: SUMMARY }] },
    payloadOf(doc, 11),
    payloadOf(doc, 12),
    payloadOf(doc, 13),
  ]);
  const [compacted] = lastValues(written, 2);
  assert.deepEqual(Object.keys(compacted ?? {}), ['timestamp', 'type', 'payload']);
  assert.equal((compacted?.['payload'] as { message: string }).message, SUMMARY);
  // Dropped turns are gone from the active context, the system prompt stays.
  assert.ok(!written.readBack.entries.some((e) => e.turn['callId'] === 'call_1'));
  assert.equal(written.readBack.entries[0]?.turn.content, 'You are Codex, a coding agent.');
});

test('mask: a string output becomes the placeholder, the call stays answered', () => {
  const doc = fixture('basic-session.jsonl');
  const placeholder = mask('call_1.output');
  const written = writeAndCheck(doc, edit({ masked: [[6, placeholder]] }));
  const items = replacementOf(written);
  assert.deepEqual(items[5], { type: 'function_call_output', call_id: 'call_1', output: placeholder });
  assert.equal(items.length, 9, 'every history item is still there');
  // Nothing dropped, no summary: Codex's remote compaction also leaves the message empty.
  const [compacted] = lastValues(written, 2);
  assert.equal((compacted?.['payload'] as { message: string }).message, '');
  assert.equal(written.readBack.entries.filter((e) => e.turn.type === 'tool_result' && e.turn.content === placeholder).length, 1);
});

test('mask: a content-list output becomes one input_text part; other fields of the item are kept', () => {
  const doc = inlineDoc(
    { timestamp: 't0', type: 'session_meta', payload: { id: 's' } },
    { timestamp: 't1', type: 'response_item', payload: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'look' }] } },
    { timestamp: 't2', type: 'response_item', payload: { type: 'custom_tool_call', call_id: 'c', name: 'view_image', input: 'a.png', status: 'completed' } },
    {
      timestamp: 't3',
      type: 'response_item',
      payload: {
        type: 'custom_tool_call_output',
        id: 'o1',
        call_id: 'c',
        output: [
          { type: 'input_text', text: 'a.png' },
          { type: 'input_image', image_url: 'data:image/png;base64,AAAA' },
        ],
      },
    },
    { timestamp: 't4', type: 'response_item', payload: { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'a cat' }] } },
  );
  const written = writeAndCheck(doc, edit({ masked: [[2, mask('o1')]] }));
  assert.deepEqual(replacementOf(written)[2], { type: 'custom_tool_call_output', id: 'o1', call_id: 'c', output: [{ type: 'input_text', text: mask('o1') }] });
  assert.deepEqual(written.readBack.entries[2]?.blobs, [], 'the image went with the masked output');
});

test('summary placement: after the kept head, before the kept tail, also when the tail is dropped', () => {
  const doc = fixture('basic-session.jsonl');
  // Tail dropped: the summary is the last item.
  const tail = writeAndCheck(doc, edit({ dropped: [7, 8, 9], summaryAt: 7 }));
  assert.deepEqual(shape(tail.readBack).at(-1), ['user', 'message', SUMMARY, undefined]);
  // Head of the conversation dropped: the summary comes right after the pinned context.
  const head = writeAndCheck(doc, edit({ dropped: [3, 4, 5, 6], summaryAt: 3 }));
  assert.deepEqual(shape(head.readBack)[3], ['user', 'message', SUMMARY, undefined]);
  assert.equal(head.readBack.entries[4]?.turn['callId'], 'call_2');
});

test('multi-drop: one summary at the first dropped place, kept turns between the gaps after it', () => {
  const doc = fixture('basic-session.jsonl');
  const written = writeAndCheck(doc, edit({ dropped: [4, 7, 8], summaryAt: 4 }));
  assert.deepEqual(
    shape(written.readBack).map(([role, type, content]) => (content === SUMMARY ? 'SUMMARY' : `${role}/${type}`)),
    ['system/system', 'system/system', 'user/system', 'user/message', 'SUMMARY', 'assistant/tool_call', 'tool/tool_result', 'assistant/message'],
  );
  assert.equal(written.readBack.entries.filter((e) => e.turn.content === SUMMARY).length, 1);
});

test('nothing to change: the output is the input, byte for byte', () => {
  const doc = fixture('basic-session.jsonl');
  const t = codexAdapter.read(doc);
  const written = writeTranscript(doc, t, edit({}), codexWriter);
  assert.deepEqual(
    written.records,
    doc.records.map((r) => ({ from: r.index })),
  );
  assert.ok(written.bytes.equals(readFileSync(doc.path)));
});

test('an earlier compacted record: its replacement items are carried over, later items follow', () => {
  const doc = fixture('compacted-replaces-history.jsonl');
  const t = codexAdapter.read(doc);
  const last = t.entries.length - 1;
  const written = writeAndCheck(doc, edit({ dropped: [last - 1], summaryAt: last - 1 }));
  const old = (payloadOf(doc, 6) as { replacement_history: unknown[] }).replacement_history;
  assert.deepEqual(replacementOf(written).slice(0, old.length), old);
});

test('an old compacted record without replacement_history: its summary is written as a user message', () => {
  const doc = fixture('compacted-without-replacement-history.jsonl');
  const t = codexAdapter.read(doc);
  const rebuilt = t.entries.findIndex((e) => e.turn.type === 'summary');
  assert.ok(rebuilt > 0);
  const written = writeAndCheck(doc, edit({ dropped: [t.entries.length - 1], summaryAt: t.entries.length - 1 }));
  assert.deepEqual(replacementOf(written)[rebuilt - 1], {
    type: 'message',
    role: 'user',
    content: [{ type: 'input_text', text: 'Summary: the bug is in x.c; a test is still to be added.' }],
  });
});

test('items that are not entries (ghost_snapshot, unknown kinds) keep their place; ordinal numbering continues', () => {
  const doc = fixture('unknown-types-forward-compatible.jsonl');
  const t = codexAdapter.read(doc);
  const agent = t.entries.findIndex((e) => e.source.records[0] === 7);
  const written = writeAndCheck(doc, edit({ dropped: [agent], summaryAt: agent }));
  const kinds = replacementOf(written).map((item) => (item as { type: string }).type);
  assert.deepEqual(kinds, ['message', 'ghost_snapshot', 'future_item', 'future_item', 'message', 'message']);
  assert.deepEqual(
    lastValues(written, 2).map((v) => v['ordinal']),
    [9, 10],
  );
});

test('earlier-turn reasoning the API leaves out is still history: kept unless dropped', () => {
  const doc = inlineDoc(
    { timestamp: 't0', type: 'session_meta', payload: { id: 's' } },
    { timestamp: 't1', type: 'response_item', payload: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'one' }] } },
    { timestamp: 't2', type: 'response_item', payload: { type: 'reasoning', summary: [], encrypted_content: 'ZW5j' } },
    { timestamp: 't3', type: 'response_item', payload: { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'done one' }] } },
    { timestamp: 't4', type: 'response_item', payload: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'two' }] } },
    { timestamp: 't5', type: 'response_item', payload: { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'done two' }] } },
  );
  const t = codexAdapter.read(doc);
  assert.ok(t.entries[1]?.notSent);
  const written = writeAndCheck(doc, edit({ dropped: [2], summaryAt: 2 }));
  assert.deepEqual(replacementOf(written)[1], payloadOf(doc, 2), 'encrypted reasoning copied untouched');
});

test('glued values on one line and a last line without newline: items found by path, lines kept', () => {
  const lines = [
    { timestamp: 't0', type: 'session_meta', payload: { id: 's' } },
    { timestamp: 't1', type: 'response_item', payload: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'one' }] } },
    { timestamp: 't2', type: 'response_item', payload: { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'two' }] } },
    { timestamp: 't3', type: 'response_item', payload: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'three' }] } },
  ].map((v) => JSON.stringify(v));
  const bytes = Buffer.from(`${lines[0]}\r\n${lines[1]}${lines[2]}\r\n${lines[3]}`);
  const doc = parseDocument(bytes, { path: 'glued', keepRaw: true });
  assert.equal(doc.records[1]?.values.length, 2, 'the second line holds two values');
  const written = writeAndCheck(doc, edit({ dropped: [1], summaryAt: 1 }));
  assert.deepEqual(
    replacementOf(written).map((item) => (item as { content: { text: string }[] }).content[0]?.text),
    ['one', SUMMARY, 'three'],
  );
  assert.ok(written.bytes.subarray(0, bytes.length + 2).equals(Buffer.concat([bytes, Buffer.from('\r\n')])), 'input bytes, then a terminator');
});

test('refused: dropping the session_meta system prompt, masking tool definitions', () => {
  const doc = fixture('basic-session.jsonl');
  const t = codexAdapter.read(doc);
  assert.throws(() => codexWriter.write(doc, t, edit({ dropped: [0], summaryAt: 0 })), /system prompt/);
  const zoo = inlineDoc(
    { timestamp: 't0', type: 'session_meta', payload: { id: 's' } },
    { timestamp: 't1', type: 'response_item', payload: { type: 'tool_search_call', call_id: 'q', arguments: { query: 'git' } } },
    { timestamp: 't2', type: 'response_item', payload: { type: 'tool_search_output', call_id: 'q', tools: [{ type: 'function', name: 'git' }] } },
  );
  assert.throws(() => codexWriter.write(zoo, codexAdapter.read(zoo), edit({ masked: [[1, 'x']] })), /no `output` to mask/);
});

// Validator: it must catch what Codex would reject or silently lose.

test('validate: a call left without its output, an output without its call, or of the wrong kind', () => {
  const written = writeAndCheck(fixture('basic-session.jsonl'), edit({ dropped: [4, 5, 6], summaryAt: 4 }));
  assert.deepEqual(codexWriter.validate(written.document, written.readBack), []);
  const withoutOutput = tampered(written, (lines) => {
    const items = compactedItems(lines);
    items.splice(
      items.findIndex((i) => i['type'] === 'custom_tool_call_output'),
      1,
    );
  });
  assert.ok(
    withoutOutput.some((p) => /custom_tool_call call_2 has no output/.test(p)),
    withoutOutput.join('; '),
  );
  const withoutCall = tampered(written, (lines) => {
    const items = compactedItems(lines);
    items.splice(
      items.findIndex((i) => i['type'] === 'custom_tool_call'),
      1,
    );
  });
  assert.ok(
    withoutCall.some((p) => /custom_tool_call_output for call call_2 has no earlier call/.test(p)),
    withoutCall.join('; '),
  );
  const wrongKind = tampered(written, (lines) => {
    const output = compactedItems(lines).find((i) => i['type'] === 'custom_tool_call_output');
    if (output) output['type'] = 'function_call_output';
  });
  assert.ok(
    wrongKind.some((p) => /function_call_output for call call_2 has no earlier call/.test(p)),
    wrongKind.join('; '),
  );
});

test('validate: session_meta first, complete records, well-formed replacement items', () => {
  const written = writeAndCheck(fixture('basic-session.jsonl'), edit({ dropped: [4, 5, 6], summaryAt: 4 }));
  const moved = tampered(written, (lines) => lines.push(lines.shift() ?? {}));
  assert.ok(
    moved.some((p) => /first line is not a session_meta/.test(p)),
    moved.join('; '),
  );
  const noTimestamp = tampered(written, (lines) => delete lines.at(-2)?.['timestamp']);
  assert.ok(
    noTimestamp.some((p) => /without a string timestamp/.test(p)),
    noTimestamp.join('; '),
  );
  const badItems = tampered(written, (lines) => {
    const items = compactedItems(lines);
    items.push({ type: 'message', role: 'user', content: 'plain string' }, 42 as unknown as Record<string, unknown>);
  });
  assert.ok(
    badItems.some((p) => /content is not a list/.test(p)),
    badItems.join('; '),
  );
  assert.ok(
    badItems.some((p) => /replacement_history\[\d+\] is not a Responses API item/.test(p)),
    badItems.join('; '),
  );
  const notList = tampered(written, (lines) => {
    (lines.at(-2)?.['payload'] as Record<string, unknown>)['replacement_history'] = { oops: true };
  });
  assert.ok(
    notList.some((p) => /replacement_history is not a list/.test(p)),
    notList.join('; '),
  );
  const oneDocument = parseDocument(Buffer.from('{\n "a": 1\n}\n'), { path: 'doc.json', keepRaw: true });
  assert.ok(codexWriter.validate(oneDocument, codexAdapter.read(oneDocument)).length > 0);
});

test('validate: tolerates what Codex tolerates (non-rollout lines, a session cut off mid-call)', () => {
  const doc = inlineDoc(
    { timestamp: 't0', type: 'session_meta', payload: { id: 's' } },
    { note: 'not a rollout line' },
    { timestamp: 't1', type: 'response_item', payload: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'run' }] } },
    { timestamp: 't2', type: 'response_item', payload: { type: 'function_call', name: 'shell', arguments: '{}', call_id: 'open' } },
  );
  assert.deepEqual(codexWriter.validate(doc, codexAdapter.read(doc)), []);
  // The same open call with a message after it is a broken pair.
  const later = inlineDoc(...doc.records.map((r) => r.values[0]), {
    timestamp: 't3',
    type: 'response_item',
    payload: { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'ok' }] },
  });
  assert.deepEqual(codexWriter.validate(later, codexAdapter.read(later)), ['history item 1: function_call open has no output']);
});

// Real rollouts: every file written with a prune-like edit, with and without masks.

for (const path of realdataFiles('codex')) {
  for (const masking of [false, true]) {
    test(`realdata ${masking ? 'drop + mask' : 'drop'}: ${realdataName(path)}`, { skip: realdataSkip }, () => {
      const doc = parseDocument(readFileSync(path), { path, keepRaw: true });
      const t = codexAdapter.read(doc);
      const plain = dropMiddleEdit(t, { keepHead: 3, keepTail: 8 });
      const maskable = masking ? t.entries.flatMap((e, i) => (e.turn.type === 'tool_result' && !plain.dropped.has(i) ? [i] : [])) : [];
      if (masking) assert.ok(maskable.length > 0, 'some kept tool result to mask');
      const e = dropMiddleEdit(t, { keepHead: 3, keepTail: 8, mask: maskable });
      assert.ok(e.dropped.size > 0 && e.summary, 'the edit drops something');
      const written = writeAndCheck(doc, e);
      // Reasoning kept in the history (sent or not) is all there.
      const keptReasoning = t.entries.filter((x, i) => x.turn.type === 'reasoning' && !e.dropped.has(i)).length;
      assert.equal(replacementOf(written).filter((item) => (item as { type: string }).type === 'reasoning').length, keptReasoning);
      // A second pass over the written file still reads and validates (the appended record is the history now).
      const again = codexAdapter.read(written.document);
      assert.deepEqual(codexWriter.validate(written.document, again), []);
    });
  }
}
