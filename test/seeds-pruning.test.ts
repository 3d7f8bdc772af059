import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { ArchiveStore } from '../src/archive/store.js';
import { MemoryRefresher, TieredMemoryManager } from '../src/archive/tiered-memory.js';
import { loadCounter } from '../src/core/tokens/encodings.js';
import { ContextPruner } from '../src/core/prune/context-pruner.js';
import type { ContextPrunedEvent } from '../src/core/prune/context-pruner.js';
import type { ContextEntry } from '../src/core/prune/context-entry.js';
import { ContextCompressor, SlidingRelevanceWindow } from '../src/core/prune/sliding-window.js';
import type { ContextWindow, ConversationTurn } from '../src/core/turn.js';
import { LocalEmbedder } from '../src/providers/local-embedder.js';

import { FixedSummarizer } from './helpers/summarizers.js';

const counter = loadCounter('o200k_base');

function turn(id: string, tokenCount: number, over: Partial<ConversationTurn> = {}): ConversationTurn {
  return { id, role: 'assistant', type: 'message', content: `turn ${id}`, tokenCount, ...over };
}

function windowOf(turns: ConversationTurn[]): ContextWindow {
  return { turns, totalTokenEstimate: turns.reduce((s, t) => s + (t.tokenCount ?? 0), 0) };
}

const pinnedPair = (tokens = 1000): ConversationTurn[] => [
  turn('system', tokens, { role: 'system', type: 'system', content: 'You are the devs agent.' }),
  turn('prd', tokens, { role: 'user', type: 'prd', content: 'PRD: build the payments service.' }),
];

/** Seed 000's orchestrator loop, reduced to what the tests need: append, prune, replace. */
async function runLoop(
  pruner: ContextPruner,
  turns: ConversationTurn[],
  onIteration: (i: number, window: ContextWindow, pruned: boolean) => void,
): Promise<ContextWindow> {
  let window = windowOf([]);
  for (const [i, next] of turns.entries()) {
    window = windowOf([...window.turns, next]);
    const result = await pruner.prune(window, 'task REQ-42: payment retries');
    if (result.pruned) window = result.window;
    onIteration(i + 1, window, result.pruned);
  }
  return window;
}

describe('seed 000: ContextPruner in an orchestrator loop (tests A–F)', () => {
  test('A: no prune below the threshold', async () => {
    const pruner = new ContextPruner(new FixedSummarizer(), { counter });
    const turns = [...pinnedPair(20_000), ...Array.from({ length: 8 }, (_, i) => turn(`t${i}`, 45_000))]; // 400k
    const final = await runLoop(pruner, turns, (i, window, pruned) => {
      assert.equal(pruned, false);
      assert.equal(window.turns.length, i);
    });
    assert.equal(final.turns.length, 10);
    assert.equal(final.totalTokenEstimate, 400_000);
    assert.ok(!final.turns.some((t) => t.content.startsWith('[Context Summary]')));
  });

  test('B: a soft prune at 500k brings the window below where it was', async () => {
    const events: ContextPrunedEvent[] = [];
    const pruner = new ContextPruner(new FixedSummarizer(), { counter, onEvent: (e) => events.push(e) });
    const turns = [...pinnedPair(), ...Array.from({ length: 13 }, (_, i) => turn(`t${i}`, 40_000))]; // 522k at the end
    let prunedAt = -1;
    await runLoop(pruner, turns, (i, window, pruned) => {
      if (pruned && prunedAt < 0) {
        prunedAt = i;
        assert.ok(window.totalTokenEstimate < 520_000);
        assert.ok(window.totalTokenEstimate <= 250_000, 'at or under the default target, half the soft limit');
      }
    });
    assert.equal(prunedAt, 15, 'the iteration that crossed 500k');
    assert.equal(events.length, 1);
    assert.equal(events[0]?.event, 'context_pruned');
    assert.ok((events[0]?.removedTurnCount ?? 0) > 0);
    assert.equal(events[0]?.tokensSaved, 522_000 - (events[0]?.newTotal ?? 0));
  });

  test('C: a hard prune at 850k works with the minimum three candidates', async () => {
    const summarizer = new FixedSummarizer();
    const pruner = new ContextPruner(summarizer, { counter });
    const turns = [...pinnedPair(), ...Array.from({ length: 8 }, (_, i) => turn(`t${i}`, 106_000))]; // 2k + 848k
    const window = windowOf(turns);
    assert.equal(window.totalTokenEstimate, 850_000);
    const result = await pruner.prune(window, 'REQ-7');
    assert.equal(result.pruned, true);
    assert.ok(result.window.totalTokenEstimate < 800_000);
    assert.equal(summarizer.requests[0]?.turns.length, 3, 'exactly the three candidates between the pinned prefix and the tail');
    assert.ok(
      result.window.turns.some((t) => t.id === 't7'),
      'the latest turn stays',
    );
  });

  test('D: pinned turns never reach the summarizer and stay at indices 0 and 1', async () => {
    const summarizer = new FixedSummarizer();
    const pruner = new ContextPruner(summarizer, { counter });
    const turns = [...pinnedPair(), ...Array.from({ length: 20 }, (_, i) => turn(`t${i}`, 30_000))];
    const result = await pruner.prune(windowOf(turns), 'REQ-1');
    assert.equal(result.pruned, true);
    const given = summarizer.requests.flatMap((r) => r.turns.map((t) => t.id));
    assert.ok(!given.includes('system') && !given.includes('prd'));
    assert.deepEqual(result.window.turns[0], turns[0]);
    assert.deepEqual(result.window.turns[1], turns[1]);
    assert.equal(summarizer.requests[0]?.activeTask, 'REQ-1', 'the active task reaches the summarizer');
  });

  test('E: exactly one [Context Summary] turn, where the removed turns were', async () => {
    const pruner = new ContextPruner(new FixedSummarizer(), { counter });
    const turns = [...pinnedPair(), ...Array.from({ length: 20 }, (_, i) => turn(`t${i}`, 30_000))];
    const result = await pruner.prune(windowOf(turns), 'REQ-1');
    const summaries = result.window.turns.filter((t) => /^\[Context Summary\]/.test(t.content));
    assert.equal(summaries.length, 1);
    assert.equal(result.window.turns[2], summaries[0]);
    assert.equal(result.removedTurnCount, turns.length - result.window.turns.length + 1);
  });

  test('F: fifty turns prune at 20, 35 and 50, and the window never exceeds the hard limit', async () => {
    // A short protected tail and a low target make the window fall to ~86k after each prune, so
    // 15 more 28k turns reach the soft limit again.
    const pruner = new ContextPruner(new FixedSummarizer(), { counter, protectedTailTurns: 2, targetTokens: 100_000 });
    const turns = [...pinnedPair(), ...Array.from({ length: 48 }, (_, i) => turn(`t${i}`, 28_000))];
    const prunes: number[] = [];
    let largest = 0;
    await runLoop(pruner, turns, (i, window, pruned) => {
      if (pruned) {
        prunes.push(i);
        assert.ok(window.totalTokenEstimate <= 100_000, `iteration ${i}: ${window.totalTokenEstimate}`);
        assert.equal(window.turns.filter((t) => t.content.startsWith('[Context Summary]')).length, 1);
      }
      largest = Math.max(largest, window.totalTokenEstimate);
      assert.ok(window.totalTokenEstimate < 800_000);
    });
    assert.deepEqual(prunes, [20, 35, 50]);
    assert.ok(largest < 800_000);
  });
});

describe('seed 002: drift guard (token-budget form)', () => {
  const entry = (id: string, type: string, tokenCount: number, timestamp: number): ContextEntry => ({
    id,
    type,
    content: `${type} ${id}`,
    tokenCount,
    timestamp,
  });
  const pruner = new ContextPruner(new FixedSummarizer());

  test('TAS and requirements survive a budget overrun; only reasoning and tool results are pruned', () => {
    const entries = [
      entry('tas', 'tas', 100_000, 1),
      entry('req', 'requirements', 100_000, 2),
      ...Array.from({ length: 6 }, (_, i) => entry(`r${i}`, 'reasoning', 100_000, 10 + i)),
      ...Array.from({ length: 4 }, (_, i) => entry(`o${i}`, 'tool_result', 50_000, 20 + i)),
    ];
    assert.ok(entries.reduce((s, e) => s + e.tokenCount, 0) > 800_000);
    const frozen = JSON.stringify(entries);
    const kept = pruner.prune(entries, 600_000);
    assert.equal(JSON.stringify(entries), frozen, 'input not mutated');
    assert.ok(kept.some((e) => e.id === 'tas') && kept.some((e) => e.id === 'req'));
    assert.ok(kept.reduce((s, e) => s + e.tokenCount, 0) <= 600_000);
    const removed = entries.filter((e) => !kept.includes(e));
    assert.ok(removed.length > 0);
    assert.ok(removed.every((e) => e.type === 'reasoning' || e.type === 'tool_result'));
  });

  test('the oldest reasoning turns go first', () => {
    const entries = [
      entry('tas', 'tas', 10, 0),
      entry('req', 'requirements', 10, 0),
      ...Array.from({ length: 20 }, (_, i) => entry(`r${i}`, 'reasoning', 10, 100 - i)),
    ];
    const kept = pruner.prune(entries, 120);
    const keptReasoning = kept.filter((e) => e.type === 'reasoning').map((e) => e.timestamp);
    assert.equal(keptReasoning.length, 10);
    assert.deepEqual(
      keptReasoning,
      Array.from({ length: 10 }, (_, i) => 91 + i),
      'the ten newest, in timestamp order',
    );
  });

  test('at extreme pressure TAS and requirements are intact and everything else is gone', () => {
    const entries = [entry('tas', 'tas', 300, 1), entry('req', 'requirements', 200, 2), entry('x', 'reasoning', 10, 3), entry('y', 'tool_result', 10, 4)];
    const kept = pruner.prune(entries, 505);
    assert.deepEqual(
      kept.map((e) => e.id),
      ['tas', 'req'],
    );
  });

  test('with TieredMemoryManager: pruned reasoning goes to the SQLite medium-term store', (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-seed002-'));
    const store = ArchiveStore.open(join(dir, 'archive.sqlite'));
    t.after(() => {
      store.close();
      rmSync(dir, { recursive: true, force: true });
    });
    const refresher = new MemoryRefresher(store);
    const manager = new TieredMemoryManager({ pruner, refresher, pruneThreshold: 1000, tokenBudget: 600, env: {} });
    manager.addEntry(entry('tas', 'tas', 200, 1));
    manager.addEntry(entry('req', 'requirements', 100, 2));
    for (let i = 0; i < 10; i++) manager.addEntry({ ...entry(`r${i}`, 'reasoning', 100, 10 + i), content: `reasoning about webhook retry step ${i}` });
    const shortTerm = manager.shortTerm();
    assert.ok(shortTerm.some((e) => e.id === 'tas') && shortTerm.some((e) => e.id === 'req'));
    assert.ok(shortTerm.reduce((s, e) => s + e.tokenCount, 0) <= 1000);
    const recalled = refresher.recall('webhook retry');
    assert.ok(recalled.length > 0, 'pruned reasoning is in the medium-term store');
    assert.ok(recalled.every((e) => e.type === 'reasoning' && !shortTerm.some((s) => s.id === e.id)));
  });
});

describe('seed 003: sliding relevance window', () => {
  const goal = 'fix the payment webhook retry';
  const onTopic = new Set(['t3', 't7', 't11', 't15']);
  const turns: ConversationTurn[] = Array.from({ length: 20 }, (_, i) =>
    turn(`t${i}`, 100_000, {
      type: i === 0 ? 'plan' : i === 1 ? 'spec' : 'message',
      content: onTopic.has(`t${i}`) ? 'payment webhook retry backoff' : `unrelated chore ${i}`,
    }),
  );
  // Mocked embeddings: one axis for the goal's subject.
  const embedGoal = async (): Promise<number[]> => [1, 0];
  const embedTurn = async (t: ConversationTurn): Promise<number[]> => (t.content.includes('webhook') ? [1, 0] : [0, 1]);

  test('keeps the pinned plan/spec and the turns most similar to the goal', async () => {
    const window = new SlidingRelevanceWindow({ tokenBudget: 600_000, embedGoal, embedTurn }, goal);
    const kept = await window.prune(turns);
    assert.deepEqual(
      kept.map((t) => t.id),
      ['t0', 't1', 't3', 't7', 't11', 't15'],
    );
  });

  test('pinned turns stay whatever their score; ties go to the earlier turn; input unchanged', async () => {
    const frozen = JSON.stringify(turns);
    const window = new SlidingRelevanceWindow({ tokenBudget: 500_000, embedGoal, embedTurn: async () => [0, 1] }, goal);
    const kept = await window.prune(turns);
    assert.equal(JSON.stringify(turns), frozen);
    assert.deepEqual(
      kept.map((t) => t.id),
      ['t0', 't1', 't2', 't3', 't4'],
      'all tied: the oldest candidates win the room',
    );
  });

  test('a list under the budget comes back unchanged', async () => {
    const window = new SlidingRelevanceWindow({ embedGoal, embedTurn }, goal);
    const small = turns.slice(0, 5);
    assert.deepEqual(await window.prune(small), small);
  });

  test('cosine similarity against the goal embedding decides, and zero vectors score 0', async () => {
    assert.equal(SlidingRelevanceWindow.cosineSimilarity([0, 0], [1, 0]), 0);
    assert.equal(SlidingRelevanceWindow.cosineSimilarity([1, 0], [1, 0]), 1);
    // Reverse the goal: the off-topic turns now win.
    const window = new SlidingRelevanceWindow({ tokenBudget: 600_000, embedGoal: async () => [0, 1], embedTurn }, goal);
    const kept = await window.prune(turns);
    assert.ok(!kept.some((t) => onTopic.has(t.id)));
  });

  test('with ContextCompressor, a 1000-turn conversation ends under 800k tokens, using the real local embedder', async () => {
    const long: ConversationTurn[] = Array.from({ length: 1000 }, (_, i) =>
      turn(`t${i}`, i % 3 === 2 ? 5_000 : 1_500, {
        type: i === 0 ? 'plan' : i % 3 === 2 ? 'tool_result' : 'message',
        content: i % 10 === 0 ? `payment webhook retry note ${i}` : `build log line ${i}`,
      }),
    );
    assert.ok(long.reduce((s, t) => s + (t.tokenCount ?? 0), 0) > 800_000);
    const compressed = new ContextCompressor({ maxToolResultTokens: 2_000 }).compress(long);
    const embedder = new LocalEmbedder(compressed.map((t) => t.content));
    const window = new SlidingRelevanceWindow({ embedGoal: async (g) => embedder.embedOne(g), embedTurn: async (t) => embedder.embedOne(t.content) }, goal);
    assert.ok(compressed.reduce((s, t) => s + (t.tokenCount ?? 0), 0) > 800_000, 'masking alone is not enough here');
    const kept = await window.prune(compressed);
    assert.ok(kept.reduce((s, t) => s + (t.tokenCount ?? 0), 0) < 800_000);
    assert.ok(kept.some((t) => t.type === 'plan'));
    const onTopicMessages = compressed.filter((t) => t.content.includes('webhook'));
    assert.ok(onTopicMessages.length > 50);
    assert.ok(
      onTopicMessages.every((t) => kept.includes(t)),
      'every on-topic turn is kept',
    );
    assert.ok(kept.length < compressed.length);
  });
});

test('ContextPruner: a window whose pinned turns and latest turn reach the hard limit is an error (exit 6), not a quiet no-op', async () => {
  const { BudgetImpossibleError } = await import('../src/core/errors.js');
  const pruner = new ContextPruner(new FixedSummarizer(), { counter });
  const turns = [
    turn('system', 700_000, { role: 'system', type: 'system' }),
    turn('prd', 50_000, { type: 'prd' }),
    ...Array.from({ length: 6 }, (_, i) => turn(`t${i}`, 10_000)),
    turn('last', 60_000),
  ];
  await assert.rejects(pruner.prune(windowOf(turns), 'task'), (e: unknown) => e instanceof BudgetImpossibleError && e.exitCode === 6);
});

test('ContextPruner: pruneToBudget (sync) and pruneWindow (async) are the two named forms prune(…) picks between', async () => {
  const now = () => new Date('2026-01-01T00:00:00Z');
  const pruner = new ContextPruner(new FixedSummarizer(), { counter, now });
  const entries: ContextEntry[] = [
    { id: 'tas', type: 'tas', content: 'TAS', tokenCount: 50, timestamp: 1 },
    ...Array.from({ length: 5 }, (_, i): ContextEntry => ({ id: `r${i}`, type: 'reasoning', content: `r${i}`, tokenCount: 20, timestamp: 10 + i })),
  ];
  const kept = pruner.pruneToBudget(entries, 100);
  assert.ok(Array.isArray(kept), 'an array, not a promise');
  assert.deepEqual(
    kept.map((e) => e.id),
    ['tas', 'r3', 'r4'],
  );
  assert.deepEqual(pruner.prune(entries, 100), kept);

  const turns = [...pinnedPair(20_000), ...Array.from({ length: 12 }, (_, i) => turn(`t${i}`, 45_000))]; // 580k: above the soft limit
  const pending = pruner.pruneWindow(windowOf(turns), 'task REQ-42');
  assert.ok(pending instanceof Promise);
  const viaWindow = await pending;
  const viaPrune = await new ContextPruner(new FixedSummarizer(), { counter, now }).prune(windowOf(turns), 'task REQ-42');
  assert.equal(viaWindow.pruned, true);
  assert.deepEqual(viaWindow, viaPrune);
});
