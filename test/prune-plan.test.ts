import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DEFAULT_PRUNER_CONFIG } from '../src/core/policy.js';
import { applyEdit, planToEdit } from '../src/core/prune/apply.js';
import { planPrune, summaryRule } from '../src/core/prune/plan.js';
import type { PlanEntry, PrunePolicy } from '../src/core/prune/plan.js';
import { buildUnits } from '../src/core/prune/units.js';
import type { TranscriptEntry } from '../src/core/transcript.js';
import type { ConversationTurn } from '../src/core/turn.js';

function entry(turn: Partial<ConversationTurn> & { id: string }, extra: Partial<TranscriptEntry> = {}): TranscriptEntry {
  return { turn: { role: 'assistant', type: 'message', content: turn.id, ...turn }, source: { records: [0] }, blobs: [], ...extra };
}

function planEntries(entries: TranscriptEntry[], tokens: number | number[], relevance?: number[]): PlanEntry[] {
  return entries.map((e, i) => ({
    entry: e,
    tokens: Array.isArray(tokens) ? (tokens[i] ?? 0) : tokens,
    ...(e.turn.type === 'tool_result' ? { maskedTokens: 10 } : {}),
    ...(relevance ? { relevance: relevance[i] ?? 0 } : {}),
  }));
}

const policy = (over: Partial<PrunePolicy> = {}): PrunePolicy => ({
  ...DEFAULT_PRUNER_CONFIG,
  softLimitTokens: 1000,
  hardLimitTokens: 1600,
  strategy: 'recency',
  summaryReserveTokens: 50,
  ...over,
});

/** system, prd, then n message turns. */
function session(n: number): TranscriptEntry[] {
  return [
    entry({ id: 'sys', role: 'system', type: 'system' }),
    entry({ id: 'prd', role: 'user', type: 'prd' }),
    ...Array.from({ length: n }, (_, i) => entry({ id: `m${i}`, role: i % 2 ? 'assistant' : 'user' })),
  ];
}

describe('units', () => {
  test('a call joins its results by id; parallel calls form one group with all their results', () => {
    const entries = [
      entry({ id: 'u', role: 'user' }),
      entry({ id: 'c1', type: 'tool_call' }, { links: { calls: ['a'] } }),
      entry({ id: 'c2', type: 'tool_call' }, { links: { calls: ['b'] } }),
      entry({ id: 'r2', role: 'tool', type: 'tool_result' }, { links: { answers: ['b'] } }),
      entry({ id: 'r1', role: 'tool', type: 'tool_result' }, { links: { answers: ['a'] } }),
      entry({ id: 'm', role: 'assistant' }),
      entry({ id: 'c3', type: 'tool_call', callId: 'z' }),
      entry({ id: 'x', role: 'assistant' }),
      entry({ id: 'r3', role: 'tool', type: 'tool_result', callId: 'z' }),
    ];
    assert.deepEqual(
      buildUnits(entries).map((u) => u.entries),
      [[0], [1, 2, 3, 4], [5], [6, 8], [7]],
    );
  });

  test('an id reused by later calls pairs each result with its nearest earlier call', () => {
    const entries = [0, 1, 2].flatMap((k) => [
      entry({ id: `c${k}`, type: 'tool_call', callId: 'call_0' }),
      entry({ id: `r${k}`, role: 'tool', type: 'tool_result', callId: 'call_0' }),
      entry({ id: `m${k}` }),
    ]);
    assert.deepEqual(
      buildUnits(entries).map((u) => u.entries),
      [[0, 1], [2], [3, 4], [5], [6, 7], [8]],
    );
  });

  test('without ids, a run of calls takes the results that follow it', () => {
    const entries = [
      entry({ id: 'c1', type: 'tool_call' }),
      entry({ id: 'r1', role: 'tool', type: 'tool_result' }),
      entry({ id: 'm', role: 'assistant' }),
      entry({ id: 'c2', type: 'tool_call' }),
      entry({ id: 'c3', type: 'tool_call' }),
      entry({ id: 'r2', role: 'tool', type: 'tool_result' }),
      entry({ id: 'r3', role: 'tool', type: 'tool_result' }),
    ];
    assert.deepEqual(
      buildUnits(entries).map((u) => u.entries),
      [[0, 1], [2], [3, 4, 5, 6]],
    );
  });
});

describe('planPrune', () => {
  test('urgency none without --force, or already under the target: no change', () => {
    const entries = session(10);
    assert.equal(planPrune(planEntries(entries, 50), policy()).outcome, 'no-change');
    const forced = planPrune(planEntries(entries, 20), policy({ force: true }));
    assert.equal(forced.outcome, 'no-change');
    assert.match(forced.note ?? '', /already at or under the target/);
  });

  test('fewer than three candidates under soft urgency: nothing to summarize', () => {
    const plan = planPrune(planEntries(session(7), 150), policy());
    assert.equal(plan.candidates.length, 2);
    assert.equal(plan.outcome, 'no-change');
    assert.match(plan.note ?? '', /nothing to summarize/);
  });

  test('recency drops the oldest candidates until the window and the summary reserve fit the target', () => {
    const entries = session(20); // 22 turns x 60 = 1320 tokens: soft
    const plan = planPrune(planEntries(entries, 60), policy());
    assert.equal(plan.outcome, 'prune');
    assert.equal(plan.targetTokens, 500);
    // 1320 - 60k + 50 <= 500 → k = 15 dropped, the oldest first.
    assert.deepEqual(
      [...plan.dropped],
      Array.from({ length: 15 }, (_, i) => i + 2),
    );
    assert.ok(plan.totalAfter <= plan.targetTokens);
    assert.equal(plan.totalAfter, 1320 - 15 * 60 + 50);
    for (const i of [0, 1, ...plan.protectedTail]) assert.ok(!plan.dropped.has(i), `kept ${i}`);
  });

  test('pinned turns anywhere (flag or type) are never dropped; the tail is kept', () => {
    const entries = session(20);
    entries[8] = entry({ id: 'tas', role: 'user', type: 'tas' });
    entries[9] = entry({ id: 'flagged', pinned: true });
    const plan = planPrune(planEntries(entries, 100), policy({ targetTokens: 100 }));
    for (const i of [0, 1, 8, 9]) assert.ok(!plan.dropped.has(i));
    for (const i of [17, 18, 19, 20, 21]) assert.ok(!plan.dropped.has(i));
    assert.equal(plan.reachedTarget, false);
  });

  test('old tool results are masked before any turn is dropped', () => {
    const entries = [
      ...session(2),
      ...Array.from({ length: 6 }, (_, i) => [
        entry({ id: `c${i}`, type: 'tool_call' }, { links: { calls: [`k${i}`] } }),
        entry({ id: `r${i}`, role: 'tool', type: 'tool_result' }, { links: { answers: [`k${i}`] } }),
      ]).flat(),
      ...session(5).slice(2),
    ];
    const tokens = entries.map((e) => (e.turn.type === 'tool_result' ? 200 : 20));
    const plan = planPrune(planEntries(entries, tokens), policy({ targetTokens: 700 }));
    assert.equal(plan.dropped.size, 0);
    assert.ok(plan.masked.size > 0);
    assert.ok(plan.actions.every((a) => a.kind === 'mask'));
    // Oldest first.
    assert.deepEqual(
      [...plan.masked],
      plan.actions.map((a) => a.entries[0]),
    );
    assert.equal(plan.actions[0]?.entries[0], 5);
  });

  test('relevance drops the least relevant first, ties broken chronologically, and keeps call pairs whole', () => {
    const entries = [
      ...session(0),
      entry({ id: 'a' }),
      entry({ id: 'b' }),
      entry({ id: 'c', type: 'tool_call' }, { links: { calls: ['k'] } }),
      entry({ id: 'r', role: 'tool', type: 'tool_result' }, { links: { answers: ['k'] } }),
      entry({ id: 'd' }),
      entry({ id: 'e' }),
      ...session(5).slice(2),
    ];
    const relevance = [0, 0, 0.9, 0.1, 0.5, 0.05, 0.1, 0.3, 0, 0, 0, 0, 0];
    const tokens = entries.map(() => 100);
    const plan = planPrune(planEntries(entries, tokens, relevance), policy({ strategy: 'relevance', targetTokens: 900, summaryReserveTokens: 0 }));
    // The call unit scores max(0.5, 0.05) = 0.5; the order is b (0.1), d (0.1, later), e (0.3), unit (0.5), a (0.9).
    const drops = plan.actions.filter((a) => a.kind === 'drop').map((a) => a.entries.map((i) => entries[i]?.turn.id).join('+'));
    assert.deepEqual(drops.slice(0, 3), ['b', 'd', 'e']);
    // No mask happened because the tool result's unit was not needed: masks come first, so check pairs instead.
    const droppedIds = [...plan.dropped].map((i) => entries[i]?.turn.id);
    assert.equal(droppedIds.includes('c'), droppedIds.includes('r'));
  });

  test('hard urgency: the protected tail shrinks, never the latest turn; impossible when pinned + latest exceed the hard limit', () => {
    const entries = session(6);
    const tokens = [100, 100, 50, 50, 50, 400, 400, 700];
    const plan = planPrune(planEntries(entries, tokens), policy({ pinnedPrefixTurns: 2 }));
    assert.equal(plan.urgency, 'hard');
    assert.equal(plan.outcome, 'prune');
    assert.ok(plan.tailEntriesDropped > 0);
    assert.ok(!plan.dropped.has(7), 'the latest turn stays');
    assert.ok(plan.totalAfter < 1600);

    const impossible = planPrune(planEntries(entries, [900, 600, 10, 10, 10, 10, 10, 200]), policy());
    assert.equal(impossible.outcome, 'impossible');
    assert.match(impossible.note ?? '', /hard limit/);
  });

  test('the plan and its application never mutate their input; a second prune of the result changes nothing', () => {
    const entries = session(30);
    const frozen = JSON.stringify(entries);
    const input = planEntries(entries, 60);
    const plan = planPrune(input, policy());
    assert.equal(JSON.stringify(entries), frozen);
    let n = 0;
    const edit = planToEdit(plan, { summary: '[Context Summary]\nx', placeholders: new Map(), now: 'now', newId: () => `s${++n}` });
    const turns = entries.map((e) => e.turn);
    const pruned = applyEdit(turns, edit);
    assert.equal(JSON.stringify(entries), frozen);
    assert.equal(pruned.filter((t) => t.content.startsWith('[Context Summary]')).length, 1);
    assert.equal(pruned[2]?.content, '[Context Summary]\nx', 'the summary stands where the removed turns were');
    const again = planPrune(
      pruned.map((turn) => ({ entry: { turn, source: { records: [0] }, blobs: [] }, tokens: turn.type === 'summary' ? 50 : 60 })),
      policy(),
    );
    assert.equal(again.outcome, 'no-change');
  });
});

describe('masking by relevance', () => {
  test('the relevance strategy masks the least relevant tool result first; recency the oldest', () => {
    const entries = [
      entry({ id: 'sys', role: 'system', type: 'system' }),
      entry({ id: 'prd', role: 'user', type: 'prd' }),
      entry({ id: 'c1', type: 'tool_call', content: 'shell {"command":"ls"}' }, { links: { calls: ['a'] } }),
      entry({ id: 'r1', role: 'tool', type: 'tool_result' }, { links: { answers: ['a'] } }),
      entry({ id: 'c2', type: 'tool_call', content: 'shell {"command":"ps"}' }, { links: { calls: ['b'] } }),
      entry({ id: 'r2', role: 'tool', type: 'tool_result' }, { links: { answers: ['b'] } }),
      entry({ id: 'm0', role: 'user' }),
      ...Array.from({ length: 3 }, (_, i) => entry({ id: `t${i}`, role: i % 2 ? 'assistant' : 'user' })),
      // The latest result of the tool is in the tail, so neither r1 nor r2 is masked last for being the latest.
      entry({ id: 'c3', type: 'tool_call', content: 'shell {"command":"df"}' }, { links: { calls: ['c'] } }),
      entry({ id: 'r3', role: 'tool', type: 'tool_result' }, { links: { answers: ['c'] } }),
    ];
    const tokens = entries.map((e) => (e.turn.type === 'tool_result' && e.turn.id !== 'r3' ? 400 : 50));
    // 1,300 tokens (soft): masking one result (390 saved) reaches the target (950).
    const relevance = entries.map((e) => (e.turn.id === 'r1' ? 0.9 : e.turn.id === 'r2' ? 0.1 : 0.5));
    const byRelevance = planPrune(planEntries(entries, tokens, relevance), policy({ strategy: 'relevance', targetTokens: 950 }));
    assert.deepEqual(
      [...byRelevance.masked].map((i) => entries[i]?.turn.id),
      ['r2'],
      'the result the goal needs is kept',
    );
    const byRecency = planPrune(planEntries(entries, tokens, relevance), policy({ strategy: 'recency', targetTokens: 950 }));
    assert.deepEqual(
      [...byRecency.masked].map((i) => entries[i]?.turn.id),
      ['r1'],
    );
  });
});

describe('drops too small to summarize', () => {
  test('a plan that masks its way to the target does not also drop a turn too small to pay for a summary', () => {
    const entries = [
      entry({ id: 'sys', role: 'system', type: 'system' }),
      entry({ id: 'prd', role: 'user', type: 'prd' }),
      entry({ id: 'm0', role: 'user' }),
      entry({ id: 'c1', type: 'tool_call', content: 'shell {"command":"ls"}' }, { links: { calls: ['a'] } }),
      entry({ id: 'r1', role: 'tool', type: 'tool_result' }, { links: { answers: ['a'] } }),
      entry({ id: 'm1', role: 'assistant' }),
      ...Array.from({ length: 3 }, (_, i) => entry({ id: `t${i}`, role: i % 2 ? 'assistant' : 'user' })),
      entry({ id: 'c3', type: 'tool_call', content: 'shell {"command":"df"}' }, { links: { calls: ['c'] } }),
      entry({ id: 'r3', role: 'tool', type: 'tool_result' }, { links: { answers: ['c'] } }),
    ];
    // m0 (20 tokens, relevance 0) ranks before the mask of r1 (2,000 tokens); the mask alone reaches the target.
    const tokens = entries.map((e) => (e.turn.id === 'r1' ? 2000 : e.turn.id === 'm0' ? 20 : 50));
    const relevance = entries.map((e) => (e.turn.id === 'm0' ? 0 : 0.5));
    const plan = planPrune(planEntries(entries, tokens, relevance), policy({ strategy: 'relevance', targetTokens: 1000, summaryReserveTokens: summaryRule() }));
    assert.equal(plan.outcome, 'prune');
    assert.ok(plan.reachedTarget);
    assert.deepEqual(
      [...plan.masked].map((i) => entries[i]?.turn.id),
      ['r1'],
    );
    // A drop of 20 tokens would leave its summary 19 tokens: no summarizer can write one (exit 5).
    assert.deepEqual([...plan.dropped], []);
  });
});
