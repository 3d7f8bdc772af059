import assert from 'node:assert/strict';
import { test } from 'node:test';
import { preview } from '../src/core/reports/analyze.js';
import { clip } from '../src/core/text-cut.js';

/**
 * The definition: flatten every whitespace run of the whole text, trim, cut with an ellipsis to at
 * most `chars` (a width of 0 gives the ellipsis alone), never inside a character (test/text-cut.test.ts).
 */
function reference(content: string, chars: number): string {
  const flat = content.replace(/\s+/g, ' ').trim();
  return clip(flat, chars);
}

/** A small seeded generator (mulberry32), so a failure names a case that can be run again. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

test('preview flattens only the prefix it shows, and says exactly what flattening the whole text says', () => {
  const pieces = ['a', 'word', ' ', '  ', '\n', '\n\n\t ', 'é', '\u00a0', 'x'.repeat(70), ' '.repeat(300), '\r\n'];
  const next = random(0x5eed);
  let longer = 0;
  for (let i = 0; i < 5000; i++) {
    const parts: string[] = [];
    const n = Math.floor(next() * 120);
    for (let k = 0; k < n; k++) parts.push(pieces[Math.floor(next() * pieces.length)] as string);
    const content = parts.join('');
    for (const chars of [60, 300]) {
      assert.equal(preview(content, chars), reference(content, chars), JSON.stringify({ content, chars }));
      if (content.length > chars * 4) longer++;
    }
  }
  assert.ok(longer > 1000, 'many cases are longer than the first prefix');
  // The edges: exactly `chars` non-space characters followed by whitespace to the end (no ellipsis),
  // a prefix that ends inside a whitespace run, and whitespace before everything.
  for (const content of [
    'y'.repeat(60) + ' '.repeat(500),
    'z'.repeat(61) + ' '.repeat(500),
    `${' '.repeat(239)}${'q'.repeat(100)}`,
    `${'w '.repeat(119)}  tail`,
  ]) {
    assert.equal(preview(content), reference(content, 60), JSON.stringify(content));
  }
  // A zero width (no caller asks for one) ends too.
  assert.equal(preview('a b '.repeat(10), 0), reference('a b '.repeat(10), 0));
});
