import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { calibrate, contextSize, fitUsage, toEstimateTokens, toModelTokens } from '../src/core/context-size.js';
import { catalogWindow, modelWindow } from '../src/core/models.js';
import { analyzeContext, forecastAgentCompaction, sessionLimits } from '../src/core/session-context.js';
import { inferGoal, isSubstantiveRequest } from '../src/core/goal.js';
import { resolveSettings } from '../src/core/config.js';
import type { Transcript, TranscriptEntry, UsagePoint } from '../src/core/transcript.js';
import type { ConversationTurn } from '../src/core/turn.js';
import { readTranscript } from '../src/formats/index.js';
import { countEntries } from '../src/core/accounting.js';
import { loadCounter } from '../src/core/tokens/encodings.js';
import { claudeCodeAdapter, claudeCodeWholeLife } from '../src/formats/claude-code/read.js';
import { codexWholeLife } from '../src/formats/codex/read.js';
import { parseDocument } from '../src/io/jsonl.js';
import { runCli } from './helpers/cli.js';
import { realdataDir, realdataSkip } from './helpers/realdata.js';
import { seeded } from './helpers/prng.js';
import { subagentLines } from './helpers/transcripts.js';

const defaults = resolveSettings({ flags: {}, env: {} });
const real = (sub: string): string => join(realdataDir, sub);
const CLAUDE_01 = 'claude-code/01-entire-v2.1.20-compaction+microcompact/70d782f7-b303-4e48-9512-6bec16c37abd.jsonl';
const CODEX_01 = 'codex/01-agentcmd-v0.40.0-vscode/rollout-2025-09-24T19-22-20-01997e76-d124-7592-9cac-2ec05abbca08.jsonl';
const readReal = (sub: string): Transcript => readTranscript(parseDocument(readFileSync(real(sub)), { path: real(sub) }));

function turn(i: number, role: ConversationTurn['role'], content: string, type: ConversationTurn['type'] = 'message'): ConversationTurn {
  return { id: `t${i}`, role, type, content } as ConversationTurn;
}
function entries(n: number): TranscriptEntry[] {
  return Array.from({ length: n }, (_, i) => ({ turn: turn(i, i % 2 === 0 ? 'user' : 'assistant', `turn ${i}`), source: { records: [i] }, blobs: [] }));
}

// ---------------------------------------------------------------------------------------------
// The fit

test('fitUsage recovers a known overhead and scale, and outliers and duplicates do not bend it', () => {
  const random = seeded(7);
  const points: { estimate: number; recorded: number }[] = [];
  let estimate = 2_000;
  for (let i = 0; i < 40; i++) {
    estimate += 500 + Math.floor(random() * 3_000);
    points.push({ estimate, recorded: Math.round(30_000 + 1.35 * estimate) });
  }
  // A microcompaction (the request was smaller than the file says), a doubled record, a wild one.
  points[10] = { estimate: points[10]!.estimate, recorded: Math.round(points[10]!.recorded * 0.6) };
  points.splice(20, 0, { ...points[20]! });
  points[30] = { estimate: points[30]!.estimate, recorded: points[30]!.recorded * 3 };
  const fit = fitUsage(points);
  assert.ok(fit);
  assert.ok(Math.abs(fit.scale - 1.35) < 0.01, `scale ${fit.scale}`);
  assert.ok(Math.abs(fit.overhead - 30_000) < 500, `overhead ${fit.overhead}`);
  assert.ok(fit.medianError < 0.005, `median error ${fit.medianError}`);
  assert.equal(fitUsage(points.slice(0, 3)), null, 'three calls cannot carry a line');
});

/** fitUsage as defined (Theil–Sen over plain arrays): what the typed-array version must give, bit for bit. */
function plainFit(points: readonly { estimate: number; recorded: number }[]) {
  const median = (values: number[]): number => {
    if (values.length === 0) return 0;
    const sorted = [...values].sort((a, b) => a - b);
    const mid = sorted.length >> 1;
    return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
  };
  if (points.length < 4) return null;
  const slopes: number[] = [];
  for (let i = 0; i < points.length; i++) {
    for (let j = i + 1; j < points.length; j++) {
      const dx = (points[j] as { estimate: number }).estimate - (points[i] as { estimate: number }).estimate;
      if (dx !== 0) slopes.push(((points[j] as { recorded: number }).recorded - (points[i] as { recorded: number }).recorded) / dx);
    }
  }
  if (slopes.length < 3) return null;
  const scale = median(slopes);
  if (!(scale >= 0.5 && scale <= 4)) return null;
  const overhead = median(points.map((p) => p.recorded - scale * p.estimate));
  const medianError = median(points.map((p) => Math.abs(overhead + scale * p.estimate - p.recorded) / Math.max(1, p.recorded)));
  return {
    overhead: Math.round(overhead),
    scale: Math.round(scale * 10_000) / 10_000,
    points: points.length,
    medianError: Math.round(medianError * 10_000) / 10_000,
  };
}

test('fitUsage gives what Theil–Sen over plain arrays gives, on seeded random calls (repeated estimates, outliers, 0 to 60 points)', () => {
  const random = seeded(11);
  let fitted = 0;
  for (let round = 0; round < 300; round++) {
    const n = Math.floor(random() * 61);
    const points: { estimate: number; recorded: number }[] = [];
    let estimate = Math.floor(random() * 5_000);
    const scale = 0.4 + random() * 2;
    for (let i = 0; i < n; i++) {
      // Now and then the same estimate twice (no slope between them), or a wild record.
      if (random() > 0.15) estimate += Math.floor(random() * 4_000);
      const recorded = Math.round(20_000 + scale * estimate) * (random() > 0.9 ? random() * 3 : 1);
      points.push({ estimate, recorded });
    }
    const expected = plainFit(points);
    assert.deepEqual(fitUsage(points), expected, `round ${round}`);
    if (expected) fitted++;
  }
  assert.ok(fitted > 100, `${fitted} of the rounds fitted a line`);
});

test('calibrate: a fit with enough calls, else the last record plus the estimate after it, else the estimate', () => {
  const e = entries(20);
  const perEntry = e.map(() => 1_000);
  const usage: UsagePoint[] = [3, 7, 11, 15].map((k) => ({ entriesBefore: k, contextTokens: 20_000 + 1.3 * k * 1_000 }));
  const fitted = calibrate({ entries: e, usage }, perEntry);
  assert.equal(fitted.basis, 'calibrated');
  assert.equal(toModelTokens(fitted, 20_000), 20_000 + 1.3 * 20_000);
  assert.equal(toEstimateTokens(fitted, 46_000), 20_000);

  const few = calibrate({ entries: e, usage: usage.slice(-2) }, perEntry);
  assert.equal(few.basis, 'recorded');
  // The last call saw 15 entries as 39,500 tokens; 5 more entries of 1,000 each follow.
  assert.equal(toModelTokens(few, 20_000), 39_500 + 5_000);

  const none = contextSize({ entries: e }, perEntry);
  assert.deepEqual([none.basis, none.tokens, none.estimate, none.fit], ['estimate', 20_000, 20_000, null]);
  const asked = contextSize({ entries: e, usage }, perEntry, { basis: 'estimate' });
  assert.deepEqual([asked.basis, asked.tokens], ['estimate', 20_000]);
});

test('calls recorded before a prune masked a tool result are read with the result at its archived size', () => {
  const e = entries(20);
  e[5] = { ...e[5]!, turn: turn(5, 'tool', '[devs-ctx: 9,000 tokens of tool output archived; full text: devs-ctx recall --turn t5]', 'tool_result') };
  const perEntry = e.map((_, i) => (i === 5 ? 30 : 1_000));
  // What the calls saw: entry 5 whole (9,000 tokens).
  const seen = (k: number): number => k * 1_000 + (k > 5 ? 8_000 : 0);
  const usage: UsagePoint[] = [2, 4, 8, 12, 16].map((k) => ({ entriesBefore: k, contextTokens: 50_000 + 1.2 * seen(k) }));
  const cal = calibrate({ entries: e, usage }, perEntry);
  assert.equal(cal.basis, 'calibrated');
  assert.equal(cal.scale, 1.2);
  const now = perEntry.reduce((a, b) => a + b, 0);
  assert.equal(toModelTokens(cal, now), 50_000 + 1.2 * now, 'the masked session is sized by what it holds now');
});

test('realdata: a session pruned to a target is at or under it afterwards, and old usage records never call it hard', { skip: realdataSkip }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-real-window-'));
  for (const [name, target] of [
    ['masked', 100_000],
    ['dropped', 80_000],
  ] as const) {
    const out = join(dir, `${name}.jsonl`);
    const prune = runCli([
      'prune',
      real(CLAUDE_01),
      '--target',
      String(target),
      '--summarizer',
      'extractive',
      '--embedder',
      'local',
      '--no-archive',
      '-o',
      out,
      '--json',
    ]);
    assert.equal(prune.exitCode, 0, prune.stdout + prune.stderr);
    const report = JSON.parse(prune.stdout);
    assert.equal(report.limits.target, target, 'the target is in the model tokens');
    assert.equal(report.context.basis, 'calibrated');
    assert.ok(report.after.tokens <= target, `${name}: planned ${report.after.tokens} ≤ ${target}`);
    const after = runCli(['analyze', out, '--json']);
    const analysis = JSON.parse(after.stdout);
    assert.ok(analysis.context.tokens <= target, `${name}: analyze says ${analysis.context.tokens} (${analysis.context.basis}) ≤ ${target}`);
    // Not the plain estimate (too low: no system prompt, another tokenizer): the size the prune planned.
    assert.notEqual(analysis.context.basis, 'estimate', name);
    assert.ok(
      Math.abs(analysis.context.tokens - report.after.tokens) <= report.after.tokens * 0.01,
      `${name}: analyze ${analysis.context.tokens} vs prune ${report.after.tokens}`,
    );
    assert.notEqual(analysis.urgency, 'hard');
    assert.notEqual(analysis.recorded?.urgency, 'hard', 'a stale record is not reported as the size');
    assert.notEqual(after.exitCode, 11);
  }
});

// ---------------------------------------------------------------------------------------------
// Model and window

test('catalog windows come from @pydantic/genai-prices; Claude models in Claude Code default to 200k; records win', () => {
  assert.equal(catalogWindow('claude-sonnet-4-5-20250929'), 200_000);
  assert.equal(catalogWindow('gpt-5.3-codex'), 400_000);
  assert.equal(catalogWindow('no-such-model-xyz'), undefined);
  // The catalog lists claude-opus-4-6 at 1M; Claude Code runs it in 200k unless its records show 1M mode.
  assert.equal(modelWindow({ id: 'claude-opus-4-6', agent: 'claude-code' })?.window, 200_000);
  assert.deepEqual(modelWindow({ id: 'claude-opus-4-6', agent: 'claude-code', recordedWindow: 1_000_000 })?.source, 'recorded');
  assert.equal(modelWindow({ id: 'gpt-5.3-codex', agent: 'codex', recordedWindow: 272_000 })?.window, 272_000);
  assert.equal(modelWindow({ id: 'gpt-5.3-codex', agent: 'codex' })?.window, 400_000);
  assert.equal(modelWindow({ agent: 'codex' }), undefined);
});

test('limits: soft 50 % / hard 80 % of the model window unless set; nothing known keeps the seeds 500k / 800k', () => {
  const found = modelWindow({ id: 'claude-opus-4-5-20251101', agent: 'claude-code' });
  assert.deepEqual((({ soft, hard, source }) => ({ soft, hard, source }))(sessionLimits(defaults, found)), { soft: 100_000, hard: 160_000, source: 'model' });
  assert.deepEqual((({ soft, hard, source }) => ({ soft, hard, source }))(sessionLimits(defaults, undefined)), {
    soft: 500_000,
    hard: 800_000,
    source: 'default',
  });
  const flagged = resolveSettings({ flags: { window: 1_000_000 }, env: {} });
  assert.equal(sessionLimits(flagged, found).source, 'flag');
  assert.equal(sessionLimits(flagged, found).soft, 500_000);
  const env = resolveSettings({ flags: {}, env: { DEVS_SOFT_LIMIT: '1000', DEVS_HARD_LIMIT: '2000' } });
  assert.equal(sessionLimits(env, found).source, 'env');
  const config = resolveSettings({ flags: {}, env: {}, file: { path: 'c.json', config: { window: 300_000 } } });
  assert.equal(sessionLimits(config, found).source, 'config');
});

test('realdata: model and window per format', { skip: realdataSkip }, () => {
  const claude = readReal(CLAUDE_01);
  assert.equal(claude.model?.id, 'claude-opus-4-5-20251101');
  assert.equal(modelWindow(claude.model)?.window, 200_000);
  const codex = readReal(CODEX_01);
  assert.equal(codex.model?.id, 'gpt-5-codex');
  assert.deepEqual([modelWindow(codex.model)?.window, modelWindow(codex.model)?.source], [272_000, 'recorded']);
  const gemini = readReal('gemini/02-entire-legacy-json-pretty-named-jsonl/full.jsonl');
  assert.equal(gemini.model?.id, 'gemini-2.5-flash');
  assert.equal(modelWindow(gemini.model)?.window, 1_048_576);
  assert.equal(readReal('claude-code/06-spotter-v2.1.38-short-smoke/short.jsonl').model?.id, 'claude-opus-4-6');
});

// ---------------------------------------------------------------------------------------------
// analyze

test('realdata: analyze judges a Claude Code session by its calibrated size in its 200k window; --basis estimate is the old answer', {
  skip: realdataSkip,
}, () => {
  const result = runCli(['analyze', real(CLAUDE_01), '--json']);
  const report = JSON.parse(result.stdout);
  assert.equal(report.context.basis, 'calibrated');
  assert.equal(report.context.model, 'claude-opus-4-5-20251101');
  assert.equal(report.context.window, 200_000);
  assert.ok(report.context.fit.points >= MIN_POINTS && report.context.fit.medianError < 0.02);
  assert.ok(report.context.tokens > 2 * report.context.estimate, 'the model sees far more than the estimate');
  assert.deepEqual([report.limits.soft, report.limits.hard, report.limits.source], [100_000, 160_000, 'model']);
  assert.equal(report.urgency, report.context.tokens >= 160_000 ? 'hard' : report.context.tokens >= 100_000 ? 'soft' : 'none');
  assert.equal(result.exitCode, report.urgency === 'hard' ? 11 : report.urgency === 'soft' ? 10 : 0);
  assert.equal(report.urgency, 'soft');
  // Whole life: two automatic compactions, with the sizes Claude Code recorded before them.
  assert.deepEqual(report.lifetime.compactionSizes, [176_700, 157_925]);
  assert.equal(report.lifetime.peak, 176_700);
  assert.equal(report.agentCompaction.at, 167_000);
  assert.ok(report.agentCompaction.turnsLeft > 0);

  const plain = runCli(['analyze', real(CLAUDE_01), '--json', '--basis', 'estimate']);
  const old = JSON.parse(plain.stdout);
  assert.deepEqual([old.context.basis, old.context.tokens, old.urgency, plain.exitCode], ['estimate', old.totalTokens, 'none', 0]);

  const text = runCli(['analyze', real(CLAUDE_01)]).stdout;
  assert.match(text, /Model {5}claude-opus-4-5-20251101 · window 200,000/);
  assert.match(text, /Agent {5}compacts by itself at about 167,000 tokens/);
  assert.match(text, /Lifetime {2}peak 176,700 tokens; 2 compactions \(at 176,700, 157,925\)/);
});
const MIN_POINTS = 4;

test('realdata: the agent compaction forecast matches where Claude Code compacted in the real file', { skip: realdataSkip }, () => {
  const claude = readReal(CLAUDE_01);
  const at = forecastAgentCompaction('claude-code', 200_000, 0, [])?.at ?? 0;
  const auto = (claude.lifetime?.compactions ?? []).filter((c) => c.trigger === 'auto');
  assert.ok(auto.length >= 2);
  for (const c of auto) assert.ok(Math.abs(c.preTokens - at) / at < 0.07, `preTokens ${c.preTokens} vs ${at}`);
  assert.equal(forecastAgentCompaction('codex', 272_000, 0, [])?.at, 244_800);
  assert.equal(forecastAgentCompaction('gemini-cli', 1_000_000, 0, []), null);
  const growing = forecastAgentCompaction('claude-code', 200_000, 100_000, [
    { entriesBefore: 1, contextTokens: 90_000 },
    { entriesBefore: 2, contextTokens: 95_000 },
    { entriesBefore: 3, contextTokens: 100_000 },
  ]);
  assert.deepEqual(growing, { at: 167_000, turnsLeft: Math.ceil(67_000 / 5_000) });
});

test('devs transcripts keep the seeds limits exactly', () => {
  const result = runCli(['analyze', 'fixtures/devs/basic-session.jsonl', '--json']);
  const report = JSON.parse(result.stdout);
  assert.deepEqual(report.limits, { soft: 500_000, hard: 800_000, source: 'default', from: 'default' });
  assert.equal(report.context.basis, 'estimate');
  assert.equal(report.context.tokens, report.totalTokens);
  const session = analyzeContext({ transcript: { entries: [] }, tokens: [], settings: defaults });
  assert.deepEqual([session.limits.soft, session.limits.hard, session.urgency], [500_000, 800_000, 'none']);
});

// ---------------------------------------------------------------------------------------------
// Goal

test('inferGoal takes the latest substantive request, skipping acknowledgements, commands, reminders and IDE context', () => {
  const turns = [
    turn(0, 'user', 'Add a CSV exporter to the billing module with tests'),
    turn(1, 'assistant', 'Done.'),
    turn(2, 'user', 'Make the exporter stream rows instead of buffering them'),
    turn(3, 'assistant', 'ok'),
    turn(4, 'user', 'yes'),
    turn(5, 'user', 'commit this'),
    turn(6, 'user', '<local-command-caveat>Caveat: The messages below were generated by the user while running local commands.</local-command-caveat>'),
    turn(7, 'user', '<command-name>/compact</command-name>\n<command-message>compact</command-message>'),
    turn(8, 'user', '<local-command-stdout>Compacted</local-command-stdout>'),
    turn(9, 'user', '<system-reminder>The TodoWrite tool has not been used recently.</system-reminder>'),
    turn(10, 'user', '<task-notification>Background task finished</task-notification>'),
    turn(11, 'user', '[Request interrupted by user for tool use]'),
    turn(12, 'tool', 'file listing with many words in it', 'tool_result'),
  ];
  assert.deepEqual(inferGoal(turns), { text: 'Make the exporter stream rows instead of buffering them', index: 2, how: 'latest' });
  assert.deepEqual(inferGoal([turn(0, 'user', 'fix it'), turn(1, 'user', 'yes')]), { text: 'fix it', index: 0, how: 'first' });
  assert.equal(inferGoal([turn(0, 'assistant', 'hello')]), undefined);
  const codex =
    '# Context from my IDE setup:\n\n## Active file: src/a.ts\n\n## Open tabs:\n- a.ts\n\n## My request for Codex:\nrename the hook to useTeamMembers everywhere\n';
  assert.equal(inferGoal([turn(0, 'user', codex)])?.text, 'rename the hook to useTeamMembers everywhere');
  assert.equal(isSubstantiveRequest('Sounds good!'), false);
  assert.equal(isSubstantiveRequest('please add the agent name to every log line'), true);
});

test('analyze --json shows the goal a prune would rank by', () => {
  const report = JSON.parse(runCli(['analyze', 'fixtures/devs/basic-session.jsonl', '--json']).stdout);
  assert.deepEqual(report.goal, { text: 'Good. Now REQ-103: stream exports over 10,000 rows.', how: 'latest', turn: 12 });
});

// ---------------------------------------------------------------------------------------------
// Subagents

test('a Claude Code subagent transcript (only sidechain lines) reads its own chain', () => {
  const lines = subagentLines('s', 'Three callers: a.ts, b.ts, c.ts');
  const doc = parseDocument(Buffer.from(`${lines.map((l) => JSON.stringify(l)).join('\n')}\n`), { path: 'agent-a1.jsonl' });
  const t = claudeCodeAdapter.read(doc);
  assert.equal(t.entries.length, 2);
  assert.equal(t.model?.id, 'claude-haiku-4-5-20251001');
  assert.deepEqual(t.usage, [{ entriesBefore: 1, contextTokens: 12_510 }]);
  assert.ok(t.notes.some((n) => n.includes('subagent')));
});

test('--window 200 (no unit, too small for any model) is a usage error naming 200k', () => {
  const result = runCli(['analyze', 'fixtures/devs/basic-session.jsonl', '--window', '200']);
  assert.equal(result.exitCode, 2);
  assert.match(result.stderr, /--window 200: .*did you mean 200k\?/);
  assert.equal(runCli(['analyze', 'fixtures/devs/basic-session.jsonl', '--window', '200k']).exitCode, 0);
});

test('realdata: batch --ndjson rows carry the model, the context size and the whole life', { skip: realdataSkip }, () => {
  const result = runCli(['analyze', join(realdataDir, 'claude-code'), '--ndjson', '--jobs', '1']);
  const rows = result.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l))
    .filter((r) => r.type === 'session' && !r.error);
  const session = rows.find((r) => String(r.file).includes('70d782f7'));
  assert.ok(session);
  assert.equal(session.model, 'claude-opus-4-5-20251101');
  assert.equal(session.window, 200_000);
  assert.equal(session.contextBasis, 'calibrated');
  assert.ok(session.contextTokens > session.totalTokens);
  assert.deepEqual([session.peakTokens, session.compactions], [176_700, 2]);
  assert.equal(session.urgency, 'soft');
});

test('realdata: replay walks the whole file of a Claude Code session that compacted, judging each point by the calibrated size', { skip: realdataSkip }, () => {
  const doc = parseDocument(readFileSync(real(CLAUDE_01)), { path: real(CLAUDE_01) });
  const active = readTranscript(doc).entries;
  const whole = claudeCodeWholeLife(doc);
  // Every chain of the file, joined through the two compact boundaries; the compaction summaries left out.
  assert.ok(whole.length > 3 * active.length, `${whole.length} vs ${active.length}`);
  assert.ok(!whole.some((e) => e.turn.type === 'summary'));
  // It starts before the first compaction (2026-01-28T23:05:14Z); the active chain after the last (03:20 next day).
  assert.ok((whole[0]?.turn.timestamp ?? '') < '2026-01-28T23:05:14Z', whole[0]?.turn.timestamp);
  assert.ok((active[0]?.turn.timestamp ?? '') > '2026-01-29T03:20:00Z', active[0]?.turn.timestamp);
  assert.deepEqual(
    whole.slice(-(active.length - 1)).map((e) => e.turn.id),
    active.filter((e) => e.turn.type !== 'summary').map((e) => e.turn.id),
  );

  const json = runCli(['replay', real(CLAUDE_01), '--json']);
  assert.equal(json.exitCode, 0, json.stderr);
  const report = JSON.parse(json.stdout) as {
    turns: number;
    steps: number;
    notes: string[];
    limits: { soft: number; hard: number };
    events: { kind: string; windowBefore: number }[];
    hardLimitExceeded: boolean;
    stepsOverHardLimit: number[];
    peakTokens: number[];
    lifetime: { peak: number; compactions: number; compactionSizes: number[]; overHardLimit: boolean; wholeFile: boolean };
  };
  assert.equal(report.turns, whole.length);
  assert.ok(
    report.notes.some((n) => n.startsWith(`walked the whole file: ${whole.length} turns through the agent's 2 compactions`)),
    report.notes.join('\n'),
  );
  // Its compact_boundary lines record 176.7k and 158.1k before each compaction, in a 200k window (hard 160k).
  assert.equal(report.limits.hard, 160_000);
  assert.deepEqual(report.lifetime, { peak: 176_700, compactions: 2, compactionSizes: report.lifetime.compactionSizes, overHardLimit: false, wholeFile: true });
  assert.equal(report.lifetime.compactionSizes.length, 2);
  // The turns before the compactions are judged too: the policy prunes there (in the model's tokens, at the soft limit).
  const prunes = report.events.filter((e) => e.kind === 'prune');
  assert.ok(prunes.length >= 3, `${prunes.length} prunes`);
  for (const p of prunes) assert.ok(p.windowBefore >= report.limits.soft, String(p.windowBefore));
  assert.equal(report.peakTokens.length, report.steps);
  assert.deepEqual(report.stepsOverHardLimit, []);
  assert.equal(report.hardLimitExceeded, false);
  const human = runCli(['replay', real(CLAUDE_01)]);
  assert.match(human.stdout, /whole session: the agent compacted 2 times \(at 177k, 158k\); peak 176,700 tokens; replayed through them/);
});

test("realdata: --since/--until in batch analyze use a compacted session's whole time span", { skip: realdataSkip }, () => {
  // The file starts at 2026-01-27T23:13:36Z; its active chain (after the last compaction) at 2026-01-29T03:20Z.
  const span = readReal(CLAUDE_01).lifetime?.span;
  assert.deepEqual(span, { first: '2026-01-27T23:13:36.582Z', last: '2026-01-29T03:37:33.801Z' });
  const early = runCli(['analyze', real(CLAUDE_01), '--ndjson', '--no-cache', '--since', '2026-01-27T23:00Z', '--until', '2026-01-28T12:00Z']);
  const rows = early.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { type: string; firstTimestamp?: string; total?: { outOfRange: number } });
  const session = rows.find((r) => r.type === 'session');
  assert.ok(session, early.stdout);
  assert.equal(session.firstTimestamp, '2026-01-27T23:13:36.582Z');
  assert.equal(rows.find((r) => r.type === 'total')?.total?.outOfRange, 0);
});

/**
 * A Claude Code session whose calls record exactly overhead + scale × the estimate before them
 * (the estimate counted as devs-ctx counts it), `n` user/assistant exchanges long.
 */
function syntheticClaudeSession(n: number, overhead: number, scale: number): string {
  const rand = seeded(14);
  const words = 'payment webhook retry ledger queue worker schema index cache export report token session'.split(' ');
  const text = (k: number): string => Array.from({ length: k }, () => words[Math.floor(rand() * words.length)]).join(' ');
  const lines: Record<string, unknown>[] = [];
  let parent: string | null = null;
  for (let i = 0; i < 2 * n; i++) {
    const uuid = `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
    const base = {
      parentUuid: parent,
      isSidechain: false,
      sessionId: 's1',
      cwd: '/p',
      version: '2.1.20',
      uuid,
      timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
    };
    lines.push(
      i % 2 === 0
        ? { ...base, type: 'user', message: { role: 'user', content: `Please look at this: ${text(200 + Math.floor(rand() * 600))}` } }
        : {
            ...base,
            type: 'assistant',
            requestId: `req_${i}`,
            message: {
              id: `msg_${i}`,
              role: 'assistant',
              model: 'claude-opus-4-5-20251101',
              content: [{ type: 'text', text: text(100 + Math.floor(rand() * 300)) }],
            },
          },
    );
    parent = uuid;
  }
  const jsonl = (): string => `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`;
  const transcript = readTranscript(parseDocument(Buffer.from(jsonl()), { path: 's.jsonl' }));
  const counter = loadCounter('o200k_base');
  const perEntry = countEntries(transcript.entries, counter).map((t) => t.total);
  let before = 0;
  transcript.entries.forEach((entry, k) => {
    const line = lines[entry.source.records[0] ?? -1] as { type: string; message: Record<string, unknown> } | undefined;
    if (line?.type === 'assistant') {
      line.message['usage'] = {
        input_tokens: 3,
        cache_read_input_tokens: Math.round(overhead + scale * before) - 3,
        cache_creation_input_tokens: 0,
        output_tokens: 50,
      };
    }
    before += perEntry[k] ?? 0;
  });
  return jsonl();
}

test('a Claude Code session freshly pruned is sized by the fit from before the prune (recorded on the boundary), at or under its target', () => {
  const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-pruned-size-'));
  const file = join(dir, 's.jsonl');
  writeFileSync(file, syntheticClaudeSession(60, 30_000, 1.3));
  const before = JSON.parse(runCli(['analyze', file, '--json']).stdout);
  assert.equal(before.context.basis, 'calibrated');
  assert.ok(Math.abs(before.context.fit.overhead - 30_000) < 200 && Math.abs(before.context.fit.scale - 1.3) < 0.01, JSON.stringify(before.context.fit));
  const target = 60_000;
  const out = join(dir, 'p.jsonl');
  const prune = runCli(['prune', file, '--force', '--target', String(target), '--no-archive', '-o', out, '--json']);
  assert.equal(prune.exitCode, 0, prune.stderr);
  const report = JSON.parse(prune.stdout);
  assert.ok(report.dropped.turns > 0);
  assert.ok(report.after.tokens <= target);
  const after = JSON.parse(runCli(['analyze', out, '--json']).stdout);
  assert.equal(after.context.basis, 'calibrated', 'not the plain estimate');
  assert.ok(after.context.tokens <= target, `${after.context.tokens} ≤ ${target}`);
  // What the model sees: the overhead and the scale still apply to what is left.
  assert.ok(
    Math.abs(after.context.tokens - (30_000 + 1.3 * after.context.estimate)) < 300,
    `${after.context.tokens} vs ${30_000 + 1.3 * after.context.estimate}`,
  );
  assert.equal(after.context.tokens, report.after.tokens, 'analyze says what prune planned');
  assert.match(runCli(['analyze', out]).stdout, /the calibration from before devs-ctx last pruned it: 1\.3\d* × the estimate/);

  // Once the agent resumes, its own calls win: a new call recording 70,000 is the size.
  const lines = readFileSync(out, 'utf8')
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  const last = lines[lines.length - 1] as { uuid: string; sessionId: string };
  const resumed = [
    {
      parentUuid: last.uuid,
      isSidechain: false,
      sessionId: last.sessionId,
      type: 'user',
      uuid: '10000000-0000-4000-8000-000000000001',
      timestamp: '2099-01-01T00:00:00.000Z',
      message: { role: 'user', content: 'go on' },
    },
    {
      parentUuid: '10000000-0000-4000-8000-000000000001',
      isSidechain: false,
      sessionId: last.sessionId,
      type: 'assistant',
      uuid: '10000000-0000-4000-8000-000000000002',
      timestamp: '2099-01-01T00:00:01.000Z',
      requestId: 'req_new',
      message: {
        id: 'msg_new',
        role: 'assistant',
        model: 'claude-opus-4-5-20251101',
        content: [{ type: 'text', text: 'ok' }],
        usage: { input_tokens: 70_000, cache_read_input_tokens: 0, cache_creation_input_tokens: 0, output_tokens: 1 },
      },
    },
  ];
  writeFileSync(out, `${readFileSync(out, 'utf8')}${resumed.map((l) => JSON.stringify(l)).join('\n')}\n`);
  const later = JSON.parse(runCli(['analyze', out, '--json']).stdout);
  assert.equal(later.context.basis, 'recorded');
  assert.ok(Math.abs(later.context.tokens - 70_000) < 50, `the new call wins: ${later.context.tokens}`);
});

/** A Codex rollout of `n` exchanges that compacts (replacement_history) after `compactAt` of them, with token_count events. */
function codexRollout(n: number, compactAt: number): string {
  const at = (i: number): string => new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString();
  const lines: Record<string, unknown>[] = [
    {
      timestamp: at(0),
      type: 'session_meta',
      payload: { id: 'c1', timestamp: at(0), cwd: '/p', originator: 'codex_cli_rs', cli_version: '0.40.0', instructions: 'You are Codex.' },
    },
    { timestamp: at(0), type: 'turn_context', payload: { cwd: '/p', model: 'gpt-5.3-codex' } },
  ];
  let context = 20_000;
  for (let i = 0; i < n; i++) {
    if (i === compactAt) {
      lines.push({
        timestamp: at(10 * i),
        type: 'compacted',
        payload: {
          message: '',
          replacement_history: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Summary of the work so far: parser fixed.' }] }],
        },
      });
      context = 8_000;
    }
    lines.push({
      timestamp: at(10 * i + 1),
      type: 'response_item',
      payload: { type: 'message', role: 'user', content: [{ type: 'input_text', text: `Step ${i}: fix the parser for case ${i}. ${'details '.repeat(300)}` }] },
    });
    lines.push({
      timestamp: at(10 * i + 2),
      type: 'response_item',
      payload: { type: 'function_call', name: 'shell', arguments: '{"command":["ls"]}', call_id: `call_${i}` },
    });
    lines.push({
      timestamp: at(10 * i + 3),
      type: 'response_item',
      payload: { type: 'function_call_output', call_id: `call_${i}`, output: `${'src/file.ts\n'.repeat(400)}` },
    });
    context += 4_000;
    lines.push({
      timestamp: at(10 * i + 4),
      type: 'event_msg',
      payload: { type: 'token_count', info: { last_token_usage: { input_tokens: context, output_tokens: 100 }, model_context_window: 272_000 } },
    });
    lines.push({
      timestamp: at(10 * i + 5),
      type: 'response_item',
      payload: { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: `Fixed case ${i}.` }] },
    });
  }
  return `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`;
}

test('replay walks the whole file of a Codex session that compacted: the turns before the compaction, its size there', () => {
  const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-codex-whole-'));
  const file = join(dir, 'rollout.jsonl');
  writeFileSync(file, codexRollout(12, 8));
  const doc = parseDocument(readFileSync(file), { path: file });
  const active = readTranscript(doc);
  const whole = codexWholeLife(doc);
  assert.ok(whole.length > active.entries.length + 20, `${whole.length} whole vs ${active.entries.length} active`);
  assert.ok(
    whole.some((e) => e.turn.content.startsWith('Step 0:')),
    'the first request, from before the compaction',
  );
  assert.ok(!whole.some((e) => e.turn.content.startsWith('Summary of the work so far')), 'the compaction summary is left out');
  assert.deepEqual(
    active.lifetime?.compactions.map((c) => c.preTokens),
    [20_000 + 8 * 4_000 + 100],
  );

  const json = runCli(['replay', file, '--window', '60k', '--json']);
  assert.equal(json.exitCode, 0, json.stderr);
  const report = JSON.parse(json.stdout) as {
    turns: number;
    notes: string[];
    events: { kind: string }[];
    lifetime: { compactions: number; compactionSizes: number[]; wholeFile: boolean; peak: number };
  };
  assert.equal(report.turns, whole.length);
  assert.equal(report.lifetime.wholeFile, true);
  assert.equal(report.lifetime.compactions, 1);
  assert.deepEqual(report.lifetime.compactionSizes, [52_100]);
  assert.ok(report.lifetime.peak >= 52_100);
  assert.ok(
    report.notes.some((n) => n.startsWith(`walked the whole file: ${whole.length} turns through the agent's 1 compaction`)),
    report.notes.join('\n'),
  );
  assert.ok(
    report.events.some((e) => e.kind === 'prune'),
    'the turns before the compaction are judged too',
  );
});

test("one limit given: the other is the model window's share, as --help says, not the seeds' 500k/800k", () => {
  // A 200k model: --hard-limit 150k alone failed ("the soft limit (500000, from default) must be below…", exit 2).
  const hardOnly = runCli(['analyze', 'fixtures/claude-code/compact-boundary.jsonl', '--hard-limit', '150k', '--json']);
  assert.equal(hardOnly.exitCode, 0, hardOnly.stdout + hardOnly.stderr);
  const hardReport = JSON.parse(hardOnly.stdout);
  assert.deepEqual([hardReport.limits.soft, hardReport.limits.hard], [100_000, 150_000]);
  // --soft-limit 120k alone: the hard limit is 80 % of the 200k window, not 800k (beyond the window).
  const softOnly = JSON.parse(runCli(['analyze', 'fixtures/claude-code/compact-boundary.jsonl', '--soft-limit', '120k', '--json']).stdout);
  assert.deepEqual([softOnly.limits.soft, softOnly.limits.hard], [120_000, 160_000]);
  // Still a usage error when the given limit and the model's share cross.
  assert.equal(runCli(['analyze', 'fixtures/claude-code/compact-boundary.jsonl', '--soft-limit', '170k']).exitCode, 2);
  // prune (and replay) take the same limits: the default target is half the soft limit, below 150k.
  const prune = runCli(['prune', 'fixtures/claude-code/compact-boundary.jsonl', '--hard-limit', '150k', '--dry-run', '--no-archive', '--json']);
  assert.equal(prune.exitCode, 0, prune.stdout + prune.stderr);
  assert.deepEqual([JSON.parse(prune.stdout).limits.soft, JSON.parse(prune.stdout).limits.hard], [100_000, 150_000]);
  // No model known (devs): the seeds' default fills in, as before.
  const devs = JSON.parse(runCli(['analyze', 'fixtures/devs/basic-session.jsonl', '--soft-limit', '100k', '--json']).stdout);
  assert.deepEqual([devs.limits.soft, devs.limits.hard], [100_000, 800_000]);
});
