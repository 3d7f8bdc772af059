import type { Transcript } from '../../core/transcript.js';
import type { RefreshAppend, TranscriptEdit } from '../types.js';

/** An edit that changes nothing: every writer then gives back the input's lines, byte for byte. */
export function isNoOp(edit: TranscriptEdit): boolean {
  return edit.dropped.size === 0 && edit.masked.size === 0 && edit.summary === undefined;
}

/** A refresh as an edit for writers that append it as their summary turn: nothing dropped or masked, the refresh after the last entry. */
export function refreshAsEdit(transcript: Transcript, refresh: RefreshAppend): TranscriptEdit {
  return {
    dropped: new Set(),
    masked: new Map(),
    summary: { text: refresh.text, at: transcript.entries.length },
    now: refresh.now,
    newId: () => refresh.id,
  };
}
