import type { TranscriptEntry } from '../transcript.js';
import type { TranscriptEdit } from './edit.js';
import { SUMMARY_PREFIX } from './edit.js';

/**
 * What a written prune must read back as, whatever the format: the kept turns with identical
 * content in the same order (pinned ones included, so they are verified byte for byte), masked
 * ones holding their placeholder, and exactly one new summary where the removed turns were.
 * Returns the differences (empty when it matches).
 */
export function verifyReadBack(
  before: readonly TranscriptEntry[],
  edit: TranscriptEdit,
  after: readonly TranscriptEntry[],
  pinned: readonly number[],
): string[] {
  const expected: string[] = [];
  before.forEach((entry, i) => {
    if (edit.summary && i === edit.summary.at) expected.push(edit.summary.text);
    if (edit.dropped.has(i)) return;
    expected.push(edit.masked.get(i) ?? entry.turn.content);
  });
  const problems: string[] = [];
  const actual = after.map((e) => e.turn.content);
  if (actual.length !== expected.length) {
    problems.push(`read back ${actual.length} turns, expected ${expected.length}`);
  }
  const n = Math.min(actual.length, expected.length);
  for (let i = 0; i < n; i++) {
    if (actual[i] !== expected[i]) {
      problems.push(`turn ${i} reads back different from what was meant to be kept`);
      break;
    }
  }
  // Pinned turns: every field the format gives the turn (not only its text) must read back the
  // same, except the id and time some formats derive from a record's position (Codex `line-N`).
  const fields = (turn: TranscriptEntry['turn']): string => {
    const { id: _id, timestamp: _time, ...rest } = turn;
    return JSON.stringify(rest);
  };
  // Only a turn read back with a pinned turn's text can be it: the others are not serialized.
  const pinnedTexts = new Set(pinned.map((i) => before[i]?.turn.content));
  const readBackTurns = new Set(after.filter((e) => pinnedTexts.has(e.turn.content)).map((e) => fields(e.turn)));
  for (const i of pinned) {
    const turn = before[i]?.turn;
    if (turn && !readBackTurns.has(fields(turn))) problems.push(`pinned turn ${turn.id} is missing or altered`);
  }
  if (edit.summary) {
    const count = actual.filter((c) => c === edit.summary?.text).length;
    if (count !== 1) problems.push(`expected exactly one new ${SUMMARY_PREFIX} turn, found ${count}`);
  }
  return problems;
}
