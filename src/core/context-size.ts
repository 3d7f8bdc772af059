import type { Transcript, UsagePoint } from './transcript.js';
import { modelWindow } from './models.js';
import { SUMMARY_PREFIX } from './prune/edit.js';

/**
 * The context size the model sees. The file holds neither the agent's system prompt and tool
 * definitions nor the model's tokenizer, so the estimate (our tokenizer over the turns in the file)
 * is calibrated against the session's own recorded API calls: recorded ≈ overhead + scale × estimate.
 */

export type ContextBasis = 'calibrated' | 'recorded' | 'estimate';

export interface ContextFit {
  /** Tokens the model sees that the file does not hold (system prompt, tool definitions). */
  readonly overhead: number;
  /** Model tokens per estimated token (the tokenizers' ratio). */
  readonly scale: number;
  /** Recorded calls the fit used. */
  readonly points: number;
  /** Median |predicted − recorded| / recorded over those calls. */
  readonly medianError: number;
}

/** A linear map from estimated tokens to the model's tokens: model = overhead + scale × estimate. */
export interface Calibration {
  readonly basis: ContextBasis;
  readonly overhead: number;
  readonly scale: number;
  readonly fit: ContextFit | null;
}

export interface ContextSize {
  /** The size of the next request, in the model's tokens: what urgency and exit codes follow. */
  readonly tokens: number;
  readonly basis: ContextBasis;
  /** Our tokenizer over the turns in the file. */
  readonly estimate: number;
  readonly model: string | null;
  readonly window: number | null;
  readonly fit: ContextFit | null;
}

/** Fewer recorded calls than this: the last record plus the estimate after it. */
const MIN_FIT_POINTS = 4;
/** The fit looks at the most recent calls (a session's overhead changes as tools and reminders come and go). */
const MAX_FIT_POINTS = 60;
/** A fitted scale outside this range is not a tokenizer ratio: something else moved the records. */
const SCALE_RANGE = [0.5, 4] as const;

const IDENTITY: Calibration = { basis: 'estimate', overhead: 0, scale: 1, fit: null };

/** The median of `values`, sorted in place (a typed array sorts by value, with no comparator to call; -0 before 0, equal as a median). */
function medianInPlace(values: Float64Array): number {
  if (values.length === 0) return 0;
  values.sort();
  const mid = values.length >> 1;
  return values.length % 2 === 1 ? (values[mid] as number) : ((values[mid - 1] as number) + (values[mid] as number)) / 2;
}

/**
 * Pure: a robust straight-line fit of recorded against estimated tokens (Theil–Sen: the median of
 * pairwise slopes, then the median intercept), so a cache miss, a microcompaction or a duplicated
 * record moves one point and not the line. Null when the points cannot carry a line. The slopes
 * (up to 1,770 a transcript) go straight into one typed array: a batch fits every session once,
 * in code not yet compiled.
 */
export function fitUsage(points: readonly { readonly estimate: number; readonly recorded: number }[]): ContextFit | null {
  const n = points.length;
  if (n < MIN_FIT_POINTS) return null;
  const estimates = new Float64Array(n);
  const recorded = new Float64Array(n);
  points.forEach((p, i) => {
    estimates[i] = p.estimate;
    recorded[i] = p.recorded;
  });
  const slopes = new Float64Array((n * (n - 1)) / 2);
  let count = 0;
  for (let i = 0; i < n; i++) {
    const x = estimates[i] as number;
    const y = recorded[i] as number;
    for (let j = i + 1; j < n; j++) {
      const dx = (estimates[j] as number) - x;
      if (dx !== 0) slopes[count++] = ((recorded[j] as number) - y) / dx;
    }
  }
  if (count < MIN_FIT_POINTS - 1) return null;
  const scale = medianInPlace(slopes.subarray(0, count));
  if (!(scale >= SCALE_RANGE[0] && scale <= SCALE_RANGE[1])) return null;
  const residuals = new Float64Array(n);
  for (let i = 0; i < n; i++) residuals[i] = (recorded[i] as number) - scale * (estimates[i] as number);
  const overhead = medianInPlace(residuals);
  const errors = new Float64Array(n);
  for (let i = 0; i < n; i++) errors[i] = Math.abs(overhead + scale * (estimates[i] as number) - (recorded[i] as number)) / Math.max(1, recorded[i] as number);
  const medianError = medianInPlace(errors);
  return {
    overhead: Math.round(overhead),
    scale: Math.round(scale * 10_000) / 10_000,
    points: n,
    medianError: Math.round(medianError * 10_000) / 10_000,
  };
}

/** The original size a masked tool result's placeholder records (core/prune/engine.ts maskPlaceholder). */
const MASKED_TOKENS = /^\[devs-ctx: ([\d,]+) tokens of tool output (?:archived|removed, not archived)/;

/**
 * All that calibration reads of a turn's text: a masked result's placeholder (the size it records),
 * or a summary's marker (the calls before it measured what was pruned: `staleCalls`); undefined for
 * any other turn. A batch that reads a grown file on keeps, of an old turn's text, only this.
 */
export function calibrationText(content: string): string | undefined {
  return MASKED_TOKENS.exec(content)?.[0] ?? (content.startsWith(SUMMARY_PREFIX) ? SUMMARY_PREFIX : undefined);
}

/**
 * Pure: the calibration of one transcript from its recorded calls, given each entry's estimated
 * tokens. The calls before a prune masked tool results measured the results whole: their estimate
 * is taken with each masked result at the size its placeholder records, so the calibration after a
 * masking prune is the one before it (and a pruned session is sized by what it holds now).
 */
export function calibrate(transcript: Pick<Transcript, 'entries' | 'usage' | 'carriedCalibration'>, perEntry: readonly number[]): Calibration {
  // The estimate of entries[0, k) as the recorded calls saw them.
  const seen = [0];
  let total = 0;
  perEntry.forEach((tokens, i) => {
    const masked = MASKED_TOKENS.exec(transcript.entries[i]?.turn.content ?? '');
    total += masked ? Number((masked[1] ?? '0').replace(/,/g, '')) : tokens;
    seen.push(total);
  });
  const stale = staleCalls(transcript.entries);
  const byEntry = new Map<number, UsagePoint>();
  for (const point of transcript.usage ?? []) {
    if (point.entriesBefore > perEntry.length || point.contextTokens <= 0 || stale(point)) continue;
    byEntry.set(point.entriesBefore, point); // a record written twice counts once (the later copy)
  }
  const fresh = [...byEntry.values()].sort((a, b) => a.entriesBefore - b.entriesBefore);
  const last = fresh[fresh.length - 1];
  const carried = transcript.carriedCalibration;
  // A freshly pruned session: no call since, so the fit from before the prune maps what is left.
  if (!last) return carried ? { basis: 'calibrated', overhead: carried.overhead, scale: carried.scale, fit: null } : IDENTITY;
  const lastSeen = seen[last.entriesBefore] ?? 0;
  const points = fresh.slice(-MAX_FIT_POINTS).map((p) => ({ estimate: seen[p.entriesBefore] ?? 0, recorded: p.contextTokens }));
  const fit = fitUsage(points);
  // The line gives the scale; it is anchored at the last call, which measured everything before it
  // exactly (on the real sessions this halves the error of the line alone).
  if (fit) return { basis: 'calibrated', overhead: Math.round(last.contextTokens - fit.scale * lastSeen), scale: fit.scale, fit };
  // Few calls since: the last one, and what came after it at the carried scale (or as estimated).
  const scale = carried?.scale ?? 1;
  return { basis: 'recorded', overhead: Math.round(last.contextTokens - scale * lastSeen), scale, fit: null };
}

/**
 * Which recorded calls measured a context devs-ctx has since pruned: those before its latest
 * summary, and those of turns it kept, whose records a format carries with them (Gemini CLI's token
 * records) though they measured the transcript as it was: made before the summary's time. Only
 * calls the agent made after the prune measure what the file holds now.
 */
function staleCalls(entries: Transcript['entries']): (point: UsagePoint) => boolean {
  let summary = -1;
  entries.forEach((entry, i) => {
    if (entry.turn.content.startsWith(SUMMARY_PREFIX)) summary = i;
  });
  if (summary < 0) return () => false;
  const prunedAt = Date.parse(entries[summary]?.turn.timestamp ?? '');
  return (point) => {
    if (point.entriesBefore <= summary) return true;
    // The call's own turn is the first one after what it saw.
    const madeAt = Date.parse(entries[point.entriesBefore]?.turn.timestamp ?? '');
    return Number.isFinite(prunedAt) && Number.isFinite(madeAt) && madeAt < prunedAt;
  };
}

/** Estimated tokens → the model's tokens. */
export function toModelTokens(calibration: Calibration, estimate: number): number {
  return Math.max(0, Math.round(calibration.overhead + calibration.scale * estimate));
}

/** The model's tokens → estimated tokens (what a prune plans in); never below 0. */
export function toEstimateTokens(calibration: Calibration, modelTokens: number): number {
  return Math.max(0, Math.floor((modelTokens - calibration.overhead) / calibration.scale));
}

/**
 * Pure: the size of the next request of a parsed transcript, in the model's tokens, with the model
 * and window its records show. `basis: 'estimate'` gives the plain estimate (what devs-ctx said before).
 */
export function contextSize(
  transcript: Pick<Transcript, 'entries' | 'usage' | 'model' | 'carriedCalibration'>,
  perEntry: readonly number[],
  options: { readonly basis?: 'auto' | 'estimate' } = {},
): ContextSize & { readonly calibration: Calibration } {
  const estimate = perEntry.reduce((sum, t) => sum + t, 0);
  const calibration = options.basis === 'estimate' ? IDENTITY : calibrate(transcript, perEntry);
  const found = modelWindow(transcript.model);
  return {
    tokens: toModelTokens(calibration, estimate),
    basis: calibration.basis,
    estimate,
    model: transcript.model?.id ?? null,
    window: found?.window ?? null,
    fit: calibration.fit,
    calibration,
  };
}
