import { closeSync, constants, createReadStream, fstatSync, openSync, readdirSync, readFileSync, statSync, writeSync } from 'node:fs';
import type { Dirent, Stats } from 'node:fs';
import type { Readable } from 'node:stream';
import { join, relative, resolve } from 'node:path';
import { InputError } from '../core/errors.js';
import { parseDocument, readDocument } from './jsonl.js';
import type { ParsedDocument, ReadOptions } from './jsonl.js';
import { byCodeUnits } from '../core/compare.js';

/** The input name that means standard input; the same `-` as an output is `STDOUT` (cli/transcript-output.ts). */
export const STDIN = '-';

const TRANSCRIPT_EXTENSIONS = ['.jsonl', '.json'];

/**
 * Turns the paths a user gave into transcript files: `-` stays stdin, a directory gives every
 * `.jsonl`/`.json` file below it (sorted), a missing path is an input error (exit 3).
 */
export function expandInputs(paths: readonly string[], cwd: string): string[] {
  const out: string[] = [];
  // The same file named twice (or found twice through two directories) is analysed once.
  const seen = new Set<string>();
  const add = (path: string): void => {
    const key = path === STDIN ? STDIN : resolve(cwd, path);
    if (seen.has(key)) return;
    seen.add(key);
    out.push(path);
  };
  for (const path of paths) {
    if (path === STDIN) {
      add(STDIN);
      continue;
    }
    const absolute = resolve(cwd, path);
    let stat: Stats;
    try {
      stat = statSync(absolute);
    } catch (error) {
      throw inputError(path, error);
    }
    if (stat.isDirectory()) {
      // Show found files under the path the user typed, not as absolute paths.
      const found = listTranscripts(absolute, path).map((file) => join(path, relative(absolute, file)));
      if (found.length === 0) throw new InputError(`${path}: no .jsonl or .json files in this directory`);
      found.forEach(add);
    } else {
      add(path);
    }
  }
  return out;
}

/** Transcript files below `dir`, sorted. Symlinks to files are followed; symlinks to directories are not (no loops). */
function listTranscripts(dir: string, shown: string): string[] {
  const out: string[] = [];
  const walk = (current: string): void => {
    let entries: Dirent[];
    try {
      entries = readdirSync(current, { withFileTypes: true });
    } catch (error) {
      throw inputError(join(shown, relative(dir, current)), error);
    }
    for (const entry of entries.sort((a, b) => byCodeUnits(a.name, b.name))) {
      const path = join(current, entry.name);
      if (entry.isDirectory()) {
        walk(path);
        continue;
      }
      if (!TRANSCRIPT_EXTENSIONS.some((ext) => entry.name.endsWith(ext))) continue;
      if (entry.isFile() || (entry.isSymbolicLink() && isFile(path))) out.push(path);
    }
  };
  walk(dir);
  return out;
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

export function inputError(path: string, error: unknown): InputError {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case 'ENOENT':
      return new InputError(`${path}: no such file or directory`, 'check the path, or pass - to read standard input');
    case 'EACCES':
    case 'EPERM':
      return new InputError(`${path}: permission denied`, 'check the file permissions');
    case 'EISDIR':
      return new InputError(`${path}: is a directory`);
    case 'ELOOP':
      return new InputError(`${path}: too many levels of symbolic links (a loop?)`, 'check where the symbolic links on the path point (ls -l)');
    case 'ENOTDIR':
      return new InputError(`${path}: a part of the path is a file, not a directory`, 'check the path');
    case 'ENAMETOOLONG':
      return new InputError(`${path}: the path is too long for the file system`);
    default:
      return new InputError(`${path}: cannot read (${code ?? (error instanceof Error ? error.message : String(error))})`);
  }
}

/**
 * Files up to this size are read in one call: a stream's open, reads and close, each a trip through
 * the thread pool, cost more than the reading, for the small files a batch of sessions is made of and
 * for a long session too (a 1M-token one is about 4 MB: 64 reads of 64 KiB left the thread waiting
 * about 15 ms). Larger files are streamed in 1 MiB reads, so memory stays bounded by the lines.
 */
const READ_WHOLE_BYTES = 16 << 20;

/**
 * Refuses what is neither a regular file nor a FIFO (a pipe ends; `/dev/zero` or `/dev/urandom`
 * never do, and would be read until memory runs out): exit 3, before reading a byte.
 */
export function assertReadableKind(shown: string, stat: Stats): void {
  if (stat.isFile() || stat.isFIFO()) return;
  throw new InputError(`${shown}: is ${fileKind(stat)}, not a file devs-ctx reads`, 'give a transcript file, or pipe it in with - (standard input)');
}

/** What a path is, for messages that refuse it: `is ${fileKind(stat)}`. */
export function fileKind(stat: Stats): string {
  if (stat.isFile()) return 'a regular file';
  if (stat.isDirectory()) return 'a directory';
  if (stat.isFIFO()) return 'a FIFO';
  if (stat.isCharacterDevice()) return 'a character device';
  if (stat.isBlockDevice()) return 'a block device';
  return stat.isSocket() ? 'a socket' : 'not a regular file';
}

/** Reads a whole file given by path (a regular file or a FIFO; see assertReadableKind). */
export function readInputFile(path: string, shown: string): Buffer {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (error) {
    throw inputError(shown, error);
  }
  try {
    assertReadableKind(shown, fstatSync(fd));
    return readFileSync(fd);
  } catch (error) {
    if (error instanceof InputError) throw error;
    throw inputError(shown, error);
  } finally {
    closeSync(fd);
  }
}

/** Reads one transcript (a path or `-` for `stdin`), streaming (a small file in one read), into records. */
/** FIFOs being read: their open or a read may wait for a writer on a thread of the pool (see endFifoReads). */
const fifoReads = new Set<{ readonly path: string; readonly stream: Readable }>();

/**
 * Ends the reads of FIFOs that wait for a writer, for a run that gives them up (Ctrl-C) and is about
 * to exit: a thread of the pool blocked in open() or read() on a FIFO keeps the process from exiting,
 * whatever exit is asked, and only a writer ends it. Each stream is destroyed, then this process is
 * that writer: the FIFO opened for reading and writing (which never waits), a line break written for
 * a read that waits for data, and the descriptor left open until the process ends, so an open still
 * queued on the pool (not yet started: a loaded machine) does not wait either. A destroyed stream
 * closes what it opens without reading.
 */
export function endFifoReads(): void {
  for (const { path, stream } of fifoReads) {
    stream.destroy();
    try {
      writeSync(openSync(path, constants.O_RDWR | constants.O_NONBLOCK), '\n');
    } catch {
      // Gone, or full (a reader is not waiting for data then).
    }
  }
  fifoReads.clear();
}

export async function readInput(
  path: string,
  options: { keepRaw?: boolean; stdin: Readable; cwd: string; digest?: ReadOptions['digest'] },
): Promise<ParsedDocument> {
  let stream: Readable;
  if (path === STDIN) {
    stream = options.stdin;
  } else {
    const absolute = resolve(options.cwd, path);
    let stat: Stats;
    try {
      stat = statSync(absolute);
    } catch (error) {
      throw inputError(path, error);
    }
    assertReadableKind(path, stat);
    if (stat.isFIFO()) {
      const fifo = createReadStream(absolute);
      const reading = { path: absolute, stream: fifo };
      fifoReads.add(reading);
      fifo.once('close', () => fifoReads.delete(reading));
      stream = fifo;
    } else {
      // The kind is checked again on the open file: the path may have been replaced in between.
      let fd: number;
      try {
        fd = openSync(absolute, 'r');
      } catch (error) {
        throw inputError(path, error);
      }
      let whole: Buffer | undefined;
      try {
        const opened = fstatSync(fd);
        assertReadableKind(path, opened);
        if (opened.isFile() && opened.size <= READ_WHOLE_BYTES) whole = readFileSync(fd);
      } catch (error) {
        closeSync(fd);
        if (error instanceof InputError) throw error;
        throw inputError(path, error);
      }
      if (whole) {
        closeSync(fd);
        // Already in memory: parsed as it is, without a stream to iterate.
        return parseDocument(whole, { path, keepRaw: options.keepRaw ?? false, ...(options.digest ? { digest: options.digest } : {}) });
      } else {
        stream = createReadStream('', { fd, highWaterMark: 1 << 20 });
      }
    }
  }
  try {
    return await readDocument(stream, { path, keepRaw: options.keepRaw ?? false, ...(options.digest ? { digest: options.digest } : {}) });
  } catch (error) {
    throw inputError(path, error);
  }
}
