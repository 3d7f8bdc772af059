import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, test } from 'node:test';
import type { HookInstallReport, HookStatusReport, HookUninstallReport } from '../src/core/reports/hook.js';
import { parseHookScript, renderHookScript } from '../src/core/git-hook.js';
import type { HookSettings } from '../src/core/git-hook.js';
import { segmentRegExp } from '../src/core/path-glob.js';
import { expandTranscripts } from '../src/io/git-hooks.js';
import { assertGolden, cliEnv } from './helpers/cli.js';
import type { CliResult } from './helpers/cli.js';
import { tempRepo } from './helpers/git-repo.js';
import { packageCopy } from './helpers/package-copy.js';
import type { TempRepo } from './helpers/git-repo.js';
import { repoRoot } from './helpers/realdata.js';

/**
 * `devs-ctx hook install|uninstall|status` end to end: real git repositories in temp folders, real
 * commits running the installed hook, which runs the built devs-ctx (analyze, prune --in-place,
 * refresh --in-place). Archives go to DEVS_CTX_ARCHIVE in the temp folder.
 */

// 17 turns, 2,211 tokens: soft urgency under --window 4000 (soft 2,000, hard 3,200), hard under 2500
// (soft 1,250, hard 2,000); a refresh is due in it (6 turns in node "implement").
const OVER_SOFT = 'devs/over-soft-limit.jsonl';
// 254 tokens, and no refresh due (a new node started the count again): nothing for the hook to do.
const QUIET = 'devs/node-change-resets-refresh.jsonl';
const SUMMARY = '[Context Summary]';
const bin = realpathSync(join(repoRoot, 'bin', 'devs-ctx.js'));

/** A repo with a committed config watching sessions/*.jsonl (ignored by git) and one transcript. */
function projectRepo(prefix: string, options: { window: number; fixture?: string; config?: Record<string, unknown> }): TempRepo & { transcript: string } {
  const repo = tempRepo(prefix);
  repo.write('.gitignore', 'sessions/\n');
  repo.write('devs-ctx.config.json', `${JSON.stringify({ window: options.window, transcripts: ['sessions/*.jsonl'], ...options.config }, null, 2)}\n`);
  const transcript = repo.copyFixture(options.fixture ?? OVER_SOFT, 'sessions/agent.jsonl');
  return Object.assign(repo, { transcript });
}

function commit(repo: TempRepo, message: string, options: { cwd?: string } = {}): CliResult & { ms: number } {
  const cwd = options.cwd ?? repo.dir;
  writeFileSync(join(cwd, `${message}.txt`), `${message}\n`);
  repo.git(['add', '-A'], { cwd });
  return repo.git(['commit', '-q', '-m', message], { cwd });
}

const devsCtxLines = (stderr: string): string[] => stderr.split('\n').filter((l) => l.startsWith('devs-ctx'));
const commits = (repo: TempRepo): number => {
  const r = repo.git(['rev-list', '--count', 'HEAD']);
  return r.exitCode === 0 ? Number(r.stdout.trim()) : 0;
};

function normalised(result: CliResult, repo: TempRepo): CliResult {
  const clean = (s: string): string => s.split(repo.dir).join('<repo>').split(bin).join('<bin>').split(process.execPath).join('<node>');
  return { exitCode: result.exitCode, stdout: clean(result.stdout), stderr: clean(result.stderr) };
}

describe('hook install, then commit', () => {
  test('a transcript over the soft limit is pruned in place and archived; the commit goes through; one line', () => {
    const repo = projectRepo('e2e', { window: 4000 });
    const original = readFileSync(repo.transcript);
    const install = repo.devsCtx(['hook', 'install']);
    assert.equal(install.exitCode, 0, install.stderr);
    assertGolden('hook-install', normalised(install, repo));
    assert.ok(statSync(join(repo.dir, '.git/hooks/pre-commit')).mode & 0o100, 'the hook is executable');

    const first = commit(repo, 'first');
    assert.equal(first.exitCode, 0, first.stderr);
    assert.equal(commits(repo), 1);
    assert.deepEqual(devsCtxLines(first.stderr), ['devs-ctx: sessions/agent.jsonl: pruned 2,211 → 728 tokens, refreshed']);
    const pruned = readFileSync(repo.transcript, 'utf8');
    assert.ok(pruned.includes(SUMMARY), 'the transcript was pruned in place');
    assert.ok(pruned.includes('[CONTEXT REFRESH]'), 'and refreshed');
    assert.equal(repo.devsCtx(['analyze', 'sessions/agent.jsonl']).exitCode, 0, 'now below the soft limit of the configured window');

    // The archive holds what was removed: restore gives back the original (the refresh, appended after, stays at the end).
    assert.ok(existsSync(repo.archive), 'archived under DEVS_CTX_ARCHIVE');
    const restored = repo.devsCtx(['restore', 'sessions/agent.jsonl', '-o', join(repo.dir, 'restored.jsonl')]);
    assert.equal(restored.exitCode, 0, restored.stderr);
    assert.ok(readFileSync(join(repo.dir, 'restored.jsonl')).subarray(0, original.length).equals(original));
    repo.git(['clean', '-q', '-f', 'restored.jsonl']);

    // Nothing due now: quick, one line, nothing changed.
    const before = readFileSync(repo.transcript);
    const second = commit(repo, 'second');
    assert.equal(second.exitCode, 0, second.stderr);
    assert.deepEqual(devsCtxLines(second.stderr), ['devs-ctx: nothing due (1 transcript checked)']);
    assert.ok(readFileSync(repo.transcript).equals(before), 'the transcript is untouched');
    assert.equal(commits(repo), 2);
  });

  test('nothing due: one line, no change, no archive, quick', () => {
    const repo = projectRepo('quiet', { window: 200_000, fixture: QUIET });
    const original = readFileSync(repo.transcript);
    assert.equal(repo.devsCtx(['hook', 'install']).exitCode, 0);
    const result = commit(repo, 'quiet');
    assert.equal(result.exitCode, 0, result.stderr);
    assert.equal(result.stderr, 'devs-ctx: nothing due (1 transcript checked)\n');
    assert.ok(readFileSync(repo.transcript).equals(original));
    assert.ok(!existsSync(repo.archive), 'no prune, no archive');
    // Three short devs-ctx runs (list, analyze, refresh --check); generous for a loaded CI machine.
    assert.ok(result.ms < 8000, `the commit took ${Math.round(result.ms)} ms`);
  });

  test('--block-on hard: a transcript at the hard limit blocks the commit, is pruned, and the next commit goes through', () => {
    const repo = projectRepo('block', { window: 2500 });
    assert.equal(repo.devsCtx(['hook', 'install', '--block-on', 'hard', '--no-refresh']).exitCode, 0);
    const blocked = commit(repo, 'blocked');
    assert.notEqual(blocked.exitCode, 0, 'the commit is refused');
    assert.equal(commits(repo), 0);
    const lines = devsCtxLines(blocked.stderr);
    assert.equal(lines.length, 1, blocked.stderr);
    assert.match(
      lines[0] ?? '',
      /^devs-ctx: sessions\/agent\.jsonl: pruned 2,211 → \d+ tokens; pre-commit blocked by --block-on hard: sessions\/agent\.jsonl \(hard\) had reached it/,
    );
    assert.ok(readFileSync(repo.transcript, 'utf8').includes(SUMMARY), 'pruned even though the commit was blocked');
    assert.ok(!readFileSync(repo.transcript, 'utf8').includes('[CONTEXT REFRESH]'), '--no-refresh');

    const again = repo.git(['commit', '-q', '-m', 'again']);
    assert.equal(again.exitCode, 0, again.stderr);
    assert.equal(commits(repo), 1);
  });

  test('a config made invalid by a pull never blocks the commit: the hook says why and lets it through', () => {
    const repo = projectRepo('bad-config', { window: 4000 });
    assert.equal(repo.devsCtx(['hook', 'install', '--block-on', 'soft']).exitCode, 0);
    for (const bad of ['{"window": -5, "transcripts": ["sessions/*.jsonl"]}\n', '{"transcripts": ["sessions/*.jsonl"], "nope": 1}\n', '{not json\n']) {
      repo.write('devs-ctx.config.json', bad);
      const before = commits(repo);
      const result = commit(repo, `bad-${before}`);
      assert.equal(result.exitCode, 0, `${bad}: ${result.stderr}`);
      assert.equal(commits(repo), before + 1);
      assert.match(result.stderr, /devs-ctx\.config\.json/, 'the reason names the config');
      assert.match(result.stderr, /pre-commit not blocked: it goes on/);
    }
  });

  test('a devs-ctx that crashes (its build gone: an interrupted upgrade) never blocks the commit, even under --block-on', () => {
    const repo = projectRepo('crash', { window: 4000 });
    const copy = packageCopy(join(dirname(repo.dir), 'devs-ctx-copy'));
    const install = spawnSync(process.execPath, [copy, 'hook', 'install', '--block-on', 'soft'], { cwd: repo.dir, env: cliEnv(repo.env), encoding: 'utf8' });
    assert.equal(install.status, 0, install.stderr);
    rmSync(join(dirname(copy), '..', 'dist'), { recursive: true });
    const result = commit(repo, 'crash');
    assert.equal(result.exitCode, 0, result.stderr);
    assert.equal(commits(repo), 1);
    assert.match(result.stderr, /devs-ctx: failed \(exit 1\); the pre-commit goes on/);
  });

  test('a pruned transcript named like a pathspec (sessions/[ab].jsonl) is staged alone: an untracked sessions/a.jsonl stays out of the commit', () => {
    const repo = tempRepo('pathspec');
    repo.write('devs-ctx.config.json', `${JSON.stringify({ window: 4000 })}\n`);
    const transcript = repo.copyFixture(OVER_SOFT, 'sessions/[ab].jsonl');
    repo.git(['add', '-A']);
    assert.equal(repo.git(['commit', '-q', '-m', 'base']).exitCode, 0);
    repo.write('sessions/a.jsonl', '{"id":"p","role":"user","type":"message","content":"private, never added"}\n');
    assert.equal(repo.devsCtx(['hook', 'install', '--transcript', 'sessions/?ab?.jsonl']).exitCode, 0);
    repo.write('work.txt', 'work\n');
    repo.git(['add', 'work.txt']);
    const result = repo.git(['commit', '-q', '-m', 'work']);
    assert.equal(result.exitCode, 0, result.stderr);
    assert.match(result.stderr, /pruned .* staged/);
    const inCommit = repo.git(['show', '--name-only', '--format=', 'HEAD']).stdout.split('\n').filter(Boolean).sort();
    assert.ok(inCommit.includes('sessions/[ab].jsonl'), inCommit.join(', '));
    assert.ok(!inCommit.includes('sessions/a.jsonl'), `an untracked file was committed: ${inCommit.join(', ')}`);
    assert.ok(readFileSync(transcript, 'utf8').includes(SUMMARY));
  });

  test("the project's config (found, not named by the user) cannot send the hook's pruned turns to an archive outside the project", () => {
    const repo = projectRepo('project-archive', { window: 4000, config: { archive: '../elsewhere/loot.sqlite' } });
    // No DEVS_CTX_ARCHIVE: the archive is what the configs say (the user's default otherwise).
    const env = { DEVS_CTX_ARCHIVE: '' };
    assert.equal(repo.devsCtx(['hook', 'install'], { env }).exitCode, 0);
    repo.write('x.txt', 'x\n');
    repo.git(['add', 'x.txt'], { env });
    const result = repo.git(['commit', '-q', '-m', 'x'], { env });
    assert.equal(result.exitCode, 0, result.stderr);
    assert.match(result.stderr, /^devs-ctx: sessions\/agent\.jsonl: pruned 2,211 → \d+ tokens/m, 'the report line is whole');
    assert.match(
      result.stderr,
      /^devs-ctx: warning: .*names the archive .*loot\.sqlite, outside its project: ignored/m,
      'and the warning said on its own line',
    );
    assert.ok(!existsSync(join(dirname(repo.dir), 'elsewhere', 'loot.sqlite')), `archived where the project's config points:\n${result.stderr}`);
    const restored = repo.devsCtx(['restore', 'sessions/agent.jsonl', '-o', join(repo.dir, 'restored.jsonl')], { env });
    assert.equal(restored.exitCode, 0, `the user's own archive holds the prune: ${restored.stderr}`);
  });

  test('a hook installed before configNamed was recorded, with --config ci/devs.json: that config is still used as named', () => {
    const repo = tempRepo('old-named');
    repo.write('.gitignore', 'sessions/\n');
    repo.write('ci/devs.json', `${JSON.stringify({ window: 4000, transcripts: ['../sessions/*.jsonl'] })}\n`);
    const transcript = repo.copyFixture(OVER_SOFT, 'sessions/agent.jsonl');
    assert.equal(repo.devsCtx(['hook', 'install', '--config', 'ci/devs.json', '--no-refresh']).exitCode, 0);
    const hookPath = join(repo.dir, '.git', 'hooks', 'pre-commit');
    const text = readFileSync(hookPath, 'utf8');
    assert.match(text, /"configNamed":true/);
    writeFileSync(hookPath, text.replace(',"configNamed":true', ''));
    const result = commit(repo, 'old');
    assert.equal(result.exitCode, 0, result.stderr);
    assert.match(result.stderr, /sessions\/agent\.jsonl: pruned 2,211 → \d+ tokens/, 'the window of ci/devs.json, as named');
    assert.ok(readFileSync(transcript, 'utf8').includes(SUMMARY));
  });

  test('--block-on hard does not block at the soft limit', () => {
    const repo = projectRepo('block-soft', { window: 4000 });
    assert.equal(repo.devsCtx(['hook', 'install', '--block-on', 'hard']).exitCode, 0);
    const result = commit(repo, 'soft');
    assert.equal(result.exitCode, 0, result.stderr);
    assert.ok(readFileSync(repo.transcript, 'utf8').includes(SUMMARY));
  });

  test('--transcript without a config file: the hook carries the list; limits from the environment', () => {
    const repo = tempRepo('flag');
    const transcript = repo.copyFixture(OVER_SOFT, 'agent/session one.jsonl');
    repo.write('.gitignore', 'agent/\n');
    const install = repo.devsCtx(['hook', 'install', '--transcript', 'agent/*.jsonl', '--json']);
    assert.equal(install.exitCode, 0, install.stderr);
    const report = JSON.parse(install.stdout) as HookInstallReport;
    assert.equal(report.transcripts.source, 'hook');
    assert.deepEqual(report.transcripts.patterns, [{ pattern: 'agent/*.jsonl', files: [transcript] }]);
    const result = repo.git(['commit', '-q', '--allow-empty', '-m', 'env'], { env: { DEVS_SOFT_LIMIT: '2000', DEVS_HARD_LIMIT: '3200' } });
    assert.equal(result.exitCode, 0, result.stderr);
    assert.match(result.stderr, /^devs-ctx: agent\/session one\.jsonl: pruned 2,211 → \d+ tokens, refreshed\n$/);
    assert.ok(readFileSync(transcript, 'utf8').includes(SUMMARY));
  });
});

describe('an existing hook is chained, and uninstall puts it back byte for byte', () => {
  const PREVIOUS = '#!/bin/sh\n# the team\'s own pre-commit\necho "previous hook ran with $# args" >> previous-ran.log\n';

  test('both run; uninstall restores the original bytes and mode', () => {
    const repo = projectRepo('chain', { window: 4000 });
    repo.write('.gitignore', 'sessions/\nprevious-ran.log\n');
    const hookPath = join(repo.dir, '.git/hooks/pre-commit');
    writeFileSync(hookPath, PREVIOUS);
    chmodSync(hookPath, 0o750);

    const install = repo.devsCtx(['hook', 'install', '--json']);
    assert.equal(install.exitCode, 0, install.stderr);
    const report = JSON.parse(install.stdout) as HookInstallReport;
    assert.equal(report.previous, join(repo.dir, '.git/hooks/.devs-ctx-previous/pre-commit'));
    assert.equal(readFileSync(report.previous, 'utf8'), PREVIOUS, 'moved aside untouched');

    // Installing again updates our hook and keeps the chain (the old hook is not moved aside twice).
    const again = repo.devsCtx(['hook', 'install', '--block-on', 'soft', '--json']);
    assert.equal((JSON.parse(again.stdout) as HookInstallReport).action, 'updated');
    assert.equal(readFileSync(report.previous, 'utf8'), PREVIOUS);
    assert.equal(repo.devsCtx(['hook', 'install', '--json']).exitCode, 0);

    const result = commit(repo, 'chained');
    assert.equal(result.exitCode, 0, result.stderr);
    assert.equal(readFileSync(join(repo.dir, 'previous-ran.log'), 'utf8'), 'previous hook ran with 0 args\n');
    assert.ok(readFileSync(repo.transcript, 'utf8').includes(SUMMARY), 'and devs-ctx ran too');

    const uninstall = repo.devsCtx(['hook', 'uninstall', '--json']);
    assert.equal(uninstall.exitCode, 0, uninstall.stderr);
    const removed = JSON.parse(uninstall.stdout) as HookUninstallReport;
    assert.deepEqual(
      removed.removed.map((r) => [r.hook, r.action]),
      [['pre-commit', 'restored']],
    );
    assert.equal(readFileSync(hookPath, 'utf8'), PREVIOUS, 'byte for byte');
    assert.equal(statSync(hookPath).mode & 0o777, 0o750, 'mode kept');
    assert.ok(!existsSync(report.previous), 'nothing of devs-ctx left');

    const twice = repo.devsCtx(['hook', 'uninstall']);
    assert.equal(twice.exitCode, 0);
    assert.match(twice.stdout, /no devs-ctx hook in \.git\/hooks; nothing removed/);
    assert.equal(readFileSync(hookPath, 'utf8'), PREVIOUS);
  });

  test('a dispatcher that tells hooks apart by basename "$0", behind a relative symlink, keeps working; uninstall restores the link', () => {
    const repo = projectRepo('chain-dispatch', { window: 4000 });
    const hooks = join(repo.dir, '.git/hooks');
    writeFileSync(
      join(hooks, 'dispatch'),
      '#!/bin/sh\ncase "$(basename "$0")" in pre-commit) echo "dispatch: pre-commit check failed" >&2; exit 1;; *) echo "dispatch: unknown hook $(basename "$0")" >&2; exit 0;; esac\n',
    );
    chmodSync(join(hooks, 'dispatch'), 0o755);
    symlinkSync('dispatch', join(hooks, 'pre-commit'));
    assert.equal(repo.devsCtx(['hook', 'install']).exitCode, 0);
    const result = commit(repo, 'dispatched');
    assert.notEqual(result.exitCode, 0, 'the dispatcher still blocks the commit it blocked before');
    assert.match(result.stderr, /dispatch: pre-commit check failed/);
    assert.equal(repo.devsCtx(['hook', 'uninstall']).exitCode, 0);
    assert.equal(readlinkSync(join(hooks, 'pre-commit')), 'dispatch', 'the same symlink, byte for byte');
    assert.ok(!existsSync(join(hooks, '.devs-ctx-previous')), 'nothing of devs-ctx left');
  });

  test('a hook that loads files from its own folder is refused (it would break every commit once moved); --force installs anyway', () => {
    const repo = projectRepo('chain-dirname', { window: 4000 });
    const hooks = join(repo.dir, '.git/hooks');
    writeFileSync(join(hooks, 'common.sh'), 'check() { return 0; }\n');
    const previous = '#!/bin/sh\n. "$(dirname "$0")/common.sh"\ncheck\n';
    writeFileSync(join(hooks, 'pre-commit'), previous);
    chmodSync(join(hooks, 'pre-commit'), 0o755);
    const refused = repo.devsCtx(['hook', 'install']);
    assert.equal(refused.exitCode, 2, refused.stderr);
    assert.match(refused.stderr, /loads files from its own folder/);
    assert.equal(readFileSync(join(hooks, 'pre-commit'), 'utf8'), previous, 'untouched');
    assert.ok(!existsSync(join(hooks, '.devs-ctx-previous')));
    assert.equal(commit(repo, 'still works').exitCode, 0);
  });

  test("husky's folder is refused without --force (husky's hooks find their scripts from their own folder)", () => {
    const repo = projectRepo('husky', { window: 4000 });
    mkdirSync(join(repo.dir, '.husky', '_'), { recursive: true });
    spawnSync('git', ['config', 'core.hooksPath', '.husky/_'], { cwd: repo.dir });
    const refused = repo.devsCtx(['hook', 'install']);
    assert.equal(refused.exitCode, 2, refused.stderr);
    assert.match(refused.stderr, /husky/);
    assert.match(refused.stderr, /--stdout/);
    assert.ok(!existsSync(join(repo.dir, '.husky', '_', 'pre-commit')));
  });

  test('a failing previous hook stops the commit, and devs-ctx then does nothing', () => {
    const repo = projectRepo('chain-fail', { window: 4000 });
    const original = readFileSync(repo.transcript);
    const hookPath = join(repo.dir, '.git/hooks/pre-commit');
    writeFileSync(hookPath, '#!/bin/sh\necho "lint failed" >&2\nexit 3\n');
    chmodSync(hookPath, 0o755);
    assert.equal(repo.devsCtx(['hook', 'install']).exitCode, 0);
    const result = commit(repo, 'refused');
    assert.notEqual(result.exitCode, 0);
    assert.match(result.stderr, /lint failed/);
    assert.deepEqual(devsCtxLines(result.stderr), []);
    assert.ok(readFileSync(repo.transcript).equals(original));
  });

  test('uninstall with no hook before removes the file; an edited devs-ctx hook needs --force', () => {
    const repo = projectRepo('edited', { window: 4000 });
    assert.equal(repo.devsCtx(['hook', 'install', '--hook', 'pre-push']).exitCode, 0);
    const hookPath = join(repo.dir, '.git/hooks/pre-push');
    writeFileSync(hookPath, `${readFileSync(hookPath, 'utf8')}echo mine\n`);
    const refused = repo.devsCtx(['hook', 'uninstall']);
    assert.equal(refused.exitCode, 2);
    assert.match(refused.stderr, /pre-push was edited since devs-ctx wrote it/);
    assert.equal(repo.devsCtx(['hook', 'install', '--hook', 'pre-push']).exitCode, 2, 'nor replaced without --force');
    const forced = repo.devsCtx(['hook', 'uninstall', '--force']);
    assert.equal(forced.exitCode, 0, forced.stderr);
    assert.match(forced.stdout, /removed the devs-ctx pre-push hook \(\.git\/hooks\/pre-push\); there was no hook before it/);
    assert.ok(!existsSync(hookPath));
  });
});

describe('where the hook goes', () => {
  test('core.hooksPath (relative to the work tree) is respected', () => {
    const repo = projectRepo('hookspath', { window: 4000 });
    repo.git(['config', 'core.hooksPath', '.githooks']);
    const install = repo.devsCtx(['hook', 'install']);
    assert.equal(install.exitCode, 0, install.stderr);
    assert.ok(existsSync(join(repo.dir, '.githooks/pre-commit')));
    assert.ok(!existsSync(join(repo.dir, '.git/hooks/pre-commit')));
    const status = JSON.parse(repo.devsCtx(['hook', 'status', '--json'], { cwd: join(repo.dir, 'sessions') }).stdout) as HookStatusReport;
    assert.equal(status.hooksDir, join(repo.dir, '.githooks'));
    assert.equal(status.hooksPath, '.githooks');
    const result = commit(repo, 'hookspath');
    assert.equal(result.exitCode, 0, result.stderr);
    assert.ok(readFileSync(repo.transcript, 'utf8').includes(SUMMARY));
  });

  test('a linked worktree shares the hook; each worktree prunes its own transcripts', () => {
    const repo = projectRepo('worktree', { window: 4000, fixture: QUIET });
    assert.equal(commit(repo, 'base').exitCode, 0);
    const wt = join(repo.dir, '..', 'wt');
    assert.equal(repo.git(['worktree', 'add', '-q', wt]).exitCode, 0);
    const install = repo.devsCtx(['hook', 'install'], { cwd: wt });
    assert.equal(install.exitCode, 0, install.stderr);
    assert.ok(existsSync(join(repo.dir, '.git/hooks/pre-commit')), 'installed in the common hooks folder');
    const wtTranscript = join(wt, 'sessions/agent.jsonl');
    repo.copyFixture(OVER_SOFT, '../wt/sessions/agent.jsonl');
    const result = commit(repo, 'in-worktree', { cwd: wt });
    assert.equal(result.exitCode, 0, result.stderr);
    assert.match(result.stderr, /devs-ctx: sessions\/agent\.jsonl: pruned/);
    assert.ok(readFileSync(wtTranscript, 'utf8').includes(SUMMARY));
    assert.ok(!readFileSync(repo.transcript, 'utf8').includes(SUMMARY), "the main work tree's transcript is its own");
  });
});

describe('hook status', () => {
  test('--json: installed, where, for which hook, which transcripts', () => {
    const repo = projectRepo('status', { window: 4000 });
    const none = JSON.parse(repo.devsCtx(['hook', 'status', '--json']).stdout) as HookStatusReport;
    assert.equal(none.installed, false);
    assert.deepEqual(none.hooks, []);
    assert.deepEqual(none.wouldCover?.patterns, [{ pattern: 'sessions/*.jsonl', files: [repo.transcript] }]);

    assert.equal(repo.devsCtx(['hook', 'install', '--hook', 'post-commit', '--block-on', 'soft']).exitCode, 0);
    const result = repo.devsCtx(['hook', 'status', '--json']);
    assert.equal(result.exitCode, 0);
    assert.equal(result.stderr, '');
    const status = JSON.parse(result.stdout) as HookStatusReport;
    assert.equal(status.schemaVersion, 1);
    assert.equal(status.installed, true);
    assert.equal(status.repository, repo.dir);
    assert.equal(status.hooksDir, join(repo.dir, '.git/hooks'));
    assert.equal(status.hooksPath, null);
    assert.equal(status.hooks.length, 1);
    const [hook] = status.hooks;
    assert.deepEqual(
      { hook: hook?.hook, path: hook?.path, blockOn: hook?.blockOn, refresh: hook?.refresh, previous: hook?.previous, modified: hook?.modified },
      { hook: 'post-commit', path: join(repo.dir, '.git/hooks/post-commit'), blockOn: 'soft', refresh: true, previous: null, modified: false },
    );
    assert.deepEqual(hook?.runner, { node: process.execPath, bin, binPresent: true, fallback: 'npx --no-install devs-ctx' });
    assert.deepEqual(hook?.transcripts, {
      source: 'config',
      config: join(repo.dir, 'devs-ctx.config.json'),
      patterns: [{ pattern: 'sessions/*.jsonl', files: [repo.transcript] }],
    });

    const text = repo.devsCtx(['hook', 'status']);
    assert.equal(text.exitCode, 0);
    assertGolden('hook-status', normalised(text, repo));

    const listed = repo.devsCtx(['hook', 'status', '--print-transcripts', '--hook', 'post-commit']);
    assert.deepEqual(listed, { exitCode: 0, stdout: `${repo.transcript}\n`, stderr: '' });
  });
});

describe('hook install --stdout (for husky and lefthook)', () => {
  test('prints a portable script (npx, no paths of this machine) and installs nothing', () => {
    const repo = projectRepo('stdout', { window: 4000 });
    const result = repo.devsCtx(['hook', 'install', '--stdout']);
    assert.equal(result.exitCode, 0, result.stderr);
    assert.ok(!existsSync(join(repo.dir, '.git/hooks/pre-commit')));
    assert.ok(!result.stdout.includes(repo.dir) && !result.stdout.includes(bin));
    assertGolden('hook-script-stdout', result);

    // Run the way .husky/pre-commit would (`sh .husky/devs-ctx.sh`), with neither node nor npx on PATH: it says so and does not block.
    repo.write('.husky/devs-ctx.sh', result.stdout);
    const run = spawnSync('/bin/sh', ['.husky/devs-ctx.sh'], { cwd: repo.dir, env: { ...repo.env, PATH: join(repo.dir, 'no-such-dir') }, encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stderr, /^devs-ctx: not found \(no installed copy, npx --no-install devs-ctx\); pre-commit hook skipped\n$/);

    // With the project's devs-ctx reachable through npx (a stand-in npx here), called from a hook
    // manager's own hook file: it prunes, like the installed hook.
    const fakeBin = join(repo.dir, '..', 'fake-bin');
    mkdirSync(fakeBin);
    writeFileSync(join(fakeBin, 'npx'), `#!/bin/sh\n[ "$1 $2" = "--no-install devs-ctx" ] || exit 1\nshift 2\nexec '${process.execPath}' '${bin}' "$@"\n`, {
      mode: 0o755,
    });
    repo.write('.husky/pre-commit', '#!/bin/sh\nsh .husky/devs-ctx.sh\n');
    chmodSync(join(repo.dir, '.husky/pre-commit'), 0o755);
    repo.git(['config', 'core.hooksPath', '.husky']);
    repo.git(['add', '-A']);
    const committed = repo.git(['commit', '-q', '-m', 'husky'], { env: { PATH: `${fakeBin}:${process.env['PATH'] ?? ''}` } });
    assert.equal(committed.exitCode, 0, committed.stderr);
    assert.match(committed.stderr, /^devs-ctx: sessions\/agent\.jsonl: pruned 2,211 → \d+ tokens, refreshed\n$/);
    assert.ok(readFileSync(repo.transcript, 'utf8').includes(SUMMARY));
  });
});

describe('errors', () => {
  test('not a git repository: exit 3 with a clear message', () => {
    const dir = tempRepo('norepo', { init: false });
    dir.write('devs-ctx.config.json', '{"transcripts":["*.jsonl"]}\n');
    const result = dir.devsCtx(['hook', 'install']);
    assert.equal(result.exitCode, 3);
    assert.match(result.stderr, /^devs-ctx: .* is not in a git repository/);
    assert.match(result.stderr, /hint: run devs-ctx hook in the repository/);
    assert.equal(dir.devsCtx(['hook', 'status']).exitCode, 3);
    const json = dir.devsCtx(['hook', 'status', '--json']);
    assert.equal(json.exitCode, 3);
    assert.equal(JSON.parse(json.stdout).error.code, 'input');
  });

  test('an unknown hook name: exit 2, naming the hooks there are', () => {
    const repo = projectRepo('badhook', { window: 4000 });
    const result = repo.devsCtx(['hook', 'install', '--hook', 'pre-comit']);
    assert.equal(result.exitCode, 2);
    assert.match(result.stderr, /--hook pre-comit: not a git hook; one of applypatch-msg, .*pre-commit/);
    assert.equal(repo.devsCtx(['hook', 'status', '--hook', 'nope']).exitCode, 2);
    assert.equal(repo.devsCtx(['hook', 'install', '--block-on', 'always']).exitCode, 2);
  });

  test('no transcripts configured: exit 2, saying how to name them', () => {
    const repo = tempRepo('notranscripts');
    const result = repo.devsCtx(['hook', 'install']);
    assert.equal(result.exitCode, 2);
    assert.match(result.stderr, /no transcripts to watch/);
    repo.write('devs-ctx.config.json', '{"window": 4000}\n');
    const withConfig = repo.devsCtx(['hook', 'install']);
    assert.equal(withConfig.exitCode, 2);
    assert.match(withConfig.stderr, /names no "transcripts"/);
    repo.write('devs-ctx.config.json', '{"transcripts": "sessions/*.jsonl"}\n');
    const bad = repo.devsCtx(['hook', 'install']);
    assert.equal(bad.exitCode, 2);
    assert.match(bad.stderr, /key "transcripts" .*an array of paths or globs/);
  });
});

describe('the hook script and its globs (pure)', () => {
  const settings: HookSettings = {
    schemaVersion: 1,
    hook: 'pre-commit',
    devsCtxVersion: '0.0.0',
    blockOn: 'none',
    refresh: true,
    config: "it's here/devs-ctx.config.json",
    transcripts: null,
    previous: '.devs-ctx-previous/pre-commit',
    runner: { node: '/usr/bin/node', bin: '/opt/devs ctx/bin/devs-ctx.js' },
  };

  test('is valid sh, quotes every path, and knows itself (edits detected)', () => {
    const script = renderHookScript(settings);
    const check = spawnSync('sh', ['-n'], { input: script, encoding: 'utf8' });
    assert.equal(check.status, 0, check.stderr);
    assert.ok(script.includes(`config='it'\\''s here/devs-ctx.config.json'`));
    const parsed = parseHookScript(script);
    assert.equal(parsed.kind, 'devs-ctx');
    assert.equal(parsed.kind === 'devs-ctx' && parsed.modified, false);
    const edited = parseHookScript(script.replace('exit 0\n', 'exit 0\n# mine\n'));
    assert.equal(edited.kind === 'devs-ctx' && edited.modified, true);
    assert.equal(parseHookScript('#!/bin/sh\nnpm test\n').kind, 'foreign');
  });

  test('globs: * and ? stay in a segment, no leading dot, [] and {} work', () => {
    const cases: [string, string, boolean][] = [
      ['*.jsonl', 'a.jsonl', true],
      ['*.jsonl', '.hidden.jsonl', false],
      ['.*.jsonl', '.hidden.jsonl', true],
      ['s?.jsonl', 's1.jsonl', true],
      ['[ab].json', 'b.json', true],
      ['[!ab].json', 'b.json', false],
      ['*.{json,jsonl}', 'x.json', true],
      ['*.{json,jsonl}', 'x.txt', false],
      ['a+b(1).jsonl', 'a+b(1).jsonl', true],
    ];
    for (const [pattern, name, expected] of cases) assert.equal(segmentRegExp(pattern).test(name), expected, `${pattern} vs ${name}`);
  });
});

describe('the hook reaches only the files it covers', () => {
  test('a file name holding newlines cannot smuggle another path in (and --print-transcripts --null lists it NUL-separated)', () => {
    const repo = projectRepo('smuggle', { window: 4000, fixture: QUIET });
    const decoy = repo.copyFixture(OVER_SOFT, 'root.jsonl');
    repo.write('.gitignore', 'sessions/\nroot.jsonl\n');
    const tricky = repo.copyFixture(OVER_SOFT, 'sessions/a\nroot.jsonl\nz.jsonl');
    const decoyBytes = readFileSync(decoy);
    assert.equal(repo.devsCtx(['hook', 'install', '--no-refresh']).exitCode, 0);

    const lines = repo.devsCtx(['hook', 'status', '--print-transcripts']);
    assert.equal(lines.exitCode, 0, lines.stderr);
    assert.equal(lines.stdout, `${repo.transcript}\n`, 'one path a line leaves the name with line breaks out');
    assert.match(lines.stderr, /left out ".*a\\nroot\.jsonl\\nz\.jsonl": its name holds a line break \(use --null\)/);
    const nul = repo.devsCtx(['hook', 'status', '--print-transcripts', '--null']);
    assert.equal(nul.exitCode, 0, nul.stderr);
    assert.deepEqual(
      nul.stdout.split('\0'),
      [tricky, repo.transcript, ''].sort((a, b) => (a === '' ? 1 : b === '' ? -1 : a < b ? -1 : 1)),
    );

    const result = commit(repo, 'smuggle');
    assert.equal(result.exitCode, 0, result.stderr);
    assert.ok(readFileSync(decoy).equals(decoyBytes), 'root.jsonl, which no pattern covers, is untouched');
    assert.ok(readFileSync(tricky, 'utf8').includes(SUMMARY), 'the file with the odd name is pruned, as covered');
  });

  test("a project's transcripts stay inside the repository (absolute, .., symlinks out) unless the user's own config allows more", () => {
    const repo = tempRepo('confine');
    const outside = join(repo.dir, '..', 'outside');
    mkdirSync(outside);
    const victim = join(outside, 'live.jsonl');
    writeFileSync(victim, readFileSync(join(repoRoot, 'fixtures', OVER_SOFT)));
    const victimBytes = readFileSync(victim);
    symlinkSync(outside, join(repo.dir, 'linked'));
    repo.write('.gitignore', 'linked\n');
    repo.write(
      'devs-ctx.config.json',
      `${JSON.stringify({ window: 4000, transcripts: ['../outside/*.jsonl', victim, 'linked/*.jsonl', '/**/live.jsonl'] })}\n`,
    );
    assert.equal(repo.devsCtx(['hook', 'install', '--no-refresh']).exitCode, 0);

    const status = repo.devsCtx(['hook', 'status', '--json']);
    const covered = (JSON.parse(status.stdout) as HookStatusReport).hooks[0]?.transcripts;
    assert.deepEqual(
      covered?.patterns.map((p) => [p.pattern, p.files.length, /outside the repository/.test(p.refused ?? '')]),
      [
        ['../outside/*.jsonl', 0, true],
        [victim, 0, true],
        ['linked/*.jsonl', 0, true],
        ['/**/live.jsonl', 0, true],
      ],
    );
    const listed = repo.devsCtx(['hook', 'status', '--print-transcripts', '--null']);
    assert.equal(listed.stdout, '');
    assert.match(listed.stderr, /"\.\.\/outside\/\*\.jsonl" in .*: outside the repository .*; left out \(.*allowTranscriptsOutsideRepository/);
    const result = commit(repo, 'confined');
    assert.equal(result.exitCode, 0, result.stderr);
    assert.match(result.stderr, /no transcript found/);
    assert.ok(readFileSync(victim).equals(victimBytes), 'the file outside the repository is untouched');

    // The user's own config (not the project's) may allow more.
    const userConfig = join(repo.env['HOME']!, '.config', 'devs-ctx', 'config.json');
    mkdirSync(dirname(userConfig), { recursive: true });
    writeFileSync(userConfig, JSON.stringify({ allowTranscriptsOutsideRepository: true }));
    repo.write('devs-ctx.config.json', `${JSON.stringify({ window: 4000, transcripts: ['../outside/*.jsonl'] })}\n`);
    const allowed = repo.devsCtx(['hook', 'status', '--print-transcripts', '--null']);
    assert.equal(allowed.stdout, `${victim}\0`);
    const second = commit(repo, 'allowed');
    assert.equal(second.exitCode, 0, second.stderr);
    assert.ok(readFileSync(victim, 'utf8').includes(SUMMARY), 'allowed: pruned');
  });
});

describe('transcript patterns in a folder whose name has glob characters', () => {
  test('only the pattern is a glob, not the folder it is relative to: paths and globs find their files', () => {
    const home = join(mkdtempSync(join(tmpdir(), 'devs-ctx-globdir-')), 'h{o}me[1]');
    const repo = join(home, 'br{a,b} [x]*?');
    mkdirSync(join(repo, 'sessions'), { recursive: true });
    for (const file of ['s.jsonl', join('sessions', 'a.jsonl'), join('sessions', 'b.jsonl')]) writeFileSync(join(repo, file), '{}\n');
    const found = expandTranscripts(['s.jsonl', '*.jsonl', 'sessions/*.jsonl'], repo, home, { root: repo });
    assert.deepEqual(
      found.map((m) => [m.pattern, m.files.map((f) => f.slice(repo.length + 1)), m.refused ?? null]),
      [
        ['s.jsonl', ['s.jsonl'], null],
        ['*.jsonl', ['s.jsonl'], null],
        ['sessions/*.jsonl', [join('sessions', 'a.jsonl'), join('sessions', 'b.jsonl')], null],
      ],
    );
    // From home (`~/`), whose name has them too (the hook's own --transcript patterns, not confined).
    const fromHome = expandTranscripts(['~/*/sessions/b.jsonl'], repo, home);
    assert.deepEqual(fromHome[0]?.files, [join(repo, 'sessions', 'b.jsonl')]);
  });
});
