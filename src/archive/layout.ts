import { createHash } from 'node:crypto';
import * as z from 'zod/mini';
import '../core/zod-english.js';
import type { ParsedDocument, RawRecord } from '../io/jsonl.js';
import type { OutputRecord } from '../formats/types.js';
import { ArchiveCorruptError, TranscriptChangedError } from './errors.js';

/**
 * How to rebuild a pruned transcript's input from its output: the input's records in order, each
 * run either copied from a byte range of the output the prune wrote (a line reproduced byte for
 * byte, terminator included) or taken from the archive. Ranges are offsets into the whole output
 * file, BOM included. Pure: no SQLite here.
 */
/** A byte offset or a record index. */
const offset = z.number().check(z.int(), z.nonnegative());

const LayoutSegmentSchema = z.union([
  /** `records` consecutive input records, reproduced as output bytes [start, end). */
  z.strictObject({
    output: z.tuple([offset, offset]),
    records: z.number().check(z.int(), z.positive()),
  }),
  /** Input records [first, end), whose bytes are in `archived_records`. */
  z.strictObject({ archived: z.tuple([offset, offset]) }),
]);
type LayoutSegment = z.infer<typeof LayoutSegmentSchema>;

export const RestoreLayoutSchema = z.strictObject({
  version: z.literal(1),
  /** The input began with a UTF-8 BOM. */
  bom: z.boolean(),
  recordCount: offset,
  segments: z.array(LayoutSegmentSchema),
});
type RestoreLayout = z.infer<typeof RestoreLayoutSchema>;

export interface PlannedLayout {
  readonly layout: RestoreLayout;
  /** Input records the output does not reproduce: their bytes (terminator included) go to the archive. */
  readonly archivedRecords: ReadonlyMap<number, Buffer>;
}

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
const CR = 13;
const LF = 10;

export function sha256(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/**
 * A record's exact input bytes, its terminator included. `whole`: the input's bytes, when it was read
 * whole (a document's `bytes`): a line and its terminator lying there are a view of them, not a copy
 * (a prune archives megabytes of lines).
 */
export function recordBytes(record: RawRecord, whole?: Buffer): Buffer {
  const { raw, eol } = record;
  if (!raw) throw new Error(`input record ${record.index} has no kept bytes: read the input with keepRaw: true`);
  if (!eol) return raw;
  if (whole !== undefined && raw.buffer === whole.buffer && raw.byteOffset >= whole.byteOffset) {
    const start = raw.byteOffset - whole.byteOffset;
    const end = start + raw.length + eol.length;
    if (end <= whole.length && whole[end - 1] === LF && (eol.length === 1 || whole[end - 2] === CR)) return whole.subarray(start, end);
  }
  return Buffer.concat([raw, Buffer.from(eol)]);
}

/** Where each output record's bytes sit in the output file, and whether a `{from}` one is the input line exactly. */
interface OutputRange {
  readonly start: number;
  readonly end: number;
}

/**
 * Finds each output record's byte range by walking the written bytes: its content must be there
 * (anything else means the bytes were not rendered from these records, a bug), then whatever
 * terminator the writer put after it. Reading the terminator from the bytes, rather than
 * re-deriving the writer's rule, keeps this exact whatever line ending the writer chose.
 */
function outputRanges(input: ParsedDocument, records: readonly OutputRecord[], bytes: Buffer): OutputRange[] {
  let at = bytes.subarray(0, 3).equals(BOM) ? 3 : 0;
  const ranges: OutputRange[] = [];
  for (const [i, record] of records.entries()) {
    let content: Buffer;
    if ('from' in record) {
      const source = input.records[record.from];
      if (!source?.raw) throw new Error(`output record ${i} reproduces input record ${record.from}, which has no kept bytes`);
      content = source.raw;
    } else {
      content = Buffer.from(record.text, 'utf8');
    }
    if (!bytes.subarray(at, at + content.length).equals(content)) {
      throw new Error(`the output bytes do not match output record ${i} at byte ${at}: they were not rendered from these records`);
    }
    const start = at;
    at += content.length;
    if (bytes[at] === CR && bytes[at + 1] === LF) at += 2;
    else if (bytes[at] === LF) at += 1;
    ranges.push({ start, end: at });
  }
  if (at !== bytes.length) throw new Error(`the output records account for ${at} bytes of an output of ${bytes.length}`);
  return ranges;
}

/**
 * The restore layout of a prune: for each input record, the output bytes that reproduce it
 * exactly (it was written `{from}` with the same terminator), or else the archive. A `{from}` line
 * that lost or gained a terminator (the input's last line, when lines follow it in the output) is
 * not byte-identical, so it is archived.
 */
export function computeLayout(input: ParsedDocument, output: { readonly records: readonly OutputRecord[]; readonly bytes: Buffer }): PlannedLayout {
  const ranges = outputRanges(input, output.records, output.bytes);
  // First output range that reproduces each input record byte for byte.
  const reused = new Map<number, OutputRange>();
  for (const [i, record] of output.records.entries()) {
    if (!('from' in record) || reused.has(record.from)) continue;
    const range = ranges[i];
    const source = input.records[record.from];
    if (!range || !source) continue;
    if (output.bytes.subarray(range.start, range.end).equals(recordBytes(source, input.bytes))) reused.set(record.from, range);
  }

  const segments: LayoutSegment[] = [];
  const archivedRecords = new Map<number, Buffer>();
  for (const record of input.records) {
    const range = reused.get(record.index);
    const last = segments[segments.length - 1];
    if (range) {
      if (last && 'output' in last && last.output[1] === range.start) {
        segments[segments.length - 1] = { output: [last.output[0], range.end], records: last.records + 1 };
      } else {
        segments.push({ output: [range.start, range.end], records: 1 });
      }
    } else {
      archivedRecords.set(record.index, recordBytes(record, input.bytes));
      if (last && 'archived' in last && last.archived[1] === record.index) {
        segments[segments.length - 1] = { archived: [last.archived[0], record.index + 1] };
      } else {
        segments.push({ archived: [record.index, record.index + 1] });
      }
    }
  }
  return { layout: { version: 1, bom: input.bom, recordCount: input.records.length, segments }, archivedRecords };
}

/** A file's size and SHA-256, as recorded at prune time. */
export interface Fingerprint {
  readonly sha256: string;
  readonly length: number;
}

export interface RestoreRequest {
  /** For messages. */
  readonly eventId: string;
  readonly layout: RestoreLayout;
  /** The event's archived records, by input record index. */
  readonly archived: ReadonlyMap<number, Buffer>;
  /** The transcript as it is now: the prune's output, possibly with turns appended since. */
  readonly current: Buffer;
  readonly output: Fingerprint;
  readonly original: Fingerprint;
}

/**
 * The transcript before the prune, from the layout: the output's ranges (read from `current`, whose
 * first `outputLength` bytes are the output) and the archived records, in order. Checks only that
 * the layout is whole; the caller checks the bytes against the original.
 */
export function rebuildOriginal(eventId: string, layout: RestoreLayout, archived: ReadonlyMap<number, Buffer>, current: Buffer, outputLength: number): Buffer {
  return Buffer.concat(originalParts(eventId, layout, archived, current, outputLength));
}

/** Whether `rebuildOriginal` gives exactly `original`, compared piece by piece (the original is not built again). */
export function rebuildsOriginal(
  eventId: string,
  layout: RestoreLayout,
  archived: ReadonlyMap<number, Buffer>,
  current: Buffer,
  outputLength: number,
  original: Buffer,
): boolean {
  let at = 0;
  for (const part of originalParts(eventId, layout, archived, current, outputLength)) {
    if (at + part.length > original.length || !part.equals(original.subarray(at, at + part.length))) return false;
    at += part.length;
  }
  return at === original.length;
}

/** The pieces `rebuildOriginal` joins, in order: output ranges and archived records. */
function originalParts(eventId: string, layout: RestoreLayout, archived: ReadonlyMap<number, Buffer>, current: Buffer, outputLength: number): Buffer[] {
  const parts: Buffer[] = [];
  if (layout.bom) parts.push(BOM);
  let nextRecord = 0;
  for (const segment of layout.segments) {
    if ('output' in segment) {
      const [start, end] = segment.output;
      if (start > end || end > outputLength)
        throw new ArchiveCorruptError(eventId, `layout range [${start}, ${end}) lies outside the ${outputLength}-byte output`);
      parts.push(current.subarray(start, end));
      nextRecord += segment.records;
    } else {
      const [first, end] = segment.archived;
      if (first !== nextRecord) throw new ArchiveCorruptError(eventId, `layout skips from record ${nextRecord} to ${first}`);
      for (let i = first; i < end; i++) {
        const bytes = archived.get(i);
        if (!bytes) throw new ArchiveCorruptError(eventId, `archived record ${i} is missing`);
        parts.push(bytes);
      }
      nextRecord = end;
    }
  }
  if (nextRecord !== layout.recordCount) throw new ArchiveCorruptError(eventId, `layout covers ${nextRecord} of ${layout.recordCount} records`);
  return parts;
}

/** Whether `current` still starts with exactly the bytes a prune wrote. */
export function startsWithOutput(current: Buffer, output: Fingerprint): boolean {
  return current.length >= output.length && sha256(current.subarray(0, output.length)) === output.sha256;
}

/** Throws TranscriptChangedError unless `current` is the prune's output, possibly with bytes appended. */
export function assertStartsWithOutput(eventId: string, current: Buffer, output: Fingerprint): void {
  if (current.length < output.length) {
    throw new TranscriptChangedError(eventId, `the file is ${current.length} bytes, shorter than the ${output.length} bytes the prune wrote`);
  }
  if (!startsWithOutput(current, output)) {
    throw new TranscriptChangedError(eventId, `its first ${output.length} bytes are no longer the ones the prune wrote`);
  }
}

/**
 * Rebuilds the transcript as it was before the prune, then appends whatever was added to the file
 * since, so turns the agent wrote after the prune stay at the end. Verifies the rebuilt original
 * against its recorded SHA-256 before returning anything.
 */
export function restoreBytes(request: RestoreRequest): Buffer {
  const { eventId, layout, archived, current, output, original } = request;
  assertStartsWithOutput(eventId, current, output);
  const rebuilt = rebuildOriginal(eventId, layout, archived, current, output.length);
  if (rebuilt.length !== original.length || sha256(rebuilt) !== original.sha256) {
    throw new ArchiveCorruptError(eventId, `the rebuilt transcript (${rebuilt.length} bytes) does not match the original's SHA-256 (${original.length} bytes)`);
  }
  const appended = current.subarray(output.length);
  return appended.length > 0 ? Buffer.concat([rebuilt, appended]) : rebuilt;
}
