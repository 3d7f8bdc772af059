import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { ContextPruner } from '../src/core/prune/context-pruner.js';
import type { PruneResult } from '../src/core/prune/context-pruner.js';
import { ContextRefresher, REFRESH_PREFIX } from '../src/core/refresh/context-refresher.js';
import { OrchestratorContextInjector } from '../src/core/refresh/orchestrator-context-injector.js';
import { loadCounter } from '../src/core/tokens/encodings.js';
import type { ContextWindow, ConversationTurn } from '../src/core/turn.js';
import { OrchestratorLoop, taskContext } from '../src/orchestrator/orchestrator-loop.js';
import type { LoopIteration, OrchestratorLogEvent, StepFunction } from '../src/orchestrator/orchestrator-loop.js';
import { repoRoot } from './helpers/realdata.js';
import { FixedSummarizer } from './helpers/summarizers.js';

const counter = loadCounter('o200k_base');

const turn = (id: string, tokenCount: number, over: Partial<ConversationTurn> = {}): ConversationTurn => ({
  id,
  role: 'assistant',
  type: 'message',
  content: `turn ${id}`,
  tokenCount,
  ...over,
});
const pinnedPair = (tokens = 1000): ConversationTurn[] => [
  turn('system', tokens, { role: 'system', type: 'system', content: 'You are the devs agent.' }),
  turn('prd', tokens, { role: 'user', type: 'prd', content: 'PRD: build the payments service.' }),
];

/** A step function that hands out one prepared turn per step, then ends the loop. */
function scripted(turns: readonly ConversationTurn[]): StepFunction {
  let next = 0;
  return () => Promise.resolve(turns[next++]);
}

interface Run {
  readonly final: ContextWindow;
  readonly iterations: LoopIteration[];
  readonly log: OrchestratorLogEvent[];
}

async function runLoop(turns: readonly ConversationTurn[], options: { pruner?: ContextPruner; task?: string } = {}): Promise<Run> {
  const iterations: LoopIteration[] = [];
  const log: OrchestratorLogEvent[] = [];
  const loop = new OrchestratorLoop({
    step: scripted(turns),
    ...(options.pruner ? { contextPruner: options.pruner } : {}),
    task: options.task ?? { id: 'REQ-42', title: 'payment retries' },
    counter,
    log: (e) => log.push(e),
    onIteration: (it) => iterations.push(it),
  });
  const final = await loop.run();
  return { final, iterations, log };
}

describe('seed 000: the orchestrator loop with ContextPruner (tests A–F)', () => {
  test('A: no prune below the threshold: every turn stays, no summary, no event', async () => {
    const pruner = new ContextPruner(new FixedSummarizer(), { counter });
    const turns = [...pinnedPair(20_000), ...Array.from({ length: 8 }, (_, i) => turn(`t${i}`, 45_000))]; // 400k
    const { final, iterations, log } = await runLoop(turns, { pruner });
    iterations.forEach((it, i) => {
      assert.equal(it.prune, undefined);
      assert.equal(it.window.turns.length, i + 1);
    });
    assert.equal(final.turns.length, 10);
    assert.equal(final.totalTokenEstimate, 400_000);
    assert.ok(!final.turns.some((t) => t.content.startsWith('[Context Summary]')));
    assert.deepEqual(log, []);
  });

  test('B: a soft prune at 500k: pruned on the crossing iteration, below 520k, and logged with the seed’s fields', async () => {
    const pruner = new ContextPruner(new FixedSummarizer(), { counter });
    const turns = [...pinnedPair(), ...Array.from({ length: 13 }, (_, i) => turn(`t${i}`, 40_000))]; // 522k at the end
    const { iterations, log } = await runLoop(turns, { pruner });
    const pruned = iterations.filter((it) => it.prune);
    assert.equal(pruned.length, 1);
    const it = pruned[0]!;
    assert.equal(it.turnIndex, 15, 'the iteration that crossed 500k');
    assert.equal(it.before.totalTokenEstimate, 522_000);
    assert.equal(it.prune?.pruned, true);
    assert.ok(it.window.totalTokenEstimate < 520_000);
    assert.equal(log.length, 1);
    const event = log[0]!;
    assert.deepEqual(Object.keys(event).sort(), ['event', 'newTotal', 'removedTurnCount', 'tokensSaved']);
    assert.equal(event.event, 'context_pruned');
    if (event.event !== 'context_pruned') return;
    assert.equal(event.newTotal, it.window.totalTokenEstimate);
    assert.equal(event.tokensSaved, 522_000 - event.newTotal);
    assert.ok(event.removedTurnCount > 0);
  });

  test('C: a hard prune at 850k with the minimum three candidates', async () => {
    const summarizer = new FixedSummarizer();
    const pruner = new ContextPruner(summarizer, { counter });
    // Eight 106k turns: the soft limit is crossed at turn 7 with only two candidates (nothing to do),
    // then the eighth turn brings 850k (hard) and exactly three candidates.
    const turns = [...pinnedPair(), ...Array.from({ length: 8 }, (_, i) => turn(`t${i}`, 106_000))];
    const { iterations, log } = await runLoop(turns, { pruner });
    const last = iterations[iterations.length - 1]!;
    assert.equal(last.before.totalTokenEstimate, 850_000);
    assert.ok(last.prune, 'pruned at 850k');
    assert.ok(last.window.totalTokenEstimate < 800_000);
    assert.equal(summarizer.requests.length, 1);
    assert.equal(summarizer.requests[0]?.turns.length, 3);
    assert.ok(
      last.window.turns.some((t) => t.id === 't7'),
      'the latest turn stays',
    );
    assert.equal(log.length, 1);
  });

  test('D: pinned turns never reach the summarizer and stay at indices 0 and 1; the task reaches it', async () => {
    const summarizer = new FixedSummarizer();
    const pruner = new ContextPruner(summarizer, { counter });
    const turns = [...pinnedPair(), ...Array.from({ length: 20 }, (_, i) => turn(`t${i}`, 30_000))];
    const { final, iterations } = await runLoop(turns, { pruner });
    assert.ok(iterations.some((it) => it.prune));
    const given = summarizer.requests.flatMap((r) => r.turns.map((t) => t.id));
    assert.ok(given.length > 0);
    assert.ok(!given.includes('system') && !given.includes('prd'));
    assert.deepEqual(final.turns[0], turns[0]);
    assert.deepEqual(final.turns[1], turns[1]);
    assert.equal(summarizer.requests[0]?.activeTask, 'REQ-42: payment retries', 'the current task id and title');
  });

  test('E: after a prune the window holds exactly one [Context Summary] turn', async () => {
    const pruner = new ContextPruner(new FixedSummarizer(), { counter });
    const turns = [...pinnedPair(), ...Array.from({ length: 20 }, (_, i) => turn(`t${i}`, 30_000))];
    const { iterations } = await runLoop(turns, { pruner });
    const after = iterations.find((it) => it.prune)!;
    assert.equal(after.window.turns.filter((t) => /^\[Context Summary\]/.test(t.content)).length, 1);
  });

  test('F: fifty turns prune at 20, 35 and 50; each prune reduces the window; never above the hard limit', async () => {
    const pruner = new ContextPruner(new FixedSummarizer(), { counter, protectedTailTurns: 2, targetTokens: 100_000 });
    const turns = [...pinnedPair(), ...Array.from({ length: 48 }, (_, i) => turn(`t${i}`, 28_000))];
    const { final, iterations, log } = await runLoop(turns, { pruner });
    assert.deepEqual(
      iterations.filter((it) => it.prune).map((it) => it.turnIndex),
      [20, 35, 50],
    );
    for (const it of iterations) {
      assert.ok(it.window.totalTokenEstimate < 800_000, `iteration ${it.turnIndex}`);
      if (!it.prune) continue;
      assert.ok(it.window.totalTokenEstimate < it.before.totalTokenEstimate);
      assert.ok(it.window.totalTokenEstimate <= 100_000);
      assert.equal(it.window.turns.filter((t) => t.content.startsWith('[Context Summary]')).length, 1);
    }
    assert.equal(log.length, 3);
    assert.ok(final.totalTokenEstimate < 800_000);
  });
});

describe('OrchestratorLoop', () => {
  test('without a pruner it is a graceful no-op: the window only grows', async () => {
    const turns = Array.from({ length: 30 }, (_, i) => turn(`t${i}`, 50_000));
    const { final, log } = await runLoop(turns);
    assert.equal(final.turns.length, 30);
    assert.equal(final.totalTokenEstimate, 1_500_000);
    assert.deepEqual(log, []);
  });

  test('annotates turns that arrive without a count, and keeps counts it is given', async () => {
    const given = { id: 'a', role: 'user' as const, type: 'message' as const, content: 'hello world' };
    const { final } = await runLoop([given, turn('b', 7)]);
    assert.equal(final.turns[0]?.tokenCount, 2);
    assert.equal(final.turns[1]?.tokenCount, 7);
    assert.equal(final.totalTokenEstimate, 9);
    assert.equal('tokenCount' in given, false, 'the step’s turn is not mutated');
  });

  test('passes the task as title or requirement id, and a step may switch it', async () => {
    assert.equal(taskContext({ id: 'REQ-7' }), 'REQ-7');
    assert.equal(taskContext({ title: 'Fix retries' }), 'Fix retries');
    assert.equal(taskContext('  '), undefined);
    const seen: (string | undefined)[] = [];
    const pruner = {
      prune: (window: ContextWindow, task?: string): Promise<PruneResult> => {
        seen.push(task);
        return Promise.resolve({ pruned: false, window, removedTurnCount: 0, tokensSaved: 0 });
      },
    };
    const steps = [{ turns: [turn('a', 1)] }, { turns: [turn('b', 1)], task: { id: 'REQ-9', title: 'replay endpoint' } }];
    let i = 0;
    await new OrchestratorLoop({ step: () => Promise.resolve(steps[i++]), contextPruner: pruner, task: 'REQ-8' }).run();
    assert.deepEqual(seen, ['REQ-8', 'REQ-9: replay endpoint']);
  });

  test('refreshes through the injector: a refresh turn after every 5th turn of a node; a new node starts again', async () => {
    const provider = {
      calls: 0,
      getSummary: () => {
        provider.calls++;
        return Promise.resolve({ tasSummary: 'TAS', prdSummary: 'PRD' });
      },
    };
    const injector = new OrchestratorContextInjector(new ContextRefresher({ summaryProvider: provider }));
    const log: OrchestratorLogEvent[] = [];
    const turns = [
      ...pinnedPair(10),
      ...Array.from({ length: 7 }, (_, i) => turn(`p${i}`, 10, { node: 'plan' })),
      ...Array.from({ length: 6 }, (_, i) => turn(`i${i}`, 10, { node: 'impl' })),
    ];
    let ids = 0;
    const loop = new OrchestratorLoop({ step: scripted(turns), injector, counter, log: (e) => log.push(e), newId: () => `r${++ids}` });
    const final = await loop.run();
    const order = final.turns.map((t) => t.id);
    assert.deepEqual(order, ['system', 'prd', 'p0', 'p1', 'p2', 'p3', 'p4', 'r1', 'p5', 'p6', 'i0', 'i1', 'i2', 'i3', 'i4', 'r2', 'i5']);
    const refresh = final.turns[7]!;
    assert.equal(refresh.type, 'refresh');
    assert.equal(refresh.node, 'plan');
    assert.ok(refresh.content.startsWith(REFRESH_PREFIX));
    assert.ok((refresh.tokenCount ?? 0) > 0, 'the refresh is counted too');
    assert.equal(final.turns[15]?.node, 'impl');
    assert.equal(provider.calls, 2);
    assert.deepEqual(log, [
      { event: 'context_refreshed', turnIndex: 7, node: 'plan', turnId: 'r1' },
      { event: 'context_refreshed', turnIndex: 14, node: 'impl', turnId: 'r2' },
    ]);
  });

  test('a refresh is never put between a tool call and its result', async () => {
    const injector = new OrchestratorContextInjector(
      new ContextRefresher({ threshold: 2, summaryProvider: { getSummary: () => Promise.resolve({ tasSummary: 'T', prdSummary: 'P' }) } }),
    );
    const turns = [turn('m1', 5), turn('call', 5, { type: 'tool_call' }), turn('result', 5, { role: 'tool', type: 'tool_result' }), turn('m2', 5)];
    let ids = 0;
    const final = await new OrchestratorLoop({ step: scripted(turns), injector, counter, newId: () => `r${++ids}` }).run();
    assert.deepEqual(
      final.turns.map((t) => t.id),
      ['m1', 'call', 'result', 'r1', 'm2'],
    );
  });

  test('does not import a summarizer and holds no token arithmetic (seed 000 code review)', () => {
    const source = readFileSync(join(repoRoot, 'src', 'orchestrator', 'orchestrator-loop.ts'), 'utf8');
    const imports = [...source.matchAll(/from '([^']+)'/g)].map((m) => m[1]);
    assert.ok(!imports.some((p) => /summar|providers\/|tokens\/|\/prune\/(?!context-pruner)/.test(p ?? '')), imports.join(', '));
    assert.doesNotMatch(source, /softLimit|hardLimit|\.count\(/);
  });
});
