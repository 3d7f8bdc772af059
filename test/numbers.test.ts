import assert from 'node:assert/strict';
import { test } from 'node:test';
import { thousands } from '../src/core/numbers.js';
import { seeded } from './helpers/prng.js';

// `thousands` stands in for `toLocaleString('en-US')` (which starts ICU, about 12 ms a thread): it
// must say exactly what that says, for every number it is given.
test('thousands: exactly toLocaleString("en-US"), for integers of every length, negatives, and what it leaves to ICU', () => {
  const next = seeded(0x1234);
  const cases = [0, -0, 1, 9, 10, 99, 100, 999, 1000, 1001, 9999, 10_000, 123_456, 999_999, 1_000_000, 200_000, 1_048_576, -1, -999, -1000, -1_234_567];
  cases.push(Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 2 ** 53, 1e21, 0.5, 1234.5678, -0.0001, Number.NaN, Infinity, -Infinity);
  for (let i = 0; i < 5000; i++) {
    const digits = 1 + Math.floor(next() * 16);
    cases.push(Math.floor(next() * 10 ** digits) * (next() < 0.2 ? -1 : 1));
  }
  for (const n of cases) assert.equal(thousands(n), n.toLocaleString('en-US'), String(n));
});
