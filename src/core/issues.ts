/** A problem found while reading a transcript: one bad line, or a structural oddity. */
export interface ReadIssue {
  /** 1-based physical line number in the input (0 when the issue is about the whole file). */
  readonly line: number;
  readonly severity: 'error' | 'warning';
  /** What is wrong, in a sentence. */
  readonly reason: string;
  /** What the user can do about it. */
  readonly hint?: string;
}
