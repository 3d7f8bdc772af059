import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { DEFAULT_PRUNER_CONFIG } from '../src/core/policy.js';
import { countEntries } from '../src/core/accounting.js';
import { findGoalExcerpts, planningGoal, preparePrune, summaryReserveFor } from '../src/core/prune/engine.js';
import type { PreparedPrune, PruneRequest } from '../src/core/prune/engine.js';
import { best, GoalExcerpts, goalExcerpt } from '../src/core/prune/excerpt.js';
import { TermIndex } from '../src/core/terms.js';
import { loadCounter } from '../src/core/tokens/encodings.js';
import { ExtractiveSummarizer } from '../src/providers/extractive-summarizer.js';
import { LocalEmbedder } from '../src/providers/local-embedder.js';
import { planPrune } from '../src/core/prune/plan.js';
import type { PlanEntry, PrunePolicy } from '../src/core/prune/plan.js';
import type { TextTokenCounter } from '../src/core/accounting.js';
import type { TranscriptEntry } from '../src/core/transcript.js';
import type { ConversationTurn } from '../src/core/turn.js';
import { runCli } from './helpers/cli.js';
import { seeded } from './helpers/prng.js';

/**
 * [issue 14 item 9] Tool output the goal needs is kept: masks are ranked with drops by relevance,
 * the latest result of each tool is masked last, and a large tool result the goal needs keeps its
 * lines about the goal (an excerpt) with a pointer to the archive.
 */

function entry(turn: Partial<ConversationTurn> & { id: string }, extra: Partial<TranscriptEntry> = {}): TranscriptEntry {
  return { turn: { role: 'assistant', type: 'message', content: turn.id, ...turn }, source: { records: [0] }, blobs: [], ...extra };
}

const policy = (over: Partial<PrunePolicy> = {}): PrunePolicy => ({
  ...DEFAULT_PRUNER_CONFIG,
  softLimitTokens: 1000,
  hardLimitTokens: 100_000,
  strategy: 'relevance',
  summaryReserveTokens: 0,
  force: true,
  ...over,
});

interface Spec {
  readonly e: TranscriptEntry;
  readonly tokens: number;
  readonly relevance: number;
  readonly excerptTokens?: number;
}

function plan(specs: readonly Spec[], over: Partial<PrunePolicy> = {}): { ids: (i: Iterable<number>) => string[]; p: ReturnType<typeof planPrune> } {
  const entries: PlanEntry[] = specs.map(({ e, tokens, relevance, excerptTokens }) => ({
    entry: e,
    tokens,
    relevance,
    ...(e.turn.type === 'tool_result' ? { maskedTokens: 10 } : {}),
    ...(excerptTokens !== undefined ? { excerptTokens } : {}),
  }));
  const p = planPrune(entries, policy(over));
  return { p, ids: (set) => [...set].map((i) => specs[i]?.e.turn.id ?? '?').sort() };
}

const call = (id: string, tool: string, key: string): TranscriptEntry =>
  entry({ id, type: 'tool_call', content: `${tool} {"q":"${key}"}` }, { links: { calls: [key] } });
const result = (id: string, key: string): TranscriptEntry => entry({ id, role: 'tool', type: 'tool_result' }, { links: { answers: [key] } });
const pinnedHead: Spec[] = [
  { e: entry({ id: 'sys', role: 'system', type: 'system' }), tokens: 20, relevance: 0 },
  { e: entry({ id: 'prd', role: 'user', type: 'prd' }), tokens: 20, relevance: 0 },
];
const tail: Spec[] = Array.from({ length: 5 }, (_, i) => ({ e: entry({ id: `t${i}`, role: i % 2 ? 'assistant' : 'user' }), tokens: 10, relevance: 0.5 }));

describe('masking ranked with dropping', () => {
  test("the tool output of the goal's request is kept while an unrelated exchange goes; oldest-first masking would mask it", () => {
    const specs: Spec[] = [
      ...pinnedHead,
      // The goal's request: its test run scores low on its own (long output), high through the request.
      { e: entry({ id: 'ask', role: 'user' }), tokens: 30, relevance: 0.6 },
      { e: call('c1', 'run_tests', 'a'), tokens: 20, relevance: 0.1 },
      { e: result('goal-output', 'a'), tokens: 400, relevance: 0.02 },
      // Unrelated work.
      { e: entry({ id: 'other', role: 'user' }), tokens: 300, relevance: 0.03 },
      { e: call('c2', 'grep', 'b'), tokens: 20, relevance: 0.01 },
      { e: result('other-output', 'b'), tokens: 400, relevance: 0.01 },
      { e: entry({ id: 'done', role: 'assistant' }), tokens: 300, relevance: 0.04 },
      { e: call('c3', 'run_tests', 'c'), tokens: 20, relevance: 0.01 },
      { e: result('later-tests', 'c'), tokens: 100, relevance: 0.01 },
      ...tail,
    ];
    const { p, ids } = plan(specs, { targetTokens: 900 });
    assert.equal(p.outcome, 'prune');
    assert.ok(p.reachedTarget);
    assert.ok(!p.masked.has(4) && !p.dropped.has(4), `the goal's tool output stays whole (masked ${ids(p.masked)}, dropped ${ids(p.dropped)})`);
    assert.ok(ids(p.dropped).includes('other'), 'the unrelated request went instead');
    // The recency strategy (masks oldest first, before any drop) masks it.
    const recency = plan(specs, { targetTokens: 900, strategy: 'recency' });
    assert.ok(recency.p.masked.has(4));
  });

  test('the latest result of each tool is masked after the others, even when it is less relevant', () => {
    const specs: Spec[] = [
      ...pinnedHead,
      { e: call('c1', 'grep', 'a'), tokens: 20, relevance: 0.1 },
      { e: result('first-grep', 'a'), tokens: 400, relevance: 0.2 },
      { e: entry({ id: 'm', role: 'user' }), tokens: 30, relevance: 0.9 },
      { e: call('c2', 'grep', 'b'), tokens: 20, relevance: 0.1 },
      { e: result('latest-grep', 'b'), tokens: 400, relevance: 0.05 },
      { e: entry({ id: 'n', role: 'assistant' }), tokens: 30, relevance: 0.9 },
      ...tail,
    ];
    const { p, ids } = plan(specs, { targetTokens: 600 });
    assert.deepEqual(ids(p.masked), ['first-grep']);
    assert.equal(p.dropped.size, 0);
    assert.match(p.actions[0]?.reason ?? '', /least relevant/);
  });

  test('a large tool result the goal needs keeps its excerpt first, and is masked whole only when more must go (one action)', () => {
    const specs: Spec[] = [
      ...pinnedHead,
      { e: entry({ id: 'ask', role: 'user' }), tokens: 30, relevance: 0.8 },
      { e: call('c1', 'kubectl', 'a'), tokens: 20, relevance: 0.3 },
      { e: result('logs', 'a'), tokens: 2000, relevance: 0.3, excerptTokens: 300 },
      { e: entry({ id: 'why', role: 'assistant', type: 'reasoning' }), tokens: 200, relevance: 0.5 },
      // Side talk: less relevant than the logs (0.6 × 0.8 through the request), more than what the excerpt masks (a quarter of that).
      { e: entry({ id: 'side', role: 'user' }), tokens: 200, relevance: 0.2 },
      { e: entry({ id: 'side2', role: 'assistant' }), tokens: 200, relevance: 0.2 },
      { e: call('c9', 'kubectl', 'z'), tokens: 10, relevance: 0 },
      { e: result('tail-logs', 'z'), tokens: 10, relevance: 0 },
      ...tail,
    ];
    // 2,000 → 300 reaches 1,200: the excerpt alone; the reasoning and the side talk stay.
    const light = plan(specs, { targetTokens: 1200 });
    const { ids } = light;
    assert.deepEqual(ids(light.p.masked), ['logs']);
    assert.deepEqual(ids(light.p.excerpted), ['logs']);
    assert.equal(light.p.dropped.size, 0);
    assert.equal(light.p.actions.length, 1);
    assert.equal(light.p.actions[0]?.tokensSaved, 1700);
    // A deep target: the side talk goes before the excerpt, then the excerpt is masked whole.
    const deep = plan(specs, { targetTokens: 400 });
    assert.ok(deep.p.dropped.size > 0);
    const masks = deep.p.actions.filter((a) => a.kind === 'mask');
    assert.ok(deep.p.masked.has(4) && !deep.p.excerpted.has(4), 'masked whole, not an excerpt any more');
    const logMasks = masks.filter((a) => a.entries[0] === 4);
    assert.equal(logMasks.length, 1, 'one action for the result');
    assert.equal(logMasks[0]?.tokensSaved, 1990);
    assert.ok(deep.p.dropped.has(6) && deep.p.dropped.has(7), 'the side talk went first');
    const saved = deep.p.actions.reduce((sum, a) => sum + (a.kind === 'mask' ? a.tokensSaved : 0), 0);
    const droppedTokens = [...deep.p.dropped].reduce((sum, i) => sum + (specs[i]?.tokens ?? 0), 0);
    assert.equal(deep.p.totalBefore - saved - droppedTokens, deep.p.tokensAfterActions, 'the actions add up to what the plan saves');
  });
});

/** Service logs: templated lines about the webhook, one line with something no other line says. */
function logs(lines: number, fact: string, at: number): string {
  const out: string[] = [];
  for (let i = 0; i < lines; i++) {
    out.push(i === at ? fact : `2026-03-14T09:${String(i % 60).padStart(2, '0')}:00Z info payment_webhook delivery=${1000 + i} took=${(i * 37) % 900}ms`);
  }
  return out.join('\n');
}

const GOAL = 'Fix the flaky payment webhook retry so a redelivered event is processed once.';
const FACT = '2026-03-14T09:12:44Z warn webhook received id=evt_1NQx7f type=payment_intent.succeeded already seen earlier';

describe('goalExcerpt', () => {
  test('keeps the line about the goal that says something new among templated lines, and marks the gaps', () => {
    const text = logs(200, FACT, 120);
    const excerpt = goalExcerpt(text, GOAL);
    assert.ok(excerpt);
    assert.ok(excerpt.text.includes(FACT));
    assert.equal(excerpt.totalLines, 200);
    assert.ok(excerpt.keptLines < 50);
    assert.ok(excerpt.text.length <= text.length * 0.25);
    assert.match(excerpt.text, /\[… \d+ lines …\]/);
    // The kept lines, in their order, are lines of the output.
    const kept = excerpt.text.split('\n').filter((l) => !l.startsWith('[…'));
    assert.equal(kept.length, excerpt.keptLines);
    const original = text.split('\n');
    let at = -1;
    for (const line of kept) {
      const next = original.indexOf(line, at + 1);
      assert.ok(next > at, `in order: ${line}`);
      at = next;
    }
  });

  test('an error line about the goal ranks first', () => {
    const text = logs(100, 'ERROR PAY-E4117 webhook delivery rejected: signature timestamp outside tolerance', 40);
    const excerpt = goalExcerpt(text, GOAL);
    assert.ok(excerpt?.text.includes('PAY-E4117'));
  });

  test('none for a short output, an output with no goal word, or no goal', () => {
    assert.equal(goalExcerpt(logs(8, FACT, 3), GOAL), undefined);
    assert.equal(goalExcerpt(Array.from({ length: 40 }, (_, i) => `line ${i} of an unrelated listing`).join('\n'), GOAL), undefined);
    assert.equal(goalExcerpt(logs(100, FACT, 3), ''), undefined);
  });
});

describe('goal excerpts found ahead of the plan (while the counting runs elsewhere)', () => {
  const turns: ConversationTurn[] = [
    { id: 'sys', role: 'system', type: 'system', content: 'You are a coding agent.' },
    { id: 'ask', role: 'user', type: 'message', content: 'The payment webhook retry fails. Look at the logs.' },
    { id: 'c1', role: 'assistant', type: 'tool_call', content: 'run_shell {"command":"kubectl logs deploy/payments"}' },
    { id: 'r1', role: 'tool', type: 'tool_result', content: logs(400, FACT, 250) },
    ...Array.from(
      { length: 12 },
      (_, i): ConversationTurn => ({
        id: `u${i}`,
        role: i % 2 ? 'assistant' : 'user',
        type: 'message',
        content: `Unrelated: rename the CSV export column ${i}. ${'Pagination cursor details. '.repeat(40)}`,
      }),
    ),
    { id: 'goal', role: 'user', type: 'message', content: GOAL },
  ];
  const entries = turns.map((turn) => entry(turn));
  const counter = loadCounter('o200k_base');
  const tokens = countEntries(entries, counter).map((t) => t.total);
  const newId = (): string => 'id';
  const prepare = (extra: Partial<PruneRequest>): Promise<PreparedPrune> =>
    preparePrune({
      entries,
      tokens,
      counter,
      policy: { ...policy({ softLimitTokens: 8000, summaryReserveTokens: summaryReserveFor() }), targetTokens: 4000 },
      embedder: new LocalEmbedder(turns.map((t) => t.content)),
      summarizer: new ExtractiveSummarizer(counter),
      eventId: 'e1',
      now: '2026-03-14T10:00:00.000Z',
      newId,
      ...extra,
    });

  test('the same prune as excerpts found by the plan; excerpts found for another goal are not used', async () => {
    const plain = await prepare({});
    assert.ok(plain.plan.excerpted.has(3), 'the log is excerpted');
    const { goal } = planningGoal(entries, undefined);
    assert.equal(goal, GOAL);
    assert.deepEqual(await prepare({ goalExcerpts: await findGoalExcerpts(entries, goal, { index: new TermIndex() }) }), plain);
    assert.deepEqual(await prepare({ goalExcerpts: await findGoalExcerpts(entries, 'another goal about invoices') }), plain);
    // They are used when they are for this goal: none found ahead, none planned.
    const none = await prepare({ goalExcerpts: { goal, excerpts: new Map([[3, undefined]]) } });
    assert.ok(!none.plan.excerpted.has(3));
  });

  test("the excerpts' placeholders are counted ahead (countAlongside, another thread in the CLI) while the turns are ranked: the same prune", async () => {
    const plain = await prepare({});
    const local = new LocalEmbedder(turns.map((t) => t.content));
    let scored = 0;
    const embedder = {
      name: local.name,
      embed: (batch: readonly string[]) => local.embed(batch),
      similarities: (goal: string, texts: readonly string[]) => {
        scored += texts.length;
        return local.similarities(goal, texts);
      },
    };
    const calls: { texts: readonly string[]; rankedMeanwhile: boolean }[] = [];
    const ahead: TextTokenCounter = {
      count: (text) => counter.count(text),
      countAlongside: async (texts, alongside) => {
        const before = scored;
        await alongside();
        calls.push({ texts, rankedMeanwhile: scored > before });
      },
    };
    assert.deepEqual(await prepare({ counter: ahead, embedder }), plain);
    // Three counts ahead: the mask placeholders, then the excerpts' placeholders while the turns are
    // ranked (the only one with work alongside), then the summary.
    assert.deepEqual(
      calls.map((c) => c.rankedMeanwhile),
      [false, true, false],
    );
    assert.ok(calls[0]?.texts.every((t) => /^\[devs-ctx: [\d,]+ tokens of tool output archived; full text: devs-ctx recall --turn \w+\]$/.test(t)));
    assert.equal(calls[2]?.texts.length, 1);
    assert.ok(calls[2]?.texts[0]?.startsWith('[Context Summary]'));
    const whileRanking = calls.filter((c) => c.rankedMeanwhile);
    assert.equal(whileRanking[0]?.texts.length, 1, "the log's excerpt, and only it");
    assert.match(
      whileRanking[0]?.texts[0] ?? '',
      /^\[devs-ctx: [\d,]+ tokens of tool output archived; kept below: \d+ of its \d+ lines, those about the goal; full text: devs-ctx recall --turn r1\]\n/,
    );
  });

  test('everything a prune counts beyond the turns is counted ahead, in a few batches (on a count worker in the CLI): mask placeholders, summary lines, the summary; the same prune', async () => {
    const plain = await prepare({});
    const batches: (readonly string[])[] = [];
    const ahead = new Set<string>();
    const notAhead: string[] = [];
    const recording: TextTokenCounter = {
      count: (text) => {
        if (!ahead.has(text)) notAhead.push(text);
        return counter.count(text);
      },
      countAlongside: async (texts, alongside) => {
        batches.push(texts);
        for (const text of texts) ahead.add(text);
        await alongside();
      },
    };
    const prepared = await prepare({ counter: recording, summarizer: new ExtractiveSummarizer(recording) });
    assert.deepEqual(prepared, plain);
    assert.ok(prepared.summaryText, 'a summary was written');
    assert.deepEqual(notAhead, [], 'nothing counted one by one');
    assert.ok(batches.length <= 5, `${batches.length} batches`);
    const all = batches.flat();
    assert.ok(all.includes(prepared.summaryText ?? ''), 'the summary');
    assert.ok(
      all.some((t) => /^\[devs-ctx: [\d,]+ tokens of tool output archived\b/.test(t) && !t.includes('kept below')),
      'the mask placeholders',
    );
    assert.ok(
      all.some((t) => t.startsWith('\n## ')),
      "the summary's lines with their headings",
    );
  });
});

/** A session whose large log answers the goal, and many turns about something else: written to `dir`/s.jsonl; its text. */
function webhookSession(dir: string): string {
  const lines: Record<string, unknown>[] = [
    { id: 'sys', role: 'system', type: 'system', content: 'You are a coding agent.' },
    { id: 'ask', role: 'user', type: 'message', content: 'The payment webhook retry fails: a redelivered event is processed twice. Look at the logs.' },
    { id: 'c1', role: 'assistant', type: 'tool_call', callId: 'k1', content: 'run_shell {"command":"kubectl logs deploy/payments"}' },
    { id: 'r1', role: 'tool', type: 'tool_result', callId: 'k1', content: logs(400, FACT, 250) },
  ];
  for (let i = 0; i < 12; i++) {
    lines.push({
      id: `u${i}`,
      role: 'user',
      type: 'message',
      content: `Unrelated: rename the CSV export column ${i} and update the report header. ${'Pagination cursor details. '.repeat(40)}`,
    });
    lines.push({
      id: `a${i}`,
      role: 'assistant',
      type: 'message',
      content: `Renamed the report column ${i}. ${'The export stream writes rows as it reads them. '.repeat(40)}`,
    });
  }
  lines.push({ id: 'goal', role: 'user', type: 'message', content: GOAL });
  const original = `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`;
  writeFileSync(join(dir, 's.jsonl'), original);
  return original;
}

describe('prune keeps the excerpt end to end', () => {
  test('the excerpt holds the goal line and the archive pointer; a second prune changes nothing; restore gives the bytes back', () => {
    const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-excerpt-'));
    const env = { DEVS_CTX_ARCHIVE: join(mkdtempSync(join(tmpdir(), 'devs-ctx-excerpt-archive-')), 'archive.sqlite') };
    const original = webhookSession(dir);
    const first = runCli(['prune', 's.jsonl', '--force', '--target', '5k', '-o', 'p.jsonl', '--json'], { cwd: dir, env });
    assert.equal(first.exitCode, 0, first.stderr);
    const pruned = readFileSync(join(dir, 'p.jsonl'), 'utf8');
    const r1 = pruned
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { id: string; content: string })
      .find((l) => l.id === 'r1');
    assert.ok(r1, 'the call stays answered');
    assert.match(
      r1.content,
      /^\[devs-ctx: [\d,]+ tokens of tool output archived; kept below: \d+ of its 400 lines, those about the goal; full text: devs-ctx recall --turn r1\]\n/,
    );
    assert.ok(r1.content.includes(FACT), 'the goal line is kept');
    assert.ok(r1.content.length < logs(400, FACT, 250).length / 4);
    const report = JSON.parse(first.stdout) as { after: { tokens: number } };
    assert.ok(report.after.tokens <= 5000, `after ${report.after.tokens}`);

    const again = runCli(['prune', 'p.jsonl', '--force', '--target', '5k', '--dry-run', '--json'], { cwd: dir, env });
    assert.equal(again.exitCode, 0, again.stderr);
    assert.equal((JSON.parse(again.stdout) as { outcome: string }).outcome, 'no-change');

    const recalled = runCli(['recall', '--turn', 'r1'], { cwd: dir, env });
    assert.equal(recalled.exitCode, 0, recalled.stderr);
    assert.ok(recalled.stdout.includes('delivery=1399'), 'the archive has the whole output');

    const restored = runCli(['restore', 'p.jsonl', '-o', 'r.jsonl'], { cwd: dir, env });
    assert.equal(restored.exitCode, 0, restored.stderr);
    assert.equal(readFileSync(join(dir, 'r.jsonl'), 'utf8'), original);
  });
});

test('--no-archive: the transcript never says the removed text is archived, nor how to recall or restore it; a second prune still reads the masked sizes', () => {
  const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-excerpt-noarchive-'));
  const env = { DEVS_CTX_ARCHIVE: join(dir, 'never.sqlite') };
  webhookSession(dir);
  const first = runCli(['prune', 's.jsonl', '--force', '--target', '5k', '-o', 'p.jsonl', '--no-archive', '--json'], { cwd: dir, env });
  assert.equal(first.exitCode, 0, first.stderr);
  const turns = readFileSync(join(dir, 'p.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { id: string; content: string });
  const summary = turns.find((t) => t.content.startsWith('[Context Summary]'));
  assert.ok(summary, 'a summary');
  const r1 = turns.find((t) => t.id === 'r1');
  assert.match(r1?.content ?? '', /^\[devs-ctx: [\d,]+ tokens of tool output removed, not archived; kept below: \d+ of its 400 lines/);
  for (const turn of [summary, r1]) {
    assert.doesNotMatch(turn?.content ?? '', /(?<!not )archived|recall|restore/, `${turn?.id}: ${turn?.content.slice(0, 300)}`);
  }
  assert.match(summary?.content ?? '', /were removed by devs-ctx and not archived/);
  assert.ok(!existsSync(env.DEVS_CTX_ARCHIVE));
  const again = runCli(['prune', 'p.jsonl', '--force', '--target', '5k', '--dry-run', '--json', '--no-archive'], { cwd: dir, env });
  assert.equal(again.exitCode, 0, again.stderr);
  assert.equal((JSON.parse(again.stdout) as { outcome: string }).outcome, 'no-change');
});

test('a masked tool result dropped by a later prune: recall --turn still gives its whole text, not the placeholder the later prune archived', () => {
  const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-excerpt-twice-'));
  const env = { DEVS_CTX_ARCHIVE: join(dir, 'archive.sqlite') };
  webhookSession(dir);
  assert.equal(runCli(['prune', 's.jsonl', '--force', '--target', '5k', '-o', 'p.jsonl'], { cwd: dir, env }).exitCode, 0);
  const masked = (file: string): string | undefined =>
    readFileSync(join(dir, file), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { id: string; content: string })
      .find((t) => t.id === 'r1')?.content;
  assert.match(masked('p.jsonl') ?? '', /^\[devs-ctx: [\d,]+ tokens of tool output archived/, 'the first prune masked r1');
  // The second prune, with a target it can only reach by dropping r1 (and its call) too.
  const second = runCli(['prune', 'p.jsonl', '--force', '--target', '1k', '-o', 'p2.jsonl', '--strategy', 'recency'], { cwd: dir, env });
  assert.equal(second.exitCode, 0, second.stderr);
  assert.equal(masked('p2.jsonl'), undefined, 'the second prune dropped r1');
  const recalled = runCli(['recall', '--turn', 'r1'], { cwd: dir, env });
  assert.equal(recalled.exitCode, 0, recalled.stderr);
  assert.ok(recalled.stdout.includes('delivery=1399'), `the whole log, not the placeholder:\n${recalled.stdout.slice(0, 400)}`);
});

describe('an excerpt picks its lines from the best few, not from every line sorted', () => {
  test('best(lines, n) is the first n of the lines sorted by score (higher first), then by line (earlier first)', () => {
    const random = seeded(7);
    for (let round = 0; round < 300; round++) {
      const count = Math.floor(random() * 120);
      // Few distinct scores: many ties, broken by the line.
      const lines = Array.from({ length: count }, (_, index) => ({ index, score: Math.floor(random() * 6) / 2 + (random() < 0.1 ? random() : 0) }));
      for (let k = lines.length - 1; k > 0; k--) {
        const j = Math.floor(random() * (k + 1));
        [lines[k], lines[j]] = [lines[j] as (typeof lines)[number], lines[k] as (typeof lines)[number]];
      }
      const sorted = [...lines].sort((a, b) => b.score - a.score || a.index - b.index);
      for (const n of [1, 5, 41, 200]) assert.deepEqual(best(lines, n), sorted.slice(0, n), `round ${round}, n ${n}`);
    }
  });
});

describe('one GoalExcerpts over many texts', () => {
  test('each text gets the excerpt it gets alone: nothing a text counted carries over to the next', () => {
    const random = seeded(11);
    const words = ['parser', 'config', 'alpha', 'beta', 'gamma', 'error', 'retry', 'token', 'cache', 'v2', 'id42', 'delta'];
    const goal = 'fix the parser config retry';
    const shared = new GoalExcerpts(goal);
    for (let t = 0; t < 40; t++) {
      const lines = Array.from({ length: 12 + Math.floor(random() * 60) }, () =>
        Array.from({ length: 1 + Math.floor(random() * 8) }, () => words[Math.floor(random() * words.length)]).join(' '),
      );
      const text = lines.join('\n');
      assert.deepEqual(shared.of(text), goalExcerpt(text, goal), `text ${t}`);
    }
  });
});
