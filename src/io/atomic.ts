import {
  accessSync,
  closeSync,
  constants,
  fchmodSync,
  fchownSync,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  linkSync,
  lstatSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  realpathSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import type { Stats } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { open } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { InputError, InterruptedError, LockedError, ReplacedThenFailedError } from '../core/errors.js';

/**
 * [SPEC §8] Writes are atomic: the bytes go to a temporary file beside the target, are flushed to
 * disk, get the target's file mode, and only then replace it with a rename. A crash or a full disk
 * leaves the target as it was (at worst a stray `.devs-ctx-*.tmp` beside it).
 */
/**
 * Writes the first `length` bytes of `bytes` (writeSync may write fewer than asked); `wrote` counts
 * those written, also when a write fails part way.
 */
function writeAll(fd: number, bytes: Uint8Array, length: number, wrote?: { bytes: number }): void {
  for (let offset = 0; offset < length; ) {
    const n = writeSync(fd, bytes, offset, length - offset);
    offset += n;
    if (wrote) wrote.bytes += n;
  }
}

/** Bytes to write: one buffer, or parts written one after the other (a large file need not be copied into one). */
type WriteData = Uint8Array | readonly Uint8Array[];

function writeData(fd: number, data: WriteData): void {
  for (const part of data instanceof Uint8Array ? [data] : data) writeAll(fd, part, part.byteLength);
}

/**
 * A temporary file beside `path` (same file system, so the rename is atomic), named so a stray one is
 * recognisable; its random part keeps two processes apart that share a pid (containers sharing a
 * cache folder) and write the same file in the same millisecond.
 */
export function tempPathFor(path: string): string {
  return join(dirname(path), `.${basename(path)}.devs-ctx-${process.pid}-${Date.now().toString(36)}-${randomBytes(6).toString('hex')}.tmp`);
}

/**
 * Writes `bytes` to `path` [SPEC §8]. A regular file (or a missing one) is replaced atomically; a
 * symlink is followed and its target written the same way (the link stays a link); a FIFO or a
 * character device (`/dev/null`, `/dev/stdout`, a terminal) is written through, never replaced.
 * Anything else (a folder, a socket, a block device, a dangling symlink) is exit 3. A file of the
 * tool's own (`cache`) differs: see AtomicWriteOptions.
 */
export function writeFileAtomic(path: string, bytes: WriteData, options: AtomicWriteOptions = {}): void {
  writeTo(path, outputTarget(path, options.cache === true), bytes, options);
}

/** writeFileAtomic to where `outputTarget` found the write lands. */
function writeTo(path: string, { target, stat }: { target: string; stat: Stats | undefined }, bytes: WriteData, options: AtomicWriteOptions = {}): void {
  if (stat && (stat.isFIFO() || stat.isCharacterDevice())) {
    if (options.cache) throw new InputError(`${path}: cannot write: it is not a regular file; nothing was changed`);
    writeThrough(path, target, bytes);
    return;
  }
  replaceRegular(path, target, bytes, stat, options);
}

/**
 * `writeFileAtomic` for a command that can be interrupted (`signal`: its Ctrl-C). A FIFO is opened
 * on the thread pool: while it waits for a reader (as a shell's `>` waits), this thread still hears
 * the signal, and an abort ends the wait with InterruptedError, nothing written (the open waiting is
 * ended by opening the FIFO's other end for a moment). `onWaiting`: told once the open waits. Any
 * other path is written by writeFileAtomic (with `options`), at once.
 */
export async function writeFileInterruptible(
  path: string,
  bytes: Buffer,
  signal: AbortSignal | undefined,
  onWaiting?: () => void,
  options: AtomicWriteOptions = {},
): Promise<void> {
  const found = outputTarget(path);
  const { target, stat } = found;
  if (signal === undefined || !stat?.isFIFO()) {
    writeTo(path, found, bytes, options);
    return;
  }
  if (signal.aborted) throw new InterruptedError();
  const opening = open(target, constants.O_WRONLY | constants.O_NOCTTY);
  onWaiting?.();
  let stop: (() => void) | undefined;
  const aborted = new Promise<never>((_, reject) => {
    stop = () => reject(new InterruptedError());
    signal.addEventListener('abort', stop, { once: true });
  });
  let handle: FileHandle;
  try {
    handle = await Promise.race([opening, aborted]);
  } catch (error) {
    if (error instanceof InterruptedError) await endWaitingOpen(target, opening);
    throw error instanceof InterruptedError ? error : writeError(path, error);
  } finally {
    if (stop) signal.removeEventListener('abort', stop);
  }
  try {
    await handle.writeFile(bytes);
  } catch (error) {
    throw writeError(path, error);
  } finally {
    await handle.close();
  }
}

/** Ends a FIFO's open for writing that waits for a reader: be its reader for a moment (non-blocking), then close both ends. */
async function endWaitingOpen(target: string, opening: Promise<FileHandle>): Promise<void> {
  let reader: number | undefined;
  try {
    reader = openSync(target, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch {
    // gone meanwhile: its open has failed or will
  }
  try {
    await (await opening).close();
  } catch {
    // the open failed: nothing to close
  } finally {
    if (reader !== undefined) closeSync(reader);
  }
}

interface AtomicWriteOptions {
  readonly mode?: number;
  /**
   * False for a cache: the bytes are not flushed to disk before the rename (an fsync costs more
   * than a small cache write). A power cut may then leave the file empty or old, which a cache
   * reads as missing or as older entries that are still true; every reader still sees a whole file.
   */
  readonly durable?: boolean;
  /**
   * A file of the tool's own (a cache, a state): only ever a regular file where it is named. A pipe
   * or a device in its place is an error, never written through (that would wait for a reader, or
   * feed a device); a symlink is replaced, never followed (that would replace the file it names).
   * It is written private (0600, unless `mode` says otherwise), whatever mode it had.
   */
  readonly cache?: boolean;
}

/**
 * Checks before any work (or archiving) that `writeFileAtomic(path)` can succeed as far as can be
 * told: not a folder or another kind of file it refuses, and a writable folder for a file it replaces.
 */
export function checkOutputPath(path: string): void {
  const { target, stat } = outputTarget(path);
  if (stat && !stat.isFile()) return; // a pipe or a device: written through
  try {
    accessSync(dirname(target), constants.W_OK);
  } catch (error) {
    throw writeError(path, error);
  }
}

/** Whether `a` and `b` name the same existing file (through symlinks, hard links or `..`). */
export function sameFile(a: string, b: string): boolean {
  try {
    const x = statSync(a);
    const y = statSync(b);
    return x.dev === y.dev && x.ino === y.ino;
  } catch {
    return false;
  }
}

/**
 * Where a write to `path` lands: the path itself, or the real file behind a symlink; and what is there
 * now. `ownFile` (a file of the tool's own): a symlink is not followed but replaced, as a missing file
 * is made (written through, it would replace whatever file the link names, wherever that is).
 */
function outputTarget(path: string, ownFile = false): { target: string; stat: Stats | undefined } {
  let stat: Stats;
  try {
    stat = lstatSync(path);
  } catch {
    return { target: path, stat: undefined }; // missing: created (a missing folder is reported by the write)
  }
  let target = path;
  if (stat.isSymbolicLink() && ownFile) return { target: path, stat: undefined };
  if (stat.isSymbolicLink()) {
    try {
      stat = statSync(path);
      // A regular file is replaced where it really is; a pipe or device behind a link
      // (`/dev/stdout` → `/proc/self/fd/1` → `pipe:[…]`, which has no real path) is opened through it.
      if (stat.isFile()) target = realpathSync(path);
    } catch {
      throw new InputError(
        `${path}: cannot write: it is a symbolic link to a file that does not exist; nothing was changed`,
        'name the file itself, not a link to nothing',
      );
    }
  }
  if (stat.isDirectory()) throw new InputError(`${path}: cannot write: it is a folder; nothing was changed`, 'name a file, not a folder');
  if (!stat.isFile() && !stat.isFIFO() && !stat.isCharacterDevice()) {
    throw new InputError(`${path}: cannot write: it is not a regular file, a pipe or a character device; nothing was changed`, 'name a regular file');
  }
  return { target, stat };
}

/** A pipe or a device: opened for writing as it is (no create, no truncate), never renamed over. */
function writeThrough(path: string, target: string, bytes: WriteData): void {
  let fd: number | undefined;
  try {
    fd = openSync(target, constants.O_WRONLY | constants.O_NOCTTY);
    writeData(fd, bytes);
    // Closed once: a close that fails is the error (not tried again).
    const written = fd;
    fd = undefined;
    closeSync(written);
  } catch (error) {
    // The error that stopped the write is the one to tell, not a close failing after it.
    if (fd !== undefined) closeQuietly(fd);
    throw writeError(path, error);
  }
}

function replaceRegular(path: string, target: string, bytes: WriteData, existing: Stats | undefined, options: AtomicWriteOptions): void {
  const tmp = tempPathFor(target);
  // A file of the tool's own is private (a report holds excerpts of a transcript); a file replaced
  // keeps its mode; a new one gets 0666 less the umask, as a shell's `>` makes it.
  const mode = options.mode ?? (options.cache ? 0o600 : existing ? existing.mode & 0o7777 : undefined);
  // An existing file that is not one of ours (not a cache) is replaced only when we may write it, and
  // with its owner and group kept; else exit 3 and it stays as it was.
  const othersFile = existing !== undefined && options.cache !== true;
  if (othersFile) {
    try {
      accessSync(target, constants.W_OK);
    } catch (error) {
      throw writeError(path, error);
    }
  }
  let fd: number | undefined;
  let made = false;
  try {
    fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, mode ?? 0o666);
    made = true;
    if (existing) keepOwner(fd, existing, othersFile, path);
    if (mode !== undefined) fchmodSync(fd, mode); // exactly this mode, whatever the umask
    writeData(fd, bytes);
    if (options.durable !== false) fsyncSync(fd);
    // Closed once: a close that fails is not tried again (the descriptor is gone either way).
    const written = fd;
    fd = undefined;
    closeSync(written);
    renameSync(tmp, target);
  } catch (error) {
    if (fd !== undefined) closeQuietly(fd);
    // Ours only: a file of that name we did not make is another process's.
    if (made) {
      try {
        unlinkSync(tmp);
      } catch {
        // already gone
      }
    }
    if (error instanceof InputError) throw error;
    throw writeError(path, error);
  }
}

/**
 * Gives the new file (open as `fd`) the owner and group of `existing`. `required`: a file that
 * cannot keep them is not replaced (exit 3) — an agent running as that owner could no longer
 * append to it.
 */
function keepOwner(fd: number, existing: Stats, required: boolean, path = ''): void {
  const made = fstatSync(fd);
  if (made.uid === existing.uid && made.gid === existing.gid) return;
  try {
    fchownSync(fd, existing.uid, existing.gid);
  } catch (error) {
    if (!required) return;
    throw new InputError(
      `${path}: cannot keep its owner (uid ${existing.uid}, gid ${existing.gid}) in a new file: ${(error as NodeJS.ErrnoException).code ?? String(error)}; nothing was changed`,
      "run as the file's owner (or as root), or write the result elsewhere with -o",
    );
  }
}

export function writeError(path: string, error: unknown): InputError {
  // Already said (a folder, a device): not wrapped in a second "cannot write".
  if (error instanceof InputError) return error;
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
  return new InputError(
    `${path}: cannot write: ${reason}; nothing was changed`,
    code === 'ENOSPC' ? 'free some space and run it again' : 'check the path and its permissions',
  );
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

/** How long an empty or unreadable lock may exist before it is taken for a run that died making it. */
const STALE_EMPTY_LOCK_MS = 5_000;

/** The one write `acquireLock` makes, injectable so a test can fill the disk. */
export interface LockIo {
  /** Creates `path` (exclusively) holding `content`, flushed. */
  createFile(path: string, content: string): void;
}

const diskLockIo: LockIo = {
  createFile(path, content) {
    const fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o644);
    try {
      const bytes = Buffer.from(content);
      writeAll(fd, bytes, bytes.length);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  },
};

/**
 * Takes `<file>.devs-ctx.lock`. The lock appears with its content in one step: our pid is written
 * to a temporary file that is then hard-linked into place (link fails if the lock exists), so a
 * full disk never leaves an empty lock behind. A lock whose process is gone (a killed run), or one
 * that is empty or unreadable and older than STALE_EMPTY_LOCK_MS (left by an older version), is
 * taken over; a live one is exit 7.
 */
export function acquireLock(target: string, io: LockIo = diskLockIo): FileLock {
  const path = `${target}.devs-ctx.lock`;
  const content = `${process.pid}\n`;
  const tmp = tempPathFor(path);
  try {
    io.createFile(tmp, content);
  } catch (error) {
    try {
      unlinkSync(tmp);
    } catch {
      // never made
    }
    throw writeError(path, error);
  }
  try {
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        linkSync(tmp, path);
        return heldLock(path);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code !== 'EEXIST') throw writeError(path, error);
        takeOverIfDead(target, path);
      }
    }
  } finally {
    try {
      unlinkSync(tmp);
    } catch {
      // already gone
    }
  }
  throw new LockedError(`${target} is locked by another devs-ctx`, `remove ${path} if no devs-ctx is running`);
}

function heldLock(path: string): FileLock {
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
}

/** Exit 7 if the lock at `path` is held; otherwise removes it (unless another run took it over meanwhile). */
function takeOverIfDead(target: string, path: string): void {
  let text: string | undefined;
  let age = 0;
  try {
    age = Date.now() - statSync(path).mtimeMs;
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return; // vanished between the two calls: try again
  }
  const holder = text === undefined ? Number.NaN : Number.parseInt(text.trim(), 10);
  const valid = Number.isInteger(holder) && holder > 0 && String(holder) === text?.trim();
  if (valid && processAlive(holder)) {
    throw new LockedError(`${target} is locked by another devs-ctx (pid ${holder})`, `wait for it to finish; if no devs-ctx is running, remove ${path}`);
  }
  if (!valid && age < STALE_EMPTY_LOCK_MS) {
    // Perhaps another run is writing it right now (an older devs-ctx created it before writing its pid).
    throw new LockedError(
      `${target} is locked by another devs-ctx (its lock file is being written)`,
      `run it again in a few seconds; if no devs-ctx is running, remove ${path}`,
    );
  }
  try {
    if (readFileSync(path, 'utf8') === text) unlinkSync(path);
  } catch {
    // someone else took it over first; the next attempt tells
  }
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
  const existing = statSync(path);
  if (!existing.isFile()) throw new InputError(`${path}: cannot replace: it is not a regular file; nothing was changed`, 'write the result elsewhere with -o');
  assertNoOtherWriters(path);
  // A file its owner made read-only (or one we may not write) is not replaced, as a shell's `>` would not write it: exit 3.
  try {
    accessSync(path, constants.W_OK);
  } catch (error) {
    throw writeError(path, error);
  }
  const mode = existing.mode & 0o7777;
  const tmp = tempPathFor(path);
  const source = openSync(path, 'r');
  let out: number | undefined;
  let copied = original.length;
  const chunk = Buffer.alloc(1 << 16);
  /** Copies what the old file holds past `copied` to `fd`; `wrote` counts the bytes written. */
  const copyTail = (fd: number, wrote = { bytes: 0 }): void => {
    for (;;) {
      const n = readSync(source, chunk, 0, chunk.length, copied);
      if (n <= 0) return;
      writeAll(fd, chunk, n, wrote);
      copied += n;
    }
  };
  let made = false;
  try {
    // Appending: after the rename, the late bytes go to the end of the file, after whatever an agent
    // appended to it by name meanwhile, never over it.
    out = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_APPEND, mode);
    made = true;
    // The agent writing the transcript may run as another user: the new file keeps owner, group and mode.
    keepOwner(out, existing, true, path);
    fchmodSync(out, mode);
    writeAll(out, replacement, replacement.length);
    copyTail(out);
    fsyncSync(out);
    copyTail(out);
    renameSync(tmp, path);
  } catch (error) {
    // Closed quietly: the error that stopped the write is the one to tell (a close failing after it
    // would hide it, and leave the temporary file behind).
    if (out !== undefined) closeQuietly(out);
    closeQuietly(source);
    if (made) {
      try {
        unlinkSync(tmp);
      } catch {
        // already gone
      }
    }
    if (error instanceof InputError) throw error;
    throw writeError(path, error);
  }
  // Lines written to the old file in the instant before the rename: added to the new one through the
  // descriptor it was written with (opening it again by name could fail: its mode may forbid writing).
  // The new version is in place whatever happens now: a failure is never "nothing was changed".
  const problems: string[] = [];
  let full = false;
  const said = (error: unknown): string => {
    full ||= (error as NodeJS.ErrnoException | undefined)?.code === 'ENOSPC';
    return failureReason(error);
  };
  // Where the copy starts: only what the copy wrote past it is ever taken back off (unknown: nothing is).
  let end: number | undefined;
  try {
    end = fstatSync(out).size;
  } catch {
    // the copy goes ahead all the same
  }
  const wrote = { bytes: 0 };
  try {
    copyTail(out, wrote);
  } catch (error) {
    // A line cut short would run into the agent's next one: what the copy wrote is taken back off,
    // when nothing else was appended after it (the file is exactly as long as that). An agent line
    // landing between that check and the truncation would go too: both are writes to a full disk,
    // within microseconds of each other.
    let cut = wrote.bytes > 0;
    try {
      if (cut && end !== undefined && fstatSync(out).size === end + wrote.bytes) {
        ftruncateSync(out, end);
        cut = false;
      }
    } catch {
      // left as it is: said below
    }
    problems.push(
      `copying the lines an agent appended in the last instant failed (${said(error)}): they are missing from it${cut ? ', and the line it cut short may run into a line appended after it' : ''}`,
    );
  }
  // Synced whatever happened before: the new version (and any truncation) is what stays.
  try {
    fsyncSync(out);
  } catch (error) {
    problems.push(`syncing it failed (${said(error)}): it may not be safely on disk`);
  }
  try {
    closeSync(out);
  } catch (error) {
    problems.push(`closing it failed (${said(error)}): it may not be safely on disk`);
  }
  // The old file, read only: nothing of the new version depends on its close.
  closeQuietly(source);
  if (problems.length > 0) {
    throw new ReplacedThenFailedError(
      `${path}: replaced with the new version, but then ${problems.join('; and ')}`,
      full ? 'free some space (the new version is in place)' : 'check the disk (the new version is in place)',
    );
  }
}

/** Closes `fd`, ignoring a failure (another error is being told, or nothing depends on it). */
function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // see above
  }
}

/** What went wrong, in the words a write error uses ("the disk is full", "permission denied", or the system's message). */
function failureReason(error: unknown): string {
  return writeError('', error)
    .message.replace(/^: cannot write: /, '')
    .replace(/; nothing was changed$/, '');
}

/** A process that has a file open for writing. */
export interface OpenWriter {
  readonly pid: number;
  readonly command: string;
}

/**
 * The other processes that hold `path` open for writing (an agent keeping an `O_APPEND` descriptor
 * on its transcript), found through `/proc/<pid>/fd` by device and inode. Linux only: elsewhere,
 * and for processes whose descriptors we may not read (another user's, unless we are root), none
 * can be seen and the list is empty.
 */
export function openWriters(path: string): OpenWriter[] {
  if (process.platform !== 'linux') return [];
  let file: Stats;
  let pids: string[];
  try {
    file = statSync(path);
    pids = readdirSync('/proc');
  } catch {
    return [];
  }
  const writers: OpenWriter[] = [];
  for (const name of pids) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${name}/fd`);
    } catch {
      continue; // gone, or not ours to look at
    }
    for (const fd of fds) {
      try {
        const open = statSync(`/proc/${name}/fd/${fd}`);
        if (open.ino !== file.ino || open.dev !== file.dev) continue;
        const flags = /^flags:\s*([0-7]+)/m.exec(readFileSync(`/proc/${name}/fdinfo/${fd}`, 'utf8'))?.[1];
        const access = flags === undefined ? constants.O_RDWR : Number.parseInt(flags, 8) & 3;
        if (access === constants.O_RDONLY) continue;
      } catch {
        continue; // closed meanwhile
      }
      let command = '';
      try {
        command = readFileSync(`/proc/${name}/comm`, 'utf8').trim();
      } catch {
        // gone
      }
      writers.push({ pid: Number(name), command });
      break;
    }
  }
  return writers;
}

/**
 * Exit 7 when another process holds `path` open for writing: replacing the file would send what it
 * writes next to the old, unlinked inode, and those lines would be lost.
 */
export function assertNoOtherWriters(path: string): void {
  const writers = openWriters(path);
  if (writers.length === 0) return;
  const who = writers.map((w) => `PID ${w.pid}${w.command ? ` (${w.command})` : ''}`).join(', ');
  throw new LockedError(
    `${path} is in use by ${who}, which has it open for writing; nothing was written`,
    'run again when it stops (replacing the file now would lose what it writes next)',
  );
}
