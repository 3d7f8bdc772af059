/** Parses a token amount as a user writes it: `200000`, `200_000`, `200k`, `1M`, `1.5m`. */
export function parseTokenAmount(raw: string): number | undefined {
  const match = /^\s*(\d+(?:[._]\d+)*)\s*([kKmM]?)\s*$/.exec(raw);
  if (!match || match[1] === undefined) return undefined;
  const digits = match[1];
  const suffix = (match[2] ?? '').toLowerCase();
  const multiplier = suffix === 'k' ? 1_000 : suffix === 'm' ? 1_000_000 : 1;
  // `_` groups digits; `.` is a decimal point only with a suffix (1.5M).
  const value = suffix ? Number(digits.replace(/_/g, '')) : Number(digits.replace(/[._]/g, ''));
  if (!Number.isFinite(value)) return undefined;
  const tokens = Math.round(value * multiplier);
  return Number.isSafeInteger(tokens) && tokens > 0 ? tokens : undefined;
}
