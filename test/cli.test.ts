import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  chmodSync,
  chownSync,
  closeSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { spawnChild } from './helpers/child.js';
import { assertGolden, cliEnv, runCli } from './helpers/cli.js';
import { realdataDir, realdataSkip, repoRoot } from './helpers/realdata.js';

const basic = 'fixtures/devs/basic-session.jsonl';

test('analyze: the human report for a native session', () => {
  assertGolden('analyze-basic-session', runCli(['analyze', basic]));
});

test('analyze --json: one document on stdout, nothing on stderr', () => {
  const result = runCli(['analyze', basic, '--json']);
  assert.equal(result.exitCode, 0);
  assert.equal(result.stderr, '');
  const report = JSON.parse(result.stdout) as Record<string, unknown>;
  assert.equal(report['schemaVersion'], 2);
  assert.equal(report['format'], 'devs');
  assert.equal(report['turns'], 15);
  assertGolden('analyze-basic-session-json', result);
});

test('analyze --json: per-turn counts equal js-tiktoken on each turn and sum to the total', async () => {
  const { Tiktoken } = await import('js-tiktoken/lite');
  const { default: o200k } = await import('js-tiktoken/ranks/o200k_base');
  const oracle = new Tiktoken(o200k);
  const report = JSON.parse(runCli(['analyze', basic, '--json', '--no-cache']).stdout) as {
    totalTokens: number;
    perTurn: Array<{ id: string; tokens: number }>;
  };
  const lines = readFileSync(join(repoRoot, basic), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { id: string; content: string });
  assert.deepEqual(
    report.perTurn.map((t) => [t.id, t.tokens]),
    lines.map((l) => [l.id, oracle.encode(l.content, [], []).length]),
  );
  assert.equal(
    report.perTurn.reduce((sum, t) => sum + t.tokens, 0),
    report.totalTokens,
  );
});

test('analyze exit codes follow the urgency: 0 below soft, 10 at soft, 11 at hard', () => {
  const total = (JSON.parse(runCli(['analyze', basic, '--json']).stdout) as { totalTokens: number }).totalTokens;
  const table: Array<[string[], number, string]> = [
    [['--soft-limit', String(total + 1), '--hard-limit', String(total + 2)], 0, 'none'],
    [['--soft-limit', String(total), '--hard-limit', String(total + 1)], 10, 'soft'],
    [['--soft-limit', String(total - 1), '--hard-limit', String(total)], 11, 'hard'],
  ];
  for (const [flags, exitCode, urgency] of table) {
    const result = runCli(['analyze', basic, '--json', ...flags]);
    assert.equal(result.exitCode, exitCode, flags.join(' '));
    assert.equal((JSON.parse(result.stdout) as { urgency: string }).urgency, urgency);
  }
});

test('analyze reads standard input with - and when piped with no path', () => {
  const input = readFileSync(join(repoRoot, basic));
  const file = JSON.parse(runCli(['analyze', basic, '--json']).stdout) as { totalTokens: number };
  for (const args of [
    ['analyze', '-', '--json'],
    ['analyze', '--json'],
  ]) {
    const result = runCli(args, { input });
    assert.equal(result.exitCode, 0, result.stderr);
    const report = JSON.parse(result.stdout) as { file: string; totalTokens: number };
    assert.equal(report.file, '(stdin)');
    assert.equal(report.totalTokens, file.totalTokens);
  }
});

test('malformed lines are listed and skipped; --strict makes them fatal (exit 4)', () => {
  assertGolden('analyze-malformed-lines', runCli(['analyze', 'fixtures/devs/malformed-lines.jsonl']));
  const strict = runCli(['analyze', 'fixtures/devs/malformed-lines.jsonl', '--strict']);
  assert.equal(strict.exitCode, 4);
  assert.match(strict.stderr, /line 4: invalid JSON/);
  // A line that is valid JSON but not a turn (no role) is bad too under --strict.
  const lines = readFileSync(join(repoRoot, basic), 'utf8').trim().split('\n');
  const input = [...lines, '{"id":"x","type":"message","content":"no role"}'].join('\n');
  assert.equal(runCli(['analyze', '-'], { input }).exitCode, 0);
  const rejected = runCli(['analyze', '-', '--strict'], { input });
  assert.equal(rejected.exitCode, 4);
  assert.match(rejected.stderr, /line 16: not a devs turn: missing key role/);
});

test('errors: empty file 4, missing file 3, bad flags 2, binary junk 4', () => {
  const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-cli-'));
  const junk = join(dir, 'junk.jsonl');
  writeFileSync(junk, Buffer.from([0x00, 0xff, 0x13, 0x37, 0x0a, 0x89, 0x50, 0x4e, 0x47, 0x00]));
  const table: Array<[string[], number, RegExp]> = [
    [['analyze', 'fixtures/devs/empty.jsonl'], 4, /empty/],
    [['analyze', 'no/such/file.jsonl'], 3, /no such file/],
    [['analyze', basic, '--window', 'lots'], 2, /--window lots/],
    [['analyze', basic, '--format', 'word'], 2, /word/],
    [['analyze', basic, '--bogus'], 2, /unknown option/],
    [['analyze', basic, '--soft-limit', '900k'], 2, /must be below the hard limit/],
    [['analyze', junk], 4, /nothing in it parses/],
    [['analyze', 'fixtures/codex/basic-session.jsonl', '--format', 'claude-code'], 4, /no claude-code turns in this file; it looks like codex/],
  ];
  for (const [args, exitCode, message] of table) {
    const result = runCli(args);
    assert.equal(result.exitCode, exitCode, `${args.join(' ')}: ${result.stderr}`);
    assert.match(result.stderr, message, args.join(' '));
    assert.equal(result.stdout, '', `${args.join(' ')} prints nothing on stdout`);
  }
});

test('errors in --json mode are one JSON document on stdout', () => {
  for (const args of [
    ['analyze', 'no/such/file.jsonl', '--json'],
    ['analyze', basic, '--json', '--bogus'],
  ]) {
    const result = runCli(args);
    assert.equal(result.stderr, '');
    const doc = JSON.parse(result.stdout) as { schemaVersion: number; error: { code: string; exitCode: number; message: string } };
    assert.equal(doc.schemaVersion, 1);
    assert.equal(doc.error.exitCode, result.exitCode);
    assert.ok(doc.error.message.length > 0);
  }
});

test('--encoding cl100k_base counts with that encoding', () => {
  const o200k = JSON.parse(runCli(['analyze', basic, '--json']).stdout) as { encoding: string; totalTokens: number };
  const cl100k = JSON.parse(runCli(['analyze', basic, '--json', '--encoding', 'cl100k_base']).stdout) as { encoding: string; totalTokens: number };
  assert.equal(o200k.encoding, 'o200k_base');
  assert.equal(cl100k.encoding, 'cl100k_base');
  assert.notEqual(cl100k.totalTokens, o200k.totalTokens);
});

test('a config file with a bad key is a usage error naming the file and key', () => {
  const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-cfg-'));
  writeFileSync(join(dir, 'devs-ctx.config.json'), JSON.stringify({ softLimit: 'half' }));
  copyFileSync(join(repoRoot, basic), join(dir, 's.jsonl'));
  const result = runCli(['analyze', 's.jsonl'], { cwd: dir });
  assert.equal(result.exitCode, 2);
  assert.match(result.stderr, /devs-ctx\.config\.json: key "softLimit"/);
});

test('a config file sets the limits; a flag beats it', () => {
  const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-cfg-'));
  writeFileSync(join(dir, 'devs-ctx.config.json'), JSON.stringify({ window: 1000 }));
  copyFileSync(join(repoRoot, basic), join(dir, 's.jsonl'));
  const fromFile = JSON.parse(runCli(['analyze', 's.jsonl', '--json'], { cwd: dir }).stdout) as { limits: { soft: number; hard: number } };
  assert.deepEqual([fromFile.limits.soft, fromFile.limits.hard], [500, 800]);
  const fromFlag = JSON.parse(runCli(['analyze', 's.jsonl', '--json', '--window', '1M'], { cwd: dir }).stdout) as { limits: { soft: number } };
  assert.equal(fromFlag.limits.soft, 500_000);
});

test('a directory gives one row per transcript and a total', () => {
  const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-dir-'));
  mkdirSync(join(dir, 'nested'));
  copyFileSync(join(repoRoot, basic), join(dir, 'a.jsonl'));
  copyFileSync(join(repoRoot, 'fixtures/devs/saop-envelopes.jsonl'), join(dir, 'nested', 'b.jsonl'));
  writeFileSync(join(dir, 'notes.txt'), 'ignored');
  const human = runCli(['analyze', '.'], { cwd: dir });
  assert.equal(human.exitCode, 0, human.stderr);
  assertGolden('analyze-directory', human);
  const json = JSON.parse(runCli(['analyze', '.', '--json'], { cwd: dir }).stdout) as { transcripts: unknown[]; total: { transcripts: number } };
  assert.equal(json.transcripts.length, 2);
  assert.equal(json.total.transcripts, 2);
});

test('several inputs: symlinked files are followed, duplicates read once, failures go to stderr and win the exit code', () => {
  const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-multi-'));
  copyFileSync(join(repoRoot, basic), join(dir, 'a.jsonl'));
  symlinkSync(join(repoRoot, 'fixtures/devs/saop-envelopes.jsonl'), join(dir, 'linked.jsonl'));
  symlinkSync(dir, join(dir, 'loop')); // a directory symlink is not followed: no endless walk
  copyFileSync(join(repoRoot, 'fixtures/devs/malformed-lines.jsonl'), join(dir, 'bad-lines.jsonl'));
  const ok = runCli(['analyze', '.', 'a.jsonl', './a.jsonl'], { cwd: dir });
  assert.equal(ok.exitCode, 0, ok.stderr);
  assert.deepEqual(
    ok.stdout
      .split('\n')
      .slice(1, -2)
      .map((l) => l.split(/\s+/)[0]),
    ['a.jsonl', 'bad-lines.jsonl', 'linked.jsonl'],
  );
  assert.match(ok.stderr, /bad-lines\.jsonl: 5 skipped or odd line\(s\) \(line 4, 6, 8, 5, 9\)/);
  writeFileSync(join(dir, 'empty.jsonl'), '');
  const failed = runCli(['analyze', '.'], { cwd: dir });
  assert.equal(failed.exitCode, 4);
  assert.match(failed.stdout, /^empty\.jsonl +(- +){6}error \(exit 4\)$/m);
  assert.match(failed.stderr, /^devs-ctx: empty\.jsonl: the transcript is empty$/m);
});

// Root reads everything, so permission errors are only seen as another user: `runuser -u nobody`.
const asNobody = (args: string[], cwd: string) =>
  spawnSync('runuser', ['-u', 'nobody', '--', process.execPath, join(repoRoot, 'bin', 'devs-ctx.js'), ...args], {
    cwd,
    encoding: 'utf8',
    env: { PATH: process.env['PATH'] ?? '', NO_COLOR: '1', DEVS_CTX_CACHE_DIR: join(tmpdir(), 'devs-ctx-nobody-cache') },
  });
const nobodySkip =
  process.getuid?.() !== 0 || !existsSync('/usr/sbin/runuser')
    ? 'needs root and runuser to test permission errors as another user'
    : asNobody(['--version'], tmpdir()).status !== 0
      ? 'user nobody cannot run the built binary from this checkout'
      : false;

test('an unreadable file or subdirectory is exit 3 naming it, never a crash', { skip: nobodySkip }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-perm-'));
  chmodSync(dir, 0o755);
  copyFileSync(join(repoRoot, basic), join(dir, 'a.jsonl'));
  chmodSync(join(dir, 'a.jsonl'), 0o644);
  writeFileSync(join(dir, 'secret.jsonl'), '{}\n');
  chmodSync(join(dir, 'secret.jsonl'), 0o000);
  const file = asNobody(['analyze', 'secret.jsonl'], dir);
  assert.equal(file.status, 3);
  assert.match(file.stderr, /secret\.jsonl: permission denied/);
  mkdirSync(join(dir, 'locked'));
  chmodSync(join(dir, 'locked'), 0o000);
  const walk = asNobody(['analyze', '.'], dir);
  assert.equal(walk.status, 3);
  assert.match(walk.stderr, /locked: permission denied/);
  assert.doesNotMatch(walk.stderr, /bug/);
});

test('-o over a file you may not write, or whose owner cannot be kept, is exit 3 and leaves it as it was (a shell `>` refuses it too)', {
  skip: nobodySkip,
}, () => {
  const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-perm-out-'));
  chmodSync(dir, 0o777);
  copyFileSync(join(repoRoot, 'fixtures/devs/over-soft-limit.jsonl'), join(dir, 'a.jsonl'));
  chmodSync(join(dir, 'a.jsonl'), 0o644);
  const nobody = spawnSync('id', ['-u', 'nobody'], { encoding: 'utf8' });
  const uid = Number(nobody.stdout.trim());
  const cases: [string, number, number, RegExp][] = [
    ["another user's, not writable by you", 0, 0o644, /theirs\.jsonl: cannot write: permission denied; nothing was changed/],
    ['your own, read-only', uid, 0o444, /theirs\.jsonl: cannot write: permission denied; nothing was changed/],
    ["another user's, writable by all: its owner would not be kept", 0, 0o666, /theirs\.jsonl: cannot keep its owner \(uid 0, gid 0\) in a new file/],
  ];
  for (const [label, owner, mode, message] of cases) {
    const target = join(dir, 'theirs.jsonl');
    writeFileSync(target, 'their data\n');
    chownSync(target, owner, owner === 0 ? 0 : uid);
    chmodSync(target, mode);
    const result = asNobody(['prune', 'a.jsonl', '--force', '--window', '4000', '--no-archive', '-o', 'theirs.jsonl'], dir);
    assert.equal(result.status, 3, `${label}: ${result.stderr}`);
    assert.match(result.stderr, message, label);
    assert.equal(readFileSync(target, 'utf8'), 'their data\n', label);
    assert.equal(statSync(target).uid, owner, label);
    assert.deepEqual(
      readdirSync(dir).filter((name) => name.includes('.tmp')),
      [],
      `${label}: no temporary file left`,
    );
  }
});

test('--help teaches with examples; --version prints the version', () => {
  const help = runCli(['analyze', '--help']);
  assert.equal(help.exitCode, 0);
  assert.match(help.stdout, /Examples:\n {2}\$ devs-ctx analyze session\.jsonl/);
  const version = runCli(['--version']);
  assert.equal(version.exitCode, 0);
  const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string };
  assert.equal(version.stdout.trim(), pkg.version);
});

test('realdata: a Claude Code session report', { skip: realdataSkip }, () => {
  const result = runCli(['analyze', 'claude-code/06-spotter-v2.1.38-short-smoke/short.jsonl', '--window', '200k'], { cwd: realdataDir });
  assertGolden('analyze-realdata-claude-short', result);
});

test('realdata: every shared transcript analyses without a crash', { skip: realdataSkip }, () => {
  const result = runCli(['analyze', '.', '--json'], { cwd: realdataDir });
  assert.equal(result.stderr, '');
  const doc = JSON.parse(result.stdout) as { transcripts: Array<{ file: string; error?: unknown; format?: string; totalTokens?: number }> };
  for (const t of doc.transcripts) {
    assert.equal(t.error, undefined, `${t.file} analysed`);
    assert.ok((t.totalTokens ?? 0) > 0, `${t.file} has tokens`);
  }
  assertGolden('analyze-realdata-all-json', { ...result, stdout: `${JSON.stringify(doc.transcripts.map((t) => [t.file, t.format, t.totalTokens]))}\n` });
});

test('a reader that closes the pipe early (| head) ends the command quietly, not with an EPIPE crash', async () => {
  // The reading end is closed before the binary has even started, so its first write to stdout
  // always meets a closed pipe (EPIPE), as it does behind `| head -c 1` when head exits first.
  const run = spawnChild(process.execPath, ['bin/devs-ctx.js', 'prune', '--help'], {
    cwd: repoRoot,
    env: cliEnv(),
  });
  run.child.stdout?.destroy();
  const { code, stderr } = await run.exited;
  assert.doesNotMatch(stderr, /EPIPE|Unhandled/);
  assert.equal(code, 0);
});

test('standard output that cannot be written (a full disk: /dev/full) is exit 3 with a message, never success or a crash', {
  skip: !existsSync('/dev/full') && 'no /dev/full here',
}, () => {
  const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-full-'));
  const sessions = join(dir, 'sessions');
  mkdirSync(sessions);
  for (const name of ['a', 'b']) copyFileSync(join(repoRoot, basic), join(sessions, `${name}.jsonl`));
  const cases: [string, string[]][] = [
    ['analyze FILE --json', ['analyze', basic, '--json']],
    ['analyze FILE (text)', ['analyze', basic]],
    ['analyze DIR (text)', ['analyze', sessions]],
    ['analyze DIR --ndjson', ['analyze', sessions, '--ndjson']],
    ['analyze DIR --json', ['analyze', sessions, '--json']],
    // Its report goes to standard error, before the message.
    ['prune to standard output', ['prune', 'fixtures/devs/replay-webhook-session.jsonl', '--force', '--target', '2000', '--no-archive']],
  ];
  for (const [label, args] of cases) {
    const full = openSync('/dev/full', 'w');
    try {
      const result = spawnSync(process.execPath, ['bin/devs-ctx.js', ...args], {
        cwd: repoRoot,
        env: cliEnv({ DEVS_CTX_CACHE_DIR: join(dir, 'cache') }),
        stdio: ['ignore', full, 'pipe'],
        encoding: 'utf8',
      });
      assert.equal(result.status, 3, `${label}: ${result.stderr}`);
      const message = /devs-ctx: standard output is not writable \(ENOSPC: no space left on device[^\n]*\); what it was to print is lost\n$/;
      assert.match(result.stderr, args[0] === 'prune' ? message : new RegExp(`^${message.source}`), label);
      assert.doesNotMatch(result.stderr, /\n {4}at /, `${label}: no stack trace`);
    } finally {
      closeSync(full);
    }
  }
});

test('prune to a pipe closed early (| head): the transcript was not delivered, so its event is taken out of the archive, and exit 3 says so', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-epipe-prune-'));
  const archive = join(dir, 'a.sqlite');
  copyFileSync(join(repoRoot, 'fixtures', 'devs', 'over-soft-limit.jsonl'), join(dir, 's.jsonl'));
  const run = spawnChild(process.execPath, [join(repoRoot, 'bin/devs-ctx.js'), 'prune', 's.jsonl', '--force', '--window', '4000'], {
    cwd: dir,
    env: cliEnv({ DEVS_CTX_ARCHIVE: archive }),
  });
  run.child.stdout?.destroy();
  const { code, stderr } = await run.exited;
  assert.equal(code, 3, stderr);
  assert.match(stderr, /standard output was closed before the whole transcript was written/);
  assert.doesNotMatch(stderr, /undo with/, 'no report of a prune that was not delivered');
  const recalled = runCli(['recall', 'reconcile', '--json'], { cwd: dir, env: { DEVS_CTX_ARCHIVE: archive } });
  assert.deepEqual((JSON.parse(recalled.stdout) as { hits: unknown[] }).hits, [], 'no turn "dropped by" a prune nobody got');
});

test('an error naming a file with control characters in its name prints them as ?, never as terminal escapes', () => {
  const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-escape-'));
  const name = 'x\u001b]0;pwned\u0007\u001b[2J\u009b31m.jsonl';
  writeFileSync(join(dir, name), 'not json at all\n');
  for (const args of [
    ['analyze', name],
    ['analyze', `missing-${name}`],
    ['prune', name, '--force'],
  ]) {
    const result = runCli(args, { cwd: dir });
    assert.notEqual(result.exitCode, 0);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: they are what must not be printed
    assert.doesNotMatch(result.stderr, /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/, `${args[0]}: ${JSON.stringify(result.stderr)}`);
    assert.match(result.stderr, /x\?\]0;pwned\?\?\[2J\?31m\.jsonl/);
  }
});
