/**
 * What a prune does to a transcript, in terms of its entries (indexes into `Transcript.entries`).
 * The plan (src/core/prune/plan.ts) produces it; each format's writer turns it into lines.
 */
export interface TranscriptEdit {
  /** Entries removed from the active context (always whole units: a call with its results). */
  readonly dropped: ReadonlySet<number>;
  /**
   * Tool results whose body is replaced by a short placeholder (the text given here), in the
   * same place and with the same call id, so the call stays answered.
   */
  readonly masked: ReadonlyMap<number, string>;
  /** The one `[Context Summary]` turn; present exactly when something is dropped. */
  readonly summary?: SummaryInsert;
  /** The session's calibration the prune planned with, for a writer that can record it (Claude Code's boundary line). */
  readonly calibration?: { readonly overhead: number; readonly scale: number };
  /** The context before the prune, in the model's tokens as the prune reports it (Claude Code's boundary `preTokens`). */
  readonly contextBefore?: number;
  /** ISO time for records the writer creates. */
  readonly now: string;
  /** Makes ids for records the writer creates (RFC 4122 v4 uuids; deterministic in tests). */
  readonly newId: () => string;
}

export interface SummaryInsert {
  /** Starts with `[Context Summary]`. */
  readonly text: string;
  /**
   * Index of the first dropped entry: the summary goes where the removed turns were, i.e.
   * after every kept entry before this index and before every kept entry after it.
   */
  readonly at: number;
}

export const SUMMARY_PREFIX = '[Context Summary]';
