import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { writeBatch } from './helpers/batch-sessions.js';
import { cliEnv } from './helpers/cli.js';
import { packageCopy } from './helpers/package-copy.js';
import { repoRoot } from './helpers/realdata.js';
import { tempFolders } from './helpers/temp.js';
import { wordTranscript } from './helpers/transcripts.js';

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

/** A copy of the build; its bin. */
function buildCopy(name: string): { dir: string; bin: string } {
  const dir = fresh(`build-${name}`);
  return { dir, bin: packageCopy(dir) };
}

const broken = new Map<keyof typeof PLANTED, string>();
/** A copy of the build whose count and analyze workers do `how` (one per kind, made once); its bin. */
function brokenBuild(how: keyof typeof PLANTED): string {
  const made = broken.get(how);
  if (made !== undefined) return made;
  const { dir, bin } = buildCopy(how);
  for (const worker of ['count-worker.cjs', 'analyze-worker.cjs']) writeFileSync(join(dir, 'dist', 'cli-bundle', worker), `'use strict';\n${PLANTED[how]}`);
  broken.set(how, bin);
  return bin;
}

/** A copy of the build whose one call that makes a worker thread passes `resourceLimits` too. */
function buildWithLimits(name: string, limits: string): { dir: string; bin: string } {
  const copy = buildCopy(name);
  const bundle = join(copy.dir, 'dist', 'cli-bundle', 'main.bundle.cjs');
  const start = 'new import_node_worker_threads.Worker(filename, options)';
  const text = readFileSync(bundle, 'utf8');
  assert.equal(text.split(start).length, 2, 'the bundle makes its worker threads in one place');
  writeFileSync(bundle, text.replace(start, `new import_node_worker_threads.Worker(filename, { ...options, resourceLimits: ${limits} })`));
  return copy;
}

function run(bin: string, args: readonly string[], cwd: string): { stdout: string; stderr: string; exitCode: number } {
  const result = spawnSync(process.execPath, [bin, ...args], { cwd, env: cliEnv(), encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (result.error) throw result.error;
  return { stdout: result.stdout, stderr: result.stderr, exitCode: result.status ?? -1 };
}

const goodBin = join(repoRoot, 'bin', 'devs-ctx.js');

/** A native transcript of about 2.4 million characters: analyze FILE counts it across the threads. */
function largeTranscript(dir: string): string {
  return wordTranscript(join(dir, 'large.jsonl'), 400);
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

test('no worker thread can be made (Node throws ERR_WORKER_INIT_FAILED): analyze FILE, prune and analyze DIR run on this thread, with the same output', () => {
  // A stack no thread can have: Node refuses to make the thread, as it does when the system has none left (EAGAIN).
  const { bin } = buildWithLimits('cannot-start', '{ stackSizeMb: 1e9 }');
  const dir = fresh('cannot-start');
  const file = largeTranscript(dir);
  for (const args of [
    ['analyze', file, '--json', '--no-cache', '--jobs', '2'],
    ['prune', file, '--target', '20000', '--force', '--no-archive', '--no-cache'],
  ]) {
    const expected = run(goodBin, args, dir);
    const got = run(bin, args, dir);
    assert.equal(got.stderr, expected.stderr);
    assert.equal(got.exitCode, expected.exitCode);
    assert.equal(got.stdout.replace(/"(?:id|timestamp)":"[^"]*"/g, ''), expected.stdout.replace(/"(?:id|timestamp)":"[^"]*"/g, ''));
  }
  const { dir: batch } = writeBatch({
    sessions: 30,
    projects: ['alpha', 'beta'],
    seed: 7,
    start: Date.UTC(2026, 0, 1),
    stepMs: 60_000,
    dir: fresh('cannot-start-batch'),
  });
  const expected = run(goodBin, ['analyze', '.', '--no-cache', '--ndjson', '--jobs', '1'], batch);
  const got = run(bin, ['analyze', '.', '--no-cache', '--ndjson', '--jobs', '2'], batch);
  assert.equal(got.stderr, expected.stderr);
  assert.equal(got.exitCode, expected.exitCode);
  assert.equal(got.stdout, expected.stdout);
});

test('a worker out of memory fails the command with its error: its work is not done again on this thread, which would run out in turn and abort', () => {
  const { dir, bin } = buildWithLimits('out-of-memory', '{ maxOldGenerationSizeMb: 24 }');
  const hog = "'use strict';\nconst held = [];\nfor (;;) held.push(new Array(100000).fill(1.5));\n";
  for (const worker of ['count-worker.cjs', 'analyze-worker.cjs']) writeFileSync(join(dir, 'dist', 'cli-bundle', worker), hog);
  const project = fresh('out-of-memory');
  const file = largeTranscript(project);
  writeBatch({ sessions: 30, projects: ['alpha', 'beta'], seed: 9, start: Date.UTC(2026, 0, 1), stepMs: 60_000, dir: project });
  for (const args of [
    ['analyze', file, '--json', '--no-cache', '--jobs', '2'],
    ['analyze', '.', '--no-cache', '--ndjson', '--jobs', '2'],
  ]) {
    const result = spawnSync(process.execPath, [bin, ...args], { cwd: project, env: cliEnv(), encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    assert.equal(result.signal, null, `${args.join(' ')}: ended by a signal (${result.stderr.slice(-300)})`);
    assert.equal(result.status, 1, result.stderr);
    // --json reports the error on standard output, as JSON.
    assert.match(`${result.stdout}${result.stderr}`, /memory limit/);
  }
});
