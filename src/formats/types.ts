import type { ParsedDocument } from '../io/jsonl.js';
import type { FormatName, Transcript } from '../core/transcript.js';

export { FORMAT_NAMES } from '../core/transcript.js';
export type { FormatName, OpaqueBlob, RecordedUsage, SourceRef, Transcript, TranscriptEntry } from '../core/transcript.js';

export interface FormatAdapter {
  readonly name: FormatName;
  /**
   * How sure the adapter is that the document is in its format: 0 = not this format,
   * 1 = weak guess, up to 10 = certain. Auto-detection picks the highest score.
   */
  detect(doc: ParsedDocument): number;
  /** Reads the active context. Never throws on bad data: it reports issues and reads the rest. */
  read(doc: ParsedDocument): Transcript;
}
