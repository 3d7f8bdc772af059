import { UsageError } from '../../core/errors.js';

/**
 * `--since` / `--until` for a batch of sessions, as epoch milliseconds, both inclusive. A session is
 * in range when its span [first turn's timestamp, last turn's timestamp] overlaps [since, until]: its
 * last turn is at or after `since`, and its first turn at or before `until`.
 */
export interface TimeRange {
  readonly since?: number;
  readonly until?: number;
  /** The bounds as the user typed them, for messages. */
  readonly shown: string;
}

const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;

/**
 * Reads a bound: a relative age (`90s`, `30m`, `12h`, `7d`, `2w`: that long before `now`), a date
 * (`2026-05-01`: midnight local time, and for `--until` the whole day is included), or an ISO date-time
 * (`2026-05-01T09:30`, local time unless it ends in `Z` or an offset). Anything else is a usage error.
 */
export function parseTimeBound(raw: string, flag: '--since' | '--until', now: number): number {
  const value = raw.trim();
  const relative = /^(\d+(?:\.\d+)?)\s*([smhdw])$/i.exec(value);
  if (relative) {
    const unit = (relative[2] ?? 'd').toLowerCase() as keyof typeof UNIT_MS;
    return now - Number(relative[1]) * UNIT_MS[unit];
  }
  const date = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (date) {
    const [y, m, d] = [Number(date[1]), Number(date[2]), Number(date[3])];
    const midnight = new Date(y, m - 1, flag === '--until' ? d + 1 : d).getTime();
    // --until of a date: up to the last millisecond of that day.
    if (Number.isFinite(midnight) && m >= 1 && m <= 12 && d >= 1 && d <= 31) return flag === '--until' ? midnight - 1 : midnight;
  }
  if (/^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}/.test(value)) {
    const at = Date.parse(value.replace(' ', 'T'));
    if (Number.isFinite(at)) return at;
  }
  throw new UsageError(
    `${flag} ${raw}: expected a date (2026-05-01), a date-time (2026-05-01T09:30, 2026-05-01T09:30Z) or an age (30m, 12h, 7d, 2w)`,
    'an age counts back from now: --since 7d is the last seven days',
  );
}

export function parseTimeRange(options: { since?: string | undefined; until?: string | undefined }, now: number): TimeRange | undefined {
  if (options.since === undefined && options.until === undefined) return undefined;
  const since = options.since === undefined ? undefined : parseTimeBound(options.since, '--since', now);
  const until = options.until === undefined ? undefined : parseTimeBound(options.until, '--until', now);
  if (since !== undefined && until !== undefined && since > until) {
    throw new UsageError(`--since ${options.since} is not before --until ${options.until}`, 'swap them, or widen the range');
  }
  const shown = [options.since !== undefined ? `--since ${options.since}` : '', options.until !== undefined ? `--until ${options.until}` : '']
    .filter(Boolean)
    .join(' ');
  return { ...(since !== undefined ? { since } : {}), ...(until !== undefined ? { until } : {}), shown };
}

/** Whether a session spanning [first, last] (epoch ms) overlaps the range. */
export function spanInRange(span: { readonly first: number; readonly last: number }, range: TimeRange): boolean {
  return (range.since === undefined || span.last >= range.since) && (range.until === undefined || span.first <= range.until);
}

/** The earliest and latest parseable timestamps of the turns, or undefined when none has one. */
export function timestampSpan(timestamps: Iterable<string | undefined>): { first: number; last: number } | undefined {
  let first = Infinity;
  let last = -Infinity;
  for (const raw of timestamps) {
    if (raw === undefined) continue;
    const at = Date.parse(raw);
    if (!Number.isFinite(at)) continue;
    if (at < first) first = at;
    if (at > last) last = at;
  }
  return first === Infinity ? undefined : { first, last };
}
