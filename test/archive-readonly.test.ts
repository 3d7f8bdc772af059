import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, writeSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { runCli } from './helpers/cli.js';
import { repoRoot } from './helpers/realdata.js';

/**
 * `restore` and `recall` on an archive they cannot write, and on a damaged one, end to end.
 */

// 17 turns over the soft limit of --window 4000; turn r2 holds "marmalade-heron" and is dropped.
const OVER_SOFT = 'fixtures/devs/over-soft-limit.jsonl';

/** Folders holding paths made immutable; their workspace's cleanup undoes it. */
const immutable = new Set<string>();

function workspace(t: { after(fn: () => void): void }): { dir: string; archiveDir: string; archive: string; env: Record<string, string> } {
  const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-ro-'));
  const archiveDir = mkdtempSync(join(tmpdir(), 'devs-ctx-ro-archive-'));
  const archive = join(archiveDir, 'archive.sqlite');
  t.after(() => {
    // Hooks run in the order they were added: make the files removable again first.
    if (immutable.has(archiveDir)) spawnSync('chattr', ['-i', archive, archiveDir]);
    rmSync(dir, { recursive: true, force: true });
    rmSync(archiveDir, { recursive: true, force: true });
  });
  return { dir, archiveDir, archive, env: { DEVS_CTX_ARCHIVE: archive } };
}

function prunedWorkspace(t: { after(fn: () => void): void }): ReturnType<typeof workspace> {
  const w = workspace(t);
  copyFileSync(join(repoRoot, OVER_SOFT), join(w.dir, 's.jsonl'));
  const pruned = runCli(['prune', 's.jsonl', '-o', 'out.jsonl', '--window', '4000'], { cwd: w.dir, env: w.env });
  assert.equal(pruned.exitCode, 0, pruned.stderr);
  return w;
}

/**
 * Makes paths immutable (chattr +i): even root cannot write, create or delete there, which is what a
 * read-only mount or another user's 0400 archive does to a normal user (tests run as root, and root
 * ignores file modes). Undone by the workspace's cleanup.
 */
function makeImmutable(t: { skip(message: string): void }, paths: readonly string[]): boolean {
  const done = spawnSync('chattr', ['+i', ...paths], { encoding: 'utf8' });
  if (done.error || done.status !== 0) {
    t.skip(`chattr +i is not available here (${done.error?.message ?? done.stderr.trim()})`);
    return false;
  }
  for (const path of paths) immutable.add(dirname(path)).add(path);
  return true;
}

test('restore and recall work on an archive in a folder nobody may write (no -shm can be created)', (t) => {
  const { dir, archiveDir, archive, env } = prunedWorkspace(t);
  if (!makeImmutable(t, [archive, archiveDir])) return;
  const restored = runCli(['restore', 'out.jsonl', '-o', 'back.jsonl'], { cwd: dir, env });
  assert.equal(restored.exitCode, 0, restored.stderr);
  assert.deepEqual(readFileSync(join(dir, 'back.jsonl')), readFileSync(join(dir, 's.jsonl')));
  // No prune has indexed the archive yet: the search indexes it in memory.
  const recalled = runCli(['recall', 'marmalade', '--json'], { cwd: dir, env });
  assert.equal(recalled.exitCode, 0, recalled.stderr);
  assert.deepEqual(
    (JSON.parse(recalled.stdout) as { hits: { turnId: string }[] }).hits.map((h) => h.turnId),
    ['r2'],
  );
  const turn = runCli(['recall', '--turn', 'r2'], { cwd: dir, env });
  assert.equal(turn.exitCode, 0, turn.stderr);
  assert.match(turn.stdout, /marmalade/);
});

test('archive copy --from an archive nobody may write copies it, and leaves it as it was', (t) => {
  const { dir, archiveDir, archive, env } = prunedWorkspace(t);
  if (!makeImmutable(t, [archive, archiveDir])) return;
  const before = readFileSync(archive);
  const copied = runCli(['archive', 'copy', '--from', archive, '--to', join(dir, 'copy.sqlite'), '--json'], { cwd: dir, env });
  assert.equal(copied.exitCode, 0, copied.stdout + copied.stderr);
  assert.equal((JSON.parse(copied.stdout) as { copied: number }).copied, 1);
  assert.deepEqual(readFileSync(archive), before);
});

test('restore and recall work on a read-only archive file in a writable folder', (t) => {
  const { dir, archive, env } = prunedWorkspace(t);
  if (!makeImmutable(t, [archive])) return;
  const before = readFileSync(archive);
  const restored = runCli(['restore', 'out.jsonl'], { cwd: dir, env });
  assert.equal(restored.exitCode, 0, restored.stderr);
  assert.equal(restored.stdout, readFileSync(join(dir, 's.jsonl'), 'utf8'));
  const recalled = runCli(['recall', 'marmalade'], { cwd: dir, env });
  assert.equal(recalled.exitCode, 0, recalled.stderr);
  assert.match(recalled.stdout, /^r2 /m);
  assert.deepEqual(readFileSync(archive), before, 'the archive is untouched');
});

test('a damaged archive page: restore and recall exit 3 naming the archive and the integrity check', (t) => {
  const { dir, archive, env } = prunedWorkspace(t);
  // Every page after the first (the schema's) overwritten: the rows restore reads are garbage.
  const pageSize = readFileSync(archive).readUInt16BE(16);
  const size = statSync(archive).size;
  const fd = openSync(archive, 'r+');
  try {
    const junk = Buffer.alloc(size - pageSize * 2, 0xa5);
    writeSync(fd, junk, 0, junk.length, pageSize * 2);
  } finally {
    closeSync(fd);
  }
  for (const args of [
    ['restore', 'out.jsonl'],
    ['recall', 'marmalade'],
  ]) {
    const result = runCli(args, { cwd: dir, env });
    assert.equal(result.exitCode, 3, `${args[0]}: ${result.stderr}`);
    assert.ok(result.stderr.includes(`the archive at ${archive} is damaged`), result.stderr);
    assert.ok(result.stderr.includes(`sqlite3 ${archive} "PRAGMA integrity_check"`), result.stderr);
    assert.doesNotMatch(result.stderr, /bug/);
  }
});
