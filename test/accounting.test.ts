import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Tiktoken } from 'js-tiktoken/lite';
import o200k from 'js-tiktoken/ranks/o200k_base';
import cl100k from 'js-tiktoken/ranks/cl100k_base';
import { annotateWithTokenEstimates, countEntries, toContextWindow } from '../src/core/accounting.js';
import type { ConversationTurn } from '../src/core/turn.js';
import type { TranscriptEntry } from '../src/formats/types.js';

const turns: ConversationTurn[] = [
  { id: 'a', role: 'system', type: 'system', content: 'You are a careful engineer. <|endoftext|> is just text here.' },
  { id: 'b', role: 'user', type: 'message', content: 'Fix src/billing/export/csv.ts — the tax column is missing. 請修復。' },
  { id: 'c', role: 'assistant', type: 'message', content: '' },
];

test('annotateWithTokenEstimates sets js-tiktoken counts on new turns and leaves the input alone', () => {
  const before = JSON.stringify(turns);
  const annotated = annotateWithTokenEstimates(turns);
  assert.equal(JSON.stringify(turns), before);
  assert.notEqual(annotated[0], turns[0]);
  const oracle = new Tiktoken(o200k);
  assert.deepEqual(
    annotated.map((t) => t.tokenCount),
    turns.map((t) => oracle.encode(t.content, [], []).length),
  );
  const cl = annotateWithTokenEstimates(turns, { encoding: 'cl100k_base' });
  const clOracle = new Tiktoken(cl100k);
  assert.deepEqual(
    cl.map((t) => t.tokenCount),
    turns.map((t) => clOracle.encode(t.content, [], []).length),
  );
});

test('toContextWindow sums tokenCount', () => {
  const window = toContextWindow(annotateWithTokenEstimates(turns));
  assert.equal(
    window.totalTokenEstimate,
    window.turns.reduce((s, t) => s + (t.tokenCount ?? 0), 0),
  );
  assert.ok(window.totalTokenEstimate > 20);
});

test('countEntries: text by the counter, blobs by provider rules, entries not sent count 0', () => {
  const entry = (turn: ConversationTurn, extra: Partial<TranscriptEntry> = {}): TranscriptEntry => ({ turn, source: { records: [0] }, blobs: [], ...extra });
  const counter = { count: (text: string) => text.length };
  const counts = countEntries(
    [
      entry(turns[0]!),
      entry(turns[1]!, { blobs: [{ kind: 'encrypted', provider: 'openai', base64Length: 100, recordedTokens: 7 }] }),
      entry(turns[1]!, { notSent: 'dropped by the provider', blobs: [{ kind: 'encrypted', provider: 'openai', base64Length: 100, recordedTokens: 7 }] }),
    ],
    counter,
  );
  assert.deepEqual(counts, [
    { text: turns[0]!.content.length, blobs: 0, total: turns[0]!.content.length },
    { text: turns[1]!.content.length, blobs: 7, total: turns[1]!.content.length + 7 },
    { text: 0, blobs: 0, total: 0 },
  ]);
});
