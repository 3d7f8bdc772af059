import type { ParsedDocument } from '../io/jsonl.js';
import type { FormatName, Transcript } from '../core/transcript.js';
import type { TranscriptEdit } from '../core/prune/edit.js';

export { FORMAT_NAMES } from '../core/transcript.js';
export type { FormatName, OpaqueBlob, RecordedUsage, SourceRef, ToolLinks, Transcript, TranscriptEntry } from '../core/transcript.js';
export type { TranscriptEdit, SummaryInsert } from '../core/prune/edit.js';

export interface FormatAdapter {
  readonly name: FormatName;
  /**
   * How sure the adapter is that the document is in its format: 0 = not this format,
   * 1 = weak guess, up to 10 = certain. Auto-detection picks the highest score.
   */
  detect(doc: ParsedDocument): number;
  /** Reads the active context. Never throws on bad data: it reports issues and reads the rest. */
  read(doc: ParsedDocument): Transcript;
  /**
   * Whether lines appended to `doc` can no longer change what `detect` says (it has seen all it
   * reads). Without it, `detect` reads the first DETECT_SAMPLE values (`detectionSample`).
   */
  detectionSettled?(doc: ParsedDocument): boolean;
  /**
   * A line's value without its text, for a file read again from where it ended (a batch's resumed
   * row): `read` over skeletons gives the same turns, tool ids, usage and issues as over the lines,
   * only not the turns' text. Formats without one are read whole.
   */
  skeleton?(value: unknown): unknown;
}

/**
 * One line of a written transcript. Either a line of the input reproduced byte for byte
 * (`from`), or new text (a changed line says which input line it `replaces`; a new one does not).
 */
export type OutputRecord = { readonly from: number } | { readonly text: string; readonly replaces?: number };

/**
 * Turns an edit into the lines of the output, for one format. Lines the edit does not touch must
 * come back as `{ from }`, so they stay byte-identical. For a `json-document` input the writer
 * returns the whole rewritten document as one `{ text }` (it may contain newlines).
 */
export interface FormatWriter {
  readonly name: FormatName;
  write(doc: ParsedDocument, transcript: Transcript, edit: TranscriptEdit): OutputRecord[];
  /**
   * Structural problems of a written document, read back with this format's adapter (empty when
   * valid): for example a tool call without its result on the active context, a parent link that
   * does not resolve, or not exactly one summary where one was written. A non-empty answer is a bug.
   * `copied`: records (by index) a check of one line alone may leave out. writeTranscript's read-back
   * leaves out the first copy in the output of each input line it copies byte for byte, and that line
   * in the input: what such a check finds on the one, it finds on the other, and the read-back counts
   * only the problems the output has beyond the input's (a problem the input had is not the writer's).
   */
  validate(doc: ParsedDocument, transcript: Transcript, copied?: ReadonlySet<number>): string[];
  /**
   * A `[CONTEXT REFRESH]` added at the end of the active context, the way the format's own agent adds
   * context it did not type; every line it does not change comes back as `{ from }`. The read-back
   * check is shared (`appendRefresh` in write.ts). Throws a UsageError for a format nothing can resume.
   */
  appendRefresh(doc: ParsedDocument, transcript: Transcript, refresh: RefreshAppend): OutputRecord[];
}

/** What a refresh appends (the text starts with `[CONTEXT REFRESH]`); ids and time are injected. */
export interface RefreshAppend {
  readonly text: string;
  readonly id: string;
  readonly now: string;
  /** The current orchestrator node, which the new turn belongs to (native transcripts record it). */
  readonly node?: string | undefined;
}
