import { Buffer } from 'node:buffer';
import { asciiPieceEnd, contractionEnd } from './ascii-pieces.js';

/**
 * The o200k split pattern (ascii-pieces.ts) decided by hand for any text, from a table of what its
 * character classes make of each code point. The regex costs each thread that counts about 20 ms
 * before its first pieces: 4 ms to parse its Unicode classes, then a compile for one-byte text, a
 * second for one-byte text once that is run again, and another for two-byte text (any text with a
 * character beyond Latin-1: an em dash, an ellipsis). A few new turns of a grown session cost that
 * much again, on top of the counting.
 *
 * The table is made from this Node's own regex engine (`buildPieceClasses`, at build time:
 * dist/ranks/piece-classes.bin), so its classes are the regex's. A Unicode version other than the
 * one it was made with may class a new character otherwise: such a table is not used
 * (`PieceClasses.decode`), and the regex splits as before.
 */

/** Not a letter, number, mark or space: a symbol, punctuation, a control or format character, a lone surrogate. */
const OTHER = 0;
/** Lu, Lt: in the pattern's first word class only. */
const UPPER = 1;
/** Ll: in its second word class only. */
const LOWER = 2;
/** Lm, Lo: in both word classes (and \p{L}). */
const BOTH = 3;
/** M: in both word classes, not \p{L}: a word's, or a symbol's (pattern 4). */
const MARK = 4;
/** \p{N}. */
const NUMBER = 5;
/** U+0020, the one space pattern 4 takes before symbols. */
const SPACE = 6;
/** Any other \s but CR and LF (tab, no-break space, U+2028, U+3000…). */
const BLANK = 7;
/** CR, LF: pattern 5's line breaks. */
const NEWLINE = 8;

const MAGIC = 0x43_50_44_31; // "1DPC", little-endian "CPD1"
const BLOCKS = 0x110000 >> 8;

/**
 * Each code point's class, as the pattern's classes see it under this Node's Unicode: a header
 * (magic, the Unicode version), one block number per 256 code points, then the distinct blocks.
 * Made with the regex engine (slow: at build time, and by tests).
 */
export function buildPieceClasses(unicode: string): Uint8Array {
  const word = /^(?:(\p{Lu}|\p{Lt})|(\p{Ll})|(\p{Lm}|\p{Lo})|(\p{M})|(\p{N}))$/u;
  const space = /^\s$/u;
  const classOf = (cp: number): number => {
    const ch = String.fromCodePoint(cp);
    if (cp === 0x20) return SPACE;
    if (cp === 0x0a || cp === 0x0d) return NEWLINE;
    if (space.test(ch)) return BLANK;
    const m = word.exec(ch);
    if (m === null) return OTHER;
    return m[1] ? UPPER : m[2] ? LOWER : m[3] ? BOTH : m[4] ? MARK : NUMBER;
  };
  const index = new Uint16Array(BLOCKS);
  const blocks: Uint8Array[] = [];
  const seen = new Map<string, number>();
  for (let b = 0; b < BLOCKS; b++) {
    const block = new Uint8Array(256);
    for (let k = 0; k < 256; k++) block[k] = classOf((b << 8) | k);
    const key = Buffer.from(block).toString('latin1');
    let at = seen.get(key);
    if (at === undefined) {
      at = blocks.length;
      seen.set(key, at);
      blocks.push(block);
    }
    index[b] = at;
  }
  const version = Buffer.from(unicode, 'latin1');
  const head = 8 + version.length;
  const out = new Uint8Array(head + BLOCKS * 2 + blocks.length * 256);
  const view = new DataView(out.buffer);
  view.setUint32(0, MAGIC, true);
  view.setUint32(4, version.length, true);
  out.set(version, 8);
  for (let b = 0; b < BLOCKS; b++) view.setUint16(head + b * 2, index[b] as number, true);
  for (const [i, block] of blocks.entries()) out.set(block, head + BLOCKS * 2 + i * 256);
  return out;
}

/** A class table (buildPieceClasses) read back, for the Unicode version it was made with only. */
export class PieceClasses {
  private constructor(
    private readonly index: Uint16Array,
    private readonly blocks: Uint8Array,
  ) {}

  /** The table in `bytes`, or undefined when it is damaged or was made for another Unicode version than `unicode` (the regex decides then). */
  static decode(bytes: Uint8Array, unicode: string): PieceClasses | undefined {
    if (bytes.length < 8) return undefined;
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    if (view.getUint32(0, true) !== MAGIC) return undefined;
    const length = view.getUint32(4, true);
    const head = 8 + length;
    if (bytes.length < head + BLOCKS * 2 || Buffer.from(bytes.subarray(8, head)).toString('latin1') !== unicode) return undefined;
    const index = new Uint16Array(BLOCKS);
    for (let b = 0; b < BLOCKS; b++) index[b] = view.getUint16(head + b * 2, true);
    const blocks = bytes.subarray(head + BLOCKS * 2);
    // Exactly the blocks the index numbers (the build numbers them in order, from 0), and no more.
    let last = 0;
    for (let b = 0; b < BLOCKS; b++) last = Math.max(last, index[b] as number);
    if (blocks.length !== (last + 1) * 256) return undefined;
    // No class past the last one (the split would not move on from such a character). Found as the
    // largest byte of a sorted copy: a count of a few turns reads the table once, before V8 compiles
    // anything, and a loop over its 44 KB in the interpreter took 3–6 ms; the sort, under 1 ms.
    const sorted = blocks.slice().sort();
    if ((sorted[sorted.length - 1] ?? 0) > NEWLINE) return undefined;
    return new PieceClasses(index, blocks);
  }

  /** The class of code point `cp`. */
  of(cp: number): number {
    return this.blocks[((this.index[cp >> 8] as number) << 8) | (cp & 0xff)] as number;
  }
}

/** The class of the code point at `i` (a surrogate pair's whole), its width in `width`. */
let width = 1;
function classAt(text: string, i: number, classes: PieceClasses): number {
  const c = text.charCodeAt(i);
  if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
    const d = text.charCodeAt(i + 1);
    if (d >= 0xdc00 && d <= 0xdfff) {
      width = 2;
      return classes.of(((c - 0xd800) << 10) + (d - 0xdc00) + 0x10000);
    }
  }
  width = 1;
  return classes.of(c);
}

const inFirstWord = (k: number): boolean => k === UPPER || k === BOTH || k === MARK;
const inSecondWord = (k: number): boolean => k === LOWER || k === BOTH || k === MARK;
const isSymbol = (k: number): boolean => k === OTHER || k === MARK;
const isSpace = (k: number): boolean => k === SPACE || k === BLANK || k === NEWLINE;

/**
 * Where the regex's match at `at` ends, for O200K_PATTERN (`at` < text.length: there always is one).
 * The alternatives in the regex's order, each with its backtracking: the first that matches wins.
 */
export function o200kPieceEnd(text: string, at: number, classes: PieceClasses): number {
  const ascii = asciiPieceEnd(text, at);
  if (ascii > at) return ascii;
  const n = text.length;
  const first = classAt(text, at, classes);
  const next = at + width;
  // (1) and (2) may take one character before the word: not a letter, number, CR or LF.
  const prefixed = first === OTHER || first === MARK || first === SPACE || first === BLANK;
  let end = prefixed ? wordThenSmall(text, next, n, classes) : -1;
  if (end < 0) end = wordThenSmall(text, at, n, classes);
  if (end < 0 && prefixed) end = wordFromCapital(text, next, n, classes);
  if (end < 0) end = wordFromCapital(text, at, n, classes);
  if (end >= 0) return end;
  if (first === NUMBER) {
    // (3) up to three numbers.
    let e = next;
    for (let k = 1; k < 3 && e < n && classAt(text, e, classes) === NUMBER; k++) e += width;
    return e;
  }
  // (4) symbols, maybe after one space, then line breaks and slashes.
  if (first === SPACE && next < n && isSymbol(classAt(text, next, classes))) return symbolsEnd(text, next, n, classes);
  if (isSymbol(first)) return symbolsEnd(text, at, n, classes);
  // (5), (6), (7): whitespace (all of it in the BMP: one unit a character).
  let e = at;
  let lastBreak = -1;
  while (e < n) {
    const k = classAt(text, e, classes);
    if (!isSpace(k)) break;
    if (k === NEWLINE) lastBreak = e;
    e++;
  }
  if (lastBreak >= 0) return lastBreak + 1;
  if (e === n) return n;
  return e - at >= 2 ? e - 1 : e;
}

/**
 * (1) from `s`: the longest run of the first word class, then at least one of the second, then a
 * contraction; where the second does not follow the run, the run given back from its end up to its
 * last character of both classes, which is then the one of the second. -1: no match from `s`.
 */
function wordThenSmall(text: string, s: number, n: number, classes: PieceClasses): number {
  let e = s;
  let lastBothEnd = -1;
  let k = -1;
  while (e < n) {
    k = classAt(text, e, classes);
    if (!inFirstWord(k)) break;
    e += width;
    if (k !== UPPER) lastBothEnd = e;
  }
  if (e < n && k === LOWER) {
    while (e < n && inSecondWord(classAt(text, e, classes))) e += width;
    return contractionEnd(text, e, n);
  }
  return lastBothEnd < 0 ? -1 : contractionEnd(text, lastBothEnd, n);
}

/** (2) from `s`: at least one of the first word class, then any of the second, then a contraction. -1: no match from `s`. */
function wordFromCapital(text: string, s: number, n: number, classes: PieceClasses): number {
  if (s >= n || !inFirstWord(classAt(text, s, classes))) return -1;
  let e = s + width;
  while (e < n && inFirstWord(classAt(text, e, classes))) e += width;
  while (e < n && inSecondWord(classAt(text, e, classes))) e += width;
  return contractionEnd(text, e, n);
}

/** (4) from the first symbol at `from`: the symbols, then any CR, LF and slashes. */
function symbolsEnd(text: string, from: number, n: number, classes: PieceClasses): number {
  let e = from;
  while (e < n && isSymbol(classAt(text, e, classes))) e += width;
  while (e < n) {
    const c = text.charCodeAt(e);
    if (c !== 10 && c !== 13 && c !== 47) break;
    e++;
  }
  return e;
}
