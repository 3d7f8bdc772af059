import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import type { ReplayReport } from '../src/core/reports/replay.js';
import { agentSteps } from '../src/cli/commands/replay.js';
import { countsTowardRefresh } from '../src/core/refresh/decision.js';
import type { ConversationTurn } from '../src/core/turn.js';
import { assertGolden, runCli } from './helpers/cli.js';
import { realdataFiles, realdataName, realdataSkip, repoRoot } from './helpers/realdata.js';

const WEBHOOK = 'fixtures/devs/replay-webhook-session.jsonl';
const SMALL_LIMITS = ['--soft-limit', '6k', '--hard-limit', '10k'];
const replay = (args: readonly string[]): ReplayReport => {
  const result = runCli(['replay', ...args, '--json']);
  assert.equal(result.exitCode, 0, result.stdout + result.stderr);
  assert.equal(result.stderr, '');
  return JSON.parse(result.stdout) as ReplayReport;
};
const turnsOf = (path: string): ConversationTurn[] =>
  readFileSync(join(repoRoot, path), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as ConversationTurn);

describe('devs-ctx replay', () => {
  test('golden: the timeline of a session under small limits', () => {
    const result = runCli(['replay', WEBHOOK, ...SMALL_LIMITS]);
    assert.equal(result.exitCode, 0, result.stderr);
    assertGolden('replay-webhook-session', result);
  });

  test('--json: prunes fire at the soft limit, bring the window to the target, and the hard limit is never reached', () => {
    const r = replay([WEBHOOK, ...SMALL_LIMITS]);
    assert.equal(r.schemaVersion, 1);
    assert.deepEqual(r.limits, { soft: 6000, hard: 10_000, target: 3000, source: 'soft from --soft-limit, hard from --hard-limit' });
    assert.equal(r.turns, 79);
    assert.equal(r.windowTokens.length, r.steps);
    assert.equal(r.peakTokens.length, r.steps);
    const prunes = r.events.filter((e) => e.kind === 'prune');
    assert.equal(prunes.length, r.prunes);
    assert.ok(r.prunes >= 2, `${r.prunes} prunes`);
    for (const p of prunes) {
      assert.ok(p.windowBefore >= 6000, `step ${p.step} pruned at ${p.windowBefore}`);
      assert.ok(p.windowAfter <= 3000, `step ${p.step} pruned to ${p.windowAfter}`);
      assert.equal(p.tokensSaved, p.windowBefore - p.windowAfter);
      assert.equal(r.windowTokens[p.step - 1], p.windowAfter);
    }
    assert.equal(
      r.tokensSaved,
      prunes.reduce((s, p) => s + (p.tokensSaved ?? 0), 0),
    );
    // No prune where none was due: between prunes every window is below the soft limit.
    for (const [i, w] of r.windowTokens.entries()) assert.ok(w < 6000, `step ${i + 1}: ${w}`);
    assert.equal(r.largestWindow.tokens, Math.max(...r.peakTokens));
    assert.equal(r.hardLimitExceeded, false);
    assert.deepEqual(r.stepsOverHardLimit, []);
  });

  test('refreshes fire every 5 turns of a node, as `refresh` counts them, each at most once per step', () => {
    const r = replay([WEBHOOK, ...SMALL_LIMITS]);
    const perNode = new Map<string, number>();
    for (const turn of turnsOf(WEBHOOK)) if (countsTowardRefresh(turn) && turn.node) perNode.set(turn.node, (perNode.get(turn.node) ?? 0) + 1);
    const expected = [...perNode.values()].reduce((sum, n) => sum + Math.floor(n / 5), 0);
    assert.equal(r.refreshes, expected);
    const refreshes = r.events.filter((e) => e.kind === 'refresh');
    assert.deepEqual([...new Set(refreshes.map((e) => e.node))], ['plan', 'implement', 'review']);
    assert.equal(new Set(refreshes.map((e) => e.step)).size, refreshes.length);
    assert.ok(refreshes.every((e) => (e.tokens ?? 0) > 50));
  });

  test('--no-refresh and --threshold', () => {
    const none = replay([WEBHOOK, ...SMALL_LIMITS, '--no-refresh']);
    assert.equal(none.refreshes, 0);
    assert.equal(none.refreshThreshold, null);
    const sparse = replay([WEBHOOK, ...SMALL_LIMITS, '--threshold', '10']);
    assert.equal(sparse.refreshThreshold, 10);
    assert.ok(sparse.refreshes < replay([WEBHOOK, ...SMALL_LIMITS]).refreshes);
  });

  test('pinned turns over the hard limit: every prune is stuck, and the report says the hard limit was exceeded', () => {
    const r = replay(['fixtures/devs/pinned-over-hard-limit.jsonl', '--soft-limit', '500', '--hard-limit', '900']);
    assert.equal(r.hardLimitExceeded, true);
    assert.equal(r.prunes, 0);
    assert.ok(r.events.some((e) => e.kind === 'prune-impossible'));
    assert.equal(r.stepsOverHardLimit[0], r.events.find((e) => e.kind === 'prune-impossible')?.step);
  });

  test('refresh turns already in the transcript are left out (the replay makes its own)', () => {
    const r = replay(['fixtures/devs/refresh-already-injected.jsonl']);
    assert.equal(r.turns, 11);
    assert.match(r.notes.join('\n'), /1 refresh turn\(s\) already in the transcript were left out/);
  });

  test('without a TAS or PRD, refreshes are not simulated, and it says so', () => {
    const r = replay(['fixtures/codex/basic-session.jsonl']);
    assert.equal(r.refreshThreshold, null);
    assert.match(r.notes.join('\n'), /no TAS or PRD/);
  });

  test('bad input and usage', () => {
    assert.equal(runCli(['replay', 'missing.jsonl']).exitCode, 3);
    assert.equal(runCli(['replay', 'fixtures/devs/empty.jsonl']).exitCode, 4);
    assert.equal(runCli(['replay', WEBHOOK, '--threshold', 'x']).exitCode, 2);
    const target = runCli(['replay', WEBHOOK, '--target', '900k', '--json']);
    assert.equal(target.exitCode, 2);
    assert.match(target.stdout, /"exitCode":2/);
  });

  test('agent steps keep a tool call with its results, and parallel calls together', () => {
    const t = (id: string, type: ConversationTurn['type']): ConversationTurn => ({
      id,
      role: type === 'tool_result' ? 'tool' : 'assistant',
      type,
      content: id,
    });
    const steps = agentSteps([
      t('m', 'message'),
      t('c1', 'tool_call'),
      t('c2', 'tool_call'),
      t('r1', 'tool_result'),
      t('r2', 'tool_result'),
      t('m2', 'message'),
      t('c3', 'tool_call'),
      t('r3', 'tool_result'),
    ]);
    assert.deepEqual(
      steps.map((s) => s.map((x) => x.id)),
      [['m'], ['c1', 'c2', 'r1', 'r2'], ['m2'], ['c3', 'r3']],
    );
  });
});

describe('replay on real transcripts', () => {
  const claude = realdataFiles('claude-code').find((p) => p.includes('01-'));
  const codex = realdataFiles('codex').find((p) => p.includes('01-'));
  const rel = (p: string): string => join('..', 'shared', 'realdata', realdataName(p));

  test('golden: a 1 MB Codex rollout under a 60k window, fast', { skip: realdataSkip }, () => {
    const started = Date.now();
    const result = runCli(['replay', rel(codex!), '--window', '60k', '--tas', 'fixtures/devs/saop-refresh-due.jsonl']);
    const elapsed = Date.now() - started;
    assert.equal(result.exitCode, 0, result.stderr);
    assertGolden('replay-realdata-codex', result);
    assert.ok(elapsed < 15_000, `${elapsed} ms`);
  });

  // Windows are in the model's tokens: this session's model sees about 48k before any turn of it.
  test('golden: a 4 MB Claude Code session (walked whole, through its 2 compactions) under a 120k window', { skip: realdataSkip }, () => {
    const result = runCli(['replay', rel(claude!), '--window', '120k']);
    assert.equal(result.exitCode, 0, result.stderr);
    assertGolden('replay-realdata-claude', result);
  });

  test('every real transcript replays, and the window the agent is sent stays under the hard limit', { skip: realdataSkip }, () => {
    // 120k in the model's tokens (soft 60k, hard 96k): above what the agents send before any turn
    // (system prompt, tools: up to ~48k here), below the largest sessions, which must be pruned.
    let pruned = 0;
    for (const path of realdataFiles()) {
      const result = runCli(['replay', rel(path), '--window', '120k', '--json']);
      assert.equal(result.exitCode, 0, `${realdataName(path)}: ${result.stdout}${result.stderr}`);
      const r = JSON.parse(result.stdout) as ReplayReport;
      // The replayed windows stay under, except at a step where no prune could get there: one step whose
      // pinned turns and latest turn alone are over (01, walked whole: a ~49k tool result at step 76).
      const impossible = r.events.filter((e) => e.kind === 'prune-impossible').map((e) => e.step);
      for (const step of r.stepsOverHardLimit) assert.ok(impossible.includes(step), `${realdataName(path)}: step ${step}`);
      if (!realdataName(path).startsWith('claude-code/01-')) assert.deepEqual(r.stepsOverHardLimit, [], realdataName(path));
      // Only a window the agent had before its own compaction (a session not walked whole) may add to it.
      assert.equal(r.hardLimitExceeded, r.stepsOverHardLimit.length > 0 || r.lifetime.overHardLimit, realdataName(path));
      assert.equal(r.windowTokens.length, r.steps);
      pruned += r.prunes;
    }
    assert.ok(pruned > 0, 'some real sessions were pruned');
  });
});
