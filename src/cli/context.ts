import type { Readable, Writable } from 'node:stream';
import { InterruptedError } from '../core/errors.js';

/** Everything a command touches of the outside world, injected so tests can run it in-process. */
export interface CliContext {
  readonly stdout: Writable & { isTTY?: boolean; columns?: number };
  readonly stderr: Writable & { isTTY?: boolean };
  readonly stdin: Readable & { isTTY?: boolean };
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  /**
   * Turns Ctrl-C into an abort signal while slow, cancellable work runs (remote requests), so the
   * command can stop cleanly and exit 130 with nothing written. A second Ctrl-C ends the process.
   */
  readonly trapInterrupt?: () => InterruptTrap;
}

export interface InterruptTrap {
  readonly signal: AbortSignal;
  /** Runs `cleanup` (e.g. removing a lock file) if a second Ctrl-C ends the process at once. */
  onForcedExit(cleanup: () => void): void;
  release(): void;
}

export function processContext(): CliContext {
  return { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env, cwd: process.cwd(), trapInterrupt: trapProcessInterrupt };
}

function trapProcessInterrupt(): InterruptTrap {
  const controller = new AbortController();
  const cleanups: (() => void)[] = [];
  const onSignal = (signal: NodeJS.Signals): void => {
    if (controller.signal.aborted) {
      // Asked twice: stop waiting for a clean stop, but leave no lock behind.
      process.removeListener('SIGINT', onSignal);
      process.removeListener('SIGTERM', onSignal);
      for (const cleanup of cleanups) {
        try {
          cleanup();
        } catch {
          // best effort: the process is ending
        }
      }
      process.kill(process.pid, signal);
      return;
    }
    controller.abort(new Error(`interrupted (${signal})`));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return {
    signal: controller.signal,
    onForcedExit(cleanup) {
      cleanups.push(cleanup);
    },
    release() {
      process.removeListener('SIGINT', onSignal);
      process.removeListener('SIGTERM', onSignal);
    },
  };
}

/** [SPEC §2] Colour only on a TTY and never with NO_COLOR (chalk does not read NO_COLOR itself). */
export function colorEnabled(ctx: CliContext, stream: { isTTY?: boolean } = ctx.stdout): boolean {
  const noColor = ctx.env['NO_COLOR'];
  if (noColor !== undefined && noColor !== '') return false;
  const force = ctx.env['FORCE_COLOR'];
  if (force !== undefined) return force !== '0' && force !== 'false';
  return stream.isTTY === true && ctx.env['TERM'] !== 'dumb';
}

/** Terminal width for layout: COLUMNS, else the TTY's, else 100. */
export function terminalWidth(ctx: CliContext): number {
  const fromEnv = Number(ctx.env['COLUMNS']);
  if (Number.isInteger(fromEnv) && fromEnv >= 40) return fromEnv;
  return ctx.stdout.columns && ctx.stdout.columns >= 40 ? ctx.stdout.columns : 100;
}

/**
 * `work`, or InterruptedError as soon as `signal` aborts, whichever comes first: a read waiting for a
 * writer that never comes (a FIFO, standard input left open) is abandoned, not waited for. What the
 * abandoned work does later is ignored; the run ends without it (an interrupted run ends once its
 * output is flushed, whatever is still open: see endWhenFlushed).
 */
export async function untilAborted<T>(work: Promise<T>, signal: AbortSignal | undefined, message = 'interrupted'): Promise<T> {
  if (signal === undefined) return work;
  if (signal.aborted) {
    work.catch(() => undefined);
    throw new InterruptedError(message);
  }
  let stop: (() => void) | undefined;
  const aborted = new Promise<never>((_, reject) => {
    stop = () => reject(new InterruptedError(message));
    signal.addEventListener('abort', stop, { once: true });
  });
  try {
    return await Promise.race([work, aborted]);
  } finally {
    if (stop) signal.removeEventListener('abort', stop);
    work.catch(() => undefined);
  }
}

/** testPause's hook (below) where the run itself waits (a FIFO's open): it only says it is at `phase`. */
export function testMark(ctx: CliContext, phase: string): void {
  if (ctx.env['DEVS_CTX_TEST_PAUSE'] === phase) ctx.stderr.write(`devs-ctx: test pause at ${phase}\n`);
}

/**
 * Test hook, for tests that must send a signal at an exact point of a run without timing:
 * with DEVS_CTX_TEST_PAUSE=<phase>, the run says `devs-ctx: test pause at <phase>` on stderr when it
 * reaches that phase and waits there until it is interrupted (SIGINT/SIGTERM). Unset, it does nothing.
 */
export async function testPause(ctx: CliContext, signal: AbortSignal | undefined, phase: string): Promise<void> {
  if (ctx.env['DEVS_CTX_TEST_PAUSE'] !== phase || !signal) return;
  ctx.stderr.write(`devs-ctx: test pause at ${phase}\n`);
  if (signal.aborted) return;
  // A pending listener does not keep the process alive: a timer does, until the signal comes.
  const alive = setInterval(() => undefined, 60_000);
  await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
  clearInterval(alive);
}
