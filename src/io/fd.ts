import { readSync } from 'node:fs';

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
