import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  DEFAULT_PRUNER_CONFIG,
  classifyPruneUrgency,
  partitionTurns,
  selectTurnsForSummarization,
  shouldTriggerHardPrune,
  shouldTriggerSoftPrune,
} from '../src/core/policy.js';
import type { PrunerConfig } from '../src/core/policy.js';
import type { ContextWindow, ConversationTurn, TurnType } from '../src/core/turn.js';

// Seed 001: soft = 500k [8_RISKS-REQ-010], hard = 800k [TAS-024].
const config: PrunerConfig = { softLimitTokens: 500_000, hardLimitTokens: 800_000, pinnedPrefixTurns: 2 };
const windowOf = (totalTokenEstimate: number): ContextWindow => ({ turns: [], totalTokenEstimate });

const cases: Array<[number, boolean, boolean, 'none' | 'soft' | 'hard']> = [
  [0, false, false, 'none'],
  [499_999, false, false, 'none'],
  [500_000, true, false, 'soft'],
  [799_999, true, false, 'soft'],
  [800_000, true, true, 'hard'],
  [1_000_000, true, true, 'hard'],
];
for (const [tokens, soft, hard, urgency] of cases) {
  test(`${tokens} tokens: soft ${soft}, hard ${hard}, urgency ${urgency}`, () => {
    assert.equal(shouldTriggerSoftPrune(windowOf(tokens), config), soft);
    assert.equal(shouldTriggerHardPrune(windowOf(tokens), config), hard);
    assert.equal(classifyPruneUrgency(windowOf(tokens), config), urgency);
  });
}

test('the defaults are the seed thresholds', () => {
  assert.equal(DEFAULT_PRUNER_CONFIG.softLimitTokens, 500_000);
  assert.equal(DEFAULT_PRUNER_CONFIG.hardLimitTokens, 800_000);
  assert.equal(DEFAULT_PRUNER_CONFIG.pinnedPrefixTurns, 2);
});

const turn = (i: number, extra: Partial<ConversationTurn> = {}): ConversationTurn => ({
  id: `t${i}`,
  role: 'user',
  type: 'message' as TurnType,
  content: `turn ${i}`,
  ...extra,
});
const turnsOf = (count: number, extra: Record<number, Partial<ConversationTurn>> = {}) => Array.from({ length: count }, (_, i) => turn(i, extra[i]));

test('selects the middle: not the pinned prefix, not the last five', () => {
  const turns = turnsOf(12);
  const selected = selectTurnsForSummarization({ turns, totalTokenEstimate: 0 }, config);
  assert.deepEqual(
    selected.map((t) => t.id),
    ['t2', 't3', 't4', 't5', 't6'],
  );
});

test('excludes turns flagged pinned and turns of a pinned type', () => {
  const turns = turnsOf(14, { 3: { pinned: true }, 5: { type: 'tas' }, 6: { type: 'spec' } });
  const selected = selectTurnsForSummarization({ turns, totalTokenEstimate: 0 }, config);
  assert.deepEqual(
    selected.map((t) => t.id),
    ['t2', 't4', 't7', 't8'],
  );
});

test('fewer than three candidates means nothing to summarize', () => {
  assert.deepEqual(selectTurnsForSummarization({ turns: turnsOf(9), totalTokenEstimate: 0 }, config), []);
  assert.equal(selectTurnsForSummarization({ turns: turnsOf(10), totalTokenEstimate: 0 }, config).length, 3);
  assert.deepEqual(selectTurnsForSummarization({ turns: turnsOf(3), totalTokenEstimate: 0 }, config), []);
});

test('honours pinnedPrefixTurns from the config', () => {
  const selected = selectTurnsForSummarization({ turns: turnsOf(12), totalTokenEstimate: 0 }, { ...config, pinnedPrefixTurns: 4 });
  assert.deepEqual(
    selected.map((t) => t.id),
    ['t4', 't5', 't6'],
  );
});

test('is pure: the window and its turns are not mutated', () => {
  const turns = Object.freeze(turnsOf(12).map((t) => Object.freeze(t)));
  const window = Object.freeze({ turns, totalTokenEstimate: 600_000 });
  const before = JSON.stringify(window);
  selectTurnsForSummarization(window, config);
  classifyPruneUrgency(window, config);
  assert.equal(JSON.stringify(window), before);
});

test('partition puts every turn in exactly one group', () => {
  const turns = turnsOf(20, { 8: { pinned: true }, 18: { type: 'plan' } });
  const { pinned, protectedTail, candidates } = partitionTurns(turns, config);
  assert.deepEqual(pinned, [0, 1, 8, 18]);
  assert.deepEqual(protectedTail, [15, 16, 17, 19]);
  assert.deepEqual(candidates, [2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13, 14]);
});
