import { test } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, readSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JsonFileLru } from '../src/io/json-lru.js';
import type { JsonLruOptions } from '../src/io/json-lru.js';

const numbers = (maxEntries: number): JsonLruOptions<number> => ({
  version: 1,
  field: 'counts',
  maxEntries,
  isValue: (v): v is number => typeof v === 'number',
});
const tempFile = () => join(mkdtempSync(join(tmpdir(), 'devs-ctx-lru-')), 'cache.json');
const onDisk = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as { version: number; counts: Record<string, number> };

test('past maxEntries the least recently used entry goes first: a get or a set makes an entry the newest', () => {
  const lru = JsonFileLru.open(undefined, numbers(3));
  lru.set('a', 1);
  lru.set('b', 2);
  lru.set('c', 3);
  assert.equal(lru.get('a'), 1); // a is now the newest
  lru.set('d', 4); // b is the oldest
  assert.equal(lru.has('b'), false);
  lru.set('c', 30); // c moves to the newest end
  lru.set('e', 5); // a is the oldest now
  assert.equal(lru.has('a'), false);
  assert.equal(lru.size, 3);
  assert.deepEqual(
    ['c', 'd', 'e'].map((k) => lru.get(k)),
    [30, 4, 5],
  );
});

test('the file keeps the order, oldest first, and a reopen with a smaller limit keeps the newest', () => {
  const file = tempFile();
  const lru = JsonFileLru.open(file, numbers(10));
  for (const [i, key] of ['a', 'b', 'c', 'd'].entries()) lru.set(key, i);
  lru.get('a');
  assert.equal(lru.save(), true);
  assert.deepEqual(onDisk(file), { version: 1, counts: { b: 1, c: 2, d: 3, a: 0 } });
  const smaller = JsonFileLru.open(file, numbers(2));
  assert.deepEqual([smaller.has('b'), smaller.has('c'), smaller.get('d'), smaller.get('a')], [false, false, 3, 0]);
});

test('a corrupt file, another version, another shape or values of another type are ignored, never an error', () => {
  const file = tempFile();
  for (const text of ['{ not json', 'null', '[1,2]', '{"version":2,"counts":{"a":1}}', '{"version":1,"counts":"a"}', '{"version":1}']) {
    writeFileSync(file, text);
    assert.equal(JsonFileLru.open(file, numbers(10)).size, 0, text);
  }
  writeFileSync(file, '{"version":1,"counts":{"a":1,"b":"two","c":3}}');
  const lru = JsonFileLru.open(file, numbers(10));
  assert.deepEqual([lru.get('a'), lru.has('b'), lru.get('c')], [1, false, 3]);
  lru.set('d', 4);
  assert.equal(lru.save(), true);
  assert.deepEqual(onDisk(file).counts, { a: 1, c: 3, d: 4 }, 'the next save replaces what was skipped');
});

test('a save replaces the file by a rename (a reader of the old file sees it whole) and leaves no temporary file', () => {
  const file = tempFile();
  const first = JsonFileLru.open(file, numbers(10));
  first.set('a', 1);
  first.save();
  const before = readFileSync(file);
  const inode = statSync(file).ino;
  const fd = openSync(file, 'r');
  try {
    const second = JsonFileLru.open(file, numbers(10));
    second.set('b', 'x'.length);
    assert.equal(second.save(), true);
    const old = Buffer.alloc(before.length + 16);
    const read = readSync(fd, old, 0, old.length, 0);
    assert.deepEqual(old.subarray(0, read), before, 'the old file was not written over in place');
  } finally {
    closeSync(fd);
  }
  assert.notEqual(statSync(file).ino, inode, 'a new file was renamed into place');
  assert.deepEqual(onDisk(file).counts, { a: 1, b: 1 });
  assert.deepEqual(readdirSync(join(file, '..')), ['cache.json']);
});

test('nothing is written until something is set, and a save that cannot write says so without throwing', () => {
  const file = tempFile();
  const untouched = JsonFileLru.open(file, numbers(10));
  assert.equal(untouched.save(), true);
  assert.deepEqual(readdirSync(join(file, '..')), [], 'no change, no file');
  const blocked = join(file, '..', 'folder.json');
  mkdirSync(blocked);
  const lru = JsonFileLru.open(blocked, numbers(10));
  lru.set('a', 1);
  assert.equal(lru.save(), false);
  assert.equal(statSync(blocked).isDirectory(), true);
  const missingDir = JsonFileLru.open(join(file, '..', 'new', 'dir', 'cache.json'), numbers(10));
  missingDir.set('a', 1);
  assert.equal(missingDir.save(), true, 'the folder is made');
});

test('the file is JSON that reads back every key and value as saved (quotes, line breaks, non-ASCII, numbers as keys), in LRU order', () => {
  const file = tempFile();
  const strings: JsonLruOptions<string> = { version: 3, field: 'entries', maxEntries: 10, isValue: (v): v is string => typeof v === 'string' };
  const lru = JsonFileLru.open(file, strings);
  const saved: [string, string][] = [
    ['b', 'plain'],
    ['7', 'a "quoted"\nline\tand \\ back'],
    ['é"\u2028key', '中文 🚀 \u0000 nul'],
    ['__proto__', '{}'],
    ['a', ''],
  ];
  for (const [key, value] of saved) lru.set(key, value);
  assert.equal(lru.save(), true);
  const text = readFileSync(file, 'utf8');
  const data = JSON.parse(text) as { version: number; entries: Record<string, string> };
  assert.equal(data.version, 3);
  assert.deepEqual(Object.entries(data.entries).sort(), [...saved].sort());
  // Oldest first in the file itself, a key made of digits included (an object would move it to the front).
  const at = saved.map(([key]) => text.indexOf(`${JSON.stringify(key)}:`));
  assert.ok(
    at.every((position, i) => position > (at[i - 1] ?? 0)),
    `keys in order: ${at.join(', ')}`,
  );
  const reopened = JsonFileLru.open(file, strings);
  assert.deepEqual(
    saved.map(([key]) => reopened.get(key)),
    saved.map(([, value]) => value),
  );
});
