import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { writeBatch } from './helpers/batch-sessions.js';
import { cliEnv } from './helpers/cli.js';
import { repoRoot } from './helpers/realdata.js';
import { tempFolders } from './helpers/temp.js';

/**
 * A worker thread that fails or stops (out of memory, killed, a thread that could not start) fails
 * nothing: what it had is done on the main thread, and the output is exactly that of `--jobs 1`. The
 * workers here are real threads of a copy of the build whose worker entries were replaced.
 */

const { fresh } = tempFolders('devs-ctx-worker-failure-');

/** What a planted worker does. */
const PLANTED = {
  /** Throws as it starts. */
  throws: "throw new Error('planted: this worker fails as it starts');\n",
  /**
   * Takes every piece of its region of a count (as a worker does, one shared word: back << 16 | front),
   * or takes a batch file, then stops before counting any of it.
   */
  stops: `const { parentPort } = require('node:worker_threads');
parentPort.on('message', (job) => {
  if (job.shared) {
    const ends = new Int32Array(job.shared, 0, job.regions);
    for (;;) {
      const both = Atomics.load(ends, job.region);
      const back = both >>> 16;
      if (Atomics.compareExchange(ends, job.region, both, (back << 16) | back) === both) break;
    }
  }
  process.exit(3);
});
`,
} as const;

/** A copy of the build whose count and analyze workers do `how`; its bin. */
function brokenBuild(how: keyof typeof PLANTED): string {
  const dir = fresh(`build-${how}`);
  for (const part of ['bin', 'dist']) cpSync(join(repoRoot, part), join(dir, part), { recursive: true });
  copyFileSync(join(repoRoot, 'package.json'), join(dir, 'package.json'));
  symlinkSync(join(repoRoot, 'node_modules'), join(dir, 'node_modules'), 'dir');
  for (const worker of ['count-worker.cjs', 'analyze-worker.cjs']) writeFileSync(join(dir, 'dist', 'cli-bundle', worker), `'use strict';\n${PLANTED[how]}`);
  return join(dir, 'bin', 'devs-ctx.js');
}

function run(bin: string, args: readonly string[], cwd: string): { stdout: string; stderr: string; exitCode: number } {
  const result = spawnSync(process.execPath, [bin, ...args], { cwd, env: cliEnv(), encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (result.error) throw result.error;
  return { stdout: result.stdout, stderr: result.stderr, exitCode: result.status ?? -1 };
}

const goodBin = join(repoRoot, 'bin', 'devs-ctx.js');

/** A native transcript of about 2.4 million characters: analyze FILE counts it across the threads. */
function largeTranscript(dir: string): string {
  const words = 'invoice export parser window budget token cache prune summary module record field'.split(' ');
  const turns = Array.from({ length: 400 }, (_, i) => {
    const content = Array.from({ length: 900 }, (_, k) => `${words[(i * 7 + k * 3) % words.length]}${(i * 31 + k) % 97}`).join(' ');
    return JSON.stringify({ id: `t${i}`, role: i % 2 ? 'assistant' : 'user', type: 'message', content });
  });
  const file = join(dir, 'large.jsonl');
  writeFileSync(file, `${turns.join('\n')}\n`);
  return file;
}

for (const how of ['throws', 'stops'] as const) {
  test(`a count worker that ${how === 'throws' ? 'fails as it starts' : 'stops in the middle of a count'}: analyze FILE and prune count on this thread, with the counts of working workers`, () => {
    const bin = brokenBuild(how);
    const dir = fresh(`large-${how}`);
    const file = largeTranscript(dir);
    const expected = run(goodBin, ['analyze', file, '--json', '--no-cache', '--jobs', '1'], dir);
    assert.equal(expected.stderr, '');
    const got = run(bin, ['analyze', file, '--json', '--no-cache', '--jobs', '2'], dir);
    assert.equal(got.stderr, '');
    assert.equal(got.exitCode, expected.exitCode);
    assert.equal(got.stdout, expected.stdout);

    // A prune counts across the cores (and its goal excerpts' placeholders on the same workers).
    const prune = (b: string, out: string) =>
      run(b, ['prune', file, '--target', '20000', '--force', '--no-archive', '--no-cache', '-o', join(dir, out), '--json'], dir);
    const pruned = prune(goodBin, 'good.jsonl');
    assert.equal(pruned.exitCode, 0, pruned.stderr);
    const broken = prune(bin, 'broken.jsonl');
    assert.equal(broken.exitCode, 0, broken.stderr);
    const normal = (json: string): unknown => JSON.parse(json.replace(/"(?:id|eventId|pruneId|output|prunedAt|createdAt)": "[^"]*"/g, '"x": ""'));
    assert.deepEqual(normal(broken.stdout), normal(pruned.stdout));
  });

  test(`analyze workers that ${how === 'throws' ? 'fail as they start' : 'stop with files in hand'}: a batch is analysed on this thread, as with --jobs 1`, () => {
    const bin = brokenBuild(how);
    const { dir } = writeBatch({
      sessions: 30,
      projects: ['alpha', 'beta', 'gamma'],
      seed: 18,
      start: Date.UTC(2026, 0, 1),
      stepMs: 60_000,
      dir: fresh(`batch-${how}`),
    });
    for (const output of [['--ndjson'], []]) {
      const expected = run(goodBin, ['analyze', '.', '--no-cache', '--jobs', '1', ...output], dir);
      const got = run(bin, ['analyze', '.', '--no-cache', '--jobs', '2', ...output], dir);
      assert.equal(got.stderr, expected.stderr);
      assert.equal(got.exitCode, expected.exitCode);
      assert.equal(got.stdout, expected.stdout);
    }
  });
}
