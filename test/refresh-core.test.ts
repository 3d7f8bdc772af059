import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { ContextRefresher, DEFAULT_REFRESH_THRESHOLD, formatRefresh, REFRESH_PREFIX } from '../src/core/refresh/context-refresher.js';
import type { SummaryProvider } from '../src/core/refresh/context-refresher.js';
import { countsTowardRefresh, isRefreshTurn, pendingToolCall, planRefresh } from '../src/core/refresh/decision.js';
import { OrchestratorContextInjector } from '../src/core/refresh/orchestrator-context-injector.js';
import { loadCounter } from '../src/core/tokens/encodings.js';
import type { TranscriptEntry } from '../src/core/transcript.js';
import { SaopEnvelopeSchema } from '../src/core/turn.js';
import type { ConversationTurn, SaopEnvelope } from '../src/core/turn.js';
import { FileSummaryCache } from '../src/providers/summary-cache.js';
import { FileSummaryProvider } from '../src/io/file-summary-provider.js';
import {
  CondensingSummaryProvider,
  MemorySummaryCache,
  OutlineCondenser,
  PinnedTurnsSummaryProvider,
  StaticSummaryProvider,
  summarizerCondenser,
} from '../src/providers/summary-providers.js';
import type { Condenser } from '../src/providers/summary-providers.js';

const counter = loadCounter('o200k_base');

/** Seed 004's mock provider: distinct TAS and PRD strings, and a count of calls. */
function mockProvider(tas = 'TAS: use SQLite; UTC times.', prd = 'PRD: deliver every event once.'): SummaryProvider & { calls: number } {
  const provider = {
    calls: 0,
    getSummary() {
      provider.calls++;
      return Promise.resolve({ tasSummary: tas, prdSummary: prd });
    },
  };
  return provider;
}

describe('seed 004: ContextRefresher', () => {
  test('starts at 0, threshold defaults to 5', () => {
    const r = new ContextRefresher({ threshold: 5, summaryProvider: mockProvider() });
    assert.equal(r.turnsInCurrentNode, 0);
    assert.equal(new ContextRefresher({ summaryProvider: mockProvider() }).threshold, 5);
    assert.equal(DEFAULT_REFRESH_THRESHOLD, 5);
  });

  test('turns 1–4 do not refresh; the 5th does; the counter resets at once', async () => {
    const provider = mockProvider();
    const r = new ContextRefresher({ threshold: 5, summaryProvider: provider });
    for (let i = 1; i <= 4; i++) {
      assert.deepEqual(await r.onTurn(i), { refreshed: false });
      assert.equal(r.turnsInCurrentNode, i);
    }
    assert.equal(provider.calls, 0, 'the provider is not asked on turns that do not refresh');
    const fifth = await r.onTurn(5);
    assert.equal(fifth.refreshed, true);
    assert.equal(fifth.injectedSummary, `[CONTEXT REFRESH]\n## TAS Summary\nTAS: use SQLite; UTC times.\n\n## PRD Summary\nPRD: deliver every event once.`);
    assert.equal(r.turnsInCurrentNode, 0, 'reset right after the refresh, not after the next turn');
    assert.equal(provider.calls, 1);
    for (let i = 6; i <= 9; i++) assert.equal((await r.onTurn(i)).refreshed, false);
    assert.equal((await r.onTurn(10)).refreshed, true);
    assert.equal(provider.calls, 2, 'exactly once per refresh');
  });

  test('resetNode() restarts the count without refreshing', async () => {
    const provider = mockProvider();
    const r = new ContextRefresher({ summaryProvider: provider });
    for (let i = 1; i <= 4; i++) await r.onTurn(i);
    r.resetNode();
    assert.equal(r.turnsInCurrentNode, 0);
    assert.equal(provider.calls, 0);
    for (let i = 1; i <= 4; i++) assert.equal((await r.onTurn(i)).refreshed, false);
    assert.equal((await r.onTurn(5)).refreshed, true);
  });

  test('an error from the provider propagates', async () => {
    const failing: SummaryProvider = { getSummary: () => Promise.reject(new Error('TAS store unavailable')) };
    const r = new ContextRefresher({ threshold: 2, summaryProvider: failing });
    await r.onTurn(1);
    await assert.rejects(r.onTurn(2), /TAS store unavailable/);
  });

  test('threshold 1 refreshes on every turn', async () => {
    const r = new ContextRefresher({ threshold: 1, summaryProvider: mockProvider() });
    for (let i = 1; i <= 4; i++) assert.equal((await r.onTurn(i)).refreshed, true);
  });

  test('both summaries, distinctly labelled', async () => {
    const r = new ContextRefresher({ threshold: 1, summaryProvider: mockProvider('only-in-tas', 'only-in-prd') });
    const text = (await r.onTurn(1)).injectedSummary ?? '';
    assert.match(text, /^\[CONTEXT REFRESH\]\n/);
    assert.ok(text.indexOf('## TAS Summary\nonly-in-tas') < text.indexOf('## PRD Summary\nonly-in-prd'));
  });

  test('a threshold below 1 is refused', () => {
    assert.throws(() => new ContextRefresher({ threshold: 0, summaryProvider: mockProvider() }), RangeError);
  });
});

describe('seed 004: OrchestratorContextInjector', () => {
  const envelope = (n: number): SaopEnvelope => ({ id: `e${n}`, thought: { reasoning: `reasoning ${n}`, confidence: 0.9 }, action: { tool: 'read_file' } });

  test('turns 1–4 unchanged; the 5th prepended; a new object every time it changes; the input untouched', async () => {
    const injector = new OrchestratorContextInjector(new ContextRefresher({ threshold: 5, summaryProvider: mockProvider() }));
    for (let i = 1; i <= 4; i++) {
      const input = envelope(i);
      const out = await injector.injectIfNeeded(input, i);
      assert.equal(out.thought.reasoning, `reasoning ${i}`);
    }
    const input = envelope(5);
    const frozen = structuredClone(input);
    const out = await injector.injectIfNeeded(input, 5);
    assert.notEqual(out, input);
    assert.notEqual(out.thought, input.thought);
    assert.deepEqual(input, frozen, 'not mutated');
    assert.ok(out.thought.reasoning.startsWith(`${REFRESH_PREFIX}\n## TAS Summary\n`));
    assert.ok(out.thought.reasoning.endsWith('\n\nreasoning 5'));
    assert.equal(out.thought['confidence'], 0.9, 'other thought fields kept');
    assert.deepEqual(out.action, input.action);
    assert.equal(SaopEnvelopeSchema.safeParse(out).success, true, 'still a SAOP envelope');
  });

  test('ten calls, exactly two injections, at turns 5 and 10', async () => {
    const injector = new OrchestratorContextInjector(new ContextRefresher({ threshold: 5, summaryProvider: mockProvider() }));
    const injectedAt: number[] = [];
    for (let i = 1; i <= 10; i++) {
      const out = await injector.injectIfNeeded(envelope(i), i);
      if (out.thought.reasoning.startsWith(REFRESH_PREFIX)) injectedAt.push(i);
    }
    assert.deepEqual(injectedAt, [5, 10]);
  });

  test('refreshTurnIfNeeded gives a refresh turn in the node', async () => {
    const injector = new OrchestratorContextInjector(new ContextRefresher({ threshold: 2, summaryProvider: mockProvider() }));
    assert.equal(await injector.refreshTurnIfNeeded(1, { id: 'x1', node: 'n' }), undefined);
    const turn = await injector.refreshTurnIfNeeded(2, { id: 'x2', node: 'n', timestamp: '2026-01-01T00:00:00.000Z' });
    assert.deepEqual(turn, {
      id: 'x2',
      role: 'system',
      type: 'refresh',
      content: formatRefresh('TAS: use SQLite; UTC times.', 'PRD: deliver every event once.'),
      timestamp: '2026-01-01T00:00:00.000Z',
      node: 'n',
    });
  });
});

const t = (id: string, over: Partial<ConversationTurn> = {}): ConversationTurn => ({ id, role: 'assistant', type: 'message', content: `turn ${id}`, ...over });
const pinned = [t('sys', { role: 'system', type: 'system' }), t('prd', { role: 'user', type: 'prd' }), t('tas', { role: 'user', type: 'tas' })];

describe('planRefresh: is a refresh due in this transcript?', () => {
  test('counts turns in the current node; due at the threshold', () => {
    const four = [...pinned, ...[1, 2, 3, 4].map((i) => t(`m${i}`, { node: 'impl' }))];
    const d4 = planRefresh(four);
    assert.equal(d4.status, 'not-due');
    assert.equal(d4.turnsSinceRefresh, 4, 'pinned project documents are not turns');
    assert.equal(d4.node, 'impl');
    assert.match(d4.reason, /due after 1 more/);
    const d5 = planRefresh([...four, t('m5', { node: 'impl' })]);
    assert.equal(d5.status, 'due');
    assert.equal(d5.due, true);
  });

  test('a change of node resets the count', () => {
    const turns = [...pinned, ...[1, 2, 3, 4, 5, 6].map((i) => t(`p${i}`, { node: 'plan' })), t('i1', { node: 'impl' }), t('i2', { node: 'impl' })];
    const d = planRefresh(turns);
    assert.equal(d.turnsSinceRefresh, 2);
    assert.equal(d.nodeStart, 9);
    assert.equal(d.due, false);
  });

  test('a turn without a node is in the node before it', () => {
    const turns = [...pinned, t('a', { node: 'impl' }), t('b'), t('c'), t('d'), t('e')];
    assert.equal(planRefresh(turns).turnsSinceRefresh, 5);
  });

  test('counts since the last refresh; a refresh as the latest turn is never repeated, even forced', () => {
    const refresh = t('r', { role: 'system', type: 'refresh', content: '[CONTEXT REFRESH]\n…', node: 'impl' });
    const turns = [...pinned, ...[1, 2, 3, 4, 5, 6].map((i) => t(`m${i}`, { node: 'impl' })), refresh];
    const just = planRefresh(turns, { force: true });
    assert.equal(just.status, 'just-refreshed');
    assert.equal(just.due, false);
    assert.equal(just.lastRefreshIndex, turns.length - 1);
    const after = planRefresh([...turns, t('m7', { node: 'impl' })]);
    assert.equal(after.turnsSinceRefresh, 1);
    assert.equal(after.status, 'not-due');
    assert.equal(planRefresh([...turns, t('m7', { node: 'impl' })], { force: true }).status, 'due');
  });

  test('tool results, summaries and refreshes are not turns; a foreign refresh is recognised by its text', () => {
    assert.equal(countsTowardRefresh(t('r', { role: 'tool', type: 'tool_result' })), false);
    assert.equal(countsTowardRefresh(t('s', { type: 'summary' })), false);
    assert.equal(countsTowardRefresh(t('s2', { role: 'user', content: '[Context Summary]\n…' })), false);
    assert.equal(countsTowardRefresh(t('p', { pinned: true })), false);
    assert.equal(countsTowardRefresh(t('c', { type: 'tool_call' })), true);
    assert.equal(isRefreshTurn(t('u', { role: 'user', content: '[CONTEXT REFRESH]\n## TAS Summary\n…' })), true);
  });

  test('waits while a tool call has no result', () => {
    const turns = [...pinned, ...[1, 2, 3, 4, 5].map((i) => t(`m${i}`)), t('call', { type: 'tool_call' })];
    const d = planRefresh(turns);
    assert.equal(d.status, 'waiting-for-tool');
    assert.equal(d.due, false);
    assert.equal(planRefresh(turns.slice(0, -1), { pendingToolCall: 'call_9' }).status, 'waiting-for-tool');
  });

  test('pendingToolCall finds a call the trailing tool turns do not answer', () => {
    const entry = (turn: ConversationTurn, links?: TranscriptEntry['links']): TranscriptEntry => ({
      turn,
      source: { records: [0] },
      blobs: [],
      ...(links ? { links } : {}),
    });
    const answered = [
      entry(t('u', { role: 'user' })),
      entry(t('c', { type: 'tool_call' }), { calls: ['a', 'b'] }),
      entry(t('ra', { role: 'tool', type: 'tool_result' }), { answers: ['a'] }),
      entry(t('rb', { role: 'tool', type: 'tool_result' }), { answers: ['b'] }),
    ];
    assert.equal(pendingToolCall(answered), undefined);
    assert.equal(pendingToolCall(answered.slice(0, 3)), 'b');
    assert.equal(pendingToolCall([...answered, entry(t('m'))]), undefined);
  });
});

describe('SummaryProviders', () => {
  test('from the pinned tas and prd turns; one missing is said so; both missing is an error', async () => {
    const turns = [
      t('sys', { type: 'system' }),
      t('prd', { type: 'prd', content: 'the PRD' }),
      t('tas', { type: 'tas', content: 'the TAS' }),
      t('tas2', { type: 'tas', content: 'TAS addendum' }),
    ];
    assert.deepEqual(await new PinnedTurnsSummaryProvider(turns).getSummary(), { tasSummary: 'the TAS\n\nTAS addendum', prdSummary: 'the PRD' });
    assert.deepEqual(await new PinnedTurnsSummaryProvider(turns.slice(0, 2), 'x.jsonl').getSummary(), {
      tasSummary: '(no TAS in x.jsonl)',
      prdSummary: 'the PRD',
    });
    await assert.rejects(new PinnedTurnsSummaryProvider([t('m')]).getSummary(), /no TAS or PRD/);
  });

  test('from files, read at every refresh (an edited TAS is picked up), with a fallback', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-refresh-files-'));
    writeFileSync(join(dir, 'tas.md'), '# TAS v1\n');
    const provider = new FileSummaryProvider({ tasPath: join(dir, 'tas.md'), fallback: { prd: 'PRD from the transcript' } });
    assert.deepEqual(await provider.getSummary(), { tasSummary: '# TAS v1', prdSummary: 'PRD from the transcript' });
    writeFileSync(join(dir, 'tas.md'), '# TAS v2\n');
    assert.equal((await provider.getSummary()).tasSummary, '# TAS v2');
    await assert.rejects(new FileSummaryProvider({ tasPath: join(dir, 'missing.md') }).getSummary(), /ENOENT/);
  });

  /** A long TAS: headings, requirement lines, list items, prose and a code block. */
  const longTas = [
    '# TAS',
    '## Storage',
    ...Array.from(
      { length: 60 },
      (_, i) => `Prose paragraph ${i} explaining the storage trade-offs in far more words than an agent needs to be reminded of every few turns.`,
    ),
    '- [TAS-041] Idempotency key = event id + receiver id.',
    '```ts',
    ...Array.from({ length: 40 }, (_, i) => `const example${i} = compute(${i});`),
    '```',
    '## Time',
    '- [TAS-042] All times are UTC milliseconds.',
    '- Use the injected clock in tests.',
  ].join('\n');

  test('condensed to the token budget: outline and requirement lines first, in order, verbatim', async () => {
    const provider = new CondensingSummaryProvider(new StaticSummaryProvider({ tas: longTas, prd: 'short PRD' }), { budgetTokens: 300, counter });
    const { tasSummary, prdSummary } = await provider.getSummary();
    assert.equal(prdSummary, 'short PRD', 'a document within its share is verbatim');
    assert.ok(counter.count(formatRefresh(tasSummary, prdSummary)) <= 300, `${counter.count(formatRefresh(tasSummary, prdSummary))} tokens`);
    const lines = tasSummary.split('\n');
    for (const kept of [
      '# TAS',
      '## Storage',
      '- [TAS-041] Idempotency key = event id + receiver id.',
      '## Time',
      '- [TAS-042] All times are UTC milliseconds.',
    ])
      assert.ok(lines.includes(kept), kept);
    assert.ok(lines.indexOf('## Storage') < lines.indexOf('## Time'), 'document order');
    assert.ok(!tasSummary.includes('const example'), 'code goes first');
    assert.match(tasSummary, /condensed by devs-ctx from \d+ tokens/);
  });

  test('a document that fits is never condensed', async () => {
    let runs = 0;
    const condenser: Condenser = {
      name: 'count',
      condense: (text) => {
        runs++;
        return Promise.resolve(text.slice(0, 10));
      },
    };
    const provider = new CondensingSummaryProvider(new StaticSummaryProvider({ tas: 'small TAS', prd: 'small PRD' }), {
      budgetTokens: 2000,
      counter,
      condenser,
    });
    assert.deepEqual(await provider.getSummary(), { tasSummary: 'small TAS', prdSummary: 'small PRD' });
    assert.equal(runs, 0);
  });

  test('cached by content hash: an unchanged TAS is not condensed again; a changed one is', async () => {
    let runs = 0;
    const condenser: Condenser = {
      name: 'count',
      condense: (text) => {
        runs++;
        return Promise.resolve(`condensed ${text.length}`);
      },
    };
    const cache = new MemorySummaryCache();
    const documents = { tas: longTas, prd: 'PRD' };
    const make = (tas: string): CondensingSummaryProvider =>
      new CondensingSummaryProvider(new StaticSummaryProvider({ ...documents, tas }), { budgetTokens: 300, counter, condenser, cache });
    const first = await make(longTas).getSummary();
    const again = await make(longTas).getSummary();
    assert.deepEqual(again, first);
    assert.equal(runs, 1, 'the second provider found the first one’s condensation');
    await make(`${longTas}\n- one more rule`).getSummary();
    assert.equal(runs, 2);
  });

  test('the file cache survives a new process (a new instance) and ignores damage', () => {
    const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-summary-cache-'));
    const cache = new FileSummaryCache(dir);
    cache.set('k', 'condensed text');
    cache.save();
    assert.equal(new FileSummaryCache(dir).get('k'), 'condensed text');
    writeFileSync(cache.file, '{ not json');
    assert.equal(new FileSummaryCache(dir).get('k'), undefined);
  });

  test('OutlineCondenser always fits, even a tiny budget', async () => {
    const out = await new OutlineCondenser(counter).condense(longTas, 40, 'TAS');
    assert.ok(counter.count(out) <= 40, `${counter.count(out)}`);
  });

  test('any Summarizer condenses through summarizerCondenser, without its [Context Summary] marker', async () => {
    const condenser = summarizerCondenser({
      name: 'fake',
      summarize: (r) => Promise.resolve(`[Context Summary]\nshort ${r.turns[0]?.type} in ${r.budgetTokens}`),
    });
    assert.equal(await condenser.condense(longTas, 120, 'TAS'), 'short tas in 120');
    assert.equal(condenser.name, 'summarizer:fake');
  });
});

test('a tool result or call starting with [CONTEXT REFRESH] is not a refresh and does not hold the real one back', () => {
  const echoed = `${REFRESH_PREFIX}\n## TAS Summary\n(a cat of an old transcript)`;
  assert.equal(isRefreshTurn(t('r', { role: 'tool', type: 'tool_result', content: echoed })), false);
  assert.equal(isRefreshTurn(t('c', { type: 'tool_call', content: echoed })), false);
  assert.equal(isRefreshTurn(t('u', { role: 'user', type: 'message', content: echoed })), true, 'what devs-ctx writes in a foreign format');
  assert.equal(isRefreshTurn(t('n', { role: 'system', type: 'refresh', content: 'anything' })), true);
  const turns = [
    ...pinned,
    ...[1, 2, 3, 4, 5].map((i) => t(`m${i}`, { node: 'impl' })),
    t('call', { type: 'tool_call', node: 'impl', content: 'cat old.jsonl' }),
    t('result', { role: 'tool', type: 'tool_result', node: 'impl', content: echoed }),
    t('m6', { node: 'impl' }),
  ];
  const decision = planRefresh(turns);
  assert.equal(decision.due, true, decision.reason);
});
