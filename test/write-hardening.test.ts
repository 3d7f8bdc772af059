import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  closeSync,
  copyFileSync,
  existsSync,
  lstatSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { loadSqlite } from '../src/archive/sqlite.js';
import { ExitCode, InputError, InterruptedError } from '../src/core/errors.js';
import { Pacer } from '../src/core/pace.js';
import { preparePrune } from '../src/core/prune/engine.js';
import { countEntries } from '../src/core/accounting.js';
import { acquireLock, openWriters, tempPathFor } from '../src/io/atomic.js';
import { DEFAULT_PRUNER_CONFIG } from '../src/core/policy.js';
import { loadCounter } from '../src/core/tokens/encodings.js';
import { readTranscript } from '../src/formats/index.js';
import { parseDocument } from '../src/io/jsonl.js';
import { LocalEmbedder } from '../src/providers/local-embedder.js';
import { spawnChild } from './helpers/child.js';
import type { ChildExit, Spawned } from './helpers/child.js';
import { cliEnv, runCli } from './helpers/cli.js';
import { repoRoot } from './helpers/realdata.js';

/** Issue 13, the write path: what `-o` and `--in-place` must never do to the user's files. */

const OVER_SOFT = join(repoRoot, 'fixtures/devs/over-soft-limit.jsonl');
const BASIC = join(repoRoot, 'fixtures/devs/basic-session.jsonl');
const WINDOW = ['--window', '4000'];
const isRoot = process.getuid?.() === 0;

function workspace(prefix: string): { dir: string; archive: string; env: Record<string, string> } {
  const dir = mkdtempSync(join(tmpdir(), `devs-ctx-${prefix}-`));
  const archive = join(mkdtempSync(join(tmpdir(), `devs-ctx-${prefix}-archive-`)), 'archive.sqlite');
  return { dir, archive, env: { DEVS_CTX_ARCHIVE: archive } };
}

function copyIn(dir: string, from = OVER_SOFT, name = 's.jsonl'): string {
  const path = join(dir, name);
  copyFileSync(from, path);
  return path;
}

/** Spawns `prune` paused (test hook) at `phase`; sends `signal` when it says it is there. */
async function interruptAt(phase: string, signal: NodeJS.Signals, args: readonly string[], cwd: string, env: Record<string, string>): Promise<ChildExit> {
  const run = spawnChild(process.execPath, [join(repoRoot, 'bin/devs-ctx.js'), ...args], { cwd, env: cliEnv({ DEVS_CTX_TEST_PAUSE: phase, ...env }) });
  await run.printed(new RegExp(`test pause at ${phase}`));
  run.child.kill(signal);
  return run.exited;
}

/** Prune events in the archive (0 when there is none yet). */
function pruneEvents(archive: string): number {
  if (!existsSync(archive)) return 0;
  const Database = loadSqlite();
  const db = new Database(archive, { readonly: true });
  try {
    return db.prepare('SELECT count(*) FROM prune_events').pluck().get() as number;
  } finally {
    db.close();
  }
}

/** A character device like /dev/null (or /dev/full) in `dir`: made with mknod as root; the real one otherwise (which only root could replace). */
function device(dir: string, name: 'null' | 'full'): string {
  if (!isRoot) return `/dev/${name}`;
  const path = join(dir, name);
  const made = spawnSync('mknod', ['-m', '666', path, 'c', '1', name === 'null' ? '3' : '7']);
  assert.equal(made.status, 0, String(made.stderr));
  return path;
}

/** A process holding `path` open (`>>`: with O_APPEND, as an agent does; `<`: reading), until its stdin closes. */
async function holdOpen(path: string, how: '>>' | '<' = '>>'): Promise<Spawned> {
  const held = spawnChild('sh', ['-c', `exec 3${how}"$1"; echo ready; read line`, 'sh', path]);
  await held.printed(/ready/);
  return held;
}

async function stop(held: Spawned): Promise<void> {
  held.child.stdin?.end();
  await held.exited;
}

describe('-o never replaces what is not a regular file (item 1)', () => {
  test('a character device stays a device, for prune, restore, refresh and init --force --config', () => {
    const { dir, env } = workspace('dev');
    const dev = device(dir, 'null');
    copyIn(dir);
    const prune = runCli(['prune', 's.jsonl', '-o', dev, ...WINDOW], { cwd: dir, env });
    assert.equal(prune.exitCode, 0, prune.stderr);
    assert.ok(lstatSync(dev).isCharacterDevice(), 'prune -o left the device a device');
    // restore needs a pruned file to undo
    assert.equal(runCli(['prune', 's.jsonl', '-o', 'p.jsonl', ...WINDOW], { cwd: dir, env }).exitCode, 0);
    const restore = runCli(['restore', 'p.jsonl', '-o', dev], { cwd: dir, env });
    assert.equal(restore.exitCode, 0, restore.stderr);
    assert.ok(lstatSync(dev).isCharacterDevice(), 'restore -o left the device a device');
    copyIn(dir, BASIC, 'b.jsonl');
    const refresh = runCli(['refresh', 'b.jsonl', '-o', dev], { cwd: dir, env });
    assert.equal(refresh.exitCode, 0, refresh.stderr);
    assert.ok(lstatSync(dev).isCharacterDevice(), 'refresh -o left the device a device');
    const init = runCli(['init', '--yes', '--force', '--config', dev], { cwd: dir, env });
    assert.equal(init.exitCode, 0, init.stderr);
    assert.ok(lstatSync(dev).isCharacterDevice(), 'init --config left the device a device');
    assert.deepEqual(
      readdirSync(dir).filter((n) => n.includes('.tmp')),
      [],
      'no temporary file left',
    );
  });

  test('--in-place on a FIFO is a usage error before anything is read (it would wait for a writer for good, deaf to Ctrl-C)', () => {
    const { dir, archive, env } = workspace('fifo-in-place');
    const fifo = join(dir, 'session.jsonl');
    assert.equal(spawnSync('mkfifo', [fifo]).status, 0);
    for (const args of [
      ['prune', 'session.jsonl', '--in-place', ...WINDOW],
      ['refresh', 'session.jsonl', '--in-place', '--force'],
      ['restore', 'session.jsonl', '--in-place'],
    ]) {
      // No writer ever opens the FIFO: a run that read it would wait here (the guard fails the test).
      const result = spawnSync(process.execPath, [join(repoRoot, 'bin/devs-ctx.js'), ...args], {
        cwd: dir,
        env: cliEnv(env),
        encoding: 'utf8',
        timeout: 60_000,
      });
      assert.equal(result.signal, null, `${args[0]}: still waiting`);
      assert.equal(result.status, 2, `${args[0]}: ${result.stderr}`);
      assert.match(result.stderr, /--in-place needs a regular file, and session\.jsonl is a FIFO/);
      assert.deepEqual(readdirSync(dir), ['session.jsonl'], `${args[0]}: no lock`);
    }
    assert.equal(pruneEvents(archive), 0);
  });

  test('-o to a FIFO nobody reads waits as a shell does, but Ctrl-C ends the wait: exit 130, nothing written, nothing archived', async () => {
    const { dir, archive, env } = workspace('fifo-no-reader');
    copyIn(dir);
    const fifo = join(dir, 'pipe');
    assert.equal(spawnSync('mkfifo', [fifo]).status, 0);
    const result = await interruptAt('fifo', 'SIGINT', ['prune', 's.jsonl', '-o', 'pipe', ...WINDOW], dir, env);
    assert.equal(result.signal, null, `ended by ${result.signal}`);
    assert.equal(result.code, ExitCode.interrupted, result.stderr);
    assert.match(result.stderr, /nothing was written/);
    assert.equal(pruneEvents(archive), 0, 'the prune was taken back out of the archive');
    assert.ok(lstatSync(fifo).isFIFO(), 'still a FIFO');
    assert.deepEqual(readdirSync(dir).sort(), ['pipe', 's.jsonl']);
  });

  test('init --config naming a FIFO nobody reads waits, but Ctrl-C ends the wait: exit 130, nothing written', async () => {
    const { dir, env } = workspace('init-fifo');
    const fifo = join(dir, 'config.json');
    assert.equal(spawnSync('mkfifo', [fifo]).status, 0);
    const result = await interruptAt('fifo', 'SIGINT', ['init', '--yes', '--force', '--config', 'config.json'], dir, env);
    assert.equal(result.signal, null, `ended by ${result.signal}`);
    assert.equal(result.code, ExitCode.interrupted, result.stderr);
    assert.match(result.stderr, /nothing was written/);
    assert.ok(lstatSync(fifo).isFIFO(), 'still a FIFO');
    assert.deepEqual(readdirSync(dir), ['config.json']);
    // With a reader, the config goes through the FIFO, as -o's transcript does.
    const reader = spawnChild('cat', [fifo]);
    const init = runCli(['init', '--yes', '--force', '--config', 'config.json'], { cwd: dir, env });
    const read = await reader.exited;
    assert.equal(init.exitCode, 0, init.stderr);
    assert.match(read.stdout, /"pinnedTypes"/);
    assert.ok(lstatSync(fifo).isFIFO(), 'still a FIFO');
  });

  test('a FIFO is written through (its reader gets the transcript) and stays a FIFO', async () => {
    const { dir, env } = workspace('fifo');
    copyIn(dir);
    const fifo = join(dir, 'pipe');
    assert.equal(spawnSync('mkfifo', [fifo]).status, 0);
    const reader = spawnChild('cat', [fifo]);
    const prune = runCli(['prune', 's.jsonl', '-o', fifo, ...WINDOW], { cwd: dir, env });
    const read = await reader.exited;
    assert.equal(prune.exitCode, 0, prune.stderr);
    assert.ok(lstatSync(fifo).isFIFO(), 'still a FIFO');
    assert.match(read.stdout, /\[Context Summary\]/);

    // Through a symlink (as /dev/stdout is one to /proc/self/fd/1): the pipe is written, the link kept.
    symlinkSync(fifo, join(dir, 'to-pipe'));
    const reader2 = spawnChild('cat', [fifo]);
    const viaLink = runCli(['prune', 's.jsonl', '-o', 'to-pipe', ...WINDOW], { cwd: dir, env });
    const read2 = await reader2.exited;
    assert.equal(viaLink.exitCode, 0, viaLink.stderr);
    assert.ok(lstatSync(join(dir, 'to-pipe')).isSymbolicLink() && lstatSync(fifo).isFIFO());
    assert.match(read2.stdout, /\[Context Summary\]/);
  });

  test('a link to a pipe that has no path of its own (/dev/stdout → /proc/self/fd/1 → pipe:[…]) is written through', {
    skip: process.platform !== 'linux' && '/proc is Linux',
  }, () => {
    const { dir, env } = workspace('stdoutlink');
    copyIn(dir);
    symlinkSync('/proc/self/fd/1', join(dir, 'my-stdout'));
    // A shell pipeline, so stdout is a pipe (spawnSync's own stdout is a socket).
    const result = spawnSync(
      'sh',
      ['-c', '"$@" | cat', 'sh', process.execPath, join(repoRoot, 'bin/devs-ctx.js'), 'prune', 's.jsonl', '-o', 'my-stdout', ...WINDOW],
      {
        cwd: dir,
        env: cliEnv(env),
        encoding: 'utf8',
      },
    );
    assert.equal(result.stderr, '');
    assert.match(result.stdout, /\[Context Summary\]/);
    assert.ok(lstatSync(join(dir, 'my-stdout')).isSymbolicLink());
  });

  test('a symlink is followed: its target is replaced atomically and the link stays a link; a dangling one is exit 3', () => {
    const { dir, env } = workspace('olink');
    copyIn(dir);
    writeFileSync(join(dir, 'target.jsonl'), 'old\n');
    symlinkSync(join(dir, 'target.jsonl'), join(dir, 'link.jsonl'));
    const result = runCli(['prune', 's.jsonl', '-o', 'link.jsonl', ...WINDOW], { cwd: dir, env });
    assert.equal(result.exitCode, 0, result.stderr);
    assert.ok(lstatSync(join(dir, 'link.jsonl')).isSymbolicLink(), 'the link is still a link');
    assert.match(readFileSync(join(dir, 'target.jsonl'), 'utf8'), /\[Context Summary\]/);

    symlinkSync(join(dir, 'missing', 'x.jsonl'), join(dir, 'dangling.jsonl'));
    const dangling = runCli(['prune', 's.jsonl', '-o', 'dangling.jsonl', ...WINDOW], { cwd: dir, env });
    assert.equal(dangling.exitCode, ExitCode.input, dangling.stderr);
    assert.match(dangling.stderr, /dangling\.jsonl: cannot write: it is a symbolic link to a file that does not exist/);
    assert.ok(lstatSync(join(dir, 'dangling.jsonl')).isSymbolicLink());
  });

  test("-o '' is a usage error (exit 2) for prune, refresh and restore, and writes nothing to stdout", () => {
    const { dir, env } = workspace('oempty');
    copyIn(dir);
    for (const args of [
      ['prune', 's.jsonl', '-o', '', ...WINDOW],
      ['refresh', 's.jsonl', '-o', ''],
      ['restore', 's.jsonl', '-o', ''],
    ]) {
      const result = runCli(args, { cwd: dir, env });
      assert.equal(result.exitCode, ExitCode.usage, `${args[0]}: ${result.stderr}`);
      assert.match(result.stderr, /-o needs a file name/);
      assert.equal(result.stdout, '');
    }
  });
});

describe('-o naming the input by another name is --in-place (item 4)', () => {
  test('through a symlinked folder: the lock is taken (a held lock is exit 7, the input untouched)', () => {
    const { dir, env } = workspace('alias');
    const path = copyIn(dir);
    symlinkSync(dir, join(dir, 'alias'));
    const original = readFileSync(path);
    // A live devs-ctx (this test process) holds the lock.
    writeFileSync(`${path}.devs-ctx.lock`, `${process.pid}\n`);
    for (const args of [
      ['prune', 's.jsonl', '-o', 'alias/s.jsonl', ...WINDOW],
      ['refresh', 's.jsonl', '-o', 'alias/s.jsonl', '--force'],
    ]) {
      const locked = runCli(args, { cwd: dir, env });
      assert.equal(locked.exitCode, ExitCode.locked, `${args[0]}: ${locked.stderr}`);
      assert.match(locked.stderr, /locked by another devs-ctx/);
      assert.ok(readFileSync(path).equals(original), 'the input is untouched');
    }
  });

  test('restore -o through a hard link or a symlinked folder replaces the file under its lock, keeping appended lines', () => {
    const { dir, env } = workspace('alias-restore');
    const path = copyIn(dir);
    const original = readFileSync(path);
    assert.equal(runCli(['prune', 's.jsonl', '--in-place', ...WINDOW], { cwd: dir, env }).exitCode, 0);
    symlinkSync(dir, join(dir, 'alias'));
    writeFileSync(`${path}.devs-ctx.lock`, `${process.pid}\n`);
    const locked = runCli(['restore', 's.jsonl', '-o', 'alias/s.jsonl'], { cwd: dir, env });
    assert.equal(locked.exitCode, ExitCode.locked, locked.stderr);
    writeFileSync(`${path}.devs-ctx.lock`, '');
    utimesSync(`${path}.devs-ctx.lock`, new Date(0), new Date(0));
    const restored = runCli(['restore', 's.jsonl', '-o', 'alias/s.jsonl'], { cwd: dir, env });
    assert.equal(restored.exitCode, 0, restored.stderr);
    assert.ok(readFileSync(path).equals(original));
    assert.equal(existsSync(`${path}.devs-ctx.lock`), false, 'the lock is released');
  });
});

describe('--in-place with an agent holding the file open for writing (item 5)', {
  skip: process.platform !== 'linux' && 'open writers are found through /proc (Linux)',
}, () => {
  test('prune, refresh and restore refuse with exit 7 naming the PID, write nothing, archive nothing and leave no lock', async () => {
    const { dir, archive, env } = workspace('writer');
    const path = copyIn(dir);
    const pruned = copyIn(dir, OVER_SOFT, 'p.jsonl');
    assert.equal(runCli(['prune', 'p.jsonl', '--in-place', ...WINDOW], { cwd: dir, env }).exitCode, 0);
    const events = pruneEvents(archive);
    const agent = await holdOpen(path);
    const agent2 = await holdOpen(pruned);
    try {
      assert.deepEqual(
        openWriters(path).map((w) => w.pid),
        [agent.child.pid],
      );
      const original = readFileSync(path);
      const prunedBytes = readFileSync(pruned);
      for (const [args, file, before] of [
        [['prune', 's.jsonl', '--in-place', ...WINDOW], path, original],
        [['refresh', 's.jsonl', '--in-place', '--force'], path, original],
        [['restore', 'p.jsonl', '--in-place'], pruned, prunedBytes],
      ] as const) {
        const result = runCli(args, { cwd: dir, env });
        assert.equal(result.exitCode, ExitCode.locked, `${args[0]}: ${result.stderr}`);
        const pid = file === path ? agent.child.pid : agent2.child.pid;
        assert.match(result.stderr, new RegExp(`in use by PID ${pid} \\(sh\\)`));
        assert.match(result.stderr, /run again when it stops/);
        assert.ok(readFileSync(file).equals(before), `${args[0]}: nothing written`);
        assert.equal(existsSync(`${file}.devs-ctx.lock`), false, `${args[0]}: the failed run removed its lock`);
      }
      assert.equal(pruneEvents(archive), events, 'the refused prune left no event in the archive (item 9)');
    } finally {
      await stop(agent);
      await stop(agent2);
    }
    const after = runCli(['prune', 's.jsonl', '--in-place', ...WINDOW], { cwd: dir, env });
    assert.equal(after.exitCode, 0, `once the writer is gone: ${after.stderr}`);
  });

  test('a reader does not block a prune', async () => {
    const { dir, env } = workspace('reader');
    const path = copyIn(dir);
    const reader = await holdOpen(path, '<');
    try {
      assert.deepEqual(openWriters(path), []);
      const result = runCli(['prune', 's.jsonl', '--in-place', ...WINDOW], { cwd: dir, env });
      assert.equal(result.exitCode, 0, result.stderr);
    } finally {
      await stop(reader);
    }
  });
});

describe('--in-place keeps owner, group and mode (item 6)', () => {
  test('mode 0666 survives whatever the umask, for prune, refresh and restore', () => {
    const { dir, env } = workspace('mode');
    const path = copyIn(dir);
    for (const args of [
      ['prune', 's.jsonl', '--in-place', ...WINDOW],
      ['refresh', 's.jsonl', '--in-place', '--force'],
      ['restore', 's.jsonl', '--in-place'],
    ]) {
      chmodSync(path, 0o666);
      const result = runCli(args, { cwd: dir, env });
      assert.equal(result.exitCode, 0, `${args[0]}: ${result.stderr}`);
      assert.equal(statSync(path).mode & 0o7777, 0o666, `${args[0]} kept the mode`);
    }
  });

  test('a file owned by another user keeps its owner and group (as root)', { skip: !isRoot && 'only root can give a file to another user' }, () => {
    const { dir, env } = workspace('owner');
    const path = copyIn(dir);
    for (const args of [
      ['prune', 's.jsonl', '--in-place', ...WINDOW],
      ['refresh', 's.jsonl', '--in-place', '--force'],
      ['restore', 's.jsonl', '--in-place'],
    ]) {
      chownSync(path, 65534, 65534);
      chmodSync(path, 0o640);
      const result = runCli(args, { cwd: dir, env });
      assert.equal(result.exitCode, 0, `${args[0]}: ${result.stderr}`);
      const stat = statSync(path);
      assert.deepEqual([stat.uid, stat.gid, stat.mode & 0o7777], [65534, 65534, 0o640], `${args[0]} kept owner, group and mode`);
    }
  });
});

test('temporary files are named apart even for one pid in one millisecond (containers sharing a cache folder share pids)', () => {
  const names = Array.from({ length: 200 }, () => tempPathFor('/x/cache.json'));
  assert.equal(new Set(names).size, names.length);
  assert.ok(
    names.every((n) => /^\/x\/\.cache\.json\.devs-ctx-\d+-[0-9a-z]+-[0-9a-f]{12}\.tmp$/.test(n)),
    names[0],
  );
});

describe('the lock (item 7)', () => {
  test('a full disk while making the lock is exit 3 and leaves no lock and no temporary file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-lockfull-'));
    const target = join(dir, 's.jsonl');
    writeFileSync(target, 'x\n');
    // The disk fills after the file is created, before its pid is in it.
    const full = {
      createFile(path: string) {
        writeFileSync(path, '');
        throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
      },
    };
    assert.throws(
      () => acquireLock(target, full),
      (error: unknown) => error instanceof InputError && /cannot write: the disk is full/.test(error.message),
    );
    assert.deepEqual(readdirSync(dir), ['s.jsonl'], 'no lock, no temporary file');
    const lock = acquireLock(target);
    assert.equal(readFileSync(lock.path, 'utf8'), `${process.pid}\n`, 'the next run takes the lock');
    lock.release();
    assert.deepEqual(readdirSync(dir), ['s.jsonl']);
  });

  test('an empty lock older than a few seconds is taken for dead; a fresh empty one is still respected', () => {
    const { dir, env } = workspace('emptylock');
    const path = copyIn(dir);
    const lockPath = `${path}.devs-ctx.lock`;
    writeFileSync(lockPath, '');
    const fresh = runCli(['prune', 's.jsonl', '--in-place', ...WINDOW], { cwd: dir, env });
    assert.equal(fresh.exitCode, ExitCode.locked, fresh.stderr);
    utimesSync(lockPath, new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
    const old = runCli(['prune', 's.jsonl', '--in-place', ...WINDOW], { cwd: dir, env });
    assert.equal(old.exitCode, 0, old.stderr);
    assert.equal(existsSync(lockPath), false);
  });
});

describe('signals mid-prune (item 8)', () => {
  test('before the commit point: exit 130, nothing written, no lock, nothing archived', async () => {
    for (const [phase, signal] of [
      ['pipeline', 'SIGTERM'],
      ['archived', 'SIGINT'],
      ['archived', 'SIGTERM'],
    ] as const) {
      const { dir, archive, env } = workspace('sig');
      const path = copyIn(dir);
      const original = readFileSync(path);
      const { code, stderr } = await interruptAt(phase, signal, ['prune', 's.jsonl', '--in-place', ...WINDOW], dir, env);
      assert.equal(code, ExitCode.interrupted, `${phase}/${signal}: ${stderr}`);
      assert.match(stderr, /nothing was written/);
      assert.ok(readFileSync(path).equals(original), `${phase}/${signal}: the file is as it was`);
      assert.equal(existsSync(`${path}.devs-ctx.lock`), false);
      assert.equal(pruneEvents(archive), 0, `${phase}/${signal}: no prune event is left in the archive`);
    }
  });

  test('after the commit point: the run finishes (exit 0) and says the prune is complete', async () => {
    const { dir, archive, env } = workspace('sigafter');
    const path = copyIn(dir);
    const original = readFileSync(path);
    const { code, stderr } = await interruptAt('written', 'SIGTERM', ['prune', 's.jsonl', '--in-place', ...WINDOW], dir, env);
    assert.equal(code, 0, stderr);
    assert.match(stderr, /interrupted after the pruned transcript was written; the prune is complete/);
    assert.ok(!readFileSync(path).equals(original));
    assert.equal(pruneEvents(archive), 1);
  });

  test('a signal while the run closes (workers, archive) after the write: exit 0, no lock left, the prune archived', async () => {
    const { dir, archive, env } = workspace('sigclosing');
    const path = copyIn(dir);
    const { code, signal, stderr } = await interruptAt('closing', 'SIGTERM', ['prune', 's.jsonl', '--in-place', ...WINDOW], dir, env);
    assert.equal(signal, null, `ended by ${signal}: ${stderr}`);
    assert.equal(code, 0, stderr);
    assert.equal(existsSync(`${path}.devs-ctx.lock`), false);
    assert.equal(pruneEvents(archive), 1);
    const restored = runCli(['restore', 's.jsonl', '-o', 'r.jsonl'], { cwd: dir, env });
    assert.equal(restored.exitCode, 0, restored.stderr);
  });

  test('restore --in-place: a signal before the write is exit 130 with the file, lock and folder as they were; after it, exit 0 and it says so', async () => {
    for (const [phase, signal, code] of [
      ['restoring', 'SIGINT', ExitCode.interrupted],
      ['restored', 'SIGTERM', ExitCode.ok],
    ] as const) {
      const { dir, env } = workspace('sigrestore');
      const path = copyIn(dir);
      const original = readFileSync(path);
      assert.equal(runCli(['prune', 's.jsonl', '--in-place', ...WINDOW], { cwd: dir, env }).exitCode, 0);
      const pruned = readFileSync(path);
      const result = await interruptAt(phase, signal, ['restore', 's.jsonl', '--in-place'], dir, env);
      assert.equal(result.signal, null, `${phase}: ended by ${result.signal}`);
      assert.equal(result.code, code, `${phase}: ${result.stderr}`);
      assert.ok(readFileSync(path).equals(code === ExitCode.ok ? original : pruned), `${phase}: the file`);
      if (code === ExitCode.ok) assert.match(result.stderr, /interrupted after the restored transcript was written; the restore is complete/);
      else assert.match(result.stderr, /nothing was written/);
      assert.deepEqual(readdirSync(dir), ['s.jsonl'], `${phase}: no lock, no temporary file`);
    }
  });

  test('the pipeline notices a signal between its steps: the summarizer is never called', async () => {
    const transcript = readTranscript(parseDocument(readFileSync(OVER_SOFT), { path: OVER_SOFT }), 'devs');
    const entries = transcript.entries;
    const counter = loadCounter('o200k_base');
    const tokens = countEntries(entries, counter).map((t) => t.total);
    const controller = new AbortController();
    const local = new LocalEmbedder(entries.map((e) => e.turn.content));
    // A signal arrives while the turns are ranked (the local embedder ignores it itself).
    const embedder = {
      name: local.name,
      embed: async (texts: readonly string[]) => {
        controller.abort();
        return local.embed(texts);
      },
    };
    let summarized = false;
    const summarizer = {
      name: 'never',
      summarize: async () => {
        summarized = true;
        return 'x';
      },
    };
    await assert.rejects(
      preparePrune({
        entries,
        tokens,
        counter,
        policy: {
          ...DEFAULT_PRUNER_CONFIG,
          softLimitTokens: 2000,
          hardLimitTokens: 3000,
          targetTokens: 1000,
          strategy: 'relevance',
          force: false,
          summaryReserveTokens: 300,
        },
        embedder,
        summarizer,
        eventId: 'e',
        now: '2026-01-01T00:00:00Z',
        newId: () => 'id',
        pacer: new Pacer(controller.signal),
      }),
      (error: unknown) => error instanceof InterruptedError,
    );
    assert.equal(summarized, false);
  });
});

describe('phantom archive entries (item 9)', () => {
  test('a -o write that fails after archiving (disk full) removes the prune event', () => {
    const { dir, archive, env } = workspace('phantom');
    copyIn(dir);
    const full = device(dir, 'full');
    const result = runCli(['prune', 's.jsonl', '-o', full, ...WINDOW], { cwd: dir, env });
    assert.equal(result.exitCode, ExitCode.input, result.stderr);
    assert.match(result.stderr, /cannot write: the disk is full; nothing was changed/);
    assert.ok(lstatSync(full).isCharacterDevice());
    assert.equal(existsSync(archive), true, 'the prune was archived before the write');
    assert.equal(pruneEvents(archive), 0, 'and its event removed when the write failed');
    const recall = runCli(['recall', 'REQ-202'], { cwd: dir, env });
    assert.doesNotMatch(recall.stdout, /dropped by prune/);
  });

  test('a prune to standard output that cannot be written (a full disk) removes its event too: exit 3, said once', {
    skip: !existsSync('/dev/full') && 'no /dev/full here',
  }, () => {
    const { dir, archive, env } = workspace('phantom-stdout');
    copyIn(dir);
    const full = openSync('/dev/full', 'w');
    try {
      const result = spawnSync(process.execPath, [join(repoRoot, 'bin/devs-ctx.js'), 'prune', 's.jsonl', ...WINDOW], {
        cwd: dir,
        env: cliEnv(env),
        stdio: ['ignore', full, 'pipe'],
        encoding: 'utf8',
      });
      assert.equal(result.status, ExitCode.input, result.stderr);
      assert.equal(result.stderr.match(/standard output is not writable \(ENOSPC[^\n]*\); what it was to print is lost/g)?.length, 1, result.stderr);
      assert.doesNotMatch(result.stderr, /undo with/, 'no report of a prune that was not written');
    } finally {
      closeSync(full);
    }
    assert.equal(existsSync(archive), true, 'the prune was archived before the write');
    assert.equal(pruneEvents(archive), 0, 'and its event removed when the write failed');
  });
});

describe('the archive is on disk before the transcript is written', () => {
  test('at the commit point the prune is in the archive file itself: a copy of that file alone (no -wal beside it) holds it', async () => {
    const { dir, archive, env } = workspace('durable');
    copyIn(dir);
    const run = spawnChild(process.execPath, [join(repoRoot, 'bin/devs-ctx.js'), 'prune', 's.jsonl', '--in-place', ...WINDOW], {
      cwd: dir,
      env: cliEnv({ DEVS_CTX_TEST_PAUSE: 'archived', ...env }),
    });
    await run.printed(/test pause at archived/);
    // Taken as a backup of the archive would be: its own file only.
    const copy = join(dir, 'copy.sqlite');
    copyFileSync(archive, copy);
    run.child.kill('SIGTERM');
    const { code, stderr } = await run.exited;
    assert.equal(code, ExitCode.interrupted, stderr);
    assert.equal(existsSync(`${copy}-wal`), false);
    assert.equal(pruneEvents(copy), 1, 'the archived prune is in the archive file, not only in its write-ahead log');
    assert.equal(pruneEvents(archive), 0, 'the interrupted prune is taken out of the archive again');
  });
});

describe('an --in-place write that fails after the file was replaced', () => {
  /** `prune s.jsonl --in-place` with `fault` injected after the rename; the calls made after it, as the preload logged them. */
  async function pruneWith(fault: string) {
    const { dir, archive, env } = workspace(`replaced-${fault}`);
    const path = copyIn(dir);
    const original = readFileSync(path);
    const log = join(dir, 'after-rename.log');
    const run = spawnChild(
      process.execPath,
      ['--require', join(repoRoot, 'test/helpers/fault-after-rename.cjs'), join(repoRoot, 'bin/devs-ctx.js'), 'prune', 's.jsonl', '--in-place', ...WINDOW],
      { cwd: dir, env: cliEnv({ ...env, DEVS_CTX_FAULT: fault, DEVS_CTX_FAULT_PATH: path, DEVS_CTX_FAULT_LOG: log }) },
    );
    const { code, stderr } = await run.exited;
    const after = existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean) : [];
    return { dir, archive, env, path, original, code, stderr, after, pruned: readFileSync(path) };
  }

  const failing = [
    {
      fault: 'fsync',
      says: /replaced with the new version, but then syncing it failed \(EIO: injected by a test\): it may not be safely on disk; the prune is archived/,
    },
    {
      fault: 'close',
      says: /replaced with the new version, but then closing it failed \(EIO: injected by a test\): it may not be safely on disk; the prune is archived/,
    },
    {
      fault: 'tail',
      says: /replaced with the new version, but then copying the lines an agent appended in the last instant failed \(the disk is full\): they are missing from it; the prune is archived/,
    },
  ] as const;
  for (const { fault, says } of failing) {
    test(`${fault}: exit 3 saying the file was replaced, the prune stays archived, and restore brings the original back`, async () => {
      const { dir, archive, env, path, original, code, stderr, after, pruned } = await pruneWith(fault);
      assert.equal(code, ExitCode.input, stderr);
      assert.match(stderr, says);
      assert.doesNotMatch(stderr, /nothing was changed|a bug in devs-ctx/);
      assert.ok(pruned.length < original.length, 'the file was replaced');
      assert.equal(pruned.at(-1), 0x0a, 'no line cut short at its end');
      if (fault === 'tail') {
        assert.ok(!pruned.includes('"id":"late"'), 'the half-copied line was taken back off');
        assert.ok(after.includes('fsync'), 'the new file is synced after the failed copy');
      }
      assert.equal(pruneEvents(archive), 1, 'the prune stays archived');
      const restored = runCli(['restore', 's.jsonl', '--in-place'], { cwd: dir, env });
      assert.equal(restored.exitCode, 0, restored.stderr);
      // The line the agent appended in the last instant was never copied: the original, as it was read.
      assert.ok(readFileSync(path).equals(original), 'restore brings back the original byte for byte');
    });
  }

  test('tail, with an agent appending by name during the copy: nothing is taken off, and the message says the cut line runs into it', async () => {
    const { code, stderr, pruned } = await pruneWith('tail-agent');
    assert.equal(code, ExitCode.input, stderr);
    assert.match(stderr, /they are missing from it, and the line it cut short may run into a line appended after it; the prune is archived/);
    const lines = pruned.toString('utf8').split('\n').filter(Boolean);
    for (const line of lines.slice(0, -1)) assert.doesNotThrow(() => JSON.parse(line), line);
    // What the message says: the half-copied line and the agent's, run together.
    assert.match(lines.at(-1) ?? '', /^\{"id":"late".*\{"id":"agent".*\}$/);
  });

  test('several failures after the rename are all said, in one error', async () => {
    const { code, stderr } = await pruneWith('tail,fsync');
    assert.equal(code, ExitCode.input, stderr);
    assert.match(
      stderr,
      /but then copying the lines an agent appended in the last instant failed \(the disk is full\): they are missing from it; and syncing it failed \(EIO: injected by a test\)/,
    );
    assert.match(stderr, /hint: free some space/);
  });

  test('before the rename (and for -o), a close that fails after the write failed hides nothing: exit 3, nothing changed, no temporary file', async () => {
    const inPlace = await pruneWith('temp-fsync,temp-close');
    assert.equal(inPlace.code, ExitCode.input, inPlace.stderr);
    // The fsync's error, not the close's that followed it.
    assert.match(inPlace.stderr, /s\.jsonl: cannot write: EIO: injected into the fsync; nothing was changed/);
    assert.ok(inPlace.pruned.equals(inPlace.original), 'the file is as it was');
    assert.equal(pruneEvents(inPlace.archive), 0);
    assert.deepEqual(
      readdirSync(inPlace.dir).filter((n) => n.endsWith('.tmp')),
      [],
    );

    // -o: the temporary file's close fails once (not again, as EBADF), and nothing is left.
    for (const [fault, output, says] of [
      ['temp-close', 'out.jsonl', /out\.jsonl: cannot write: EIO: injected into the close; nothing was changed/],
      ['device-write,device-close', '/dev/null', /\/dev\/null: cannot write: the disk is full; nothing was changed/],
    ] as const) {
      const { dir, env } = workspace(`o-${fault}`);
      copyIn(dir);
      const run = spawnChild(
        process.execPath,
        ['--require', join(repoRoot, 'test/helpers/fault-after-rename.cjs'), join(repoRoot, 'bin/devs-ctx.js'), 'prune', 's.jsonl', '-o', output, ...WINDOW],
        { cwd: dir, env: cliEnv({ ...env, DEVS_CTX_FAULT: fault }) },
      );
      const { code, stderr } = await run.exited;
      assert.equal(code, ExitCode.input, `${fault}: ${stderr}`);
      assert.match(stderr, says);
      assert.doesNotMatch(stderr, /EBADF|a bug in devs-ctx/);
      assert.deepEqual(
        readdirSync(dir).filter((n) => n.endsWith('.tmp') || n === 'out.jsonl'),
        [],
        `${fault}: nothing left`,
      );
    }
  });

  test('no failure that matters: a failed fstat (the copy goes ahead) or a failed close of the old file is no error', async () => {
    for (const fault of ['fstat', 'close-old']) {
      const { code, stderr, pruned, archive } = await pruneWith(fault);
      assert.equal(code, 0, `${fault}: ${stderr}`);
      assert.ok(pruned.includes('"id":"late"'), `${fault}: the line appended in the last instant is copied`);
      assert.equal(pruned.at(-1), 0x0a);
      assert.equal(pruneEvents(archive), 1);
    }
  });
});
