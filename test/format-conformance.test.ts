import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { UsageError } from '../src/core/errors.js';
import type { TranscriptEdit } from '../src/core/prune/edit.js';
import { buildUnits, toolIds } from '../src/core/prune/units.js';
import { formatRefresh } from '../src/core/refresh/context-refresher.js';
import { pendingToolCall } from '../src/core/refresh/decision.js';
import { PINNED_TURN_TYPES } from '../src/core/policy.js';
import { adapterFor, detectFormat, FORMAT_NAMES, writerFor } from '../src/formats/index.js';
import type { FormatName, Transcript } from '../src/formats/index.js';
import type { FormatWriter } from '../src/formats/types.js';
import { appendRefresh, writeTranscript } from '../src/formats/write.js';
import { parseDocument, serializeDocument } from '../src/io/jsonl.js';
import type { ParsedDocument } from '../src/io/jsonl.js';
import { filesUnder, repoRoot } from './helpers/realdata.js';

/**
 * One conformance suite for every format's writer: the same round-trip, prune, refresh and
 * re-detection checks over each format's fixtures (fixtures/<format>/). Adding a format is adding a
 * row here (docs/formats/README.md).
 */
interface FormatRow {
  readonly format: FormatName;
  /** `refused`: the format has no agent to refresh, and `appendRefresh` says so with a UsageError. */
  readonly refresh: 'appends' | 'refused';
}

const ROWS: readonly FormatRow[] = [
  { format: 'devs', refresh: 'appends' },
  { format: 'claude-code', refresh: 'appends' },
  { format: 'codex', refresh: 'appends' },
  { format: 'gemini', refresh: 'appends' },
  { format: 'openai-chat', refresh: 'appends' },
  { format: 'openhands', refresh: 'refused' },
];

const NOW = '2026-01-02T03:04:05.000Z';
const SUMMARY = '[Context Summary]\nThe conformance suite dropped these turns.';
const PLACEHOLDER = '[conformance: tool output masked]';
const REFRESH = formatRefresh('The TAS, condensed.', 'The PRD, condensed.');

function ids(): () => string {
  let n = 0;
  return () => `00000000-0000-4000-8000-${String(++n).padStart(12, '0')}`;
}

function load(path: string): { bytes: Buffer; doc: ParsedDocument } {
  const bytes = readFileSync(path);
  return { bytes, doc: parseDocument(bytes, { path, keepRaw: true }) };
}

/**
 * An edit like a prune makes: the first unit (a call with its results) that holds no pinned or system
 * turn and is not the last one is dropped with a summary in its place, and the last maskable tool
 * result outside it is masked. Undefined when the transcript offers neither.
 */
function pruneLikeEdit(t: Transcript): TranscriptEdit | undefined {
  const pinned = new Set<string>([...PINNED_TURN_TYPES, 'system']);
  const units = buildUnits(t.entries);
  const movable = (entries: readonly number[]): boolean =>
    entries.every((i) => {
      const turn = t.entries[i]?.turn;
      return turn !== undefined && turn.role !== 'system' && !pinned.has(turn.type) && turn.pinned !== true;
    });
  const drop = units.slice(0, -1).find((u) => movable(u.entries))?.entries ?? [];
  const dropped = new Set(drop);
  const lastUnit = new Set(units.at(-1)?.entries ?? []);
  const mask = t.entries.findLastIndex((e, i) => e.turn.type === 'tool_result' && e.maskable !== false && !dropped.has(i) && !lastUnit.has(i) && movable([i]));
  if (drop.length === 0 && mask === -1) return undefined;
  return {
    dropped,
    masked: mask === -1 ? new Map() : new Map([[mask, PLACEHOLDER]]),
    ...(drop.length > 0 ? { summary: { text: SUMMARY, at: Math.min(...drop) } } : {}),
    now: NOW,
    newId: ids(),
  };
}

/** Call ids answered in a context, and answers whose call it holds. */
function pairs(t: Transcript): { paired: Set<string>; answered: Set<string>; calls: Set<string> } {
  const calls = new Set<string>();
  const answered = new Set<string>();
  for (const entry of t.entries) {
    const { calls: made, answers } = toolIds(entry);
    for (const id of made) calls.add(id);
    for (const id of answers) answered.add(id);
  }
  return { paired: new Set([...calls].filter((id) => answered.has(id))), answered, calls };
}

/** Kept contents come back in order, the summary and the placeholder are there, no pair is split. */
function assertPruneReadsBack(before: Transcript, after: Transcript, edit: TranscriptEdit): void {
  const contents = after.entries.map((e) => e.turn.content);
  let at = 0;
  before.entries.forEach((entry, i) => {
    if (edit.dropped.has(i) || edit.masked.has(i)) return;
    const found = contents.indexOf(entry.turn.content, at);
    assert.notEqual(found, -1, `kept turn ${entry.turn.id} reads back, in order`);
    at = found + 1;
  });
  if (edit.summary)
    assert.ok(
      contents.some((c) => c.includes(SUMMARY)),
      'the summary reads back as a turn',
    );
  if (edit.masked.size > 0)
    assert.ok(
      contents.some((c) => c.includes(PLACEHOLDER)),
      'the placeholder reads back',
    );
  const expected = before.entries.length - edit.dropped.size + (edit.summary ? 1 : 0);
  assert.equal(after.entries.length, expected, 'dropped turns are gone, the summary is one turn');
  const was = pairs(before);
  const now = pairs(after);
  for (const id of was.paired) {
    if (now.calls.has(id) || now.answered.has(id)) assert.ok(now.paired.has(id), `tool call ${id} keeps its result`);
  }
  for (const id of now.answered) assert.ok(now.calls.has(id) || !was.calls.has(id), `result for ${id} keeps its call`);
}

function assertRedetects(bytes: Buffer, path: string, format: FormatName): ParsedDocument {
  const doc = parseDocument(bytes, { path, keepRaw: true });
  assert.equal(detectFormat(doc).adapter.name, format, 'the output is detected as the same format');
  return doc;
}

function conformance(row: FormatRow, writer: FormatWriter): void {
  const paths = filesUnder(join(repoRoot, 'fixtures', row.format));
  const pruned: string[] = [];
  const refreshed: string[] = [];
  for (const path of paths) {
    const name = `${row.format}/${basename(path)}`;
    const { bytes, doc } = load(path);
    const transcript = adapterFor(row.format).read(doc);

    test(`conformance ${name}: written unchanged, the output is the input's bytes`, () => {
      const written = writeTranscript(doc, transcript, { dropped: new Set(), masked: new Map(), now: NOW, newId: ids() }, writer);
      assert.ok(written.bytes.equals(bytes), 'byte-identical');
      assert.ok(serializeDocument(doc).equals(bytes), 'the parsed document keeps every byte');
    });

    const edit = pruneLikeEdit(transcript);
    if (edit) {
      pruned.push(name);
      test(`conformance ${name}: a prune-like edit reads back valid, pairs kept, same format`, () => {
        // writeTranscript reads the output back and throws when the format's validator finds a new problem.
        const written = writeTranscript(doc, transcript, edit, writer);
        assert.ok(!written.bytes.equals(bytes), 'the edit changed the file');
        // Read back taking the input's parse of the lines copied from it: what a plain parse gives.
        assert.deepEqual(written.document, parseDocument(written.bytes, { path: written.document.path, keepRaw: true }));
        assertPruneReadsBack(transcript, written.readBack, edit);
        const again = adapterFor(row.format).read(assertRedetects(written.bytes, path, row.format));
        assert.deepEqual(
          again.entries.map((e) => e.turn.id),
          written.readBack.entries.map((e) => e.turn.id),
          'reads back the same on a fresh parse',
        );
      });
    }

    // `refresh` waits while a tool call is pending (its result must come next): no refresh to append.
    if (transcript.entries.length === 0 || pendingToolCall(transcript.entries) !== undefined) continue;
    refreshed.push(name);
    test(`conformance ${name}: a refresh appended reads back as the latest turn, same format`, () => {
      const refresh = { text: REFRESH, node: null, now: NOW, newId: ids() };
      if (row.refresh === 'refused') {
        assert.throws(() => appendRefresh(doc, transcript, refresh, writer), UsageError);
        return;
      }
      // appendRefresh checks that every earlier turn reads back as it was and that the latest is the refresh.
      const appended = appendRefresh(doc, transcript, refresh, writer);
      const back = adapterFor(row.format).read(assertRedetects(appended.bytes, path, row.format));
      const last = back.entries.at(-1);
      assert.equal(last?.turn.id, appended.turnId);
      assert.ok(last?.turn.content.includes(REFRESH), 'the latest turn holds the refresh text');
      if (appended.placement === 'appended') {
        assert.equal(back.entries.length, transcript.entries.length + 1, 'one turn more');
      }
    });
  }
  test(`conformance ${row.format}: its fixtures exercise every check`, () => {
    assert.ok(paths.length > 0, `fixtures/${row.format}/ has fixtures`);
    assert.ok(pruned.length > 0, 'at least one fixture offers a prune-like edit');
    assert.ok(refreshed.length > 0, 'at least one fixture has turns to refresh');
  });
}

test('conformance: every format has a row, and every row a writer', () => {
  assert.deepEqual([...ROWS.map((r) => r.format)].sort(), [...FORMAT_NAMES].sort());
});

for (const row of ROWS) conformance(row, writerFor(row.format));
