import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, linkSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnChild } from './helpers/child.js';
import { assertGolden, cliEnv, runCli } from './helpers/cli.js';
import type { CliResult } from './helpers/cli.js';
import { realdataDir, realdataFiles, realdataName, realdataSkip, repoRoot } from './helpers/realdata.js';

/**
 * `devs-ctx prune`, `restore` and `recall` end to end, through the built binary [SPEC §2, §3, §6, §8].
 * Every run gets its own archive in a temp dir (DEVS_CTX_ARCHIVE), so nothing touches the user's home.
 */

// 17 turns, ~2.2k tokens: over the soft limit (2,000) of --window 4000, under its hard limit (3,200).
// Its reasoning turn r2 holds the word "marmalade-heron" and is among the turns a prune drops.
const OVER_SOFT = 'fixtures/devs/over-soft-limit.jsonl';
const WINDOW = ['--window', '4000'];
// A system prompt of ~1k tokens: pinned turns alone above the hard limit of --window 1000.
const PINNED_OVER_HARD = 'fixtures/devs/pinned-over-hard-limit.jsonl';
// Three candidates of one or two tokens each: no summary can be smaller than them.
const TINY_CANDIDATES = 'fixtures/devs/tiny-candidates.jsonl';
const SUMMARY_PREFIX = '[Context Summary]';
const bin = join(repoRoot, 'bin', 'devs-ctx.js');

interface DevsLine {
  readonly id: string;
  readonly role: string;
  readonly type: string;
  readonly content: string;
  readonly callId?: string;
}

interface PruneEvent {
  readonly event: string;
  readonly removedTurnCount: number;
  readonly tokensSaved: number;
  readonly newTotal: number;
}

interface PruneJson {
  readonly schemaVersion: number;
  readonly format: string;
  readonly dryRun: boolean;
  readonly outcome: 'pruned' | 'no-change';
  readonly reason?: string;
  readonly urgency: string;
  readonly limits: { readonly soft: number; readonly hard: number; readonly target: number };
  readonly context?: { readonly estimate: { readonly before: number; readonly after: number; readonly target: number } };
  readonly before: { readonly turns: number; readonly tokens: number };
  readonly after: { readonly turns: number; readonly tokens: number };
  readonly reachedTarget: boolean;
  readonly event: PruneEvent | null;
  readonly dropped: { readonly turns: number; readonly tokens: number };
  readonly masked: { readonly turns: number; readonly tokensSaved: number };
  readonly summary: { readonly tokens: number; readonly text: string } | null;
  readonly archive: { readonly path: string; readonly eventId: string } | null;
  readonly output: string | null;
  readonly actions: readonly {
    readonly kind: 'mask' | 'drop';
    readonly turns: readonly { readonly id: string; readonly type: string; readonly tokens: number }[];
    readonly tokensSaved: number;
  }[];
}

interface AnalyzeJson {
  readonly format: string;
  readonly context: { readonly tokens: number };
  readonly totalTokens: number;
  readonly perTurn: readonly { readonly id: string; readonly tokens: number }[];
}

interface ErrorJson {
  readonly schemaVersion: number;
  readonly error: { readonly code: string; readonly exitCode: number; readonly message: string };
}

/** A fresh temp directory with its own (not yet existing) archive. */
function workspace(prefix: string): { dir: string; archive: string; env: Record<string, string> } {
  const dir = mkdtempSync(join(tmpdir(), `devs-ctx-${prefix}-`));
  const archiveDir = mkdtempSync(join(tmpdir(), `devs-ctx-${prefix}-archive-`));
  const archive = join(archiveDir, 'archive.sqlite');
  return { dir, archive, env: { DEVS_CTX_ARCHIVE: archive } };
}

/** Copies a fixture into `dir` under `name` and returns its path. */
function copyFixture(fixture: string, dir: string, name = 's.jsonl'): string {
  const path = join(dir, name);
  copyFileSync(join(repoRoot, fixture), path);
  return path;
}

function parseLines(bytes: Buffer | string): DevsLine[] {
  return bytes
    .toString()
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as DevsLine);
}

function rawLines(bytes: Buffer | string): string[] {
  return bytes
    .toString()
    .split('\n')
    .filter((line) => line !== '');
}

function json<T>(result: CliResult): T {
  return JSON.parse(result.stdout) as T;
}

function analyze(path: string, env: Record<string, string>, flags: readonly string[] = []): AnalyzeJson {
  const result = runCli(['analyze', path, '--json', ...flags], { env });
  assert.ok([0, 10, 11].includes(result.exitCode), `analyze ${path}: exit ${result.exitCode}: ${result.stdout}${result.stderr}`);
  return json<AnalyzeJson>(result);
}

/** Every tool result in a native transcript answers a tool call that is also there, and the other way round. */
function assertToolPairsWhole(lines: readonly DevsLine[], label: string): void {
  const calls = new Set(lines.filter((l) => l.type === 'tool_call' && l.callId !== undefined).map((l) => l.callId));
  const results = new Set(lines.filter((l) => l.type === 'tool_result' && l.callId !== undefined).map((l) => l.callId));
  for (const id of results) assert.ok(calls.has(id), `${label}: tool result for ${id} has no tool call`);
  for (const id of calls) assert.ok(results.has(id), `${label}: tool call ${id} has no result`);
}

/** Files in `dir` other than the ones named: a temp file or a lock left behind shows up here. */
function strayFiles(dir: string, expected: readonly string[]): string[] {
  return readdirSync(dir).filter((name) => !expected.includes(name));
}

const fixtureBytes = (fixture: string): Buffer => readFileSync(join(repoRoot, fixture));
const fixtureLines = (fixture: string): DevsLine[] => parseLines(fixtureBytes(fixture));

describe('prune --dry-run', () => {
  test('prints the plan table and writes nothing: the file, its folder and the archive stay as they were', () => {
    const { dir, archive, env } = workspace('dry');
    const path = copyFixture(OVER_SOFT, dir);
    const result = runCli(['prune', 's.jsonl', '--dry-run', ...WINDOW], { cwd: dir, env });
    assert.equal(result.exitCode, 0, result.stderr);
    assert.equal(result.stderr, '');
    assert.match(result.stdout, /would prune 2,211 → [\d,]+ tokens \(estimate\)/);
    assert.match(result.stdout, /dry run: nothing was written/);
    assert.ok(readFileSync(path).equals(fixtureBytes(OVER_SOFT)));
    assert.deepEqual(strayFiles(dir, ['s.jsonl']), []);
    assert.equal(existsSync(archive), false, 'a dry run opens no archive');
  });

  test('golden: the human plan for the over-soft-limit fixture', () => {
    const { env } = workspace('dry-golden');
    assertGolden('prune-dry-run', runCli(['prune', OVER_SOFT, '--dry-run', ...WINDOW], { env }));
  });

  test('the same input and flags give the same plan every run', () => {
    // A plan is a pure function of the transcript and the policy [STYLE: plan, then apply]; the
    // estimate must not depend on the random id of an event a dry run never records.
    const { env } = workspace('dry-repeat');
    const outputs = new Set<string>();
    for (let run = 0; run < 6; run++) outputs.add(runCli(['prune', OVER_SOFT, '--dry-run', ...WINDOW], { env }).stdout);
    assert.equal(outputs.size, 1, `dry runs disagree:\n${[...outputs].join('\n----\n')}`);
  });

  test('--json: one report (schemaVersion 1) whose actions spare pinned turns, the tail and tool pairs', () => {
    const { archive, env } = workspace('dry-json');
    const result = runCli(['prune', OVER_SOFT, '--dry-run', '--json', ...WINDOW], { env });
    assert.equal(result.exitCode, 0, result.stdout);
    assert.equal(result.stderr, '');
    const report = json<PruneJson>(result);
    const input = fixtureLines(OVER_SOFT);
    assert.equal(report.schemaVersion, 1);
    assert.equal(report.format, 'devs');
    assert.equal(report.dryRun, true);
    assert.equal(report.outcome, 'pruned');
    assert.equal(report.urgency, 'soft');
    assert.deepEqual(report.limits, { soft: 2000, hard: 3200, target: 1000 });
    assert.equal(report.before.turns, input.length);
    assert.equal(report.before.tokens, analyze(OVER_SOFT, env).totalTokens);
    assert.equal(report.archive, null);
    assert.equal(report.output, null);
    assert.equal(existsSync(archive), false);
    // The event a dry run reports is the estimate of the one a real prune would emit [SPEC §6].
    assert.ok(report.event);
    assert.deepEqual(Object.keys(report.event).sort(), ['event', 'newTotal', 'removedTurnCount', 'tokensSaved']);
    assert.equal(report.event.event, 'context_pruned');
    assert.equal(report.event.removedTurnCount, report.dropped.turns);
    assert.equal(report.event.newTotal, report.after.tokens);
    assert.equal(report.event.tokensSaved, report.before.tokens - report.after.tokens);
    assert.ok(report.after.tokens <= report.limits.target && report.reachedTarget);
    assert.ok(report.summary?.text.startsWith(SUMMARY_PREFIX));

    const byId = new Map(input.map((line, i) => [line.id, { line, i }]));
    const tail = new Set(input.slice(-5).map((l) => l.id));
    const dropped = report.actions.filter((a) => a.kind === 'drop').flatMap((a) => a.turns.map((t) => t.id));
    assert.equal(dropped.length, report.dropped.turns);
    assert.ok(dropped.includes('r2'), 'the fixture is built so that r2 (which holds "marmalade-heron") is dropped');
    for (const action of report.actions) {
      for (const turn of action.turns) {
        const found = byId.get(turn.id);
        assert.ok(found, `action names unknown turn ${turn.id}`);
        assert.ok(found.i >= 2 && found.line.type !== 'system' && found.line.type !== 'prd', `pinned turn ${turn.id} in the plan`);
        assert.ok(!tail.has(turn.id), `protected tail turn ${turn.id} in the plan under soft urgency`);
      }
      if (action.kind !== 'drop') continue;
      // A call and its result move together.
      const callIds = new Set(action.turns.map((t) => byId.get(t.id)?.line.callId).filter((c) => c !== undefined));
      for (const line of input) {
        if (line.callId !== undefined && callIds.has(line.callId))
          assert.ok(
            action.turns.some((t) => t.id === line.id),
            `${line.id} left behind by its pair`,
          );
      }
    }
  });

  test("--json: the actions' savings add up to the tokens the plan removes", () => {
    // Each action's tokensSaved is what it takes out of the window; together they are the
    // difference between the window before and after, the summary aside.
    const { env } = workspace('dry-sum');
    const report = json<PruneJson>(runCli(['prune', OVER_SOFT, '--dry-run', '--json', ...WINDOW], { env }));
    const removed = report.before.tokens - (report.after.tokens - (report.summary?.tokens ?? 0));
    const perAction = report.actions.map((a) => `${a.kind} ${a.turns.map((t) => `${t.id}(${t.tokens})`).join('+')}: ${a.tokensSaved}`);
    assert.equal(
      report.actions.reduce((sum, a) => sum + a.tokensSaved, 0),
      removed,
      perAction.join('\n'),
    );
    for (const action of report.actions.filter((a) => a.kind === 'drop')) {
      assert.equal(
        action.tokensSaved,
        action.turns.reduce((sum, t) => sum + t.tokens, 0),
        `a dropped unit saves all its tokens: ${perAction.join('; ')}`,
      );
    }
  });
});

describe('prune -o OUT', () => {
  test('a new output file gets the mode a shell redirect would: 0666 less the umask (0600 under umask 077)', () => {
    const { dir, env } = workspace('out-umask');
    copyFixture(OVER_SOFT, dir);
    const run = (umask: string, args: readonly string[]): void => {
      const result = spawnSync('/bin/sh', ['-c', `umask ${umask} && exec "$0" "$@"`, process.execPath, bin, ...args], {
        cwd: dir,
        env: cliEnv(env),
        encoding: 'utf8',
      });
      assert.equal(result.status, 0, result.stderr);
    };
    for (const [umask, mode] of [
      ['077', 0o600],
      ['022', 0o644],
    ] as const) {
      run(umask, ['prune', 's.jsonl', '-o', `p-${umask}.jsonl`, ...WINDOW]);
      run(umask, ['restore', `p-${umask}.jsonl`, '-o', `r-${umask}.jsonl`]);
      for (const name of [`p-${umask}.jsonl`, `r-${umask}.jsonl`]) assert.equal(statSync(join(dir, name)).mode & 0o777, mode, `${name} under umask ${umask}`);
    }
  });

  test('--json: one JSON document, a valid pruned transcript under the target, the event consistent with it', () => {
    const { dir, archive, env } = workspace('out');
    const input = copyFixture(OVER_SOFT, dir);
    const out = join(dir, 'out.jsonl');
    const result = runCli(['prune', input, '-o', out, '--json', ...WINDOW], { env });
    assert.equal(result.exitCode, 0, result.stdout);
    assert.equal(result.stderr, '', 'stderr is empty in --json mode');
    assert.ok(result.stdout.endsWith('}\n'));
    const report = json<PruneJson>(result);
    assert.ok(readFileSync(input).equals(fixtureBytes(OVER_SOFT)), '-o leaves the input alone');

    const after = analyze(out, env, WINDOW);
    assert.equal(after.format, 'devs');
    assert.ok(after.totalTokens <= report.limits.target, `${after.totalTokens} > target ${report.limits.target}`);

    const original = rawLines(fixtureBytes(OVER_SOFT));
    const written = rawLines(readFileSync(out));
    // Pinned turns (system prompt, PRD) byte for byte, at the top.
    assert.equal(written[0], original[0]);
    assert.equal(written[1], original[1]);
    const lines = parseLines(readFileSync(out));
    const summaries = lines.filter((l) => l.content.startsWith(SUMMARY_PREFIX));
    assert.equal(summaries.length, 1, 'exactly one summary turn');
    assert.equal(summaries[0]?.content, report.summary?.text);
    assertToolPairsWhole(lines, 'out.jsonl');
    // Kept turns are the input's lines untouched; removed ones are gone.
    const keptIds = new Set(lines.map((l) => l.id));
    for (const line of original) {
      const { id } = JSON.parse(line) as DevsLine;
      if (keptIds.has(id)) assert.ok(written.includes(line), `kept turn ${id} changed`);
    }
    const removed = fixtureLines(OVER_SOFT).filter((l) => !keptIds.has(l.id));
    assert.ok(removed.some((l) => l.id === 'r2'));

    assert.ok(report.event);
    assert.equal(report.event.event, 'context_pruned');
    assert.equal(report.event.removedTurnCount, removed.length);
    assert.equal(report.event.newTotal, after.totalTokens);
    assert.equal(report.after.tokens, after.totalTokens);
    assert.equal(report.event.tokensSaved, report.before.tokens - report.after.tokens);
    assert.equal(report.after.turns, lines.length);
    assert.equal(report.output, out);
    assert.equal(report.archive?.path, archive);
    assert.ok(existsSync(archive));
    assert.deepEqual(strayFiles(dir, ['s.jsonl', 'out.jsonl']), []);
  });

  test('the dry run plans what the real prune then does', () => {
    const { dir, env } = workspace('out-vs-dry');
    const plan = json<PruneJson>(runCli(['prune', OVER_SOFT, '--dry-run', '--json', ...WINDOW], { env }));
    const done = json<PruneJson>(runCli(['prune', OVER_SOFT, '-o', join(dir, 'out.jsonl'), '--json', ...WINDOW], { env }));
    const turnsOf = (r: PruneJson) => r.actions.map((a) => `${a.kind}:${a.turns.map((t) => t.id).join('+')}`);
    assert.deepEqual(turnsOf(done), turnsOf(plan));
  });

  test('the human report goes to stdout when the transcript goes to a file', () => {
    const { dir, env } = workspace('out-human');
    copyFixture(OVER_SOFT, dir);
    const result = runCli(['prune', 's.jsonl', '-o', 'out.jsonl', ...WINDOW], { cwd: dir, env });
    assert.equal(result.exitCode, 0, result.stderr);
    assert.equal(result.stderr, '');
    assert.match(result.stdout, /^s\.jsonl \(devs\): pruned 2,211 → [\d,]+ tokens \(target 1,000, urgency soft\)$/m);
    // The hint names the file the restore reads: the pruned one.
    const hint = /undo with: (devs-ctx restore \S+)$/m.exec(result.stdout)?.[1];
    assert.equal(hint, 'devs-ctx restore out.jsonl');
    assert.match(result.stdout, /written to out\.jsonl/);
    const undone = runCli(['restore', 'out.jsonl', '-o', 'back.jsonl'], { cwd: dir, env });
    assert.equal(undone.exitCode, 0, undone.stderr);
    assert.ok(readFileSync(join(dir, 'back.jsonl')).equals(readFileSync(join(dir, 's.jsonl'))));
  });

  test('the undo hint of a transcript pruned to stdout names no file of its own', () => {
    const { dir, env } = workspace('out-stdout');
    copyFixture(OVER_SOFT, dir);
    const result = runCli(['prune', 's.jsonl', ...WINDOW], { cwd: dir, env });
    assert.equal(result.exitCode, 0, result.stderr);
    assert.match(result.stderr, /undo with: devs-ctx restore FILE \(the file you saved the pruned transcript to\)$/m);
  });
});

describe('prune when nothing is due', () => {
  test('urgency none: stdout is the input byte for byte, exit 0, the report on stderr', () => {
    const { archive, env } = workspace('none');
    const result = runCli(['prune', OVER_SOFT], { env });
    assert.equal(result.exitCode, 0, result.stderr);
    assert.equal(result.stdout, fixtureBytes(OVER_SOFT).toString());
    assert.match(result.stderr, /nothing to prune; urgency none/);
    assert.equal(existsSync(archive), false, 'nothing pruned, nothing archived');
  });

  test('golden: urgency none with -o writes the input unchanged and says so', () => {
    const { dir, env } = workspace('none-golden');
    copyFixture(OVER_SOFT, dir);
    const result = runCli(['prune', 's.jsonl', '-o', 'out.jsonl'], { cwd: dir, env });
    assertGolden('prune-urgency-none', result);
    assert.ok(readFileSync(join(dir, 'out.jsonl')).equals(fixtureBytes(OVER_SOFT)));
  });

  test('--json without --force reports no-change; --force with a low --target prunes to it', () => {
    const { dir, env } = workspace('force');
    const out = join(dir, 'out.jsonl');
    const lazy = json<PruneJson>(runCli(['prune', OVER_SOFT, '--target', '900', '-o', out, '--json'], { env }));
    assert.equal(lazy.outcome, 'no-change');
    assert.match(lazy.reason ?? '', /urgency none/);
    assert.equal(lazy.event, null);
    assert.ok(readFileSync(out).equals(fixtureBytes(OVER_SOFT)));

    const forced = runCli(['prune', OVER_SOFT, '--force', '--target', '900', '-o', out, '--json'], { env });
    assert.equal(forced.exitCode, 0, forced.stdout);
    const report = json<PruneJson>(forced);
    assert.equal(report.outcome, 'pruned');
    assert.equal(report.urgency, 'none');
    assert.equal(report.limits.target, 900);
    const after = analyze(out, env);
    assert.ok(after.totalTokens <= 900, `${after.totalTokens} tokens after a forced prune to 900`);
    assert.equal(report.event?.newTotal, after.totalTokens);
    assertToolPairsWhole(parseLines(readFileSync(out)), 'forced');
  });
});

describe('prune --in-place', () => {
  test('replaces the file, keeps its mode, leaves no temp file and no lock', () => {
    const { dir, env } = workspace('inplace');
    const path = copyFixture(OVER_SOFT, dir);
    chmodSync(path, 0o600);
    const result = runCli(['prune', 's.jsonl', '--in-place', '--json', ...WINDOW], { cwd: dir, env });
    assert.equal(result.exitCode, 0, result.stdout);
    assert.equal(result.stderr, '');
    const report = json<PruneJson>(result);
    assert.equal(report.outcome, 'pruned');
    assert.equal(statSync(path).mode & 0o777, 0o600);
    assert.deepEqual(strayFiles(dir, ['s.jsonl']), []);
    const after = analyze(path, env, WINDOW);
    assert.equal(after.totalTokens, report.after.tokens);
    assert.ok(after.totalTokens <= 1000);
    assert.equal(parseLines(readFileSync(path)).filter((l) => l.content.startsWith(SUMMARY_PREFIX)).length, 1);
  });

  test('a lock held by a live process is exit 7; the file and the lock stay', () => {
    const { dir, archive, env } = workspace('locked');
    const path = copyFixture(OVER_SOFT, dir);
    const lock = `${path}.devs-ctx.lock`;
    writeFileSync(lock, `${process.pid}\n`);
    const result = runCli(['prune', 's.jsonl', '--in-place', ...WINDOW], { cwd: dir, env });
    assert.equal(result.exitCode, 7, result.stderr);
    assert.match(result.stderr, new RegExp(`locked by another devs-ctx \\(pid ${process.pid}\\)`));
    assert.ok(readFileSync(path).equals(fixtureBytes(OVER_SOFT)));
    assert.equal(readFileSync(lock, 'utf8'), `${process.pid}\n`, 'the other process keeps its lock');
    assert.equal(existsSync(archive), false);
    const asJson = runCli(['prune', 's.jsonl', '--in-place', '--json', ...WINDOW], { cwd: dir, env });
    assert.equal(asJson.exitCode, 7);
    assert.equal(json<ErrorJson>(asJson).error.exitCode, 7);
  });

  test('a stale lock (its process has exited) is taken over', () => {
    const { dir, env } = workspace('stale');
    const path = copyFixture(OVER_SOFT, dir);
    const gone = spawnSync(process.execPath, ['-e', '']);
    assert.ok(gone.pid > 0);
    writeFileSync(`${path}.devs-ctx.lock`, `${gone.pid}\n`);
    const result = runCli(['prune', 's.jsonl', '--in-place', ...WINDOW], { cwd: dir, env });
    assert.equal(result.exitCode, 0, result.stderr);
    assert.ok(!readFileSync(path).equals(fixtureBytes(OVER_SOFT)), 'pruned');
    assert.deepEqual(strayFiles(dir, ['s.jsonl']), [], 'the lock is removed afterwards');
  });
});

describe('prune exit codes', () => {
  test('2: usage errors, nothing on stdout, the input untouched', () => {
    const { dir, env } = workspace('usage');
    const path = copyFixture(OVER_SOFT, dir);
    const table: Array<[string[], RegExp]> = [
      [['prune', 's.jsonl', '--json'], /--json prints the report on stdout/],
      [['prune', '-', '--in-place'], /--in-place needs a file/],
      [['prune', 's.jsonl', '--target', 'lots'], /--target lots/],
      [['prune', 's.jsonl', '--target', '0'], /--target 0/],
      [['prune', 's.jsonl', ...WINDOW, '--target', '5000'], /not below the hard limit \(3200\)/],
      [['prune', 's.jsonl', '--strategy', 'newest'], /newest/],
      [['prune', 's.jsonl', '--in-place', '-o', 'out.jsonl'], /cannot be used together/],
      [['prune', 's.jsonl', '--dry-run', '-o', 'out.jsonl'], /--dry-run writes nothing/],
      [['prune', 's.jsonl', '-o', 's.jsonl'], /-o names the input file/],
    ];
    for (const [args, message] of table) {
      const result = runCli(args, { cwd: dir, env, input: fixtureBytes(OVER_SOFT) });
      const label = args.join(' ');
      assert.equal(result.exitCode, 2, `${label}: ${result.stdout}${result.stderr}`);
      if (args.includes('--json')) {
        const error = json<ErrorJson>(result);
        assert.equal(error.error.exitCode, 2);
        assert.match(error.error.message, message, label);
        assert.equal(result.stderr, '');
      } else {
        assert.equal(result.stdout, '', label);
        assert.match(result.stderr, message, label);
      }
    }
    assert.ok(readFileSync(path).equals(fixtureBytes(OVER_SOFT)));
    assert.deepEqual(strayFiles(dir, ['s.jsonl']), []);
  });

  test('3: a missing file, and -o into a folder that does not exist (input untouched, no temp file, nothing archived)', () => {
    const { dir, archive, env } = workspace('input');
    const path = copyFixture(OVER_SOFT, dir);
    const missing = runCli(['prune', 'no-such.jsonl', ...WINDOW], { cwd: dir, env });
    assert.equal(missing.exitCode, 3);
    assert.match(missing.stderr, /no-such\.jsonl: no such file/);
    const unwritable = runCli(['prune', 's.jsonl', '-o', 'nowhere/out.jsonl', ...WINDOW], { cwd: dir, env });
    assert.equal(unwritable.exitCode, 3, unwritable.stderr);
    assert.match(unwritable.stderr, /nowhere\/out\.jsonl: cannot write/);
    assert.equal(unwritable.stdout, '');
    assert.equal(existsSync(archive), false, 'a prune that cannot be written is not archived');
    assert.ok(readFileSync(path).equals(fixtureBytes(OVER_SOFT)));
    assert.deepEqual(strayFiles(dir, ['s.jsonl']), []);
  });

  test('4: an empty file and binary junk', () => {
    const { dir, env } = workspace('invalid');
    writeFileSync(join(dir, 'junk.jsonl'), Buffer.from([0x00, 0xff, 0x13, 0x37, 0x0a, 0x89, 0x50, 0x4e, 0x47, 0x00]));
    for (const [file, message] of [
      [join(repoRoot, 'fixtures/devs/empty.jsonl'), /empty/],
      ['junk.jsonl', /nothing in it parses/],
    ] as const) {
      const result = runCli(['prune', file, '--force', '--in-place'], { cwd: dir, env });
      assert.equal(result.exitCode, 4, `${file}: ${result.stderr}`);
      assert.match(result.stderr, message);
    }
    assert.deepEqual(strayFiles(dir, ['junk.jsonl']), [], 'no lock left behind');
  });

  test('6: pinned turns alone above the hard limit: nothing written, nothing archived', () => {
    const { dir, archive, env } = workspace('impossible');
    const path = copyFixture(PINNED_OVER_HARD, dir);
    const flags = ['--window', '1000'];
    const toFile = runCli(['prune', 's.jsonl', '-o', 'out.jsonl', ...flags], { cwd: dir, env });
    assert.equal(toFile.exitCode, 6, toFile.stderr);
    assert.match(toFile.stderr, /nothing was written/);
    assert.equal(toFile.stdout, '');
    const inPlace = runCli(['prune', 's.jsonl', '--in-place', '--json', ...flags], { cwd: dir, env });
    assert.equal(inPlace.exitCode, 6);
    assert.equal(json<ErrorJson>(inPlace).error.code, 'budget_impossible');
    assert.ok(readFileSync(path).equals(fixtureBytes(PINNED_OVER_HARD)));
    assert.deepEqual(strayFiles(dir, ['s.jsonl']), []);
    assert.equal(existsSync(archive), false);
  });

  test('6: the message states what the pinned turns and the latest turn come to', () => {
    const { env } = workspace('impossible-message');
    const result = runCli(['prune', PINNED_OVER_HARD, '--window', '1000', '--dry-run'], { env });
    assert.equal(result.exitCode, 6);
    const claimed = Number(/alone come to (\d+) tokens/.exec(result.stderr)?.[1]);
    const perTurn = analyze(PINNED_OVER_HARD, env).perTurn;
    const lines = fixtureLines(PINNED_OVER_HARD);
    const pinnedAndLatest = perTurn
      .filter((t) => t.id === lines[0]?.id || t.id === lines[1]?.id || t.id === lines.at(-1)?.id)
      .reduce((sum, t) => sum + t.tokens, 0);
    assert.equal(claimed, pinnedAndLatest, result.stderr);
  });

  test('5: a summary that cannot be smaller than what it replaces: nothing written, nothing archived', () => {
    const { dir, archive, env } = workspace('summary');
    const path = copyFixture(TINY_CANDIDATES, dir);
    const result = runCli(['prune', 's.jsonl', '--force', '--target', '10', '--in-place'], { cwd: dir, env });
    assert.equal(result.exitCode, 5, result.stderr);
    assert.match(result.stderr, /summary/);
    assert.match(result.stderr, /nothing was written/);
    const toFile = runCli(['prune', 's.jsonl', '--force', '--target', '10', '-o', 'out.jsonl', '--json'], { cwd: dir, env });
    assert.equal(toFile.exitCode, 5);
    assert.equal(json<ErrorJson>(toFile).error.exitCode, 5);
    assert.ok(readFileSync(path).equals(fixtureBytes(TINY_CANDIDATES)));
    assert.deepEqual(strayFiles(dir, ['s.jsonl']), []);
    assert.equal(existsSync(archive), false);
  });
});

describe('restore', () => {
  test('after prune --in-place and two appended lines, restore --in-place gives the original plus those lines', () => {
    const { dir, env } = workspace('restore');
    const path = copyFixture(OVER_SOFT, dir);
    assert.equal(runCli(['prune', 's.jsonl', '--in-place', ...WINDOW], { cwd: dir, env }).exitCode, 0);
    const appended =
      '{"id":"x1","role":"user","type":"message","content":"Also log the unmatched count."}\n' +
      '{"id":"x2","role":"assistant","type":"message","content":"Logged at info level."}\n';
    writeFileSync(path, Buffer.concat([readFileSync(path), Buffer.from(appended)]));
    const result = runCli(['restore', 's.jsonl', '--in-place'], { cwd: dir, env });
    assert.equal(result.exitCode, 0, result.stderr);
    assert.match(result.stdout, /with \d+ bytes appended since kept at the end/);
    assert.ok(readFileSync(path).equals(Buffer.concat([fixtureBytes(OVER_SOFT), Buffer.from(appended)])));
    assert.deepEqual(strayFiles(dir, ['s.jsonl']), []);
  });

  test('a file changed in the middle is exit 4 and stays as it is', () => {
    const { dir, env } = workspace('restore-changed');
    const path = copyFixture(OVER_SOFT, dir);
    assert.equal(runCli(['prune', 's.jsonl', '--in-place', ...WINDOW], { cwd: dir, env }).exitCode, 0);
    const pruned = readFileSync(path, 'utf8');
    const changed = pruned.replace('Implement REQ-201', 'Implement REQ-299');
    assert.notEqual(changed, pruned);
    writeFileSync(path, changed);
    const result = runCli(['restore', 's.jsonl', '--in-place'], { cwd: dir, env });
    assert.equal(result.exitCode, 4, result.stderr);
    assert.match(result.stderr, /changed other than by appending/);
    assert.equal(readFileSync(path, 'utf8'), changed);
    assert.deepEqual(strayFiles(dir, ['s.jsonl']), []);
  });

  test('-o naming the archive (by its path, a hard link or its -wal file) is a usage error: prune, restore and refresh leave the archive whole', () => {
    const { dir, archive, env } = workspace('output-archive');
    copyFixture(OVER_SOFT, dir);
    assert.equal(runCli(['prune', 's.jsonl', '-o', 'p.jsonl', ...WINDOW], { cwd: dir, env }).exitCode, 0);
    const archived = readFileSync(archive);
    linkSync(archive, join(dir, 'archive-link.sqlite'));
    for (const [command, output] of [
      ['prune', archive],
      ['prune', join(dir, 'archive-link.sqlite')],
      ['prune', `${archive}-wal`],
      ['restore', archive],
      ['restore', join(dir, 'archive-link.sqlite')],
      ['refresh', archive],
    ] as const) {
      const args =
        command === 'prune'
          ? ['prune', 's.jsonl', '--force', '-o', output, ...WINDOW]
          : command === 'restore'
            ? ['restore', 'p.jsonl', '-o', output]
            : ['refresh', 'p.jsonl', '--force', '-o', output];
      const result = runCli(args, { cwd: dir, env });
      assert.equal(result.exitCode, 2, `${command} -o ${output}: ${result.stderr}`);
      assert.match(result.stderr, /-o names the archive [^\n]*: the transcript would replace every prune it keeps/);
      assert.ok(readFileSync(archive).equals(archived), `${command} -o ${output}: the archive is unchanged`);
    }
    // The archive still restores what it archived.
    const restored = runCli(['restore', 'p.jsonl', '-o', 'r.jsonl'], { cwd: dir, env });
    assert.equal(restored.exitCode, 0, restored.stderr);
    assert.ok(readFileSync(join(dir, 'r.jsonl')).equals(fixtureBytes(OVER_SOFT)));
  });

  test('with no archive: exit 3, and no archive is created', () => {
    const { dir, archive, env } = workspace('restore-none');
    copyFixture(OVER_SOFT, dir);
    const result = runCli(['restore', 's.jsonl', '-o', 'r.jsonl'], { cwd: dir, env });
    assert.equal(result.exitCode, 3, result.stderr);
    assert.match(result.stderr, /no archive at/);
    assert.equal(existsSync(archive), false);
    assert.deepEqual(strayFiles(dir, ['s.jsonl']), []);
  });
});

describe('recall', () => {
  const { dir, env } = workspace('recall');
  copyFixture(OVER_SOFT, dir);
  const pruned = runCli(['prune', 's.jsonl', '-o', 'out.jsonl', '--json', ...WINDOW], { cwd: dir, env });

  test('finds the dropped turn that holds a distinctive word', () => {
    assert.equal(pruned.exitCode, 0, pruned.stdout);
    const eventId = json<PruneJson>(pruned).archive?.eventId;
    const result = runCli(['recall', 'marmalade', '--json'], { cwd: dir, env });
    assert.equal(result.exitCode, 0, result.stdout);
    assert.equal(result.stderr, '');
    const found = json<{ schemaVersion: number; hits: Array<{ turnId: string; action: string; eventId: string; snippet: string }> }>(result);
    assert.equal(found.schemaVersion, 1);
    assert.deepEqual(
      found.hits.map((h) => [h.turnId, h.action, h.eventId]),
      [['r2', 'dropped', eventId]],
    );
    assert.match(found.hits[0]?.snippet ?? '', /marmalade/);
    assert.equal(readFileSync(join(dir, 'out.jsonl'), 'utf8').includes('marmalade'), false, 'the word left the transcript');
  });

  test('--turn ID prints the full archived text', () => {
    const result = runCli(['recall', '--turn', 'r2'], { cwd: dir, env });
    assert.equal(result.exitCode, 0, result.stderr);
    const original = fixtureLines(OVER_SOFT).find((l) => l.id === 'r2')?.content;
    assert.equal(result.stdout, `${original}\n`);
    // Nothing found is not an input error: exit 0, like a search with no hits.
    const unknown = runCli(['recall', '--turn', 'no-such-turn'], { cwd: dir, env });
    assert.equal(unknown.exitCode, 0, unknown.stderr);
    assert.equal(unknown.stdout, '');
    assert.match(unknown.stderr, /no archived turn no-such-turn in /);
    const unknownJson = runCli(['recall', '--turn', 'no-such-turn', '--json'], { cwd: dir, env });
    assert.equal(unknownJson.exitCode, 0, unknownJson.stderr);
    assert.equal(json<{ turn: unknown }>(unknownJson).turn, null);
  });

  test('queries full of search syntax never crash', () => {
    for (const query of ['"', '*', 'NEAR(', 'AND OR', 'NOT', '(', ')', 'content:x', '^', '{r2}', 'a"b', "'", '**', '.', 'marmalade*']) {
      for (const flags of [[], ['--json']]) {
        const result = runCli(['recall', query, ...flags], { cwd: dir, env });
        assert.equal(result.exitCode, 0, `recall ${JSON.stringify(query)} ${flags.join(' ')}: ${result.stdout}${result.stderr}`);
        if (flags.length > 0) assert.ok(Array.isArray(json<{ hits: unknown[] }>(result).hits));
        assert.doesNotMatch(result.stderr, /bug|fts5|syntax error/i, query);
      }
    }
  });
});

describe('piping', () => {
  test('cat FILE | prune - --force --target N > out: stdout is only the transcript, the report on stderr', () => {
    const { dir, env } = workspace('pipe');
    copyFixture(OVER_SOFT, dir);
    for (const dash of ['-', '']) {
      const result = spawnSync('bash', ['-c', `cat s.jsonl | "${process.execPath}" "${bin}" prune ${dash} --force --target 900 > out.jsonl`], {
        cwd: dir,
        encoding: 'utf8',
        env: cliEnv(env),
      });
      assert.equal(result.status, 0, result.stderr);
      assert.match(result.stderr, /^\(stdin\) \(devs\): pruned 2,211 → [\d,]+ tokens/m);
      const lines = parseLines(readFileSync(join(dir, 'out.jsonl')));
      assert.equal(lines.filter((l) => l.content.startsWith(SUMMARY_PREFIX)).length, 1);
      assertToolPairsWhole(lines, `prune ${dash}`);
      assert.ok(analyze(join(dir, 'out.jsonl'), env).totalTokens <= 900);
    }
  });
});

describe('real data', () => {
  const files = realdataFiles();
  if (files.length === 0) test('real transcripts', { skip: realdataSkip || 'no real transcripts found' }, () => {});
  for (const file of files) {
    test(`${realdataName(file)}: prune (forced, and to a third), read back, restore byte for byte`, { skip: realdataSkip }, (t) => {
      const { dir, env } = workspace('realdata');
      const original = readFileSync(file);
      const before = analyze(file, env);
      const runs: Array<[string, string[]]> = [
        ['forced', []],
        ['third', ['--target', String(Math.max(1, Math.floor(before.context.tokens / 3)))]],
      ];
      for (const [name, flags] of runs) {
        const out = join(dir, `${name}.out`);
        const result = runCli(['prune', file, '--window', '100000', '--force', ...flags, '-o', out, '--json'], { env });
        const label = `${realdataName(file)} (${name})`;
        if (result.exitCode === 5) {
          // Recorded: a short transcript whose candidates are smaller than any summary fails closed.
          assert.match(json<ErrorJson>(result).error.message, /summary/, label);
          assert.equal(existsSync(out), false, label);
          t.diagnostic(`${name}: exit 5 (${json<ErrorJson>(result).error.message})`);
          continue;
        }
        assert.equal(result.exitCode, 0, `${label}: ${result.stdout}${result.stderr}`);
        assert.equal(result.stderr, '', label);
        const report = json<PruneJson>(result);
        const after = analyze(out, env);
        assert.equal(after.format, before.format, `${label}: the output is still ${before.format}`);
        if (report.outcome === 'no-change') {
          assert.ok(readFileSync(out).equals(original), `${label}: unchanged output is the input's bytes`);
          t.diagnostic(`${name}: no change (${report.reason ?? ''})`);
          continue;
        }
        // The planner's figures (the estimate) are what the output reads back as; the report's
        // totals are the same through the session's calibration.
        const planned = report.context?.estimate ?? { after: report.after.tokens, target: report.limits.target };
        assert.equal(planned.after, after.totalTokens, label);
        assert.ok(after.totalTokens < before.totalTokens, label);
        if (report.reachedTarget) assert.ok(after.totalTokens <= planned.target, label);
        const restored = join(dir, `${name}.restored`);
        const restore = runCli(['restore', out, '-o', restored], { env });
        assert.equal(restore.exitCode, 0, `${label}: ${restore.stderr}`);
        assert.ok(readFileSync(restored).equals(original), `${label}: restore gives the original bytes`);
        t.diagnostic(
          `${name}: ${before.totalTokens} → ${after.totalTokens} tokens (target ${report.limits.target}${report.reachedTarget ? '' : ', not reached'})`,
        );
      }
    });
  }
});

describe('fault: SIGKILL during prune --in-place', () => {
  /** A native transcript of a few MB: many tool call/result pairs with long outputs. */
  function largeTranscript(): Buffer {
    const lines = [
      JSON.stringify({ id: 's1', role: 'system', type: 'system', content: 'You are the build agent.' }),
      JSON.stringify({ id: 's2', role: 'user', type: 'prd', content: '# PRD\n- REQ-1: keep the build green.' }),
    ];
    let size = 0;
    for (let n = 1; size < 3_000_000; n++) {
      const output = Array.from({ length: 60 }, (_, k) => `  ✓ m${n} case ${k} passes with value ${(n * 31 + k * 17) % 9973}`).join('\n');
      for (const turn of [
        { id: `u${n}`, role: 'user', type: 'message', content: `Step ${n}: fix module m${n}.` },
        { id: `c${n}`, role: 'assistant', type: 'tool_call', callId: `call-${n}`, content: `run {"cmd":"npm test -- m${n}"}` },
        { id: `o${n}`, role: 'tool', type: 'tool_result', callId: `call-${n}`, content: output },
        { id: `a${n}`, role: 'assistant', type: 'message', content: `Module m${n} is fixed; all 60 cases pass.` },
      ]) {
        const line = JSON.stringify(turn);
        size += line.length + 1;
        lines.push(line);
      }
    }
    return Buffer.from(`${lines.join('\n')}\n`);
  }

  /** When to kill a run: a delay after spawn (0 = at once), or as soon as a condition holds (polled every ms). */
  type KillPoint = { readonly label: string } & ({ readonly afterMs: number } | { readonly when: () => boolean } | { readonly never: true });

  function pruneKilledAt(point: KillPoint, cwd: string, env: Record<string, string>): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    const run = spawnChild(process.execPath, [bin, 'prune', 'big.jsonl', '--in-place', '--window', '400k', '--no-cache'], {
      cwd,
      stdio: 'ignore',
      env: cliEnv(env),
    });
    const kill = (): void => {
      run.child.kill('SIGKILL');
    };
    let timer: NodeJS.Timeout | undefined;
    if ('afterMs' in point) {
      if (point.afterMs === 0) kill();
      else timer = setTimeout(kill, point.afterMs);
    } else if ('when' in point) {
      const { when } = point;
      timer = setInterval(() => {
        if (when()) kill();
      }, 1);
    }
    return run.exited
      .finally(() => {
        clearTimeout(timer);
        clearInterval(timer);
      })
      .then(({ code, signal }) => ({ code, signal }));
  }

  /** A condition that turns true once `path` is created or changes after this call. */
  function changes(path: string): () => boolean {
    const stamp = (): string => {
      try {
        const s = statSync(path);
        return `${s.size}:${s.mtimeMs}`;
      } catch {
        return 'none';
      }
    };
    const before = stamp();
    return () => stamp() !== before;
  }

  test('the file is always the original or a complete prune that restores to it; a stale lock does not block', async (t) => {
    const { dir, archive, env } = workspace('fault');
    const path = join(dir, 'big.jsonl');
    const original = largeTranscript();
    assert.ok(original.length > 3_000_000);
    // How long a whole run takes here, so some kills land late: while archiving, writing, renaming.
    writeFileSync(path, original);
    const started = performance.now();
    const whole = await pruneKilledAt({ label: 'never', never: true }, dir, env);
    const duration = performance.now() - started;
    assert.deepEqual(whole, { code: 0, signal: null });
    const tempFiles = (): string[] => readdirSync(dir).filter((name) => name.endsWith('.tmp'));
    const points = (): KillPoint[] => {
      const tempsBefore = tempFiles().length;
      return [
        ...[0, 50, 150, 300, 600].map((afterMs) => ({ label: `${afterMs} ms`, afterMs })),
        // The archive is written before the transcript (WAL mode: its -wal file changes first).
        { label: 'archive write starts', when: changes(`${archive}-wal`) },
        { label: 'temp file appears', when: () => tempFiles().length > tempsBefore },
        ...[0.9, 0.97, 1, 1.05].map((f) => ({ label: `${Math.round(duration * f)} ms`, afterMs: Math.round(duration * f) })),
      ];
    };
    const outcomes: string[] = [];
    const count = points().length;
    for (let i = 0; i < count; i++) {
      writeFileSync(path, original);
      // Built afresh before each run, so a condition compares with the state just before it.
      const point = points()[i];
      assert.ok(point);
      const delay = point.label;
      const { code, signal } = await pruneKilledAt(point, dir, env);
      const now = readFileSync(path);
      const lockLeft = existsSync(`${path}.devs-ctx.lock`);
      if (now.equals(original)) {
        outcomes.push(`${delay}: ${signal ?? `exit ${code}`}, original${lockLeft ? ', stale lock' : ''}`);
      } else {
        // Not the original: it must be a whole pruned transcript this archive can undo.
        const restore = runCli(['restore', 'big.jsonl', '-o', 'restored.jsonl'], { cwd: dir, env });
        assert.equal(restore.exitCode, 0, `after a kill at ${delay} the file is neither the original nor a restorable prune: ${restore.stderr}`);
        assert.ok(readFileSync(join(dir, 'restored.jsonl')).equals(original), `restore after a kill at ${delay}`);
        outcomes.push(`${delay}: ${signal ?? `exit ${code}`}, pruned${lockLeft ? ', stale lock' : ''}`);
      }
      if (signal === null) assert.equal(code, 0, `run killed at ${delay} finished by itself with exit ${code}`);
      else if (lockLeft) assert.match(readFileSync(`${path}.devs-ctx.lock`, 'utf8'), /^\d+\n$/);
    }
    t.diagnostic(`a whole run: ${Math.round(duration)} ms; ${outcomes.join('; ')}`);
    assert.ok(
      outcomes.some((o) => o.includes('SIGKILL')),
      outcomes.join('\n'),
    );

    // The last kill may have left its lock: the next run takes it over and finishes.
    writeFileSync(path, original);
    const next = runCli(['prune', 'big.jsonl', '--in-place', '--window', '400k', '--json'], { cwd: dir, env });
    assert.equal(next.exitCode, 0, `${outcomes.join('\n')}\n${next.stdout}`);
    assert.equal(json<PruneJson>(next).outcome, 'pruned');
    assert.equal(existsSync(`${path}.devs-ctx.lock`), false);
    const restore = runCli(['restore', 'big.jsonl', '-o', 'restored.jsonl'], { cwd: dir, env });
    assert.equal(restore.exitCode, 0, restore.stderr);
    assert.ok(readFileSync(join(dir, 'restored.jsonl')).equals(original));
  });
});

describe('damage the input already had is not a writer bug', () => {
  test('a tool output with no call (Codex fixture, an OpenAI chat) before the end: pruned (exit 0), the orphan kept as it was', () => {
    const { dir, env } = workspace('orphan');
    const chat = [
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'go' },
      ...Array.from({ length: 20 }, (_, i) => [
        { role: 'assistant', content: null, tool_calls: [{ id: `call_${i}`, type: 'function', function: { name: 'sh', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: `call_${i}`, content: `out ${i}\n`.repeat(300) },
      ]).flat(),
      { role: 'tool', tool_call_id: 'call_orphan', content: 'orphan' },
      { role: 'assistant', content: 'done' },
    ];
    writeFileSync(join(dir, 'chat.jsonl'), `${chat.map((m) => JSON.stringify(m)).join('\n')}\n`);
    for (const [file, target, orphan] of [
      [join(repoRoot, 'fixtures', 'codex', 'tool-output-shapes.jsonl'), '500', 'call_missing'],
      [join(dir, 'chat.jsonl'), '1000', 'call_orphan'],
    ] as const) {
      const out = join(dir, 'out.jsonl');
      const result = runCli(['prune', file, '--force', '--target', target, '-o', out, '--json'], { cwd: dir, env });
      assert.equal(result.exitCode, 0, `${file}: ${result.stdout}${result.stderr}`);
      assert.equal((JSON.parse(result.stdout) as { outcome: string }).outcome, 'pruned');
      assert.ok(readFileSync(out, 'utf8').includes(orphan), `${file}: the orphaned output is kept`);
    }
  });
});

test('a target out of reach: the text report says how many tokens are left and how many of them are the summary, as --json counts them', () => {
  const { dir, env } = workspace('unreachable');
  copyFixture(OVER_SOFT, dir);
  const args = ['prune', 's.jsonl', '--force', '--target', '10', '--dry-run', ...WINDOW];
  const text = runCli(args, { cwd: dir, env });
  assert.equal(text.exitCode, 0, text.stderr);
  const report = JSON.parse(runCli([...args, '--json'], { cwd: dir, env }).stdout) as { after: { tokens: number }; summary: { tokens: number } };
  const said = /the target was not reached: ([\d,]+) tokens are left, ([\d,]+) of them the summary; the rest are turns a prune keeps/.exec(
    text.stdout + text.stderr,
  );
  assert.ok(said, text.stdout + text.stderr);
  assert.deepEqual([Number(said[1]?.replaceAll(',', '')), Number(said[2]?.replaceAll(',', ''))], [report.after.tokens, report.summary.tokens]);
});

test('lines prune cannot read (a truncated last line) are reported with their line number, in the text and in --json, as analyze reports them', () => {
  const { dir, env } = workspace('malformed');
  copyFixture(OVER_SOFT, dir);
  writeFileSync(join(dir, 's.jsonl'), `${readFileSync(join(dir, 's.jsonl'), 'utf8')}{"id":"cut","role":"user","type":"mess`);
  const text = runCli(['prune', 's.jsonl', '--force', '-o', 'out.jsonl', ...WINDOW], { cwd: dir, env });
  assert.equal(text.exitCode, 0, text.stderr);
  assert.match(text.stdout, /skipped or odd lines \(1\): line 18: /);
  const json = JSON.parse(runCli(['prune', 's.jsonl', '--force', '--dry-run', '--json', ...WINDOW], { cwd: dir, env }).stdout) as {
    issues: { line: number; severity: string; reason: string }[];
  };
  assert.equal(json.issues.length, 1);
  assert.equal(json.issues[0]?.line, 18);
});

test('a pruned Gemini CLI session is sized by what it holds now, not by the calls recorded before the prune (the file keeps their token records)', () => {
  const { dir, env } = workspace('gemini-recorded');
  const lines: Record<string, unknown>[] = [
    { sessionId: 's1', projectHash: '0b7d', startTime: '2026-04-29T21:39:22.319Z', lastUpdated: '2026-04-29T21:39:22.319Z', kind: 'main' },
  ];
  let t = 0;
  const ts = (): string => new Date(Date.UTC(2026, 3, 29, 21, 40, t++)).toISOString();
  for (let i = 0; i < 30; i++) {
    lines.push({ id: `u${i}`, timestamp: ts(), type: 'user', content: [{ text: `step ${i} please` }] });
    lines.push({
      id: `g${i}`,
      timestamp: ts(),
      type: 'gemini',
      content: '',
      thoughts: [],
      model: 'gemini-3-flash-preview',
      tokens: { input: 1000 * i + 12000, output: 50, cached: 0, thoughts: 0, tool: 0, total: 1000 * i + 12050 },
      toolCalls: [
        {
          id: `tc${i}`,
          name: 'run_shell_command',
          args: { command: `ls ${i}` },
          result: [{ functionResponse: { id: `tc${i}`, name: 'run_shell_command', response: { output: `file${i}\n`.repeat(400) } } }],
          status: 'success',
          timestamp: ts(),
        },
      ],
    });
  }
  writeFileSync(join(dir, 'session.jsonl'), `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`);
  const pruned = JSON.parse(runCli(['prune', 'session.jsonl', '--window', '60k', '--target', '5000', '-o', 'p.jsonl', '--json'], { cwd: dir, env }).stdout) as {
    before: { tokens: number };
    after: { tokens: number };
  };
  assert.ok(pruned.after.tokens < pruned.before.tokens / 2, JSON.stringify(pruned));
  const after = JSON.parse(runCli(['analyze', 'p.jsonl', '--window', '60k', '--json'], { cwd: dir, env }).stdout) as {
    context: { tokens: number; basis: string };
  };
  assert.ok(after.context.tokens < pruned.before.tokens / 2, `analyze of the pruned file: ${JSON.stringify(after.context)}, before ${pruned.before.tokens}`);
  // No call since the prune: nothing measured what the file holds now, and the report says so.
  assert.equal(after.context.basis, 'estimate');
  assert.ok(after.context.tokens <= pruned.after.tokens, `analyze ${after.context.tokens}, prune's after ${pruned.after.tokens}`);
});

test("a Claude Code prune's boundary records the context before it as the report says it (preTokens), not the last recorded call", {
  skip: realdataSkip,
}, () => {
  const { dir, env } = workspace('pretokens');
  const session = readdirSync(join(realdataDir, 'claude-code', '01-entire-v2.1.20-compaction+microcompact')).find((f) => f.endsWith('.jsonl')) as string;
  copyFileSync(join(realdataDir, 'claude-code', '01-entire-v2.1.20-compaction+microcompact', session), join(dir, 's.jsonl'));
  const result = runCli(['prune', 's.jsonl', '--force', '--target', '60000', '-o', 'p.jsonl', '--json'], { cwd: dir, env });
  assert.equal(result.exitCode, 0, result.stderr);
  const before = (JSON.parse(result.stdout) as { before: { tokens: number } }).before.tokens;
  const boundaries = readFileSync(join(dir, 'p.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { subtype?: string; compactMetadata?: { trigger: string; preTokens: number } })
    .filter((l) => l.subtype === 'compact_boundary');
  assert.equal(boundaries.at(-1)?.compactMetadata?.preTokens, before);
});
