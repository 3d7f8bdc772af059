import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TokenCountCache } from '../src/io/count-cache.js';

const keys = (dir: string) => Object.keys((JSON.parse(readFileSync(join(dir, 'token-counts-o200k_base.json'), 'utf8')) as { counts: object }).counts);

test('counts survive a save and a reopen', () => {
  const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-cc-'));
  const cache = TokenCountCache.open(dir, 'o200k_base');
  cache.set('a', 3);
  cache.save();
  assert.equal(TokenCountCache.open(dir, 'o200k_base').get('a'), 3);
  assert.equal(TokenCountCache.open(dir, 'cl100k_base').get('a'), undefined, 'one cache per encoding');
});

test('eviction drops the least recently used counts, not the first ones cached', () => {
  const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-cc-'));
  const first = TokenCountCache.open(dir, 'o200k_base', { maxEntries: 3 });
  for (const k of ['old-but-used', 'b', 'c']) first.set(k, 1);
  first.save();
  const second = TokenCountCache.open(dir, 'o200k_base', { maxEntries: 3 });
  assert.equal(second.get('old-but-used'), 1); // still in use: moves to the newest end
  second.set('d', 1);
  second.save();
  assert.deepEqual(keys(dir), ['c', 'old-but-used', 'd']);
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
