import type { EntryTokens } from '../../core/accounting.js';
import { calibrationText } from '../../core/context-size.js';
import type { Transcript, TranscriptEntry } from '../../core/transcript.js';
import { adapterFor, detectionSettled, FORMAT_NAMES } from '../../formats/index.js';
import type { FormatAdapter, FormatName } from '../../formats/index.js';
import { parseAppended } from '../../io/jsonl.js';
import type { ParsedDocument, RawRecord } from '../../io/jsonl.js';
import { keepRecord, keptRecords, NOT_COUNTED, readGrown, recordOffsets, RESUME_MAX_BYTES } from '../../io/resume-store.js';
import type { KeptTurn, ResumeState, ResumeStore } from '../../io/resume-store.js';

/**
 * A batch row of a transcript that grew, read from where it ended (issue 18). The old lines come back
 * as the state kept them (src/io/resume-store.ts): their values as skeletons, no text. The format's
 * reader reads old and new lines together, so the tree, the chain, the turns and their tool ids,
 * usage and issues are those of reading the file whole; a turn read only from old lines takes the
 * counts kept for those lines, and only turns with new lines are counted. A turn that joins old lines
 * in a way not seen before (a response that goes on in the new lines, a result re-attached) has its
 * old lines parsed again from the file's bytes. Anything else unusual, and the file is read whole.
 */

export interface Resumed {
  readonly doc: ParsedDocument;
  /** Its turns read from old lines only have no text, but the placeholder of a masked result. */
  readonly transcript: Transcript;
  /** How to name the file in messages: its path as given. */
  readonly display: string;
  /** The tokens of every turn: the kept counts, and `countTokens` over the turns with new lines. */
  count(countTokens: (entries: readonly TranscriptEntry[]) => Promise<EntryTokens[]> | EntryTokens[]): Promise<EntryTokens[]>;
  /** Keeps where this read ended, for the next run. */
  keep(tokens: readonly EntryTokens[]): void;
}

/**
 * A turn's lines in the order its text joins them (the same lines joined in another order are another
 * text), and where in them it is when one line holds several turns (a Codex compaction's history).
 */
const turnKey = (entry: TranscriptEntry): string => {
  const lines = (entry.source.joined ?? entry.source.records).join(',');
  return entry.source.path === undefined ? lines : `${lines} ${entry.source.path}`;
};

/** The transcript at `absolute`, read from where the kept state ended; undefined when it must be read whole. */
export function resumeRead(path: string, absolute: string, store: ResumeStore, forced: FormatName | undefined): Resumed | undefined {
  const state = store.get(absolute);
  if (state === undefined || !(FORMAT_NAMES as readonly string[]).includes(state.format)) return undefined;
  const adapter = adapterFor(state.format as FormatName);
  if (adapter.skeleton === undefined) return undefined;
  const grown = readGrown(absolute, state);
  if (grown === undefined) return undefined;
  const old = state.records.length;
  const added = parseAppended(grown.bytes.subarray(state.size), old);
  const records: RawRecord[] = [...keptRecords(state), ...added.records];
  const doc: ParsedDocument = { path, bom: state.bom, records, issues: [...state.issues, ...added.issues], kind: 'jsonl', totalBytes: grown.bytes.length };
  /** The counts kept for a turn; a turn kept while it was not sent has none, so only while it still is not. */
  const keptFor = (entry: TranscriptEntry): KeptTurn | undefined => {
    const turn = state.turns[turnKey(entry)];
    return turn !== undefined && (turn[0] !== NOT_COUNTED || entry.notSent !== undefined) ? turn : undefined;
  };
  /** Old lines parsed again from the bytes (their values whole): not skeletons any more. */
  const whole = new Set<number>();
  let transcript = adapter.read(doc);
  for (let pass = 0; ; pass++) {
    const again = new Set<number>();
    for (const entry of transcript.entries) {
      const lines = entry.source.records;
      if (lines.every((r) => r >= old || whole.has(r)) || (lines.every((r) => !whole.has(r)) && keptFor(entry) !== undefined)) continue;
      for (const r of lines) if (r < old && !whole.has(r)) again.add(r);
    }
    if (again.size === 0) break;
    if (pass > 0) return undefined;
    for (const r of again) {
      const [offset, byteLength] = state.records[r] as ResumeState['records'][number];
      const values = parseAppended(grown.bytes.subarray(offset, offset + byteLength), r).records[0]?.values ?? [];
      records[r] = { ...(records[r] as RawRecord), values };
      whole.add(r);
    }
    transcript = adapter.read(doc);
  }
  if (transcript.entries.length === 0) return undefined;
  const kept = (entry: TranscriptEntry): KeptTurn | undefined => (entry.source.records.every((r) => r < old && !whole.has(r)) ? keptFor(entry) : undefined);
  // A kept turn's text is gone: only what calibration reads of it is kept (calibrationText).
  const entries = transcript.entries.map((entry) => {
    const turn = kept(entry);
    return turn === undefined ? entry : { ...entry, turn: { ...entry.turn, content: turn[2] ?? '' } };
  });
  const read = { ...transcript, entries };
  return {
    doc,
    transcript: read,
    display: path,
    async count(countTokens) {
      const fresh = entries.filter((entry) => kept(entry) === undefined);
      const counted = await countTokens(fresh);
      let next = 0;
      return entries.map((entry) => {
        const turn = kept(entry);
        if (turn === undefined) return counted[next++] as EntryTokens;
        return entry.notSent !== undefined ? { text: 0, blobs: 0, total: 0 } : { text: turn[0], blobs: turn[1], total: turn[0] + turn[1] };
      });
    },
    keep(tokens) {
      const offsets = recordOffsets(doc);
      const skeleton = adapter.skeleton as NonNullable<FormatAdapter['skeleton']>;
      const lines = records.map((record, r) =>
        r < old && !whole.has(r) ? (state.records[r] as ResumeState['records'][number]) : keepRecord(record, offsets[r] as number, record.values.map(skeleton)),
      );
      keepState(store, { doc, transcript: read, tokens, absolute, format: state.format, digest: grown.digest, forced, records: lines, kept });
    },
  };
}

/** After reading `doc` whole: keeps where it ended, when it can be read on from there. */
export function keepWholeRead(
  store: ResumeStore,
  read: { doc: ParsedDocument; transcript: Transcript; tokens: readonly EntryTokens[]; absolute: string; digest: string; forced: FormatName | undefined },
): void {
  const skeleton = adapterFor(read.transcript.format).skeleton;
  if (skeleton === undefined || read.doc.kind !== 'jsonl') return;
  const offsets = recordOffsets(read.doc);
  const records = read.doc.records.map((record, r) => keepRecord(record, offsets[r] as number, record.values.map(skeleton)));
  keepState(store, { ...read, format: read.transcript.format, records, kept: () => undefined });
}

function keepState(
  store: ResumeStore,
  read: {
    doc: ParsedDocument;
    transcript: Transcript;
    tokens: readonly EntryTokens[];
    absolute: string;
    format: string;
    digest: string;
    forced: FormatName | undefined;
    records: ResumeState['records'];
    /** The counts kept before for a turn read from old lines only (its text is not here to count). */
    kept: (entry: TranscriptEntry) => KeptTurn | undefined;
  },
): void {
  const { doc } = read;
  const last = doc.records[doc.records.length - 1];
  // Read on from the end only after a whole last line, one value per line, a first line that parsed
  // on its own (else new lines could make the file one JSON document), a file not too large to hold,
  // and a format the new lines cannot change (forced, or detection has read all it reads).
  if (last === undefined || last.eol === '' || doc.records.some((r) => r.values.length > 1)) return;
  if ((doc.records.find((r) => !r.blank)?.values.length ?? 0) === 0 || doc.totalBytes > RESUME_MAX_BYTES) return;
  if (read.forced === undefined && !detectionSettled(doc)) return;
  const turns: Record<string, KeptTurn> = {};
  const repeated = new Set<string>();
  read.transcript.entries.forEach((entry, i) => {
    const key = turnKey(entry);
    if (key in turns) repeated.add(key);
    const before = read.kept(entry);
    const tokens = read.tokens[i];
    if (before !== undefined) turns[key] = before;
    else if (tokens !== undefined) {
      // What calibration reads of its text: a masked result's placeholder (the size it records), a
      // summary's marker. A turn not sent (earlier reasoning Codex drops) is kept too, without
      // counts: else its line would be parsed again on every run.
      const placeholder = calibrationText(entry.turn.content);
      const counts = entry.notSent === undefined ? ([tokens.text, tokens.blobs] as const) : ([NOT_COUNTED, NOT_COUNTED] as const);
      turns[key] = placeholder !== undefined ? [...counts, placeholder] : counts;
    }
  });
  for (const key of repeated) delete turns[key];
  store.set({
    path: read.absolute,
    format: read.format,
    size: doc.totalBytes,
    digest: read.digest,
    bom: doc.bom,
    records: read.records,
    issues: doc.issues,
    turns,
  });
}
