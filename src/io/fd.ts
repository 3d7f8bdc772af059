import { closeSync, constants, fchmodSync, fstatSync, openSync, readSync } from 'node:fs';

/** Reads the open file `fd` into `buffer` from `position` until the buffer is full or the file ends; returns how many bytes were read. */
export function readFully(fd: number, buffer: Uint8Array, position = 0): number {
  let done = 0;
  while (done < buffer.length) {
    const read = readSync(fd, buffer, done, buffer.length - done, position + done);
    if (read === 0) break;
    done += read;
  }
  return done;
}

/**
 * The bytes of the regular file at `path`; throws, as for a missing file, when it is anything else.
 * Opened without blocking, so a FIFO put where a cache file belongs is never waited on (a regular
 * file ignores the flag), a device is never read from, and a terminal never becomes this process's own.
 */
export function readRegularFile(path: string): Buffer {
  const { fd, size } = openRegularFile(path);
  try {
    const bytes = Buffer.allocUnsafe(size);
    return bytes.subarray(0, readFully(fd, bytes));
  } finally {
    closeSync(fd);
  }
}

/**
 * The regular file at `path` open for reading (as `readRegularFile` opens it: made private, never
 * through a symlink, a FIFO never waited on), and its size; throws as `readRegularFile` does. The
 * caller closes it.
 */
export function openRegularFile(path: string): { readonly fd: number; readonly size: number } {
  // Not through a symlink: devs-ctx's own files are only ever regular files where they are named.
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY | (constants.O_NOFOLLOW ?? 0));
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new Error(`${path}: not a regular file`);
    // An older devs-ctx wrote its files readable by all (0644): made private as they are read.
    if ((stat.mode & 0o077) !== 0 && stat.uid === process.getuid?.()) {
      try {
        fchmodSync(fd, stat.mode & 0o700);
      } catch {
        // a read-only file system: read it all the same
      }
    }
    return { fd, size: stat.size };
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}
