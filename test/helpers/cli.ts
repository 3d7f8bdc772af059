import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { PassThrough, Readable } from 'node:stream';
import assert from 'node:assert/strict';
import { main } from '../../src/cli/main.js';
import { spawnChild } from './child.js';
import { repoRoot } from './realdata.js';

export interface CliResult {
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
}

const bin = join(repoRoot, 'bin', 'devs-ctx.js');

/** A fresh token-count cache per test run, so results never depend on an earlier run. */
export const cacheDir = mkdtempSync(join(tmpdir(), 'devs-ctx-cache-'));

/**
 * A fresh HOME per test file: the default archive (~/.local/share/devs-ctx), the user's config and
 * `~/.claude` are this folder's, never the developer's own and never another test file's.
 */
export const homeDir = mkdtempSync(join(tmpdir(), 'devs-ctx-home-'));

/** A stable environment for the binary: no inherited keys or limits, UTC, no colour, a private cache and HOME. */
export function cliEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env['PATH'] ?? '',
    HOME: homeDir,
    NO_COLOR: '1',
    TZ: 'UTC',
    COLUMNS: '100',
    DEVS_CTX_CACHE_DIR: cacheDir,
    ...extra,
  };
}

/** Spawns the built binary the way a user's shell would, with a stable environment. */
export function runCli(args: readonly string[], options: { input?: string | Buffer; cwd?: string; env?: Record<string, string> } = {}): CliResult {
  assert.ok(existsSync(join(repoRoot, 'dist', 'cli', 'main.js')), 'run `npm run build` first (npm test does)');
  const result = spawnSync(process.execPath, [bin, ...args], {
    cwd: options.cwd ?? repoRoot,
    input: options.input ?? '',
    env: cliEnv(options.env),
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.error) throw result.error;
  return { exitCode: result.status ?? -1, stdout: result.stdout, stderr: result.stderr };
}

/** Runs `main()` in-process with captured streams (fast; for many-input robustness tests). */
export function runInProcess(args: readonly string[], options: { input?: Buffer; cwd?: string; env?: Record<string, string> } = {}): Promise<CliResult> {
  return runMain(main, args, options);
}

/**
 * Runs the built CLI's `main()` (from dist/, beside the build id the result caches are keyed on) in
 * this process: the code the binary runs, without a process start for each of many calls.
 */
export async function runBuiltInProcess(
  args: readonly string[],
  options: { input?: Buffer; cwd?: string; env?: Record<string, string> } = {},
): Promise<CliResult> {
  const built = join(repoRoot, 'dist', 'cli', 'main.js');
  assert.ok(existsSync(built), 'run `npm run build` first (npm test does)');
  const { main: builtMain } = (await import(pathToFileURL(built).href)) as { main: typeof main };
  return runMain(builtMain, args, options);
}

async function runMain(run: typeof main, args: readonly string[], options: { input?: Buffer; cwd?: string; env?: Record<string, string> }): Promise<CliResult> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (d: Buffer) => (out += d.toString()));
  stderr.on('data', (d: Buffer) => (err += d.toString()));
  const stdin = Readable.from(options.input ? [options.input] : []);
  const exitCode = await run(args, {
    stdout,
    stderr,
    stdin,
    env: { NO_COLOR: '1', COLUMNS: '100', DEVS_CTX_CACHE_DIR: cacheDir, HOME: homeDir, ...options.env },
    cwd: options.cwd ?? repoRoot,
  });
  return { exitCode, stdout: out, stderr: err };
}

/** Compares a run with `test/golden/<name>.txt`; `UPDATE_GOLDEN=1` rewrites it (review the diff). */
export function assertGolden(name: string, result: CliResult): void {
  const path = join(repoRoot, 'test', 'golden', `${name}.txt`);
  const actual = `# exit: ${result.exitCode}\n# ---- stdout\n${result.stdout}# ---- stderr\n${result.stderr}`;
  if (process.env['UPDATE_GOLDEN'] === '1') {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, actual);
    return;
  }
  assert.ok(existsSync(path), `golden file ${path} is missing: run UPDATE_GOLDEN=1 npm test, review it, and commit it`);
  assert.equal(actual, readFileSync(path, 'utf8'), `output differs from ${path} (UPDATE_GOLDEN=1 rewrites it)`);
}

/**
 * Spawns the built binary without blocking this process, so a server in this process (the fake
 * Gemini API) can answer it. SIGINT (a user pressing Ctrl-C) is sent once `interruptWhen` holds
 * (its output matches it, or the promise settles, e.g. the fake server's `received(1)`): on an
 * event, never after a fixed delay.
 */
export function runCliAsync(
  args: readonly string[],
  options: { input?: string | Buffer; cwd?: string; env?: Record<string, string>; interruptWhen?: RegExp | Promise<unknown> } = {},
): Promise<CliResult & { signal: NodeJS.Signals | null }> {
  assert.ok(existsSync(join(repoRoot, 'dist', 'cli', 'main.js')), 'run `npm run build` first (npm test does)');
  const run = spawnChild(process.execPath, [bin, ...args], { cwd: options.cwd ?? repoRoot, env: cliEnv(options.env), input: options.input ?? '' });
  let interrupted = false;
  const interrupt = (): void => {
    if (interrupted) return;
    interrupted = true;
    run.child.kill('SIGINT');
  };
  const when = options.interruptWhen;
  const trigger = when instanceof RegExp ? run.printed(when) : when;
  void trigger?.then(interrupt, () => undefined);
  return run.exited.then(({ code, signal, stdout, stderr }) => ({ exitCode: code ?? -1, stdout, stderr, signal }));
}
