import { realpathSync, statSync } from 'node:fs';
import type { Stats } from 'node:fs';
import { resolve } from 'node:path';
import { UsageError } from '../core/errors.js';
import { acquireLock, sameFile, writeFileInterruptible } from '../io/atomic.js';
import type { FileLock } from '../io/atomic.js';
import { fileKind, STDIN } from '../io/input.js';
import { testMark } from './context.js';
import { writeAwaited } from './process-end.js';
import type { CliContext, InterruptTrap } from './context.js';

/** The output name that means standard output (`-o -`); `STDIN` is the same `-` as an input. */
export const STDOUT = '-';

/**
 * Where a command that rewrites a transcript (`prune`, `refresh`) sends it: stdout, `-o FILE` or
 * `--in-place`, checked before anything is read. `readOnly` names the flag that writes nothing
 * (`--dry-run`, `--check`) when it is given.
 */
export function checkTranscriptDestination(
  input: string,
  options: { readonly inPlace?: boolean | undefined; readonly output?: string | undefined },
  json: boolean,
  readOnly: { readonly flag: '--dry-run' | '--check'; readonly given: boolean },
  cwd = '.',
): { readonly inPlace: boolean } {
  if (options.output === '') throw new UsageError('-o needs a file name', 'pass -o FILE, or -o - for standard output');
  if (options.inPlace && input === STDIN) throw new UsageError('--in-place needs a file, not standard input', 'pass the transcript path, or use -o FILE');
  if (options.inPlace && options.output !== undefined) throw new UsageError('--in-place and -o cannot be used together');
  if (readOnly.given && (options.inPlace || options.output !== undefined)) {
    throw new UsageError(`${readOnly.flag} writes nothing, so it takes neither --in-place nor -o`);
  }
  if (json && !readOnly.given && !options.inPlace && (options.output === undefined || options.output === STDOUT)) {
    throw new UsageError('--json prints the report on stdout, so the transcript needs somewhere else to go', `add -o FILE, --in-place or ${readOnly.flag}`);
  }
  if (options.output !== undefined && options.output !== STDOUT && input !== STDIN && resolve(options.output) === resolve(input)) {
    throw new UsageError(
      '-o names the input file',
      'use --in-place to replace the transcript (it locks the file and keeps the original until the new one is complete)',
    );
  }
  // -o reaching the input by another name (a symlinked folder, a hard link): exactly --in-place,
  // lock included, rather than an unlocked overwrite of the transcript.
  const inPlace = options.inPlace === true || outputIsInput(input, options.output, cwd);
  if (inPlace) checkInPlaceFile(input, cwd);
  return { inPlace };
}

/**
 * `--in-place` replaces a regular file: a FIFO (or a device) read once has nothing to replace, and
 * opening it again to check for appends would wait for a writer for good, deaf to Ctrl-C. A usage
 * error before anything is read; a missing file is left for reading it to report.
 */
export function checkInPlaceFile(input: string, cwd: string): void {
  let stat: Stats;
  try {
    stat = statSync(resolve(cwd, input));
  } catch {
    return;
  }
  if (stat.isFile()) return;
  throw new UsageError(`--in-place needs a regular file, and ${input} is ${fileKind(stat)}`, 'write the result elsewhere with -o FILE (or to standard output)');
}

/** Whether `-o output` is the input file itself under another name. */
export function outputIsInput(input: string, output: string | undefined, cwd: string): boolean {
  return output !== undefined && output !== STDOUT && input !== STDIN && sameFile(resolve(cwd, input), resolve(cwd, output));
}

/** The file `--in-place` works on: the real one behind a symlink (replacing the link would leave the agent's file as it was). */
export function realTarget(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path; // missing: reading it reports that, with the path the user gave
  }
}

/**
 * Stdout, or a file written atomically. `signal`: the command's Ctrl-C, heard while a FIFO waits for
 * its reader (see writeFileInterruptible). `payload`: the command's result, which a reader that
 * stops early (`| head`) did not get: an error, not a quiet end (see writeAwaited).
 */
export async function writeOutput(
  name: string,
  bytes: Buffer,
  ctx: CliContext,
  signal?: AbortSignal,
  options: { readonly payload?: boolean } = {},
): Promise<void> {
  if (name === STDOUT) await writeAwaited(ctx.stdout, bytes, options);
  else await writeFileInterruptible(resolve(ctx.cwd, name), bytes, signal, () => testMark(ctx, 'fifo'));
}

/**
 * `--in-place`: the lock on the real file, released by a second Ctrl-C too (the trap's forced
 * exit), so no run leaves a lock behind.
 */
export function lockInPlace(target: string, trap: InterruptTrap | undefined): FileLock {
  const lock = acquireLock(target);
  trap?.onForcedExit(() => lock.release());
  return lock;
}
