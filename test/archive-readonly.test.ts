import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
  closeSync,
} from 'node:fs';
import { loadSqlite } from '../src/archive/sqlite.js';
import { canRunAsAnotherUser, runAs } from './helpers/other-user.js';
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

test('as a user: their own archive in a folder they cannot write, its last prune still in the -wal, is read (recall, restore, archive copy)', (t) => {
  if (!canRunAsAnotherUser(t)) return;
  const w = prunedWorkspace(t);
  // A second prune, of a transcript saying quince where the first says marmalade: its writes stay in
  // the -wal, as a connection held open meanwhile keeps them from being folded into the archive.
  const Database = loadSqlite();
  const other = new Database(w.archive);
  other.prepare('SELECT count(*) FROM prune_events').get();
  writeFileSync(join(w.dir, 's2.jsonl'), readFileSync(join(repoRoot, OVER_SOFT), 'utf8').replaceAll('marmalade', 'quince'));
  const pruned = runCli(['prune', 's2.jsonl', '-o', 'out.jsonl', '--window', '4000'], { cwd: w.dir, env: w.env });
  assert.equal(pruned.exitCode, 0, pruned.stderr);
  const user = mkdtempSync(join(tmpdir(), 'devs-ctx-ro-user-'));
  t.after(() => rmSync(user, { recursive: true, force: true }));
  const archive = join(user, 'archive', 'archive.sqlite');
  mkdirSync(join(user, 'archive'));
  copyFileSync(w.archive, archive);
  copyFileSync(`${w.archive}-wal`, `${archive}-wal`);
  other.close();
  assert.ok(statSync(`${archive}-wal`).size > 0, 'the prune is in the -wal');
  copyFileSync(join(w.dir, 'out.jsonl'), join(user, 'out.jsonl'));
  for (const path of [user, join(user, 'out.jsonl'), archive, `${archive}-wal`, join(user, 'archive')]) chownSync(path, 65534, 65534);
  chmodSync(join(user, 'archive'), 0o555);
  const before = [readFileSync(archive), readFileSync(`${archive}-wal`)];
  const asUser = (args: readonly string[]) => runAs(65534, user, args, { TMPDIR: user, DEVS_CTX_ARCHIVE: archive });
  const recalled = asUser(['recall', 'quince']);
  assert.equal(recalled.status, 0, recalled.stderr);
  assert.match(recalled.stdout, /^r2 /m);
  const restored = asUser(['restore', 'out.jsonl']);
  assert.equal(restored.status, 0, restored.stderr);
  assert.equal(restored.stdout, readFileSync(join(w.dir, 's2.jsonl'), 'utf8'));
  const copied = asUser(['archive', 'copy', '--from', archive, '--to', join(user, 'copy.sqlite')]);
  assert.equal(copied.status, 0, copied.stderr);
  assert.deepEqual([readFileSync(archive), readFileSync(`${archive}-wal`)], before, 'the archive and its -wal are as they were');
});

test("another user's recall leaves nothing beside the archive that would stop its owner's next prune", (t) => {
  if (!canRunAsAnotherUser(t)) return;
  const owner = mkdtempSync(join(tmpdir(), 'devs-ctx-ro-owner-'));
  t.after(() => rmSync(owner, { recursive: true, force: true }));
  copyFileSync(join(repoRoot, OVER_SOFT), join(owner, 's.jsonl'));
  chownSync(owner, 65534, 65534);
  chownSync(join(owner, 's.jsonl'), 65534, 65534);
  chmodSync(owner, 0o1777); // a shared folder, as /tmp
  const archive = join(owner, 'archive.sqlite');
  const asOwner = (args: readonly string[]) => runAs(65534, owner, args, { DEVS_CTX_ARCHIVE: archive });
  const first = asOwner(['prune', 's.jsonl', '-o', 'out.jsonl', '--window', '4000']);
  assert.equal(first.status, 0, first.stderr);
  // Shared with the team: readable by all. Another user searches it.
  chmodSync(archive, 0o644);
  const reader = mkdtempSync(join(tmpdir(), 'devs-ctx-ro-reader-'));
  t.after(() => rmSync(reader, { recursive: true, force: true }));
  chownSync(reader, 1001, 1001);
  const recalled = runAs(1001, reader, ['recall', 'marmalade'], { DEVS_CTX_ARCHIVE: archive });
  assert.equal(recalled.status, 0, recalled.stderr);
  assert.match(recalled.stdout, /^r2 /m);
  for (const name of ['archive.sqlite-shm', 'archive.sqlite-wal']) {
    try {
      assert.equal(statSync(join(owner, name)).uid, 65534, `${name} is the owner's`);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
  const again = asOwner(['prune', 's.jsonl', '-o', 'out2.jsonl', '--window', '4000', '--force']);
  assert.equal(again.status, 0, again.stderr);
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

test('a damaged archive page: restore, recall and archive copy --from exit 3 naming the archive and the integrity check', (t) => {
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
    ['archive', 'copy', '--from', archive, '--to', join(dir, 'copy.sqlite')],
  ]) {
    const result = runCli(args, { cwd: dir, env });
    assert.equal(result.exitCode, 3, `${args[0]}: ${result.stderr}`);
    assert.ok(result.stderr.includes(`the archive at ${archive} is damaged`), result.stderr);
    assert.ok(result.stderr.includes(`sqlite3 ${archive} "PRAGMA integrity_check"`), result.stderr);
    assert.doesNotMatch(result.stderr, /bug/);
  }
});

test('hints name the flag that named the archive, and a file that is no database is said to be no archive', (t) => {
  const { dir, archive, env } = prunedWorkspace(t);
  writeFileSync(join(dir, 'notes.jsonl'), '{"a":1}\n'.repeat(200));
  const missing = runCli(['archive', 'copy', '--from', join(dir, 'missing.sqlite'), '--to', join(dir, 'x.sqlite')], { cwd: dir, env });
  assert.equal(missing.exitCode, 3);
  assert.match(missing.stderr, /hint: check the --from path/);
  const notArchive = runCli(['archive', 'copy', '--from', archive, '--to', join(dir, 'notes.jsonl')], { cwd: dir, env });
  assert.equal(notArchive.exitCode, 3);
  assert.match(notArchive.stderr, /notes\.jsonl is not a devs-ctx archive: not a SQLite database/);
  const recall = runCli(['recall', 'marmalade'], { cwd: dir, env: { DEVS_CTX_ARCHIVE: join(dir, 'notes.jsonl') } });
  assert.equal(recall.exitCode, 3);
  assert.match(recall.stderr, /not a devs-ctx archive/);
  assert.doesNotMatch(recall.stderr, /--no-archive/);
});

test("--archive naming another application's SQLite database: exit 3, and the database is left exactly as it was (not made an archive, not switched to WAL)", (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-foreign-db-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const other = join(dir, 'app.db');
  const db = new (loadSqlite())(other);
  db.exec("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes (body) VALUES ('mine')");
  db.close();
  const before = readFileSync(other);
  copyFileSync(join(repoRoot, 'fixtures', 'devs', 'over-soft-limit.jsonl'), join(dir, 's.jsonl'));
  for (const args of [
    ['prune', 's.jsonl', '--force', '--window', '4000', '-o', 'out.jsonl', '--archive', other],
    ['recall', 'anything', '--archive', other],
  ]) {
    const result = runCli(args, { cwd: dir });
    assert.equal(result.exitCode, 3, `${args[0]}: ${result.stderr}`);
    assert.match(result.stderr, /app\.db is a SQLite database of another application, not a devs-ctx archive/);
  }
  assert.ok(readFileSync(other).equals(before), 'the database is byte for byte as it was');
  assert.equal(existsSync(`${other}-wal`), false);
  assert.equal(existsSync(join(dir, 'out.jsonl')), false, 'nothing written');
});

test('--archive naming a folder: exit 3 saying so (restore, recall and prune), not a disk I/O error', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-archive-dir-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'archive'));
  copyFileSync(join(repoRoot, 'fixtures', 'devs', 'over-soft-limit.jsonl'), join(dir, 's.jsonl'));
  for (const args of [
    ['restore', 's.jsonl', '-o', 'r.jsonl', '--archive', 'archive'],
    ['recall', 'anything', '--archive', 'archive'],
    ['prune', 's.jsonl', '--force', '--window', '4000', '-o', 'out.jsonl', '--archive', 'archive'],
  ]) {
    const result = runCli(args, { cwd: dir });
    assert.equal(result.exitCode, 3, `${args[0]}: ${result.stderr}`);
    assert.match(result.stderr, /archive is a directory, not an archive/, args[0]);
  }
});
