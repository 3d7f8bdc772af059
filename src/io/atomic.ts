import { closeSync, constants, fsyncSync, openSync, readFileSync, readSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { InputError, LockedError } from '../core/errors.js';

/**
 * [SPEC §8] Writes are atomic: the bytes go to a temporary file beside the target, are flushed to
 * disk, get the target's file mode, and only then replace it with a rename. A crash or a full disk
 * leaves the target as it was (at worst a stray `.devs-ctx-*.tmp` beside it).
 */
/** Writes the first `length` bytes of `bytes` (writeSync may write fewer than asked). */
function writeAll(fd: number, bytes: Buffer, length: number): void {
  let offset = 0;
  while (offset < length) offset += writeSync(fd, bytes, offset, length - offset);
}

/** A temporary file beside `path` (same file system, so the rename is atomic), named so a stray one is recognisable. */
function tempPathFor(path: string): string {
  return join(dirname(path), `.${basename(path)}.devs-ctx-${process.pid}-${Date.now().toString(36)}.tmp`);
}

export function writeFileAtomic(path: string, bytes: Buffer, options: { mode?: number } = {}): void {
  const tmp = tempPathFor(path);
  let mode = options.mode;
  if (mode === undefined) {
    try {
      mode = statSync(path).mode & 0o7777;
    } catch {
      mode = 0o644;
    }
  }
  let fd: number | undefined;
  try {
    fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, mode);
    writeAll(fd, bytes, bytes.length);
    fsyncSync(fd);
    closeSync(fd);
    fd = undefined;
    renameSync(tmp, path);
  } catch (error) {
    if (fd !== undefined) closeSync(fd);
    try {
      unlinkSync(tmp);
    } catch {
      // the temporary file was never made, or is already gone
    }
    throw writeError(path, error);
  }
}

export function writeError(path: string, error: unknown): InputError {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const reason =
    code === 'ENOSPC'
      ? 'the disk is full'
      : code === 'EACCES' || code === 'EPERM'
        ? 'permission denied'
        : code === 'ENOENT' || code === 'ENOTDIR'
          ? 'the folder does not exist'
          : code === 'EROFS'
            ? 'the file system is read-only'
            : error instanceof Error
              ? error.message
              : String(error);
  return new InputError(`${path}: cannot write: ${reason}; nothing was changed`, code === 'ENOSPC' ? 'free some space and run it again' : 'check the path and its permissions');
}

/** A held lock on a transcript; `release()` removes it. */
export interface FileLock {
  readonly path: string;
  release(): void;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Takes `<file>.devs-ctx.lock` (created exclusively, holding our pid). A lock whose process is gone
 * (a killed run) is taken over; a live one is exit 7.
 */
export function acquireLock(target: string): FileLock {
  const path = `${target}.devs-ctx.lock`;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o644);
      writeSync(fd, `${process.pid}\n`);
      closeSync(fd);
      let released = false;
      return {
        path,
        release() {
          if (released) return;
          released = true;
          try {
            // Only our own lock: if it was taken over (we were thought dead), it is not ours to remove.
            if (readFileSync(path, 'utf8').trim() === String(process.pid)) unlinkSync(path);
          } catch {
            // already removed
          }
        },
      };
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'EEXIST') throw writeError(path, error);
      let holder = Number.NaN;
      try {
        holder = Number.parseInt(readFileSync(path, 'utf8').trim(), 10);
      } catch {
        // vanished between the two calls: try again
      }
      if (Number.isInteger(holder) && holder > 0 && processAlive(holder)) {
        throw new LockedError(
          `${target} is locked by another devs-ctx (pid ${holder})`,
          `wait for it to finish; if no devs-ctx is running, remove ${path}`,
        );
      }
      // Take over a dead process's lock, unless another run took it over meanwhile (the pid changed).
      try {
        if (readFileSync(path, 'utf8').trim() === String(holder)) unlinkSync(path);
      } catch {
        // someone else took it over first; the next attempt tells
      }
    }
  }
  throw new LockedError(`${target} is locked by another devs-ctx`, `remove ${path} if no devs-ctx is running`);
}

/** Throws (exit 7) unless the file still holds `original`, possibly followed by appended lines. */
export function assertUnchangedOrAppended(path: string, original: Buffer): void {
  const current = readFileSync(path);
  if (current.length < original.length || !current.subarray(0, original.length).equals(original)) {
    throw new LockedError(`${path} changed while it was being pruned; nothing was written`, 'run the prune again');
  }
  if (current.length > original.length && original.length > 0 && original[original.length - 1] !== 0x0a) {
    throw new LockedError(`${path} grew while it was being pruned, and its last line had no newline; nothing was written`, 'run the prune again');
  }
}

/**
 * Replaces `path`, whose bytes were `original` when it was read, with `replacement` — atomically,
 * and without losing what an agent appends meanwhile: bytes appended before the rename are copied
 * into the new file first, and bytes that reach the old file between the last copy and the rename
 * are appended to the new one after it. Any other change aborts with exit 7 and writes nothing.
 */
export function replaceKeepingAppends(path: string, original: Buffer, replacement: Buffer): void {
  assertUnchangedOrAppended(path, original);
  const mode = statSync(path).mode & 0o7777;
  const tmp = tempPathFor(path);
  const source = openSync(path, 'r');
  let out: number | undefined;
  let copied = original.length;
  const chunk = Buffer.alloc(1 << 16);
  /** Copies what the old file holds past `copied` to `fd`. */
  const copyTail = (fd: number): void => {
    for (;;) {
      const n = readSync(source, chunk, 0, chunk.length, copied);
      if (n <= 0) return;
      writeAll(fd, chunk, n);
      copied += n;
    }
  };
  try {
    out = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, mode);
    writeAll(out, replacement, replacement.length);
    copyTail(out);
    fsyncSync(out);
    copyTail(out);
    closeSync(out);
    out = undefined;
    renameSync(tmp, path);
  } catch (error) {
    if (out !== undefined) closeSync(out);
    closeSync(source);
    try {
      unlinkSync(tmp);
    } catch {
      // never made
    }
    throw writeError(path, error);
  }
  // Lines written to the old file in the instant before the rename: add them to the new one.
  try {
    const fd = openSync(path, 'a');
    try {
      copyTail(fd);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } finally {
    closeSync(source);
  }
}
