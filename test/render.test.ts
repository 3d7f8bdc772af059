import { test } from 'node:test';
import assert from 'node:assert/strict';
import { wrap } from '../src/cli/render/analyze-text.js';
import { compact, growthChart } from '../src/cli/render/chart.js';

test('wrap keeps the leading indent, breaks at words, and indents what follows', () => {
  assert.deepEqual(wrap('  one two three four', 12, '    '), ['  one two', '    three', '    four']);
  assert.deepEqual(wrap('short', 40, '  '), ['short']);
  // A word longer than the width stands alone rather than being cut.
  assert.deepEqual(wrap('a 3252495b-f5ee-4004-9370-21c6d432eb59 b', 10, ' '), ['a', ' 3252495b-f5ee-4004-9370-21c6d432eb59', ' b']);
});

test('the growth chart marks the limits when the window is near them, and labels both ends', () => {
  const growth = Array.from({ length: 40 }, (_, i) => (i + 1) * 20_000);
  const lines = growthChart({ growth, soft: 500_000, hard: 800_000, width: 80, height: 8 });
  assert.ok(
    lines.some((l) => l.endsWith(' soft')),
    'soft line',
  );
  assert.ok(
    lines.some((l) => l.endsWith(' hard')),
    'hard line',
  );
  assert.match(lines[lines.length - 1] ?? '', /turn 1 +turn 40$/);
  const small = growthChart({ growth: [10, 20], soft: 500_000, hard: 800_000, width: 80, height: 4 });
  assert.match(small.join('\n'), /far above/);
  assert.deepEqual(growthChart({ growth: [], soft: 1, hard: 2, width: 80, height: 4 }), ['(no tokens)']);
});

test('compact numbers', () => {
  assert.deepEqual([compact(999), compact(1234), compact(168_000), compact(1_500_000)], ['999', '1.2k', '168k', '1.5M']);
});
