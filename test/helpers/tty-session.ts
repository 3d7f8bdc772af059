import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { stripVTControlCharacters } from 'node:util';
import assert from 'node:assert/strict';
import { main } from '../../src/cli/main.js';
import { spawnChild } from './child.js';
import { cacheDir, homeDir } from './cli.js';
import { repoRoot } from './realdata.js';

/**
 * Drives the real `@clack/prompts` prompts the way a person at a terminal does: wait until a
 * question is on the screen, then press keys. Two terminals: an in-process one (main() with
 * TTY-flagged streams, fast) and a real pseudo-terminal around the built binary (`script`).
 */

export const keys = {
  enter: '\r',
  up: '\x1b[A',
  down: '\x1b[B',
  space: ' ',
  ctrlC: '\x03',
  escape: '\x1b',
  /** Clears a text field's prefilled value (Ctrl-U: erase the line). */
  clearLine: '\x15',
} as const;

export interface Terminal {
  /** Resolves once `pattern` shows on the screen after the previous match (ANSI codes stripped). */
  waitFor(pattern: string | RegExp, timeoutMs?: number): Promise<void>;
  /** Types keys, one write each. */
  press(...sequence: string[]): void;
  /** Everything on the screen so far, without ANSI codes. */
  screen(): string;
}

export interface TerminalRun {
  readonly exitCode: number;
  /** stdout and stderr as they arrived, without ANSI codes (a pseudo-terminal merges them). */
  readonly screen: string;
  readonly stdout: string;
  readonly stderr: string;
}

class Screen implements Terminal {
  private text = '';
  private cursor = 0;
  private ended = false;
  private waiters: (() => void)[] = [];

  constructor(private readonly write: (data: string) => void) {}

  append(chunk: string): void {
    this.text += stripVTControlCharacters(chunk);
    for (const wake of this.waiters.splice(0)) wake();
  }

  /** The program has exited: nothing more will show, so a wait still pending fails at once. */
  end(): void {
    this.ended = true;
    for (const wake of this.waiters.splice(0)) wake();
  }

  screen(): string {
    return this.text;
  }

  async waitFor(pattern: string | RegExp, timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const rest = this.text.slice(this.cursor);
      const found =
        typeof pattern === 'string'
          ? ((i) => (i < 0 ? undefined : { index: i, length: pattern.length }))(rest.indexOf(pattern))
          : ((m) => (m ? { index: m.index, length: m[0].length } : undefined))(pattern.exec(rest));
      if (found) {
        // @clack/core attaches its keypress listener before it draws the prompt, so once the
        // question is on the screen, keys pressed now reach it: no settling delay is needed.
        this.cursor += found.index + found.length;
        return;
      }
      if (this.ended) assert.fail(`the program exited before showing ${String(pattern)}; the screen ends with:\n${this.text.slice(-1500)}`);
      const left = deadline - Date.now();
      if (left <= 0) assert.fail(`timed out waiting for ${String(pattern)}; the screen ends with:\n${this.text.slice(-1500)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 200));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  press(...sequence: string[]): void {
    for (const key of sequence) this.write(key);
  }
}

/** A stable environment: no colour, a fixed width, a fresh count cache, and no Gemini key unless given. */
function baseEnv(extra: Record<string, string | undefined>): Record<string, string | undefined> {
  return { NO_COLOR: '1', TZ: 'UTC', COLUMNS: '100', DEVS_CTX_CACHE_DIR: cacheDir, HOME: homeDir, ...extra };
}

/**
 * Runs `main(args)` in-process with a keyboard and a screen that say they are terminals, while
 * `drive` answers the prompts. `stdoutIsTTY: false` makes stdout a pipe (the screen is then stderr).
 */
export async function runInTerminal(
  args: readonly string[],
  options: { cwd: string; env?: Record<string, string | undefined>; stdoutIsTTY?: boolean; stdinIsTTY?: boolean },
  drive: (terminal: Terminal) => Promise<void>,
): Promise<TerminalRun> {
  const stdin = Object.assign(new PassThrough(), { isTTY: options.stdinIsTTY ?? true, setRawMode: () => stdin });
  const stdout = Object.assign(new PassThrough(), { isTTY: options.stdoutIsTTY ?? true, columns: 100, rows: 40 });
  const stderr = Object.assign(new PassThrough(), { isTTY: true, columns: 100, rows: 40 });
  const terminal = new Screen((data) => stdin.write(data));
  let out = '';
  let err = '';
  stdout.on('data', (d: Buffer) => {
    out += d.toString();
    terminal.append(d.toString());
  });
  stderr.on('data', (d: Buffer) => {
    err += d.toString();
    terminal.append(d.toString());
  });
  const run = main(args, { stdin, stdout, stderr, env: baseEnv(options.env ?? {}), cwd: options.cwd });
  let driveError: unknown;
  const driving = drive(terminal).catch((error: unknown) => {
    driveError = error;
    stdin.write(keys.ctrlC); // unblock a prompt still waiting, so main() returns
  });
  const exitCode = await run.finally(() => terminal.end());
  await driving;
  if (driveError) throw driveError;
  return { exitCode, screen: terminal.screen(), stdout: stripVTControlCharacters(out), stderr: stripVTControlCharacters(err) };
}

/** Whether `script` (util-linux) is here to give the binary a real pseudo-terminal. */
export function hasScript(): boolean {
  return process.platform === 'linux' && spawnSync('script', ['--version'], { encoding: 'utf8' }).status === 0;
}

/**
 * Runs the built binary in a real pseudo-terminal (`script -qfec`), 100×40, answering its prompts
 * through `drive`: raw mode, Ctrl-C as a key, and the exit code as the shell sees it.
 */
export async function runInPty(
  args: readonly string[],
  options: { cwd: string; env?: Record<string, string> },
  drive: (terminal: Terminal) => Promise<void>,
): Promise<TerminalRun> {
  const bin = join(repoRoot, 'bin', 'devs-ctx.js');
  assert.ok(existsSync(join(repoRoot, 'dist', 'cli-bundle', 'main.cjs')), 'run `npm run build` first (npm test does)');
  const quote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;
  const command = `stty cols 100 rows 40; exec ${quote(process.execPath)} ${quote(bin)} ${args.map(quote).join(' ')}`;
  const env = baseEnv(options.env ?? {});
  const run = spawnChild('script', ['-qfec', command, '/dev/null'], {
    cwd: options.cwd,
    env: {
      PATH: process.env['PATH'] ?? '',
      TERM: 'xterm-256color',
      ...Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined)),
    },
  });
  const { child } = run;
  const terminal = new Screen((data) => child.stdin?.write(data));
  child.stdout?.on('data', (d: Buffer) => terminal.append(d.toString()));
  child.stderr?.on('data', (d: Buffer) => terminal.append(d.toString()));
  // A guard against a prompt that never returns: the test fails with the screen, it does not hang.
  const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
  let driveError: unknown;
  const driving = drive(terminal).catch((error: unknown) => {
    driveError = error;
    child.kill('SIGKILL');
  });
  const { code, stdout } = await run.exited.finally(() => {
    clearTimeout(timer);
    terminal.end();
  });
  child.stdin?.destroy();
  await driving;
  if (driveError) throw driveError;
  return { exitCode: code ?? -1, screen: terminal.screen(), stdout: stripVTControlCharacters(stdout), stderr: '' };
}
