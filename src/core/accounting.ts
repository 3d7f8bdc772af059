import type { OpaqueBlob, TranscriptEntry } from './transcript.js';
import { estimateBlobTokens } from './tokens/blobs.js';
import { loadCounter } from './tokens/encodings.js';
import type { EncodingName } from './tokens/encodings.js';
import type { ContextWindow, ConversationTurn } from './turn.js';

/** Anything that counts the tokens of a text (the exact BPE counter, or a cache in front of it). */
export interface TextTokenCounter {
  count(text: string): number;
  /**
   * Counts `texts` ahead of `count`, elsewhere when it can (another thread), while `alongside` runs
   * here; resolves once both are done. Without it (or with nowhere else to count) `count` counts
   * each when asked. A prune counts ahead this way everything it counts beyond the turns: the
   * excerpts' placeholders while it ranks the turns; the mask placeholders, the summary's lines and
   * the summary with nothing alongside.
   */
  countAlongside?(texts: readonly string[], alongside: () => Promise<void>): Promise<void>;
  /**
   * Told that about `chars` characters are about to be counted, one text after the other: a counter
   * that splits its first texts by hand (BpeCounter) leaves that to the regex when they are more.
   */
  expect?(chars: number): void;
}

export interface EntryTokens {
  /** Tokens of the turn's text. */
  readonly text: number;
  /** Estimated tokens of its images, documents and encrypted blobs (provider rules). */
  readonly blobs: number;
  readonly total: number;
}

function blobTokens(blobs: readonly OpaqueBlob[]): number {
  let sum = 0;
  for (const blob of blobs) sum += estimateBlobTokens(blob);
  return sum;
}

/** Counts every entry of a transcript: text by the counter, opaque content by provider rules. */
export function countEntries(entries: readonly TranscriptEntry[], counter: TextTokenCounter): EntryTokens[] {
  return entries.map((entry) => {
    if (entry.notSent !== undefined) return { text: 0, blobs: 0, total: 0 };
    const text = counter.count(entry.turn.content);
    const blobs = blobTokens(entry.blobs);
    return { text, blobs, total: text + blobs };
  });
}

/**
 * Seed 000: returns new turns with `tokenCount` set from their content (js-tiktoken counts,
 * `o200k_base` unless told). Never mutates its input.
 */
export function annotateWithTokenEstimates(
  turns: readonly ConversationTurn[],
  options: { encoding?: EncodingName; counter?: TextTokenCounter } = {},
): ConversationTurn[] {
  const counter = options.counter ?? loadCounter(options.encoding ?? 'o200k_base');
  return turns.map((turn) => ({ ...turn, tokenCount: counter.count(turn.content) }));
}

/** A window from annotated turns: the estimate is the sum of `tokenCount` (0 where missing). */
export function toContextWindow(turns: readonly ConversationTurn[]): ContextWindow {
  return { turns, totalTokenEstimate: turns.reduce((sum, t) => sum + (t.tokenCount ?? 0), 0) };
}
