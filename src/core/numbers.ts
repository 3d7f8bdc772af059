/**
 * 1234567 → "1,234,567": what `n.toLocaleString('en-US')` gives, without ICU. The first
 * `toLocaleString` in a thread starts ICU's number formatting, about 12 ms: every batch worker paid
 * it on its first transcript (a window's size in the limits, a count in a note), and so did a single
 * `analyze`. Integers are written here; anything else (a fraction, -0, NaN, Infinity) is left to
 * `toLocaleString`, which then says exactly what it said before.
 */
export function thousands(n: number): string {
  if (!Number.isSafeInteger(n) || Object.is(n, -0)) return n.toLocaleString('en-US');
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}
