import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TokenCountCache } from '../src/io/count-cache.js';
import { CountStore } from '../src/io/count-store.js';
import { COUNTER_VERSION } from '../src/core/tokens/bpe.js';

/** Which of `keys` a fresh open of the cache in `dir` holds. */
const held = (dir: string, keys: readonly string[]) => keys.filter((k) => TokenCountCache.open(dir, 'o200k_base').get(k) !== undefined);

test('counts survive a save and a reopen', () => {
  const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-cc-'));
  const cache = TokenCountCache.open(dir, 'o200k_base');
  cache.set('a', 3);
  cache.save();
  assert.equal(TokenCountCache.open(dir, 'o200k_base').get('a'), 3);
  assert.equal(TokenCountCache.open(dir, 'cl100k_base').get('a'), undefined, 'one cache per encoding');
});

test('a cache extended run after run (Latin-1 keys of every kind among them) reads back every count; its entries keep their slots while the table does not grow', () => {
  const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-cc-'));
  const file = join(dir, 'token-counts-o200k_base.bin');
  const slotsOf = (): Int32Array => {
    const bytes = readFileSync(file);
    const slots = bytes.readUInt32LE(8);
    return new Int32Array(bytes.buffer.slice(bytes.byteOffset + 32, bytes.byteOffset + 32 + slots * 4));
  };
  const expected = new Map<string, number>();
  const add = (cache: TokenCountCache, key: string, count: number): void => {
    expected.set(key, count);
    cache.set(key, count);
  };
  // Latin-1 keys of every kind are stored byte for byte.
  const first = TokenCountCache.open(dir, 'o200k_base');
  for (const key of ['é', 'ÿ'.repeat(255), '\0', 'a\u00a0b']) add(first, key, key.length);
  for (let i = 0; i < 100; i++) add(first, TokenCountCache.key(`first run ${i}`), i);
  first.save();
  let reused = 0;
  let grown = 0;
  for (let run = 1; run <= 12; run++) {
    const before = slotsOf();
    const cache = TokenCountCache.open(dir, 'o200k_base');
    // Reads back some of what the earlier runs saved (marking them), then adds 5 counts, or 60 in run 8.
    for (const [key, count] of [...expected].filter((_, i) => i % 4 === run % 4)) assert.equal(cache.get(key), count, `run ${run}: ${key}`);
    for (let i = 0; i < (run === 8 ? 60 : 5); i++) add(cache, TokenCountCache.key(`run ${run} text ${i}`), run * 1000 + i);
    cache.save();
    const after = slotsOf();
    if (after.length === before.length) {
      reused++;
      for (let slot = 0; slot < before.length; slot++)
        if (before[slot] !== -1) assert.equal(after[slot], before[slot], `run ${run}: the entry in slot ${slot} stays there`);
    } else grown++;
  }
  assert.ok(reused >= 10 && grown >= 1, `slots reused ${reused} times, grown ${grown}`);
  const last = TokenCountCache.open(dir, 'o200k_base');
  assert.equal(last.size, expected.size);
  for (const [key, count] of expected) assert.equal(last.get(key), count, key);
  assert.equal(last.get(TokenCountCache.key('never counted')), undefined);
});

test("a large cache takes a run's new counts in its recent file, leaving the main file as it is, until the recent file is an eighth of it: then they merge", () => {
  const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-cc-'));
  const file = join(dir, 'token-counts-o200k_base.bin');
  const recent = `${file}.recent`;
  const key = (i: number): string => TokenCountCache.key(`text ${i}`);
  const first = TokenCountCache.open(dir, 'o200k_base');
  for (let i = 0; i < 20_000; i++) first.set(key(i), i);
  first.save();
  const main = readFileSync(file);
  assert.equal(existsSync(recent), false, 'a small table was written whole');
  let next = 20_000;
  let runs = 0;
  // Each run uses 100 old counts and adds 100: the recent file takes both (200 entries a run), the
  // main file stays; 12 runs make 2,400, under an eighth of 20,000.
  while (runs < 12) {
    const cache = TokenCountCache.open(dir, 'o200k_base');
    for (let i = runs * 100; i < runs * 100 + 100; i++) assert.equal(cache.get(key(i)), i);
    for (let i = next; i < next + 100; i++) cache.set(key(i), i);
    next += 100;
    cache.save();
    runs++;
    assert.deepEqual(readFileSync(file), main, `run ${runs}: the main file is not rewritten`);
    assert.ok(existsSync(recent));
  }
  const reopened = TokenCountCache.open(dir, 'o200k_base');
  for (let i = 0; i < next; i++) assert.equal(reopened.get(key(i)), i, `key ${i}`);
  // 2,400 + 200 more would pass an eighth of the main table: that save merges, and the recent file goes.
  const merging = TokenCountCache.open(dir, 'o200k_base');
  for (let i = next; i < next + 200; i++) merging.set(key(i), i);
  next += 200;
  merging.save();
  assert.equal(existsSync(recent), false, 'merged');
  assert.notDeepEqual(readFileSync(file), main);
  const merged = TokenCountCache.open(dir, 'o200k_base');
  assert.equal(merged.size, next, 'each count once: the copies of used entries are not added twice');
  for (let i = 0; i < next; i++) assert.equal(merged.get(key(i)), i, `merged key ${i}`);
});

test('a damaged or foreign recent file reads as empty: the main file still answers, and the next save writes a sound one', () => {
  const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-cc-'));
  const recent = join(dir, 'token-counts-o200k_base.bin.recent');
  const key = (i: number): string => TokenCountCache.key(`text ${i}`);
  const first = TokenCountCache.open(dir, 'o200k_base');
  for (let i = 0; i < 17_000; i++) first.set(key(i), i);
  first.save();
  const second = TokenCountCache.open(dir, 'o200k_base');
  second.set(key(17_000), 17_000);
  second.save();
  for (const junk of [Buffer.from('not a table'), readFileSync(recent).subarray(0, 100), Buffer.alloc(0)]) {
    writeFileSync(recent, junk);
    const cache = TokenCountCache.open(dir, 'o200k_base');
    assert.equal(cache.get(key(5)), 5, 'the main file answers');
    assert.equal(cache.get(key(17_000)), undefined, 'what only the damaged file held is a miss');
    cache.set(key(17_000), 17_000);
    cache.save();
    assert.equal(TokenCountCache.open(dir, 'o200k_base').get(key(17_000)), 17_000, 'mended');
  }
});

test('a merge keeps the marks of what only the recent file held: a count no run used since outlives none used later', () => {
  const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-cc-'));
  const open = (maxEntries: number) => TokenCountCache.open(dir, 'o200k_base', { maxEntries });
  const key = (name: string, i: number): string => TokenCountCache.key(`${name} ${i}`);
  const first = open(30_000);
  for (let i = 0; i < 17_000; i++) first.set(key('main', i), i);
  first.save();
  const second = open(30_000); // N: added, then never used again
  for (let i = 0; i < 100; i++) second.set(key('new', i), i);
  second.save();
  const third = open(30_000); // U: used
  for (let i = 0; i < 2_000; i++) assert.equal(third.get(key('main', i)), i);
  third.set(key('x', 0), 0);
  third.save();
  assert.ok(existsSync(join(dir, 'token-counts-o200k_base.bin.recent')), 'both runs went to the recent file');
  const fourth = open(30_000); // 3,000 more: past an eighth, a merge
  for (let i = 0; i < 3_000; i++) fourth.set(key('more', i), i);
  fourth.save();
  assert.equal(existsSync(join(dir, 'token-counts-o200k_base.bin.recent')), false);
  const fifth = open(5_000); // past maxEntries: down to 4,500, oldest first
  fifth.set(key('y', 0), 0);
  fifth.save();
  const held = open(5_000);
  const kept = (name: string, n: number): number => Array.from({ length: n }, (_, i) => held.get(key(name, i))).filter((c) => c !== undefined).length;
  assert.equal(kept('new', 100), 0, 'N, last used two runs before U, went first');
  assert.equal(kept('more', 3_000), 3_000);
  // 4,500 kept: y, the 3,000, then of the counts last used in the third run (U and x) the newest 1,499.
  assert.equal(kept('main', 2_000) + kept('x', 1), 1_499);
});

test('a recent file that cannot be written (a folder of that name) sends the counts to the main file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-cc-'));
  const first = TokenCountCache.open(dir, 'o200k_base');
  for (let i = 0; i < 17_000; i++) first.set(TokenCountCache.key(`text ${i}`), i);
  first.save();
  mkdirSync(join(dir, 'token-counts-o200k_base.bin.recent'));
  for (let run = 0; run < 3; run++) {
    const cache = TokenCountCache.open(dir, 'o200k_base');
    cache.set(`run ${run}`, run);
    cache.save();
    assert.equal(TokenCountCache.open(dir, 'o200k_base').get(`run ${run}`), run, `run ${run}`);
  }
});

test('what the recent file marks as used outlives what no run used, when the merge evicts', () => {
  const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-cc-'));
  const key = (i: number): string => TokenCountCache.key(`text ${i}`);
  const open = () => TokenCountCache.open(dir, 'o200k_base', { maxEntries: 20_000 });
  const first = open();
  for (let i = 0; i < 17_000; i++) first.set(key(i), i);
  first.save();
  // A run uses the first 1,000 counts and adds 100: into the recent file, with their marks.
  const second = open();
  for (let i = 0; i < 1_000; i++) second.get(key(i));
  for (let i = 17_000; i < 17_100; i++) second.set(key(i), i);
  second.save();
  assert.ok(existsSync(join(dir, 'token-counts-o200k_base.bin.recent')));
  // One that would pass maxEntries merges and evicts down to 90 % (18,000): the 2,000 oldest go.
  const third = open();
  for (let i = 17_100; i < 20_100; i++) third.set(key(i), i);
  third.save();
  const held = open();
  const kept = (from: number, to: number): number => {
    let n = 0;
    for (let i = from; i < to; i++) if (held.get(key(i)) === i) n++;
    return n;
  };
  assert.equal(kept(0, 1_000), 1_000, 'the counts the second run used stay');
  assert.equal(kept(17_000, 20_100), 3_100, 'the new ones stay');
  assert.equal(kept(1_000, 17_000), 18_000 - 4_100, 'of the unused, the oldest go');
});

test('eviction drops the least recently used counts, not the first ones cached (by run: what a run used is newer than what it did not)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-cc-'));
  const all = ['old-but-used', 'b', 'c', 'd', 'e'];
  const first = TokenCountCache.open(dir, 'o200k_base', { maxEntries: 3 });
  for (const k of ['old-but-used', 'b', 'c']) first.set(k, 1);
  first.save();
  const second = TokenCountCache.open(dir, 'o200k_base', { maxEntries: 3 });
  assert.equal(second.get('old-but-used'), 1); // still in use: newer than b and c
  second.set('d', 1);
  second.save();
  assert.deepEqual(held(dir, all), ['old-but-used', 'c', 'd'], 'b, the oldest unused, went first');
  const third = TokenCountCache.open(dir, 'o200k_base', { maxEntries: 3 });
  assert.equal(third.get('c'), 1);
  third.set('e', 2);
  third.save();
  // c was used now; of the others old-but-used was last used before d was added (in the same run, earlier).
  assert.deepEqual(held(dir, all), ['c', 'd', 'e']);
  assert.equal(TokenCountCache.open(dir, 'o200k_base').get('e'), 2);
});

test('an unwritable cache directory is ignored, never an error', () => {
  const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-cc-'));
  writeFileSync(join(dir, 'a-file'), '');
  const cache = TokenCountCache.open(join(dir, 'a-file', 'cache'), 'o200k_base'); // ENOTDIR
  cache.set('a', 1);
  assert.doesNotThrow(() => cache.save());
});

test('the cache key of a text is its SHA-1 (base64url), as earlier versions wrote it: their cache files stay valid', () => {
  for (const text of ['', 'a', 'héllo wörld ✓', '\u{1F600} emoji', 'x'.repeat(100_000), '\ud800 lone surrogate']) {
    assert.equal(TokenCountCache.key(text), createHash('sha1').update(text).digest('base64url'), JSON.stringify(text.slice(0, 20)));
  }
});

test('a full cache (every count a real key) reads back exactly, and only a save that adds writes the file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-cc-'));
  const keys = Array.from({ length: 5000 }, (_, i) => TokenCountCache.key(`text ${i}`));
  const cache = TokenCountCache.open(dir, 'o200k_base');
  for (const [i, k] of keys.entries()) cache.set(k, i * 7);
  cache.save();
  const file = join(dir, 'token-counts-o200k_base.bin');
  const written = readFileSync(file);
  const again = TokenCountCache.open(dir, 'o200k_base');
  assert.equal(again.size, 5000);
  assert.deepEqual(
    keys.map((k) => again.get(k)),
    keys.map((_, i) => i * 7),
  );
  assert.equal(again.get(TokenCountCache.key('never counted')), undefined);
  again.save();
  assert.deepEqual(readFileSync(file), written, 'nothing added: the file is not rewritten');
  // A key the file cannot hold (not Latin-1, or too long) is kept for this run only.
  again.set('ключ', 3);
  again.set('k'.repeat(300), 4);
  assert.deepEqual([again.get('ключ'), again.get('k'.repeat(300))], [3, 4]);
  again.save();
  const third = TokenCountCache.open(dir, 'o200k_base');
  assert.deepEqual([third.get('ключ'), third.get('k'.repeat(300)), third.get(keys[4999] as string)], [undefined, undefined, 4999 * 7]);
});

test('a truncated, padded or foreign cache file reads as empty; a damaged table gives misses, never a wrong key, a hang or an error; the next save mends both', () => {
  const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-cc-'));
  const file = join(dir, 'token-counts-o200k_base.bin');
  const cache = TokenCountCache.open(dir, 'o200k_base');
  for (let i = 0; i < 50; i++) cache.set(`key-${i}`, i);
  cache.save();
  const good = readFileSync(file);
  const wrongVersion = Buffer.from(good);
  wrongVersion.writeUInt32LE(99, 4);
  for (const bytes of [
    Buffer.alloc(0),
    Buffer.from('{"version":1,"counts":{"a":1}}'),
    good.subarray(0, good.length - 1),
    Buffer.concat([good, Buffer.from([0])]),
    wrongVersion,
  ]) {
    writeFileSync(file, bytes);
    const opened = TokenCountCache.open(dir, 'o200k_base');
    assert.equal(opened.size, 0, `${bytes.length} bytes`);
    opened.set('fresh', 9);
    opened.save();
    assert.equal(TokenCountCache.open(dir, 'o200k_base').get('fresh'), 9);
  }
  // Damage inside the tables (the header still right): what is found is right, the rest is missing.
  const slots = good.readUInt32LE(8);
  const entriesAt = 32 + 4 * slots;
  const noFreeSlot = Buffer.from(good).fill(0, 32, entriesAt); // every slot names entry 0 (key-0): a probe must still end
  const strayEntry = Buffer.from(good);
  strayEntry.writeInt32LE(-5, 32 + 4 * (good.indexOf(Buffer.from('key-7')) % slots)); // a slot naming no entry
  const keyOutside = Buffer.from(good);
  keyOutside.writeInt32LE(1 << 30, entriesAt + 20 * 3 + 8); // entry 3's key lies past the end
  const negativeCount = Buffer.from(good);
  negativeCount.writeInt32LE(-1, entriesAt + 20 * 4);
  for (const [name, bytes] of [
    ['no free slot', noFreeSlot],
    ['a stray slot', strayEntry],
    ['a key outside', keyOutside],
    ['a negative count', negativeCount],
  ] as const) {
    writeFileSync(file, bytes);
    const opened = TokenCountCache.open(dir, 'o200k_base');
    for (let i = 0; i < 50; i++) {
      const count = opened.get(`key-${i}`);
      assert.ok(count === undefined || count === i, `${name}: key-${i} gave ${count}`);
    }
    assert.equal(opened.get('never stored'), undefined, name);
    opened.set('fresh', 9);
    opened.save();
    const mended = TokenCountCache.open(dir, 'o200k_base');
    assert.equal(mended.get('fresh'), 9, name);
    assert.equal(mended.get('never stored'), undefined, name);
  }
  // A file whose slots were all overwritten is placed anew at the next save: every sound entry is found again.
  writeFileSync(file, noFreeSlot);
  const again = TokenCountCache.open(dir, 'o200k_base');
  again.set('fresh', 9);
  again.save();
  const placed = TokenCountCache.open(dir, 'o200k_base');
  assert.deepEqual(
    Array.from({ length: 50 }, (_, i) => placed.get(`key-${i}`)),
    Array.from({ length: 50 }, (_, i) => i),
  );
});

test('counts cached by a counter of another version are not used: a fix that changes a count is not undone by the cache', () => {
  const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-cc-'));
  const file = join(dir, 'token-counts-o200k_base.bin');
  // A cache as devs-ctx wrote it before counters had versions (a zero where the version now is),
  // holding the count the counter of then gave a text this one counts otherwise.
  const old = CountStore.open(file, 1000, 0);
  old.set(TokenCountCache.key('中'.repeat(21_846)), 21_848);
  assert.ok(old.save());
  assert.equal(CountStore.open(file, 1000, 0).get(TokenCountCache.key('中'.repeat(21_846))), 21_848, 'read back by its own version');
  assert.ok(COUNTER_VERSION > 0);
  const cache = TokenCountCache.open(dir, 'o200k_base');
  assert.equal(cache.get(TokenCountCache.key('中'.repeat(21_846))), undefined);
  assert.equal(cache.size, 0);
  // This counter's counts replace them at the next save.
  cache.set(TokenCountCache.key('alpha'), 1);
  cache.save();
  assert.equal(TokenCountCache.open(dir, 'o200k_base').get(TokenCountCache.key('alpha')), 1);
  assert.equal(CountStore.open(file, 1000, 0).size, 0, 'the file is of this version now');
  // A recent file of another version beside a small main table is removed by the save that writes the main one.
  const foreign = CountStore.open(join(dir, 'old.bin'), 1000, 0);
  foreign.set('x', 1);
  assert.ok(foreign.save());
  writeFileSync(`${file}.recent`, readFileSync(join(dir, 'old.bin')));
  const more = TokenCountCache.open(dir, 'o200k_base');
  more.set(TokenCountCache.key('beta'), 2);
  more.save();
  assert.equal(existsSync(`${file}.recent`), false);
});

test("an earlier version's JSON cache is not read (an older counter made its counts) and is removed at the next save", () => {
  const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-cc-'));
  const json = join(dir, 'token-counts-o200k_base.json');
  const old = { [TokenCountCache.key('alpha')]: 11, [TokenCountCache.key('beta')]: 22 };
  writeFileSync(json, JSON.stringify({ version: 1, counts: old }));
  const cache = TokenCountCache.open(dir, 'o200k_base');
  assert.equal(cache.get(TokenCountCache.key('alpha')), undefined);
  cache.set('x', 1);
  cache.save();
  assert.equal(existsSync(json), false);
  assert.equal(TokenCountCache.open(dir, 'o200k_base').get(TokenCountCache.key('alpha')), undefined);
});

test('past maxEntries a save drops the oldest down to 90 % of it (the newest kept), so the next runs only add', () => {
  const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-cc-'));
  const file = join(dir, 'token-counts-o200k_base.bin');
  const open = () => TokenCountCache.open(dir, 'o200k_base', { maxEntries: 100 });
  for (let run = 0; run < 10; run++) {
    const cache = open();
    for (let i = 0; i < 10; i++) cache.set(`r${run}-${i}`, run * 10 + i);
    cache.save();
  }
  assert.equal(open().size, 100);
  const eleventh = open();
  assert.equal(eleventh.get('r0-0'), 0); // used: outlives the other entries of run 0
  eleventh.set('new', 1);
  eleventh.save();
  const after = open();
  assert.equal(after.size, 90);
  assert.equal(after.get('new'), 1);
  assert.equal(after.get('r0-0'), 0);
  // 101 entries, 90 kept: the 11 dropped are run 0's other 9 and the first 2 of run 1.
  const gone = [...Array.from({ length: 9 }, (_, i) => `r0-${i + 1}`), 'r1-0', 'r1-1'];
  assert.deepEqual(
    gone.filter((k) => after.get(k) !== undefined),
    [],
  );
  assert.equal(after.get('r1-2'), 12);
  // Under the limit again: a save appends (the file only grows).
  const before = readFileSync(file).length;
  const twelfth = open();
  twelfth.set('more', 2);
  twelfth.save();
  assert.equal(open().size, 91);
  assert.ok(readFileSync(file).length > before);
});

/** The cache file of `dir` with its layout: where the slots and the entries (6 words each) start. */
function cacheFile(dir: string): { file: string; bytes: Buffer; slots: number; entriesAt: number } {
  const file = join(dir, 'token-counts-o200k_base.bin');
  const bytes = readFileSync(file);
  const slots = bytes.readUInt32LE(8);
  return { file, bytes, slots, entriesAt: 32 + 4 * slots };
}

test('a damaged count, or a page of zeros, is a miss and never a wrong count; counting it again mends it', () => {
  const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-cc-'));
  const cache = TokenCountCache.open(dir, 'o200k_base');
  for (let i = 0; i < 2000; i++) cache.set(`key-${i}`, 1000 + i);
  cache.save();
  const { file, bytes, entriesAt } = cacheFile(dir);
  const flipped = Buffer.from(bytes);
  flipped.writeInt32LE(flipped.readInt32LE(entriesAt + 24 * 5) ^ (1 << 12), entriesAt + 24 * 5); // key-5's count, one bit
  const zeroed = Buffer.from(bytes).fill(0, entriesAt + 4096 * 2, entriesAt + 4096 * 3); // a page lost in a crash
  for (const [name, damaged] of [
    ['one bit of a count', flipped],
    ['a zeroed page', zeroed],
  ] as const) {
    writeFileSync(file, damaged);
    const opened = TokenCountCache.open(dir, 'o200k_base');
    const wrong: string[] = [];
    const missing: number[] = [];
    for (let i = 0; i < 2000; i++) {
      const count = opened.get(`key-${i}`);
      if (count === undefined) missing.push(i);
      else if (count !== 1000 + i) wrong.push(`key-${i}: ${count}`);
    }
    assert.deepEqual(wrong, [], name);
    assert.ok(missing.length > 0, `${name}: the damaged entries are missing`);
    for (const i of missing) opened.set(`key-${i}`, 1000 + i);
    opened.save();
    const mended = TokenCountCache.open(dir, 'o200k_base');
    assert.deepEqual(
      Array.from({ length: 2000 }, (_, i) => mended.get(`key-${i}`)),
      Array.from({ length: 2000 }, (_, i) => 1000 + i),
      name,
    );
    writeFileSync(file, bytes);
  }
});

test('a slot wiped in the file is found missing at the next save: the table is placed anew, no entry lost or doubled', () => {
  const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-cc-'));
  const cache = TokenCountCache.open(dir, 'o200k_base');
  for (let i = 0; i < 100; i++) cache.set(`key-${i}`, i);
  cache.save();
  const { file, bytes, slots } = cacheFile(dir);
  const wiped = Buffer.from(bytes);
  for (let slot = 0; slot < slots; slot++) if (wiped.readInt32LE(32 + 4 * slot) === 5) wiped.writeInt32LE(-1, 32 + 4 * slot);
  writeFileSync(file, wiped);
  const opened = TokenCountCache.open(dir, 'o200k_base');
  assert.equal(opened.get('key-5'), undefined);
  opened.set('other', 1);
  opened.save();
  const placed = TokenCountCache.open(dir, 'o200k_base');
  assert.equal(placed.get('key-5'), 5);
  assert.equal(placed.size, 101);
});

test('eviction after the run counter wraps past 2^31: what this run used is still the newest', () => {
  const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-cc-'));
  const first = TokenCountCache.open(dir, 'o200k_base', { maxEntries: 10 });
  for (let i = 0; i < 9; i++) first.set(`old${i}`, i);
  first.save();
  // The file as the 2^31 - 1st run left it: its generation and every entry's the largest int32.
  const { file, bytes, entriesAt } = cacheFile(dir);
  const late = Buffer.from(bytes);
  late.writeUInt32LE(0x7fffffff, 16);
  for (let i = 0; i < 9; i++) late.writeInt32LE(0x7fffffff, entriesAt + 24 * i + 4);
  writeFileSync(file, late);
  const next = TokenCountCache.open(dir, 'o200k_base', { maxEntries: 10 });
  assert.deepEqual([next.get('old0'), next.get('old1')], [0, 1]);
  next.set('new0', 10);
  next.set('new1', 11);
  next.save(); // 11 > 10: down to 9, the two oldest unused (old2, old3) dropped
  const after = TokenCountCache.open(dir, 'o200k_base', { maxEntries: 10 });
  const all = [...Array.from({ length: 9 }, (_, i) => `old${i}`), 'new0', 'new1'];
  assert.deepEqual(
    all.filter((k) => after.get(k) === undefined),
    ['old2', 'old3'],
  );
  // Two runs more, their generations past 2^31 (negative as int32s), with no recent file beside the
  // main one: each is still the newest run, not the first (a missing file is no generation 0).
  let names = [...all];
  for (const [run, used] of [
    ['a', ['old4', 'old5']],
    ['b', ['old8', 'new0']],
  ] as const) {
    const later = TokenCountCache.open(dir, 'o200k_base', { maxEntries: 10 });
    for (const k of used) assert.notEqual(later.get(k), undefined, `${run}: ${k}`);
    later.set(`new-${run}1`, 1);
    later.set(`new-${run}2`, 2);
    later.save();
    names = [...names, `new-${run}1`, `new-${run}2`];
  }
  const last = TokenCountCache.open(dir, 'o200k_base', { maxEntries: 10 });
  assert.deepEqual(
    names.filter((k) => last.get(k) === undefined),
    // Run a dropped the oldest unused (old6, old7: last used before the wrap); run b, the two it
    // found oldest (old0, old1: last used by the first run past it).
    ['old0', 'old1', 'old2', 'old3', 'old6', 'old7'],
    'what the last two runs used or added stays',
  );
});

test('a run whose file is past 2^31 runs and has no recent file beside it counts on from there (a missing file is no run 0)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-cc-'));
  const first = TokenCountCache.open(dir, 'o200k_base', { maxEntries: 10 });
  for (let i = 0; i < 9; i++) first.set(`old${i}`, i);
  first.save(); // every entry last used by run 1
  const { file, bytes, entriesAt } = cacheFile(dir);
  const late = Buffer.from(bytes);
  late.writeUInt32LE(0x80000001, 16); // the file as run 2^31 + 1 left it: it used old0 … old3
  for (let i = 0; i < 4; i++) late.writeInt32LE(0x80000001 | 0, entriesAt + 24 * i + 4);
  writeFileSync(file, late);
  const next = TokenCountCache.open(dir, 'o200k_base', { maxEntries: 10 });
  next.set('new0', 10);
  next.set('new1', 11);
  next.save(); // 11 > 10: down to 9, the two oldest (old4, old5: run 1's) dropped
  const after = TokenCountCache.open(dir, 'o200k_base', { maxEntries: 10 });
  assert.deepEqual(
    Array.from({ length: 9 }, (_, i) => `old${i}`).filter((k) => after.get(k) === undefined),
    ['old4', 'old5'],
  );
});

test("the earlier version's JSON cache that cannot be removed (a folder of that name, another user's file) is no error", () => {
  const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-cc-'));
  mkdirSync(join(dir, 'token-counts-o200k_base.json', 'inside'), { recursive: true });
  const cache = TokenCountCache.open(dir, 'o200k_base');
  cache.set('a', 1);
  assert.doesNotThrow(() => cache.save());
  assert.equal(TokenCountCache.open(dir, 'o200k_base').get('a'), 1);
});
