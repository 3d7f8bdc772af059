import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { tempRepo } from './helpers/git-repo.js';
import type { TempRepo } from './helpers/git-repo.js';

/**
 * The git hook in one process [issue 17 §4]: it acts only on transcripts that changed since its last
 * run, and a pruned transcript git tracks is what gets committed (or the hook says it is not).
 */

const OVER_SOFT = 'devs/over-soft-limit.jsonl';
const QUIET = 'devs/node-change-resets-refresh.jsonl';
const devsCtxLines = (stderr: string): string[] => stderr.split('\n').filter((l) => l.startsWith('devs-ctx'));

function repoWith(prefix: string, tracked: boolean): TempRepo {
  const repo = tempRepo(prefix);
  if (!tracked) repo.write('.gitignore', 'sessions/\n');
  repo.write('devs-ctx.config.json', `${JSON.stringify({ window: 4000, transcripts: ['sessions/*.jsonl'] }, null, 2)}\n`);
  return repo;
}

describe('hook run', () => {
  test('a tracked transcript the hook prunes is staged, so the commit holds the pruned file', () => {
    const repo = repoWith('tracked', true);
    const transcript = repo.copyFixture(OVER_SOFT, 'sessions/agent.jsonl');
    assert.equal(repo.devsCtx(['hook', 'install', '--no-refresh']).exitCode, 0);
    repo.git(['add', '-A']);
    const result = repo.git(['commit', '-q', '-m', 'with transcript']);
    assert.equal(result.exitCode, 0, result.stderr);
    assert.match(devsCtxLines(result.stderr).join('\n'), /^devs-ctx: sessions\/agent\.jsonl: pruned [\d,]+ → [\d,]+ tokens, staged$/);
    const committed = repo.git(['show', 'HEAD:sessions/agent.jsonl']).stdout;
    assert.equal(committed, readFileSync(transcript, 'utf8'), 'the commit holds the pruned transcript');
    assert.equal(repo.git(['status', '--porcelain']).stdout, '', 'nothing left over');
  });

  test('a tracked transcript with unstaged changes is pruned but not staged, and the hook says so', () => {
    const repo = repoWith('unstaged', true);
    const transcript = repo.copyFixture(QUIET, 'sessions/agent.jsonl');
    repo.git(['add', '-A']);
    repo.git(['commit', '-q', '-m', 'base']);
    assert.equal(repo.devsCtx(['hook', 'install', '--no-refresh']).exitCode, 0);
    // The working copy grows over the limit, but only another file is staged.
    writeFileSync(transcript, readFileSync(join(process.cwd(), 'fixtures', OVER_SOFT)));
    repo.write('notes.txt', 'x\n');
    repo.git(['add', 'notes.txt']);
    const result = repo.git(['commit', '-q', '-m', 'notes only']);
    assert.equal(result.exitCode, 0, result.stderr);
    assert.match(devsCtxLines(result.stderr).join('\n'), /pruned .* tokens, not staged \(it has unstaged changes\).*git add sessions\/agent\.jsonl/);
    assert.equal(
      repo.git(['show', 'HEAD:sessions/agent.jsonl']).stdout,
      readFileSync(join(process.cwd(), 'fixtures', QUIET), 'utf8'),
      'the commit holds what was staged',
    );
  });

  test('transcripts unchanged since the last run are not read again; a changed one is', () => {
    const repo = repoWith('skip', false);
    const files = Array.from({ length: 25 }, (_, i) => repo.copyFixture(QUIET, `sessions/s${String(i).padStart(2, '0')}.jsonl`));
    // Whole seconds: a time set back later is then exactly the recorded one (no float rounding).
    const then = new Date('2026-01-01T00:00:00Z');
    for (const file of files) utimesSync(file, then, then);
    assert.equal(repo.devsCtx(['hook', 'install']).exitCode, 0);
    const first = repo.git(['commit', '-q', '--allow-empty', '-m', 'first']);
    assert.deepEqual(devsCtxLines(first.stderr), ['devs-ctx: nothing due (25 transcripts checked)']);
    // Garbage of the same size and the same mtime: the hook's record says unchanged, so it is not read.
    const target = files[3] as string;
    const stats = statSync(target);
    writeFileSync(target, 'x'.repeat(stats.size));
    utimesSync(target, then, then);
    const second = repo.git(['commit', '-q', '--allow-empty', '-m', 'second']);
    assert.deepEqual(devsCtxLines(second.stderr), ['devs-ctx: nothing due (25 transcripts checked)']);
    // Touched now: read, and found unreadable.
    utimesSync(target, new Date(), new Date(then.getTime() + 5000));
    const third = repo.git(['commit', '-q', '--allow-empty', '-m', 'third']);
    assert.match(devsCtxLines(third.stderr).join('\n'), /sessions\/s03\.jsonl: not analysed/);
    // Uninstall takes the record with the hook.
    assert.ok(existsSync(join(repo.dir, '.git', 'devs-ctx-hook-state', 'pre-commit.json')));
    assert.equal(repo.devsCtx(['hook', 'uninstall']).exitCode, 0);
    assert.equal(existsSync(join(repo.dir, '.git', 'devs-ctx-hook-state')), false);
  });

  test('a hooks folder git tracks (core.hooksPath=.githooks): the record goes to the git folder, so a commit leaves nothing new in the work tree', () => {
    const repo = repoWith('tracked-hooks', false);
    for (let i = 0; i < 2; i++) repo.copyFixture(QUIET, `sessions/s${i}.jsonl`);
    repo.write('.githooks/README', 'our hooks\n');
    repo.git(['config', 'core.hooksPath', '.githooks']);
    assert.equal(repo.devsCtx(['hook', 'install']).exitCode, 0);
    repo.git(['add', '-A']);
    assert.equal(repo.git(['commit', '-q', '-m', 'hooks']).exitCode, 0);
    assert.equal(repo.git(['commit', '-q', '--allow-empty', '-m', 'again']).exitCode, 0);
    assert.equal(repo.git(['status', '--porcelain', '--untracked-files=all']).stdout, '', 'nothing new in the work tree');
    assert.ok(existsSync(join(repo.dir, '.git', 'devs-ctx-hook-state', 'pre-commit.json')), 'the record is kept, in the git folder');
  });

  test("a FIFO in place of the hook's record is neither read nor written through: the commit goes on, as with no record", {
    skip: process.platform === 'win32',
  }, () => {
    const repo = repoWith('fifo', false);
    for (let i = 0; i < 3; i++) repo.copyFixture(QUIET, `sessions/s${i}.jsonl`);
    assert.equal(repo.devsCtx(['hook', 'install']).exitCode, 0);
    assert.equal(repo.git(['commit', '-q', '--allow-empty', '-m', 'first']).exitCode, 0);
    const record = join(repo.dir, '.git', 'devs-ctx-hook-state', 'pre-commit.json');
    assert.ok(existsSync(record));
    rmSync(record);
    assert.equal(spawnSync('mkfifo', [record]).status, 0);
    const second = repo.git(['commit', '-q', '--allow-empty', '-m', 'second'], { timeout: 120_000 });
    assert.equal(second.exitCode, 0, `the commit was still waiting after 2 minutes, or failed: ${second.stderr}`);
    assert.deepEqual(devsCtxLines(second.stderr), ['devs-ctx: nothing due (3 transcripts checked)']);
    assert.ok(lstatSync(record).isFIFO());
  });
});
