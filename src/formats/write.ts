import { parseDocument } from '../io/jsonl.js';
import type { ParsedDocument } from '../io/jsonl.js';
import type { FormatWriter, OutputRecord, Transcript, TranscriptEdit } from './types.js';
import { adapterFor } from './index.js';

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/** The line terminator most of the input's lines use (`\n` when there is no terminator at all). */
export function dominantEol(doc: ParsedDocument): '\n' | '\r\n' {
  let crlf = 0;
  let lf = 0;
  for (const record of doc.records) {
    if (record.eol === '\r\n') crlf++;
    else if (record.eol === '\n') lf++;
  }
  return crlf > lf ? '\r\n' : '\n';
}

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
export function writeTranscript(
  doc: ParsedDocument,
  transcript: Transcript,
  edit: TranscriptEdit,
  writer: FormatWriter,
): WrittenTranscript {
  const records = writer.write(doc, transcript, edit);
  const bytes = renderOutput(doc, records);
  const document = parseDocument(bytes, { path: doc.path, keepRaw: true });
  const readBack = adapterFor(writer.name).read(document);
  // Damage the input already had (an agent's orphaned call, say) is not the writer's doing: only
  // problems the output adds are a bug.
  const before = new Set(writer.validate(doc, transcript));
  const problems = writer.validate(document, readBack).filter((p) => !before.has(p));
  if (problems.length > 0) throw new InvalidOutputError(writer.name, problems);
  return { records, bytes, readBack, document };
}
