import { parseDocument } from '../io/jsonl.js';
import type { ParsedDocument } from '../io/jsonl.js';
import type { InjectedRefresh } from '../core/reports/refresh.js';
import { planRefresh } from '../core/refresh/decision.js';
import type { FormatWriter, OutputRecord, Transcript, TranscriptEdit } from './types.js';
import { adapterFor, writerFor } from './index.js';
import { dominantEol } from './shared/eol.js';

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/**
 * The bytes of a written transcript. Lines taken `from` the input keep their bytes and their own
 * terminator, except that a line that had none (the input's last) gets one when more follow; new
 * lines end with the input's usual terminator. The input's BOM is kept.
 */
export function renderOutput(doc: ParsedDocument, records: readonly OutputRecord[]): Buffer {
  const eol = dominantEol(doc);
  const parts: Buffer[] = [];
  if (doc.bom) parts.push(BOM);
  records.forEach((record, i) => {
    const last = i === records.length - 1;
    if ('from' in record) {
      const source = doc.records[record.from];
      if (!source?.raw) throw new Error(`output line ${i} refers to input record ${record.from}, which has no kept bytes`);
      parts.push(source.raw);
      const terminator = source.eol === '' && !last ? eol : source.eol;
      if (terminator) parts.push(Buffer.from(terminator));
    } else {
      parts.push(Buffer.from(record.text, 'utf8'));
      parts.push(Buffer.from(eol));
    }
  });
  return Buffer.concat(parts);
}

export interface WrittenTranscript {
  readonly records: readonly OutputRecord[];
  readonly bytes: Buffer;
  /** The output read back with the same adapter. */
  readonly readBack: Transcript;
  /** The output parsed back (kept bytes), e.g. for the archive's layout. */
  readonly document: ParsedDocument;
}

/** Structural validation failed on what a writer produced: a bug, never a file on disk (exit 1). */
export class InvalidOutputError extends Error {
  constructor(
    readonly format: string,
    readonly problems: readonly string[],
  ) {
    super(`the ${format} writer produced an invalid transcript (a bug in devs-ctx; nothing was written): ${problems.slice(0, 5).join('; ')}`);
    this.name = 'InvalidOutputError';
  }
}

/** Writes an edit with the format's writer, reads the result back, and validates it. */
export function writeTranscript(doc: ParsedDocument, transcript: Transcript, edit: TranscriptEdit, writer: FormatWriter): WrittenTranscript {
  const records = writer.write(doc, transcript, edit);
  const written = readBackCheck(doc, transcript, records, writer);
  if (written.problems.length > 0) throw new InvalidOutputError(writer.name, written.problems);
  return { records, bytes: written.bytes, readBack: written.readBack, document: written.document };
}

/**
 * Renders the records, reads them back with the writer's format, and lists the problems the output
 * adds. A line the output copies from the input (`{ from }`) keeps the input's parse when its bytes
 * are the input line's (parseDocument's `sameAs`): most of a prune's output, which is read back whole.
 */
function readBackCheck(doc: ParsedDocument, transcript: Transcript, records: readonly OutputRecord[], writer: FormatWriter) {
  const bytes = renderOutput(doc, records);
  // One output line per record (renderOutput); a record whose text is several lines (a whole
  // document rewritten) shifts the lines after it, whose bytes then differ from their sources: parsed.
  const sameAs = records.map((record) => ('from' in record ? doc.records[record.from] : undefined));
  const document = parseDocument(bytes, { path: doc.path, keepRaw: true, sameAs });
  const readBack = adapterFor(writer.name).read(document);
  // The lines that kept the input's parse are its lines, byte for byte. What a check of one line alone
  // finds on the first copy of an input line, it finds on that line: both are left out (`copied` on
  // either side), which leaves the count of each problem in the output beyond the input's as it was.
  // A second copy is checked as a line the writer wrote (a writer that repeats a line adds problems).
  const copied = new Set<number>();
  const copiedFrom = new Set<number>();
  for (const [k, record] of document.records.entries()) {
    const source = sameAs[k];
    if (source === undefined || record.values.length === 0 || record.values !== source.values || copiedFrom.has(source.index)) continue;
    copied.add(k);
    copiedFrom.add(source.index);
  }
  // Damage the input already had (an agent's orphaned call, say) is not the writer's doing: only
  // problems the output adds are a bug. (The input is validated only when the output has problems.)
  const found = writer.validate(document, readBack, copied);
  const before = new Map<string, number>();
  for (const problem of found.length > 0 ? writer.validate(doc, transcript, copiedFrom) : [])
    before.set(placeless(problem), (before.get(placeless(problem)) ?? 0) + 1);
  // Told apart by what they say, not where: a problem the input had moves up as turns before it go.
  const problems = found.filter((problem) => {
    const left = before.get(placeless(problem)) ?? 0;
    if (left > 0) before.set(placeless(problem), left - 1);
    return left === 0;
  });
  return { bytes, document, readBack, problems };
}

/** A validator's problem without its place in the file (`history item 9`, `line 12`, an OpenAI chat's `line-8` id, `history[3]`). */
function placeless(problem: string): string {
  return problem.replace(/\b(history item |line[ -]|turn |history\[|message\[|toolCalls\[)\d+/g, '$1#');
}

export interface AppendedRefresh {
  readonly bytes: Buffer;
  /** The turn that reads back as the refresh. */
  readonly turnId: string;
  readonly placement: InjectedRefresh['placement'];
}

/**
 * The transcript with a refresh written in its own format (the writer's `appendRefresh`), read back
 * and checked: the format's structural validator finds nothing new, every earlier turn reads back as
 * it was, and the latest turn is the refresh. Anything else is a bug (exit 1) and never reaches the disk.
 */
export function appendRefresh(
  doc: ParsedDocument,
  transcript: Transcript,
  refresh: { readonly text: string; readonly node: string | null; readonly now: string; readonly newId: () => string },
  writer: FormatWriter = writerFor(transcript.format),
): AppendedRefresh {
  const id = refresh.newId();
  const records = writer.appendRefresh(doc, transcript, { text: refresh.text, id, now: refresh.now, node: refresh.node ?? undefined });
  const { bytes, readBack, problems } = readBackCheck(doc, transcript, records, writer);
  const old = transcript.entries;
  const now = readBack.entries;
  const rewrote = now.length === old.length;
  const kept = rewrote ? old.length - 1 : old.length;
  if (now.length !== old.length && now.length !== old.length + 1) problems.push(`${now.length} turns read back, ${old.length} before`);
  for (let i = 0; i < kept; i++) {
    const a = old[i]?.turn;
    const b = now[i]?.turn;
    if (a?.id !== b?.id || a?.content !== b?.content) problems.push(`turn ${i} (${a?.id}) does not read back as it was`);
  }
  const last = now[now.length - 1];
  const decision = planRefresh(now.map((e) => e.turn));
  if (!last || decision.status !== 'just-refreshed') problems.push('the latest turn does not read back as the refresh');
  if (problems.length > 0) throw new InvalidOutputError(transcript.format, problems);
  return { bytes, turnId: last?.turn.id ?? id, placement: rewrote ? 'envelope-rewritten' : 'appended' };
}
