/**
 * How the process ends once the command has returned. Node ends a process whose event loop is empty
 * by tearing its environment down piece by piece (the heap, the threads, the native modules'
 * hooks): about 10 ms after a large prune, in alternating runs. When nothing is left open but
 * standard input, output and error, there is nothing for that to wait for: the process ends as soon
 * as output and error have taken every byte written to them, with the command's exit code.
 *
 * "Nothing else open" is what Node says is open, checked three ways, and any doubt leaves the
 * process to end as Node ends it: every open resource is of a kind the standard streams are held by
 * (a pipe or a terminal: a timer, a file operation, a child or a TCP socket is not); every open
 * handle is one of the standard streams themselves (a Unix socket is a pipe too, but not one of
 * them; a Node without `process._getActiveHandles` to ask is left alone); and no worker thread this
 * process started is running (Node lists none: src/cli/live-workers.ts counts them).
 */

import { ExitCode, InputError } from '../core/errors.js';
import { endFifoReads } from '../io/input.js';

/** Writes to standard output whose command waits for them (writeAwaited) and has not heard back yet. */
let awaitedWrites = 0;
/** Awaited writes of a command's whole result (`payload`): a closed pipe fails them too. */
let payloadWrites = 0;
/** A failed awaited write was thrown to its command, which reports it. */
let failureSaid = false;

/**
 * Writes `bytes` to standard output and resolves once they have gone out, for a command that must
 * know before it goes on (a prune to standard output takes its archived event back when the write
 * fails). A failure other than a closed pipe is this command's error, thrown as output not writable
 * (exit 3) and not also the process's (outputFailed); a closed pipe (`| head`) still ends the process
 * quietly, as any write's does, unless the bytes are the command's `payload`: a pruned transcript
 * a reader stopped taking was not delivered, and the prune must not stand (exit 3 too).
 */
export async function writeAwaited(
  stdout: { write(chunk: Buffer, callback: (error?: Error | null) => void): unknown },
  bytes: Buffer,
  options: { readonly payload?: boolean } = {},
): Promise<void> {
  awaitedWrites += 1;
  if (options.payload) payloadWrites += 1;
  try {
    await new Promise<void>((resolve, reject) => {
      stdout.write(bytes, (error) => {
        if (!error) resolve();
        else if ((error as NodeJS.ErrnoException).code !== 'EPIPE') {
          failureSaid = true;
          reject(new InputError(`standard output is not writable (${error.message}); what it was to print is lost`));
        } else if (options.payload) {
          reject(new InputError('standard output was closed before the whole transcript was written (its reader stopped early)'));
        }
      });
    });
  } finally {
    awaitedWrites -= 1;
    if (options.payload) payloadWrites -= 1;
  }
}

/** What `endWhenFlushed` uses of the process (`process` itself in the CLI). */
export interface EndingProcess {
  getActiveResourcesInfo(): string[];
  /** Node's open handles: not part of its documented API, so it may be missing. */
  readonly _getActiveHandles?: () => unknown[];
  readonly stdout: { write(chunk: string, callback: (error?: Error | null) => void): unknown };
  readonly stderr: { write(chunk: string, callback?: (error?: Error | null) => void): unknown };
  exit(code: number): void;
}

/**
 * When standard output or error cannot be written. A reader that closed the pipe early (EPIPE:
 * `| head`) has what it wanted: the process ends quietly with `code`, as other Unix tools do. Any
 * other failure (a full disk, a closed descriptor) lost what was to be printed: standard error says
 * so when it is output that failed, and the process ends with exit 3, output not writable [SPEC
 * §3], never with success (a report redirected to a full disk was an empty file and exit 0).
 */
export function outputFailed(proc: Pick<EndingProcess, 'stderr' | 'exit'>, stream: 'stdout' | 'stderr', error: Error, code: number): void {
  if ((error as NodeJS.ErrnoException).code === 'EPIPE') {
    // A command's payload not delivered: the command takes back what it must and says so (writeAwaited).
    if (stream === 'stdout' && payloadWrites > 0) return;
    proc.exit(code);
    return;
  }
  // A write awaited by its command (writeAwaited) fails that command, which says so and returns
  // exit 3: not said twice, and not ended here before it has taken back what it must (its archive event).
  if (stream === 'stdout' && (awaitedWrites > 0 || failureSaid)) return;
  if (stream === 'stdout') {
    try {
      proc.stderr.write(`devs-ctx: standard output is not writable (${error.message}); what it was to print is lost\n`);
    } catch {
      // standard error is gone too: the exit code alone says it
    }
  }
  proc.exit(ExitCode.input);
}

/** The kinds of resource a standard stream is held by when it is a pipe or a terminal (a file holds none). */
const STDIO = new Set(['PipeWrap', 'TTYWrap']);

/** A standard stream: Node gives process.stdin, stdout and stderr their descriptor as `fd`, and no other stream. */
function isStandardStream(handle: unknown): boolean {
  const fd = typeof handle === 'object' && handle !== null ? (handle as { fd?: unknown }).fd : undefined;
  return fd === 0 || fd === 1 || fd === 2;
}

/** Whether nothing but the standard streams is open, and no worker started by this process runs. */
function onlyStandardStreamsOpen(proc: EndingProcess, liveWorkers: number): boolean {
  if (liveWorkers > 0) return false;
  if (!proc.getActiveResourcesInfo().every((resource) => STDIO.has(resource))) return false;
  return proc._getActiveHandles?.().every(isStandardStream) === true;
}

/**
 * Ends `proc` with `code` once standard output and error have flushed, when nothing else is open
 * (`onlyStandardStreamsOpen`) or the run was interrupted (130); otherwise does nothing, and the
 * process ends as Node ends it.
 * Returns whether it will end it.
 */
export function endWhenFlushed(proc: EndingProcess, code: number, liveWorkers: number): boolean {
  // An interrupted run (exit 130) has stopped, its cleanup done: what is still open (a read waiting
  // for a writer that never comes, a worker told to stop) is abandoned, not waited for.
  if (code !== ExitCode.interrupted && !onlyStandardStreamsOpen(proc, liveWorkers)) return false;
  // A thread blocked on a FIFO would keep even exit() from ending the process.
  if (code === ExitCode.interrupted) endFifoReads();
  let waiting = 2;
  // A write's callback runs once what was written before it has gone out, or with the stream's error.
  const flushed =
    (stream: 'stdout' | 'stderr') =>
    (error?: Error | null): void => {
      if (error) {
        outputFailed(proc, stream, error, code);
        return;
      }
      waiting -= 1;
      if (waiting === 0) proc.exit(code);
    };
  proc.stdout.write('', flushed('stdout'));
  proc.stderr.write('', flushed('stderr'));
  return true;
}
