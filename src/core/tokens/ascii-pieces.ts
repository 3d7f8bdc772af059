/**
 * The o200k split pattern, decided by hand where the text is ASCII: the regex costs about half of
 * counting a typical transcript, and most of its pieces are plain words, spaces and punctuation.
 *
 *   [^\r\n\p{L}\p{N}]?[Upper]*[Lower]+(contraction)?     (1) a word, maybe after one symbol or space
 *   [^\r\n\p{L}\p{N}]?[Upper]+[Lower]*(contraction)?     (2) an upper-case word
 *   \p{N}{1,3}                                           (3) up to three digits
 *    ?[^\s\p{L}\p{N}]+[\r\n/]*                            (4) symbols, maybe after one space
 *   \s*[\r\n]+                                           (5) whitespace up to its last line break
 *   \s+(?!\S)                                            (6) whitespace but the last before a non-space
 *   \s+                                                  (7) whitespace
 *
 * `asciiPieceEnd` returns where the regex's match at `at` ends, or -1 whenever a character it would
 * have to look at is not ASCII (a non-ASCII letter, digit, mark or space could change the match): the
 * regex decides those. The tests compare every piece with the regex on seeded random text.
 * bpe-merge.wat makes the same decisions byte for byte on a text's UTF-8 (its scan, once a counter is
 * warm); this one splits the text before that, and without WebAssembly: a change here is made there too.
 */

/** js-tiktoken's o200k_base split pattern, character for character: only this pattern has the fast path. */
export const O200K_PATTERN =
  "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+('s|'S|'t|'T|'re|'rE|'Re|'RE|'ve|'vE|'Ve|'VE|'m|'M|'ll|'lL|'Ll|'LL|'d|'D)?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*('s|'S|'t|'T|'re|'rE|'Re|'RE|'ve|'vE|'Ve|'VE|'m|'M|'ll|'lL|'Ll|'LL|'d|'D)?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

const LOWER = 1;
const UPPER = 2;
const DIGIT = 3;
/** The space character: the only one pattern (4) may take before symbols. */
const SPACE = 4;
/** Tab, vertical tab, form feed: whitespace that may precede a word (pattern 1, 2), unlike a line break. */
const BLANK = 5;
const NEWLINE = 6;
/** Any other ASCII character (punctuation, symbols, control characters): not \s, \p{L} or \p{N}. */
const SYMBOL = 7;

const CLASS = new Uint8Array(128).fill(SYMBOL);
for (let c = 97; c <= 122; c++) CLASS[c] = LOWER;
for (let c = 65; c <= 90; c++) CLASS[c] = UPPER;
for (let c = 48; c <= 57; c++) CLASS[c] = DIGIT;
CLASS[32] = SPACE;
CLASS[9] = BLANK;
CLASS[11] = BLANK;
CLASS[12] = BLANK;
CLASS[10] = NEWLINE;
CLASS[13] = NEWLINE;

/** The class of the character at `i`, or 0 when it is not ASCII. */
function classAt(text: string, i: number): number {
  const c = text.charCodeAt(i);
  return c < 128 ? (CLASS[c] as number) : 0;
}

/** End of the regex's match at `at` when the pattern is O200K_PATTERN; -1: let the regex decide. */
export function asciiPieceEnd(text: string, at: number): number {
  const n = text.length;
  const k = classAt(text, at);
  switch (k) {
    case LOWER:
    case UPPER:
      return wordEnd(text, at, n);
    case DIGIT: {
      let e = at + 1;
      while (e < n && e < at + 3) {
        const d = classAt(text, e);
        if (d === 0) return -1;
        if (d !== DIGIT) break;
        e++;
      }
      return e;
    }
    case SPACE:
    case BLANK:
    case SYMBOL: {
      // One symbol, space or blank before a word belongs to it (1, 2); a space before symbols to them (4).
      if (at + 1 < n) {
        const next = classAt(text, at + 1);
        if (next === 0) return -1;
        if (next === LOWER || next === UPPER) return wordEnd(text, at + 1, n);
        if (k === SPACE && next === SYMBOL) return symbolsEnd(text, at + 1, n);
      }
      return k === SYMBOL ? symbolsEnd(text, at, n) : whitespaceEnd(text, at, n);
    }
    case NEWLINE:
      return whitespaceEnd(text, at, n);
    default:
      return -1;
  }
}

/** (1) and (2) from the first letter at `from`: capitals, then small letters, then a contraction. */
function wordEnd(text: string, from: number, n: number): number {
  let e = from;
  while (e < n && classAt(text, e) === UPPER) e++;
  while (e < n && classAt(text, e) === LOWER) e++;
  if (e < n && classAt(text, e) === 0) return -1;
  return contractionEnd(text, e, n);
}

/** After a word: 's 't 'm 'd 're 've 'll in any case, or nothing (unicode-pieces.ts too). */
export function contractionEnd(text: string, e: number, n: number): number {
  if (e + 1 >= n || text.charCodeAt(e) !== 39) return e;
  // `| 0x20` folds exactly the ASCII capitals onto the small letters compared here.
  const a = text.charCodeAt(e + 1) | 0x20;
  if (a === 115 || a === 116 || a === 109 || a === 100) return e + 2; // s t m d
  if (e + 2 >= n) return e;
  const b = text.charCodeAt(e + 2) | 0x20;
  if ((a === 114 && b === 101) || (a === 118 && b === 101) || (a === 108 && b === 108)) return e + 3; // re ve ll
  return e;
}

/** (4) from the first symbol at `from`: the symbols, then any line breaks and slashes. */
function symbolsEnd(text: string, from: number, n: number): number {
  let e = from;
  while (e < n) {
    const k = classAt(text, e);
    if (k === 0) return -1;
    if (k !== SYMBOL) break;
    e++;
  }
  while (e < n) {
    const c = text.charCodeAt(e);
    if (c !== 10 && c !== 13 && c !== 47) break;
    e++;
  }
  return e;
}

/** (5), (6) and (7) over the run of ASCII whitespace at `at`. */
function whitespaceEnd(text: string, at: number, n: number): number {
  let e = at;
  let lastBreak = -1;
  while (e < n) {
    const k = classAt(text, e);
    if (k === 0) return -1;
    if (k === NEWLINE) lastBreak = e;
    else if (k !== SPACE && k !== BLANK) break;
    e++;
  }
  if (lastBreak >= 0) return lastBreak + 1;
  if (e === n) return n;
  return e - at >= 2 ? e - 1 : e;
}
