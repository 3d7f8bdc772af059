import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deepJson, safeJson } from '../src/formats/shared/json.js';
import { LONG_PIECE_CHUNK_BYTES } from '../src/core/tokens/bpe.js';
import { cliEnv, runCli } from './helpers/cli.js';
import { repoRoot } from './helpers/realdata.js';

/**
 * Bounded reads: what is not a file is refused before a byte is read, a huge line is not held many
 * times over, and a value nested deeper than JSON.stringify can go is still counted.
 */

const bin = join(repoRoot, 'bin', 'devs-ctx.js');
const OVER_SOFT = join(repoRoot, 'fixtures/devs/over-soft-limit.jsonl');

function tempDir(t: { after(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-bounded-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Runs the binary; the time limit only stops a run that would otherwise never end (the bug). */
function runGuarded(args: readonly string[], cwd: string): { exitCode: number | null; stderr: string } {
  const result = spawnSync(process.execPath, [bin, ...args], { cwd, env: cliEnv(), encoding: 'utf8', timeout: 120_000, maxBuffer: 1 << 20 });
  return { exitCode: result.status, stderr: result.stderr };
}

test('a character device is refused with exit 3 before it is read: analyze, prune, restore, refresh --tas, --config', (t) => {
  const dir = tempDir(t);
  copyFileSync(OVER_SOFT, join(dir, 's.jsonl'));
  for (const args of [
    ['analyze', '/dev/zero'],
    ['prune', '/dev/zero', '-o', 'out.jsonl'],
    ['restore', '/dev/zero'],
    ['refresh', 's.jsonl', '--check', '--tas', '/dev/zero'],
    ['analyze', 's.jsonl', '--config', '/dev/zero'],
  ]) {
    const result = runGuarded(args, dir);
    assert.equal(result.exitCode, 3, `${args.join(' ')}: ${result.stderr}`);
    assert.match(result.stderr, /\/dev\/zero: (is a character device, not a file devs-ctx reads|not a regular file)/, args.join(' '));
  }
});

test('a FIFO is still read (a pipe ends), and so is -', async (t) => {
  const dir = tempDir(t);
  const fifo = join(dir, 'pipe.jsonl');
  assert.equal(spawnSync('mkfifo', [fifo]).status, 0);
  const writer = spawn('sh', ['-c', 'cat "$1" > "$2"', 'sh', OVER_SOFT, fifo], { stdio: 'ignore' });
  const written = new Promise<number | null>((resolve) => writer.on('exit', resolve));
  const result = runCli(['analyze', fifo, '--json', '--window', '4000'], { cwd: dir });
  assert.equal(result.exitCode, 10, result.stderr);
  assert.equal((JSON.parse(result.stdout) as { turns: number }).turns, 17);
  assert.equal(await written, 0);
  const piped = runCli(['analyze', '-', '--json', '--window', '4000'], { cwd: dir, input: readFileSync(OVER_SOFT) });
  assert.equal(piped.exitCode, 10, piped.stderr);
});

test('a huge unbroken run is counted in bounded memory (parts of 64 KiB)', () => {
  // 8 MB of letters with no space: one regex piece. Counting it whole took ~70 bytes per byte.
  const size = 8_000_000;
  const script = `
    import { loadCounter } from ${JSON.stringify(join(repoRoot, 'src/core/tokens/encodings.ts'))};
    const counter = loadCounter('o200k_base');
    counter.count('warm up');
    let seed = 7;
    const letters = 'etaoinshrdlucmfwypvbgkjqxz';
    let text = '';
    const block = [];
    for (let i = 0; i < 65536; i++) { seed = (seed * 1103515245 + 12345) & 0x7fffffff; block.push(letters[seed % 26]); }
    const unit = block.join('');
    while (text.length < ${size}) text += unit.slice(0, (seed = (seed * 1103515245 + 12345) & 0x7fffffff) % 65536 + 1);
    text = text.slice(0, ${size});
    const before = process.memoryUsage().rss;
    const n = counter.count(text);
    const peak = process.resourceUsage().maxRSS * 1024;
    console.log(JSON.stringify({ n, grew: peak - before, bytes: text.length }));
  `;
  const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: repoRoot, encoding: 'utf8' });
  assert.equal(child.status, 0, child.stderr);
  const { n, grew, bytes } = JSON.parse(child.stdout) as { n: number; grew: number; bytes: number };
  assert.ok(bytes > LONG_PIECE_CHUNK_BYTES * 100);
  assert.ok(n > bytes / 10 && n < bytes, `${n} tokens for ${bytes} letters`);
  assert.ok(grew < bytes * 12, `counting ${bytes} bytes grew the process by ${grew} bytes`);
});

test('a value nested deeper than JSON.stringify can go is written (and counted) all the same', () => {
  const depth = 20_000;
  const text = `${'{"a":['.repeat(depth)}"leaf words"${']}'.repeat(depth)}`;
  const value: unknown = JSON.parse(text);
  assert.throws(() => JSON.stringify(value), RangeError, 'deep enough to overflow the engine');
  assert.equal(safeJson(value), text);
  assert.equal(
    deepJson({ a: [1, undefined, null, 'x"y'], b: undefined, c: { d: true } }),
    JSON.stringify({ a: [1, undefined, null, 'x"y'], b: undefined, c: { d: true } }),
  );
});

test('analyze: a Claude Code tool_use input nested 10,000 levels deep is counted, not ~0', (t) => {
  const dir = tempDir(t);
  const depth = 10_000;
  const input = `${'{"a":'.repeat(depth)}"leaf"${'}'.repeat(depth)}`;
  const user = {
    parentUuid: null,
    isSidechain: false,
    type: 'user',
    message: { role: 'user', content: 'hi' },
    uuid: 'u0',
    timestamp: '2026-03-01T09:59:00.000Z',
    sessionId: 's',
  };
  const call = JSON.stringify({
    parentUuid: 'u0',
    isSidechain: false,
    type: 'assistant',
    message: {
      id: 'm1',
      type: 'message',
      role: 'assistant',
      model: 'claude-opus-4-5',
      content: [{ type: 'tool_use', id: 'toolu_1', name: 'Bash', input: '__INPUT__' }],
    },
    uuid: 'a1',
    timestamp: '2026-03-01T10:00:00.000Z',
    sessionId: 's',
  }).replace('"__INPUT__"', input);
  writeFileSync(join(dir, 'deep.jsonl'), `${JSON.stringify(user)}\n${call}\n`);
  const result = runCli(['analyze', 'deep.jsonl', '--json'], { cwd: dir });
  assert.equal(result.exitCode, 0, result.stderr);
  const report = JSON.parse(result.stdout) as { byType: Record<string, { tokens: number }> };
  assert.ok((report.byType['tool_call']?.tokens ?? 0) > depth, `tool_call tokens: ${report.byType['tool_call']?.tokens}`);
});
