import { constants as bufferConstants, isUtf8 } from 'node:buffer';
import type { Readable } from 'node:stream';
import type { ReadIssue } from '../core/issues.js';
import { thousands } from '../core/numbers.js';
import { headOf } from '../core/text-cut.js';

/** One physical line of the input, with what it parsed to. */
export interface RawRecord {
  /** 0-based position in `ParsedDocument.records`. */
  readonly index: number;
  /** 1-based physical line number. */
  readonly line: number;
  /** The line's exact bytes without its line terminator (kept only when `keepRaw`). */
  readonly raw?: Buffer;
  /** The terminator that followed the line: `\n`, `\r\n`, or `` for a last line without one. */
  readonly eol: '\n' | '\r\n' | '';
  /** Byte length of the line without terminator (known even when `raw` is not kept). */
  readonly byteLength: number;
  /** Parsed JSON values: none for blank or broken lines, one normally, several for glued objects. */
  readonly values: readonly unknown[];
  readonly blank: boolean;
}

export interface ParsedDocument {
  /** Display name of the input (`-` for stdin). */
  readonly path: string;
  readonly bom: boolean;
  readonly records: readonly RawRecord[];
  readonly issues: readonly ReadIssue[];
  /** `json-document`: the whole input is one (usually pretty-printed) JSON value, in `document`. */
  readonly kind: 'jsonl' | 'json-document';
  readonly document?: unknown;
  readonly totalBytes: number;
  /**
   * The input's exact bytes, when it was read whole from memory with `keepRaw` (its records' `raw`
   * are views of them): what `serializeDocument` gives for these records, without joining a copy.
   * Not to be changed; a document made with other records does not keep them.
   */
  readonly bytes?: Buffer;
}

export interface ReadOptions {
  readonly path: string;
  /** Keep each line's bytes so the file can be written back byte for byte. */
  readonly keepRaw?: boolean;
  /** Given every byte read, in order (a hash of exactly what was parsed). */
  readonly digest?: { update(bytes: Buffer): unknown };
  /**
   * For each line (by index), a record of a document read earlier (with `keepRaw`) that the line may
   * be a copy of: a line whose bytes are that record's, which parsed alone cleanly (one value, valid
   * UTF-8, no issue), takes its values as they are instead of being parsed again. A prune reads back
   * its output, most of whose lines it copied from the input. The same records and issues as without
   * it; the values are shared with the earlier document (parsed values are never changed).
   */
  readonly sameAs?: readonly (RawRecord | undefined)[];
}

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/** Builds the records of a document from a stream of bytes, a line at a time. */
class LineCollector {
  readonly records: RawRecord[] = [];
  readonly issues: ReadIssue[] = [];
  bom = false;
  totalBytes = 0;
  private pending: Buffer[] = [];
  private pendingLength = 0;
  private first = true;
  /** The first bytes, while they might still be the start of a BOM. */
  private headBytes: Buffer = Buffer.alloc(0);
  /** Whole input, kept only while it might turn out to be one JSON document. */
  private whole: Buffer[] | undefined = [];
  /** Whether the first non-blank line parsed on its own (then the input is JSONL, not a document). */
  private firstLineParsed: boolean | undefined;
  /**
   * The lines after a first line that did not parse alone, not parsed yet: the input may be one
   * (pretty-printed) JSON document, none of whose lines parses alone, and trying each of them (a
   * thrown error and an issue per line) took seconds and gigabytes on a large one. They are parsed
   * in `documentValue` when the input turns out not to be one.
   */
  private deferred: { readonly line: Buffer; readonly eol: RawRecord['eol'] }[] = [];

  /**
   * `before`: how many records precede these bytes (bytes appended to a file read earlier, whose
   * records end with a line break): their lines are numbered on from there, and nothing at their
   * start is a BOM, nor can they be one JSON document.
   */
  constructor(
    private readonly keepRaw: boolean,
    private readonly before?: number,
    private readonly sameAs?: readonly (RawRecord | undefined)[],
  ) {
    if (before !== undefined) {
      this.first = false;
      this.whole = undefined;
    }
  }

  push(chunk: Buffer): void {
    this.totalBytes += chunk.length;
    if (this.first) {
      // A BOM can arrive split over chunks (a slow pipe): decide once three bytes are in.
      const head = this.headBytes.length > 0 ? Buffer.concat([this.headBytes, chunk]) : chunk;
      if (head.length < 3 && BOM.subarray(0, head.length).equals(head)) {
        this.headBytes = head;
        return;
      }
      this.first = false;
      this.headBytes = Buffer.alloc(0);
      chunk = head;
      if (chunk.length >= 3 && chunk.subarray(0, 3).equals(BOM)) {
        this.bom = true;
        chunk = chunk.subarray(3);
      }
    }
    this.whole?.push(chunk);
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(10, start);
      if (nl === -1) break;
      let line = chunk.subarray(start, nl);
      if (this.pendingLength > 0) {
        this.pending.push(line);
        line = Buffer.concat(this.pending, this.pendingLength + line.length);
        this.pending = [];
        this.pendingLength = 0;
      }
      this.addLine(line, true);
      start = nl + 1;
    }
    if (start < chunk.length) {
      const rest = chunk.subarray(start);
      // Copy: the stream may reuse its buffer.
      this.pending.push(Buffer.from(rest));
      this.pendingLength += rest.length;
    }
  }

  end(): void {
    if (this.headBytes.length > 0) {
      // Input shorter than a BOM that looked like one: it is plain bytes after all.
      const head = this.headBytes;
      this.headBytes = Buffer.alloc(0);
      this.first = false;
      this.totalBytes -= head.length;
      this.push(head);
    }
    if (this.pendingLength > 0) {
      this.addLine(Buffer.concat(this.pending, this.pendingLength), false);
      this.pending = [];
      this.pendingLength = 0;
    }
  }

  private addLine(line: Buffer, terminated: boolean): void {
    let eol: RawRecord['eol'] = terminated ? '\n' : '';
    if (terminated && line.length > 0 && line[line.length - 1] === 13) {
      line = line.subarray(0, line.length - 1);
      eol = '\r\n';
    }
    if (this.firstLineParsed === false && this.whole) this.deferred.push({ line, eol });
    else this.addRecord(line, eol);
  }

  private addRecord(line: Buffer, eol: RawRecord['eol']): void {
    const index = (this.before ?? 0) + this.records.length;
    const lineNo = index + 1;
    const parsed = parsedBefore(this.sameAs?.[index], line) ?? parseLine(line, lineNo);
    for (const issue of parsed.issues) this.issues.push(issue);
    if (!parsed.blank && this.firstLineParsed === undefined) {
      this.firstLineParsed = parsed.values.length > 0;
      // A file whose first line parses on its own is JSONL; stop keeping a copy for the document check.
      if (this.firstLineParsed) this.whole = undefined;
    }
    this.records.push({
      index,
      line: lineNo,
      ...(this.keepRaw ? { raw: line } : {}),
      eol,
      byteLength: line.length,
      values: parsed.values,
      blank: parsed.blank,
    });
  }

  /** When no line parsed alone but the whole input is one JSON value, it is a JSON document. */
  documentValue(): { ok: true; value: unknown } | { ok: false } {
    const lines = this.records.length + this.deferred.length;
    if (this.firstLineParsed === false && this.whole && lines >= 2) {
      const text = Buffer.concat(this.whole).toString('utf8');
      try {
        const value: unknown = JSON.parse(text);
        for (const { line, eol } of this.deferred) this.records.push(this.documentLine(line, eol));
        this.deferred = [];
        return { ok: true, value };
      } catch {
        // JSONL after all, its first line broken: its other lines are read as usual.
      }
    }
    this.whole = undefined;
    const deferred = this.deferred;
    this.deferred = [];
    for (const { line, eol } of deferred) this.addRecord(line, eol);
    return { ok: false };
  }

  /**
   * A line of a JSON document, as reading it alone gives it (a format may read the values of such
   * lines: a pretty-printed array of turns, one to a line); parsed only when it can be a JSON value
   * alone, by its first and last characters (`"key": 1,` or `},` cannot), so the lines of a large
   * document do not each throw.
   */
  private documentLine(line: Buffer, eol: RawRecord['eol']): RawRecord {
    const index = this.records.length;
    let a = 0;
    let b = line.length;
    while (a < b && isJsonSpace(line[a] as number)) a++;
    while (b > a && isJsonSpace(line[b - 1] as number)) b--;
    const alone = a < b && canBeAlone(line[a] as number, line[b - 1] as number);
    const parsed = alone ? parseLine(line, index + 1) : undefined;
    // What parseLine calls blank: nothing but what String.prototype.trim takes away (a non-breaking space too).
    const first = line[a] as number;
    const blank = parsed ? parsed.blank : a === b || ((first < 0x21 || first > 0x7e) && line.toString('utf8').trim().length === 0);
    return {
      index,
      line: index + 1,
      ...(this.keepRaw ? { raw: line } : {}),
      eol,
      byteLength: line.length,
      values: parsed ? parsed.values : [],
      blank,
    };
  }
}

/** The whitespace JSON allows around a value. */
function isJsonSpace(byte: number): boolean {
  return byte === 0x20 || byte === 0x09 || byte === 0x0d || byte === 0x0a;
}
/**
 * Whether a line from `first` to `last` (its first and last characters but whitespace) can be a JSON
 * value alone, or objects and arrays glued: `{…}` or `[…]` (glued, either may end the other), `"…"`,
 * a number, `true`, `false`, `null`. `"key": 1,`, `"key": 1`, `},` and `{` cannot.
 */
function canBeAlone(first: number, last: number): boolean {
  const digit = (c: number): boolean => c >= 0x30 && c <= 0x39;
  switch (first) {
    case 0x7b: // {
    case 0x5b: // [
      return last === 0x7d || last === 0x5d;
    case 0x22: // "
      return last === 0x22;
    case 0x74: // t(rue)
    case 0x66: // f(alse)
      return last === 0x65;
    case 0x6e: // n(ull)
      return last === 0x6c;
    default:
      return (first === 0x2d || digit(first)) && digit(last);
  }
}

interface LineParse {
  readonly values: unknown[];
  readonly issues: ReadIssue[];
  readonly blank: boolean;
}

const MAX_REASON_SNIPPET = 60;

/**
 * `parseLine` of `bytes`, from `earlier`'s parse of the same bytes when it was clean: one value
 * (JSON.parse of the whole line: glued values are two or more), and valid UTF-8 (the only other
 * issue a parsed line can have). Undefined otherwise.
 */
function parsedBefore(earlier: RawRecord | undefined, bytes: Buffer): LineParse | undefined {
  if (earlier?.raw === undefined || earlier.values.length !== 1 || !earlier.raw.equals(bytes) || !isUtf8(bytes)) return undefined;
  return { values: earlier.values as unknown[], issues: [], blank: false };
}

/** Parses one line; never throws. */
function parseLine(bytes: Buffer, line: number): LineParse {
  const issues: ReadIssue[] = [];
  if (bytes.length > bufferConstants.MAX_STRING_LENGTH) {
    issues.push({
      line,
      severity: 'error',
      reason: `line is ${thousands(bytes.length)} bytes, more than one JavaScript string can hold`,
      hint: 'the line was skipped; it is kept as it is when the file is written back',
    });
    return { values: [], issues, blank: false };
  }
  const text = bytes.toString('utf8');
  if (text.trim().length === 0) return { values: [], issues, blank: true };
  if (text.includes('\uFFFD') && !isValidUtf8(bytes)) {
    issues.push({
      line,
      severity: 'warning',
      reason: 'line is not valid UTF-8; invalid bytes were read as U+FFFD',
      hint: 'the original bytes are kept when the file is written back',
    });
  }
  try {
    return { values: [JSON.parse(text)], issues, blank: false };
  } catch (error) {
    const glued = splitGluedValues(text);
    if (glued && glued.length > 1) {
      issues.push({
        line,
        severity: 'warning',
        reason: `${glued.length} JSON values glued together on one line; read them as separate records`,
        hint: 'the line is kept as it is when the file is written back',
      });
      return { values: glued, issues, blank: false };
    }
    issues.push({
      line,
      severity: 'error',
      reason: describeJsonError(text, error),
      hint: 'the line was skipped; fix or delete it, or pass --strict to make this fatal',
    });
    return { values: [], issues, blank: false };
  }
}

function isValidUtf8(bytes: Buffer): boolean {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}

function describeJsonError(text: string, error: unknown): string {
  if (text.includes('\u0000')) return 'invalid JSON: the line contains NUL bytes (binary data?)';
  const message = error instanceof Error ? error.message : String(error);
  const trimmed = text.trimStart();
  if (!trimmed.startsWith('{') && !trimmed.startsWith('[')) {
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what the snippet masks
    const snippet = headOf(trimmed, MAX_REASON_SNIPPET).replace(/[\u0000-\u001f]/g, '?');
    return `invalid JSON: the line does not start with { or [ (starts with "${snippet}")`;
  }
  return `invalid JSON: ${headOf(message.replace(/\s+/g, ' '), 200)}`;
}

/**
 * The texts of `{…}{…}` (two or more top-level JSON values on one line), split at depth-0
 * boundaries, or undefined when the line is not that shape.
 */
function splitGluedParts(text: string): string[] | undefined {
  const parts: string[] = [];
  let depth = 0;
  let inString = false;
  let escaped = false;
  let start = -1;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (escaped) escaped = false;
      else if (c === 92 /* \ */) escaped = true;
      else if (c === 34 /* " */) inString = false;
      continue;
    }
    if (c === 34) {
      inString = true;
    } else if (c === 123 /* { */ || c === 91 /* [ */) {
      if (depth === 0) start = i;
      depth++;
    } else if (c === 125 /* } */ || c === 93 /* ] */) {
      depth--;
      if (depth < 0) return undefined;
      if (depth === 0) parts.push(text.slice(start, i + 1));
    } else if (depth === 0 && c !== 32 && c !== 9) {
      return undefined;
    }
  }
  if (depth !== 0 || parts.length < 2) return undefined;
  return parts;
}

/**
 * Splits glued values on one line. Returns undefined unless every part parses, so a split is only
 * made when it is unambiguous.
 */
export function splitGluedValues(text: string): unknown[] | undefined {
  const parts = splitGluedParts(text);
  if (!parts) return undefined;
  const values: unknown[] = [];
  for (const part of parts) {
    try {
      values.push(JSON.parse(part));
    } catch {
      return undefined;
    }
  }
  return values;
}

/**
 * The exact text of each value on a record (kept bytes needed): a writer that must split a glued
 * line writes the values it does not change as they were, not re-serialised (which could alter
 * numbers such as 12345678901234567890 or 1.50).
 */
export function valueTexts(record: RawRecord): string[] | undefined {
  if (!record.raw || record.values.length === 0) return undefined;
  const text = record.raw.toString('utf8');
  if (record.values.length === 1) return [text];
  const parts = splitGluedParts(text);
  return parts && parts.length === record.values.length ? parts : undefined;
}

/** Reads a whole transcript from a byte stream into records, streaming line by line. */
export async function readDocument(stream: Readable, options: ReadOptions): Promise<ParsedDocument> {
  const collector = new LineCollector(options.keepRaw ?? false);
  for await (const chunk of stream) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    options.digest?.update(bytes);
    collector.push(bytes);
  }
  collector.end();
  return finish(collector, options.path);
}

/** Same as `readDocument`, for bytes already in memory. */
export function parseDocument(bytes: Buffer, options: ReadOptions): ParsedDocument {
  const collector = new LineCollector(options.keepRaw ?? false, undefined, options.sameAs);
  options.digest?.update(bytes);
  collector.push(bytes);
  collector.end();
  const doc = finish(collector, options.path);
  return options.keepRaw ? { ...doc, bytes } : doc;
}

/**
 * The records of bytes appended to a JSONL file after `before` records that ended with a line break
 * (or the bytes of some of its lines, re-read): each line parsed, numbered and indexed as reading the
 * whole file would.
 */
export function parseAppended(bytes: Buffer, before: number): { records: RawRecord[]; issues: ReadIssue[] } {
  const collector = new LineCollector(false, before);
  collector.push(bytes);
  collector.end();
  return { records: collector.records, issues: collector.issues };
}

function finish(collector: LineCollector, path: string): ParsedDocument {
  const doc = collector.documentValue();
  if (doc.ok) {
    return {
      path,
      bom: collector.bom,
      records: collector.records,
      issues: [],
      kind: 'json-document',
      document: doc.value,
      totalBytes: collector.totalBytes,
    };
  }
  return {
    path,
    bom: collector.bom,
    records: collector.records,
    issues: collector.issues,
    kind: 'jsonl',
    totalBytes: collector.totalBytes,
  };
}

/** Writes a document back exactly as it was read (requires `keepRaw`). */
export function serializeDocument(doc: ParsedDocument): Buffer {
  const parts: Buffer[] = [];
  if (doc.bom) parts.push(BOM);
  for (const record of doc.records) {
    if (!record.raw) throw new Error('serializeDocument needs a document read with keepRaw: true');
    parts.push(record.raw);
    if (record.eol) parts.push(Buffer.from(record.eol));
  }
  return Buffer.concat(parts);
}
