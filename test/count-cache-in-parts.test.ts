import { test } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, mkdtempSync, openSync, readFileSync, truncateSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TokenCountCache } from '../src/io/count-cache.js';
import { CountStore, readInPartsFrom } from '../src/io/count-store.js';
import { COUNTER_VERSION } from '../src/core/tokens/bpe.js';

// Every test of the token-count cache again, on caches whose main file is read in parts (its header
// and slots at the open, each entry and its key when a look-up first reaches it, the rest whole when a
// save rewrites it), as a cache of 1 MiB or more is: the same counts, saves, merges and evictions,
// and the same misses for damaged files.
readInPartsFrom(0);
await import('./count-cache.test.js');

/** A cache in a new folder with `n` counts (`key(i)` counts i), saved; its file. */
function filled(n: number): { dir: string; file: string; key: (i: number) => string } {
  const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-cc-parts-'));
  const key = (i: number): string => TokenCountCache.key(`text ${i}`);
  const cache = TokenCountCache.open(dir, 'o200k_base');
  for (let i = 0; i < n; i++) cache.set(key(i), i);
  cache.save();
  return { dir, file: join(dir, 'token-counts-o200k_base.bin'), key };
}

/** Overwrites `file` in place with zeros from `from` on (not as devs-ctx writes it: no new file). */
function zeroFrom(file: string, from: number): void {
  const size = readFileSync(file).length;
  const fd = openSync(file, 'r+');
  try {
    writeSync(fd, Buffer.alloc(size - from), 0, size - from, from);
  } finally {
    closeSync(fd);
  }
}

test('a cache read in parts reads an entry when a look-up reaches it: a file zeroed in place after the open gives misses for what was not read yet, never a wrong count', () => {
  const { dir, file, key } = filled(2000);
  const bytes = readFileSync(file);
  const cache = TokenCountCache.open(dir, 'o200k_base');
  for (let i = 0; i < 10; i++) assert.equal(cache.get(key(i)), i);
  // The entries and keys after the slots zeroed: what was read answers as before, the rest is missing.
  zeroFrom(file, 32 + bytes.readUInt32LE(8) * 4);
  for (let i = 0; i < 10; i++) assert.equal(cache.get(key(i)), i, 'read at the first look-up');
  const after = Array.from({ length: 100 }, (_, k) => cache.get(key(1000 + k)));
  assert.ok(
    after.every((count, k) => count === undefined || count === 1000 + k),
    'never a wrong count',
  );
  assert.ok(after.includes(undefined), 'read when looked up, after the file changed');
});

test('a cache read in parts reads the rest whole once many look-ups have read entry by entry: later changes to the file are not seen', () => {
  const { dir, file, key } = filled(3000);
  const size = readFileSync(file).length;
  const cache = TokenCountCache.open(dir, 'o200k_base');
  // One entry read for each 4,096 bytes of the file, then the rest whole.
  const reads = Math.ceil(size / 4096) + 1;
  for (let i = 0; i < reads; i++) assert.equal(cache.get(key(i)), i);
  zeroFrom(file, 32);
  for (let i = 0; i < 3000; i++) assert.equal(cache.get(key(i)), i, `count ${i}`);
});

test('a cache read in parts that a save rewrites (a merge, an eviction) keeps every count and the marks of those used', () => {
  const { dir, key } = filled(3000);
  // maxEntries past which the save evicts: what this run used must outlive what it did not.
  const cache = TokenCountCache.open(dir, 'o200k_base', { maxEntries: 3000 });
  // The first 500 used: the oldest by place, they are kept only by their marks.
  for (let i = 0; i < 500; i++) assert.equal(cache.get(key(i)), i);
  for (let i = 3000; i < 3100; i++) cache.set(key(i), i);
  cache.save();
  const reopened = TokenCountCache.open(dir, 'o200k_base', { maxEntries: 3000 });
  for (const i of [...Array.from({ length: 500 }, (_, k) => k), ...Array.from({ length: 100 }, (_, k) => 3000 + k)])
    assert.equal(reopened.get(key(i)), i, `kept: ${i}`);
  assert.equal(reopened.size, 2700);
});

test('a cache read in parts whose whole read fails (the file cut short after the open) is never written back from the part read: the save fails, the file is left as it is', () => {
  const { file, key } = filled(3000);
  const bytes = readFileSync(file);
  // Cut inside the keys: every entry still passes its check, no key can be read.
  const keysAt = 32 + bytes.readUInt32LE(8) * 4 + bytes.readUInt32LE(12) * 24;
  const store = CountStore.open(file, 200_000, COUNTER_VERSION);
  truncateSync(file, keysAt + 10);
  // Enough look-ups to pass the reads entry by entry: the whole read is tried, and fails.
  for (let i = 0; i < 3000; i++) assert.ok([undefined, i].includes(store.get(key(i))), `never a wrong count: ${i}`);
  store.set(TokenCountCache.key('new text'), 7);
  assert.equal(store.save(), false);
  assert.equal(readFileSync(file).length, keysAt + 10, 'not written');
  assert.equal(store.save(), false, 'nor at a second save');
});
