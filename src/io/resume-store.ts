import { createHash } from 'node:crypto';
import type { Hash } from 'node:crypto';
import { closeSync, constants, fstatSync, openSync } from 'node:fs';
import type { ReadIssue } from '../core/issues.js';
import { readFully } from './fd.js';
import type { ParsedDocument, RawRecord } from './jsonl.js';
import { PathFiles } from './path-files.js';

/**
 * Where a batch `analyze` left off in a transcript that grows (an agent's live session), so that the
 * next run reads only what was appended (src/cli/batch/resume.ts). One file per transcript in
 * `<cache>/resume/`: the bytes it had (their length and SHA-256), each line's place in the file and its
 * values without their text (the format's `skeleton`), the reader's issues about those lines, and
 * the token counts of the turns read from them. The transcript is read from where it ended only when
 * its first `size` bytes still hash the same, so the lines described are exactly the lines there.
 * Like the other caches it is an optimisation: unreadable, damaged or of another schema, it is ignored.
 */

const RESUME_VERSION = 1;
/** Larger transcripts are read whole (streamed): reading on holds the file's bytes in memory. */
export const RESUME_MAX_BYTES = 512 << 20;
/** States kept; past this the least recently written go (a state is only kept for a file that grew). */
const MAX_STATES = 200;

/** A line as kept: where its bytes are, its terminator (0 none, 1 `\n`, 2 `\r\n`), blank or not, its values' skeletons. */
type KeptRecord = readonly [offset: number, byteLength: number, eol: 0 | 1 | 2, blank: 0 | 1, values: readonly unknown[]];
/** A turn's counts by the lines it was read from (in the order its text joins them, by commas; and the path in them, when one line holds several turns): text tokens, blob tokens (both -1 for a turn kept while it was not sent), and what calibration reads of its text, if anything (a masked result's placeholder, a summary's marker: calibrationText). */
export type KeptTurn = readonly [text: number, blobs: number, calibrationText?: string];
/** A kept turn's counts when it was not sent: not counted (it counts 0 while it is not sent). */
export const NOT_COUNTED = -1;

export interface ResumeState {
  /** The absolute path of the transcript. */
  readonly path: string;
  readonly format: string;
  /** How many bytes were read, and their SHA-256 (base64url). */
  readonly size: number;
  readonly digest: string;
  readonly bom: boolean;
  readonly records: readonly KeptRecord[];
  /** What reading those lines (JSONL) found wrong. */
  readonly issues: readonly ReadIssue[];
  readonly turns: Readonly<Record<string, KeptTurn>>;
}

const EOLS = ['', '\n', '\r\n'] as const;

/** The records of a state, as a document's records (their values are skeletons). */
export function keptRecords(state: ResumeState): RawRecord[] {
  return state.records.map(([, byteLength, eol, blank, values], index) => ({
    index,
    line: index + 1,
    eol: EOLS[eol],
    byteLength,
    values,
    blank: blank === 1,
  }));
}

/** Where each record's bytes start (after the BOM, line after line with its terminator). */
export function recordOffsets(doc: Pick<ParsedDocument, 'bom' | 'records'>): number[] {
  const offsets: number[] = [];
  let at = doc.bom ? 3 : 0;
  for (const record of doc.records) {
    offsets.push(at);
    at += record.byteLength + record.eol.length;
  }
  return offsets;
}

/** A record as a state keeps it. */
export function keepRecord(record: RawRecord, offset: number, values: readonly unknown[]): KeptRecord {
  return [offset, record.byteLength, record.eol === '' ? 0 : record.eol === '\n' ? 1 : 2, record.blank ? 1 : 0, values];
}

/** A state whose lines lie end to end from the start of the file to `size`, with counts that are counts. */
function wellFormed(state: ResumeState): boolean {
  if (typeof state.format !== 'string' || typeof state.digest !== 'string' || typeof state.bom !== 'boolean') return false;
  if (!Number.isSafeInteger(state.size) || !Array.isArray(state.records) || !Array.isArray(state.issues)) return false;
  if (!state.issues.every((i) => typeof i === 'object' && i !== null && Number.isSafeInteger(i.line) && typeof i.reason === 'string')) return false;
  let at = state.bom ? 3 : 0;
  for (const record of state.records) {
    if (!Array.isArray(record) || record.length !== 5 || record[0] !== at || !Array.isArray(record[4])) return false;
    const [, byteLength, eol, blank] = record;
    if (!Number.isSafeInteger(byteLength) || byteLength < 0 || (eol !== 0 && eol !== 1 && eol !== 2) || (blank !== 0 && blank !== 1)) return false;
    at += byteLength + eol; // the terminator code is its length
  }
  // The last line whole: new bytes start a line of their own.
  if ((state.records.at(-1)?.[2] ?? 1) === 0) return false;
  if (at !== state.size || typeof state.turns !== 'object' || state.turns === null || Array.isArray(state.turns)) return false;
  // Counts, or both NOT_COUNTED for a turn kept while it was not sent.
  return Object.values(state.turns).every(
    (t) =>
      Array.isArray(t) &&
      Number.isSafeInteger(t[0]) &&
      Number.isSafeInteger(t[1]) &&
      t[0] >= NOT_COUNTED &&
      t[1] >= NOT_COUNTED &&
      (t[0] === NOT_COUNTED) === (t[1] === NOT_COUNTED) &&
      (t[2] === undefined || typeof t[2] === 'string'),
  );
}

export class ResumeStore {
  private constructor(private readonly files: PathFiles) {}

  /** The states in `dir` made under `schema` (the batch rows' schema: the build, the settings). */
  static open(dir: string | undefined, schema: string | undefined): ResumeStore {
    return new ResumeStore(PathFiles.open(dir, schema, { version: RESUME_VERSION, max: MAX_STATES }));
  }

  /** The state kept for the transcript at `path` (absolute), if any under this schema. */
  get(path: string): ResumeState | undefined {
    const state = this.files.read(path)?.['state'] as ResumeState | undefined;
    return state && typeof state === 'object' && state.path === path && wellFormed(state) ? state : undefined;
  }

  set(state: ResumeState): void {
    this.files.write(state.path, { state });
  }
}

/** The SHA-256 a state keeps of the bytes it describes. */
export function newDigest(): Hash {
  return createHash('sha256');
}

/**
 * The transcript at `path` now, when it still begins with the bytes `state` describes: all its bytes
 * (the kept lines are re-read from them when needed) and the digest of the whole, for the next state.
 * Undefined when it is no longer a regular file, is shorter, or its first `state.size` bytes differ.
 */
export function readGrown(path: string, state: ResumeState): { bytes: Buffer; digest: string } | undefined {
  let fd: number | undefined;
  try {
    // Non-blocking: a FIFO put in the file's place must not wait for a writer.
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
    const stat = fstatSync(fd);
    if (!stat.isFile() || stat.size < state.size || stat.size > RESUME_MAX_BYTES) return undefined;
    const bytes = Buffer.allocUnsafe(stat.size);
    const done = readFully(fd, bytes);
    if (done < state.size) return undefined;
    const hash = newDigest().update(bytes.subarray(0, state.size));
    if (hash.copy().digest('base64url') !== state.digest) return undefined;
    return { bytes: bytes.subarray(0, done), digest: hash.update(bytes.subarray(state.size, done)).digest('base64url') };
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
