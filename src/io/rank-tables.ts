import { closeSync, constants, fstatSync, openSync } from 'node:fs';
import { usePrebuiltPieceClasses, usePrebuiltRankTables } from '../core/tokens/encodings.js';
import type { EncodingName } from '../core/tokens/encodings.js';
import { PieceClasses } from '../core/tokens/unicode-pieces.js';
import { readFully } from './fd.js';

/**
 * The binary rank tables `npm run build` writes into dist/ranks/ (scripts/build-ranks.mjs), found
 * from this module in the tsc output (dist/io/) or the bundle (dist/cli-bundle/): both are one level
 * below dist/. From the TypeScript sources there are none, and js-tiktoken's ranks are parsed.
 *
 * A table is read once per process, into shared memory: a thread that starts workers hands them the
 * table it has (in their workerData), so no worker reads the file again or holds its own copy of
 * about 4 MB (a worker reads one itself only for another encoding). Measured: a worker is ready to
 * count about 3 ms sooner; two workers doing nothing but count were about 4 % faster reading the
 * same memory, but a whole batch does not move beyond its noise.
 */

/** The tables this thread has read or been handed; null: there is none to read. */
const tables = new Map<EncodingName, SharedArrayBuffer | null>();

/** The prebuilt table of `name` in memory any thread can read (read on first use), or undefined when there is none. */
export function sharedRankTable(name: EncodingName): SharedArrayBuffer | undefined {
  let table = tables.get(name);
  if (table === undefined) {
    table = readShared(new URL(`../ranks/${name}.bin`, import.meta.url)) ?? null;
    tables.set(name, table);
  }
  return table ?? undefined;
}

/**
 * Counters of this thread count with the prebuilt tables. `handed`: the table of one encoding that the
 * thread which started this worker read (in its workerData), used instead of reading the file again.
 */
export function installPrebuiltRankTables(handed?: { readonly encoding: EncodingName; readonly table: SharedArrayBuffer | undefined }): void {
  if (handed?.table !== undefined) tables.set(handed.encoding, handed.table);
  usePrebuiltRankTables((name: EncodingName) => {
    const table = sharedRankTable(name);
    return table === undefined ? undefined : new Uint8Array(table);
  });
  usePrebuiltPieceClasses(() => prebuiltPieceClasses(process.versions.unicode));
}

/**
 * The class table in dist/ranks/piece-classes.bin (44 KB: each thread reads its own), when it was
 * made under `unicode` (this Node's Unicode version: another's classes could differ), else undefined.
 * @public test/unicode-pieces.test.ts reads it under another version.
 */
export function prebuiltPieceClasses(unicode: string | undefined): PieceClasses | undefined {
  if (unicode === undefined) return undefined;
  const bytes = readShared(new URL('../ranks/piece-classes.bin', import.meta.url));
  return bytes === undefined ? undefined : PieceClasses.decode(new Uint8Array(bytes), unicode);
}

/**
 * The bytes of `file` in shared memory, or undefined when it is not a regular file or cannot be read
 * whole. Opened without blocking, so a FIFO there is never waited on (a regular file ignores the flag).
 * @public test/shared-rank-table.test.ts reads odd files with it.
 */
export function readShared(file: URL | string): SharedArrayBuffer | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
    const stat = fstatSync(fd);
    if (!stat.isFile()) return undefined;
    const size = stat.size;
    const table = new SharedArrayBuffer(size);
    return readFully(fd, new Uint8Array(table)) < size ? undefined : table;
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
