import type { TranscriptEdit } from '../types.js';

/** An edit that changes nothing: every writer then gives back the input's lines, byte for byte. */
export function isNoOp(edit: TranscriptEdit): boolean {
  return edit.dropped.size === 0 && edit.masked.size === 0 && edit.summary === undefined;
}
