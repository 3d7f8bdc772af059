import { stableHash } from './term-hash.js';
import { SCAN_END, SCAN_NOT_ASCII, WasmTerms } from './terms-wasm.js';

/**
 * The words of a text as index terms, shared by the offline embedder (BM25), the extractive summary
 * and the goal excerpt of a masked tool result: lower-cased identifiers split at camelCase and
 * snake_case as well as kept whole, stop words and one- or two-digit numbers left out, a plural `s` cut.
 */
const STOP_WORDS = new Set(
  (
    'a an and are as at be but by for from has have i if in into is it its of on or our so that the their then there these ' +
    'this to was we were what when which while will with you your not no do does did can could should would just also ' +
    'all any some me my he she they them us been being than too very here out up down over under again once only own ' +
    'same such both each few more most other about above after before below between through during off further how why where who whom'
  ).split(' '),
);

/**
 * How much of one turn's text is read: its start and its end. A 1 MB tool output says no more
 * about relevance than its first and last pages, and this keeps ranking linear in turns.
 */
const HEAD_CHARS = 24_000;
const TAIL_CHARS = 8_000;

/** Whether `terms` and `read` read all of `text` (a longer one is read by its head and tail). */
function readsWhole(text: string): boolean {
  return text.length <= HEAD_CHARS + TAIL_CHARS;
}

function sample(text: string): string {
  return readsWhole(text) ? text : `${text.slice(0, HEAD_CHARS)}\n${text.slice(-TAIL_CHARS)}`;
}

const WORD = /[\p{L}\p{N}_]+/gu;
/** Cheap test for words worth splitting (snake_case, camelCase, ACRONYMWords), before the costly split. */
const COMPOUND = /_|[a-z0-9][A-Z]|[A-Z][A-Z][a-z]/;
const COMPOUND_SPLIT = /_+|(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])/u;

/** The words of a text, as index terms. */
export function terms(text: string): string[] {
  const out: string[] = [];
  for (const match of sample(text).matchAll(WORD)) {
    const word = match[0];
    if (word.length > 64) continue;
    for (const term of wordTerms(word)) out.push(term);
  }
  return out;
}

function isShortNumber(word: string): boolean {
  if (word.length >= 3) return false;
  for (let i = 0; i < word.length; i++) {
    const c = word.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

function addTerm(out: string[], word: string): void {
  const term = asTerm(word);
  if (term !== undefined) out.push(term);
}

/** A lower-cased word as a term: none for a stop word, a one-letter word or a short number; a plural `s` cut. */
function asTerm(word: string): string | undefined {
  if (word.length < 2 || STOP_WORDS.has(word) || isShortNumber(word)) return undefined;
  return word.length > 3 && word.endsWith('s') && !word.endsWith('ss') ? word.slice(0, -1) : word;
}

/*
 * The same terms, for reading many texts: `TermIndex` numbers each distinct term and remembers each
 * distinct word's terms, and finds a word seen before by its characters (a hash of them as they are
 * scanned), so a word said thousands of times is neither sliced nor lower-cased nor split again. A
 * relevance prune reads every turn this way (the BM25 fit, the goal excerpts). It gives exactly the
 * terms `terms` gives, in order (test/terms.test.ts checks it against `terms`).
 *
 * From its first long read (WASM_MIN_UNITS), an index keeps its terms and ASCII words in
 * WebAssembly (terms.wat, through terms-wasm.ts), which reads the ASCII words there, compiled from
 * the start: a prune reads its turns once, mostly before V8 would have optimized the loop below. The
 * loop below then reads only the words with a unit that is not ASCII, and everything where Node runs
 * no WebAssembly.
 */

/** Letters and digits of any script, read as `WORD` reads them (code point by code point). */
const LETTER_OR_DIGIT = /^[\p{L}\p{N}]$/u;
/** Per UTF-16 unit below 0x10000: 0 not known yet, 1 part of a word, 2 not (ASCII filled ahead). */
const UNIT_CLASS = new Uint8Array(0x10000);
for (let c = 0; c < 128; c++) UNIT_CLASS[c] = (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 ? 1 : 2;

/** How many UTF-16 units of a word character start at `i` (2 for a letter beyond the BMP), 0 when none does; `end` bounds a surrogate pair. */
function wordUnits(text: string, i: number, end: number): number {
  const c = text.charCodeAt(i);
  if (c >= 0xd800 && c <= 0xdbff && i + 1 < end) {
    const low = text.charCodeAt(i + 1);
    if (low >= 0xdc00 && low <= 0xdfff) return LETTER_OR_DIGIT.test(text.slice(i, i + 2)) ? 2 : 0;
  }
  let known = UNIT_CLASS[c] as number;
  if (known === 0) {
    // A lone surrogate is no letter, as for `WORD`.
    known = LETTER_OR_DIGIT.test(String.fromCharCode(c)) ? 1 : 2;
    UNIT_CLASS[c] = known;
  }
  return known === 1 ? 1 : 0;
}

/**
 * An empty array that holds strings from the start. V8 makes `[]` an array of small integers until
 * a string is put in: code compiled for a TermIndex that has read (the primer's) was thrown away by
 * the first word of a new one.
 */
function strings(): string[] {
  const array = [''];
  array.length = 0;
  return array;
}

/** A growable list of term ids (or hashes, or offsets: 32-bit integers), reused from text to text. */
export class TermIds {
  ids: Int32Array;
  length = 0;

  /** `capacity`: room at first (it doubles as ids are pushed). */
  constructor(capacity = 1024) {
    this.ids = new Int32Array(capacity);
  }

  push(id: number): void {
    if (this.length === this.ids.length) {
      const grown = new Int32Array(this.ids.length * 2);
      grown.set(this.ids);
      this.ids = grown;
    }
    this.ids[this.length++] = id;
  }
}

/** How far `scanHere` reads (see there). */
const READ_ALL = 0;
const UNTIL_ASCII_WORD = 1;
const UNTIL_ASCII_WORD_OR_BREAK = 2;

/**
 * A TermIndex reads in WebAssembly (terms.wat) from its first range of this many UTF-16 units or
 * more, where this Node runs WebAssembly: its terms move there, and every range it reads after is
 * read there. A small index (a goal's few words) stays in JavaScript.
 */
const WASM_MIN_UNITS = 256;

/**
 * A hash multiplier drawn for this process: odd, so every character counts. With a fixed one (31)
 * words can be made that all share a slot ("Aa" and "BB" hash alike, and so do all strings of them):
 * 20,000 such words, 620 KB of text, took seconds to read. Ids never depend on it.
 */
const PROCESS_MULTIPLIER = Math.floor(Math.random() * 0x100000000) | 1;

/** Spreads a hash's bits into its low ones, which pick the slot (a bijection: equal after, equal before). */
function mixed(hash: number): number {
  const h = Math.imul(hash ^ (hash >>> 16), 0x45d9f3b);
  return h ^ (h >>> 16);
}

/** A text's term ids read line by line: line k's from `lineEnds[k - 1]` (0 for the first) up to `lineEnds[k]`. */
export interface LineTerms {
  readonly ids: Int32Array;
  readonly lineEnds: Int32Array;
}

/** How a corpus's texts are read into term ids (a BM25 fit's): `index.read` by default. */
export interface CorpusReader {
  readonly index: TermIndex;
  /** Appends the ids of text `i` of the corpus to `out`, exactly as `index.read(text, out)` does. */
  read(i: number, text: string, out: TermIds): void;
}

/**
 * A corpus reader that reads the texts `keep` chooses line by line, and keeps their lines' ids when
 * they have `minLines` lines or more: a prune's BM25 fit reads every turn, and its goal excerpts
 * then score the tool results' lines without reading them again. A text too long to be read whole
 * is read as usual, and not kept.
 */
export class LineKeepingReader implements CorpusReader {
  readonly #kept = new Map<number, LineTerms>();
  readonly #lineEnds = new TermIds();

  constructor(
    readonly index: TermIndex,
    private readonly keep: (i: number) => boolean,
    private readonly minLines = 0,
  ) {}

  read(i: number, text: string, out: TermIds): void {
    if (!this.keep(i) || !readsWhole(text)) {
      this.index.read(text, out);
      return;
    }
    const start = out.length;
    this.#lineEnds.length = 0;
    this.index.readLines(text, out, this.#lineEnds);
    if (this.#lineEnds.length < this.minLines) return;
    const lineEnds = this.#lineEnds.ids.slice(0, this.#lineEnds.length);
    if (start > 0) for (let k = 0; k < lineEnds.length; k++) lineEnds[k] = (lineEnds[k] as number) - start;
    this.#kept.set(i, { ids: out.ids.slice(start, out.length), lineEnds });
  }

  /** The lines' ids of text `i`, when it was kept. */
  lines(i: number): LineTerms | undefined {
    return this.#kept.get(i);
  }
}

export class TermIndex {
  /**
   * Each term by its id, as far as they are named. In WebAssembly a term is named when asked
   * (`name`, `names`): making a string of each of a large read's terms as it was found took about
   * a tenth of the bench's 1M-token fit, whose terms are then only hashed (`stableHash`).
   */
  readonly #names: string[] = strings();
  /** Open addressing, as for words: a term's id + 1 per slot, 0 for an empty one (a Map cost a tenth of a cold fit). */
  private termSlots: Int32Array;
  /*
   * The hashes, and each word's terms, are typed lists (TermIds), not arrays: a large read fills
   * them as it goes, and V8 copied arrays from one young-heap space to the other at each of its
   * collections (the 1M-token prune's main thread paused some 9 ms less for them, over three runs).
   */
  private readonly termHashes = new TermIds();
  /** Open addressing: a word's index + 1 per slot, 0 for an empty one. */
  private slots: Int32Array;
  private readonly wordHashes = new TermIds();
  private readonly words: string[] = strings();
  /** The term ids of word k are `wordTerms[wordStarts[k]]` up to `wordStarts[k + 1]`. */
  private readonly wordStarts = new TermIds();
  private readonly wordTerms = new TermIds();
  /** The stop words by the same hash (open addressing, index + 1 per slot), to leave one out without lower-casing it into a string. */
  private readonly stopSlots: Int32Array;
  private readonly stopWords: string[] = [...STOP_WORDS];
  /**
   * The terms and ASCII words in WebAssembly: undefined until a range long enough is read; null
   * where this Node has no WebAssembly. Once there, the terms are kept there, named when asked.
   */
  private wasm: WasmTerms | null | undefined;
  /** Term ids read in WebAssembly (a test's proof that it ran). */
  readInWebAssembly = 0;

  /**
   * `multiplier`: the hash's, drawn per process unless given (a test gives one to make hashes
   * collide). `tableSize`: the tables' first size, a power of two (they double as they fill).
   * `webAssemblyFrom`: the shortest range that moves the index to WebAssembly (WASM_MIN_UNITS; a
   * test gives 0, or Infinity for never).
   */
  constructor(
    private readonly multiplier = PROCESS_MULTIPLIER,
    private readonly tableSize = 1 << 12,
    private readonly webAssemblyFrom = WASM_MIN_UNITS,
  ) {
    this.termSlots = new Int32Array(tableSize);
    this.slots = new Int32Array(tableSize);
    this.wordStarts.push(0);
    let size = 1;
    while (size < this.stopWords.length * 4) size *= 2;
    const stopHashes = Int32Array.from(this.stopWords, (word) => this.hashOf(word));
    this.stopSlots = rehashed({ ids: stopHashes, length: stopHashes.length }, size);
  }

  /** The hash `id` finds `term` by. */
  private hashOf(term: string): number {
    const m = this.multiplier;
    let hash = 0;
    for (let k = 0; k < term.length; k++) hash = (Math.imul(hash, m) + term.charCodeAt(k)) | 0;
    return mixed(hash);
  }

  /** How many distinct terms have been read. */
  get size(): number {
    return this.wasm ? this.wasm.terms : this.#names.length;
  }

  /** Each term by its id (in WebAssembly, those not named yet are named now). */
  get names(): readonly string[] {
    if (this.wasm) this.nameTerms(this.wasm);
    return this.#names;
  }

  /** Term `id`'s characters (in WebAssembly, read there when not named yet; not kept). */
  name(id: number): string {
    const { wasm } = this;
    this.#known(id);
    return wasm && id >= this.#names.length ? wasm.name(id) : (this.#names[id] as string);
  }

  /** `stableHash` of term `id` (in WebAssembly, of its characters there, without naming it). */
  stableHash(id: number): number {
    const { wasm } = this;
    this.#known(id);
    return wasm && id >= this.#names.length ? wasm.stableHash(id) : stableHash(this.#names[id] as string);
  }

  /** A RangeError for an id no term has (the module would read whatever lies where it points). */
  #known(id: number): void {
    if (!(Number.isInteger(id) && id >= 0 && id < this.size)) throw new RangeError(`no term has id ${id} (the index has ${this.size})`);
  }

  /**
   * How many terms are named (the first this many ids).
   * @public test/terms.test.ts checks that a read in WebAssembly names none.
   */
  get named(): number {
    return this.#names.length;
  }

  /** The id of a term (a new one gets the next id). */
  id(term: string): number {
    const { wasm } = this;
    if (wasm) {
      const id = wasm.id(term);
      // A new term is the one asked for: named without reading it back, when every term before it is.
      if (id === this.#names.length) this.#names.push(term);
      return id;
    }
    const hash = this.hashOf(term);
    const mask = this.termSlots.length - 1;
    let slot = hash & mask;
    for (; ; slot = (slot + 1) & mask) {
      const found = (this.termSlots[slot] as number) - 1;
      if (found < 0) break;
      if (this.termHashes.ids[found] === hash && this.#names[found] === term) return found;
    }
    return this.addTerm(term, hash, slot);
  }

  private addTerm(term: string, hash: number, slot: number): number {
    const id = this.#names.length;
    this.#names.push(term);
    this.termHashes.push(hash);
    this.termSlots[slot] = id + 1;
    if (this.#names.length * 2 > this.termSlots.length) this.termSlots = rehashed(this.termHashes, this.termSlots.length * 2);
    return id;
  }

  /**
   * `asTerm` of `text.slice(start, end).toLowerCase()` for an ASCII word or part of one, pushed onto
   * `wordTerms` as an id: read in place, lower-cased as it is hashed and compared, so only a term
   * not seen before becomes a string.
   */
  private pushRangeTerm(text: string, start: number, end: number): void {
    const length = end - start;
    if (length < 2) return;
    if (length < 3) {
      const a = text.charCodeAt(start);
      const b = text.charCodeAt(start + 1);
      if (a >= 48 && a <= 57 && b >= 48 && b <= 57) return;
    }
    const m = this.multiplier;
    let head = 0;
    for (let k = start; k < end - 1; k++) head = (Math.imul(head, m) + lower(text.charCodeAt(k))) | 0;
    const last = lower(text.charCodeAt(end - 1));
    const whole = mixed((Math.imul(head, m) + last) | 0);
    if (this.isStopWord(whole, text, start, length)) return;
    // A plural `s` cut, as asTerm cuts it.
    const cut = length > 3 && last === 115 && lower(text.charCodeAt(end - 2)) !== 115;
    const termEnd = cut ? end - 1 : end;
    const hash = cut ? mixed(head) : whole;
    const mask = this.termSlots.length - 1;
    let slot = hash & mask;
    for (; ; slot = (slot + 1) & mask) {
      const found = (this.termSlots[slot] as number) - 1;
      if (found < 0) break;
      if (this.termHashes.ids[found] === hash && sameLowerChars(this.#names[found] as string, text, start, termEnd - start)) {
        this.wordTerms.push(found);
        return;
      }
    }
    this.wordTerms.push(this.addTerm(text.slice(start, termEnd).toLowerCase(), hash, slot));
  }

  private isStopWord(hash: number, text: string, start: number, length: number): boolean {
    const mask = this.stopSlots.length - 1;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const found = (this.stopSlots[slot] as number) - 1;
      if (found < 0) return false;
      if (sameLowerChars(this.stopWords[found] as string, text, start, length)) return true;
    }
  }

  /** Appends the ids of `text`'s terms (read as `terms` reads it: its head and tail when long) to `out`. */
  read(text: string, out: TermIds): void {
    this.readRange(text, 0, text.length, out);
  }

  /**
   * `readRange` of each line of `text` in turn, noting in `lineEnds` how many ids `out` holds after
   * each line. The same ids as `read` when the text is short enough to be read whole (`readsWhole`): no word spans
   * a line break.
   */
  readLines(text: string, out: TermIds, lineEnds: TermIds): void {
    const wasm = this.webAssemblyFor(text.length);
    if (wasm !== undefined) {
      this.readLinesLoaded(wasm, text, out, lineEnds);
      return;
    }
    for (let at = 0; at >= 0; ) at = this.readLine(text, at, out, lineEnds);
  }

  /** `readRange` of the line of `text` that starts at `at`, its end pushed onto `lineEnds`; where the next line starts (-1: none). */
  private readLine(text: string, at: number, out: TermIds, lineEnds: TermIds): number {
    const end = text.indexOf('\n', at);
    this.readRange(text, at, end < 0 ? text.length : end, out);
    lineEnds.push(out.length);
    return end < 0 ? -1 : end + 1;
  }

  /**
   * `readLines` in WebAssembly: a run of whole lines at a time, as many as a text read whole holds
   * (so none of them is cut), the module noting where each ends; a line longer than that alone, as
   * readRange reads it (its head and tail).
   */
  private readLinesLoaded(wasm: WasmTerms, text: string, out: TermIds, lineEnds: TermIds): void {
    for (let at = 0; at >= 0; ) {
      if (text.length - at <= HEAD_CHARS + TAIL_CHARS) {
        wasm.load(text, at, text.length);
        this.readLoaded(wasm, text, at, at, text.length, out, lineEnds);
        lineEnds.push(out.length);
        return;
      }
      const cut = text.lastIndexOf('\n', at + HEAD_CHARS + TAIL_CHARS - 1);
      if (cut < at) {
        at = this.readLine(text, at, out, lineEnds);
        continue;
      }
      wasm.load(text, at, cut + 1);
      this.readLoaded(wasm, text, at, at, cut + 1, out, lineEnds);
      at = cut + 1;
    }
  }

  /** `read` of `text.slice(start, end)`, without slicing. */
  readRange(text: string, start: number, end: number, out: TermIds): void {
    if (end - start <= HEAD_CHARS + TAIL_CHARS) {
      this.scan(text, start, end, out);
      return;
    }
    // `sample`'s head and tail, joined by a line break: no word crosses it, so each is read alone.
    this.scan(text, start, start + HEAD_CHARS, out);
    this.scan(text, end - TAIL_CHARS, end, out);
  }

  /** Appends the ids of text[from, end)'s terms (read whole): in WebAssembly once the index is there. */
  private scan(text: string, from: number, end: number, out: TermIds): void {
    const wasm = this.webAssemblyFor(end - from);
    if (wasm === undefined) {
      this.scanHere(text, from, end, out, READ_ALL);
      return;
    }
    wasm.load(text, from, end);
    this.readLoaded(wasm, text, from, from, end, out);
  }

  /** The index in WebAssembly, moved there when a range of `units` is long enough; undefined while it is not, or where there is none. */
  private webAssemblyFor(units: number): WasmTerms | undefined {
    if (this.wasm === undefined && units >= this.webAssemblyFrom) {
      const wasm = WasmTerms.for(this.multiplier, this.tableSize, this.stopWords) ?? null;
      // Its terms, in the order of their ids: each gets the same id there.
      if (wasm !== null) for (const name of this.#names) wasm.id(name);
      this.wasm = wasm;
    }
    return this.wasm ?? undefined;
  }

  /** Names the terms WebAssembly has made since last named. */
  private nameTerms(wasm: WasmTerms): void {
    const names = this.#names;
    for (let id = names.length, n = wasm.terms; id < n; id++) names.push(wasm.name(id));
  }

  /**
   * `scan` of text[i, end) in WebAssembly, the text loaded from `base`: it reads the ASCII words;
   * JavaScript reads each word that has a unit which is not ASCII (its terms' ids from
   * WebAssembly), and on while the next word starts with one (never past a line break when lines are
   * noted). With `lineEnds`, the end of each line but the last is pushed onto it, as readLines
   * pushes them.
   */
  private readLoaded(wasm: WasmTerms, text: string, base: number, i: number, end: number, out: TermIds, lineEnds?: TermIds): void {
    for (;;) {
      const stop = wasm.scan(i - base, end - base, lineEnds !== undefined);
      const first = out.length;
      this.readInWebAssembly += wasm.takeIds(out);
      if (lineEnds !== undefined) wasm.takeLineEnds(first, lineEnds);
      if (stop === SCAN_END) return;
      i = wasm.stopped + base;
      if (stop === SCAN_NOT_ASCII) i = this.scanHere(text, i, end, out, lineEnds === undefined ? UNTIL_ASCII_WORD : UNTIL_ASCII_WORD_OR_BREAK);
    }
  }

  /**
   * Appends the ids of text[from, end)'s terms, read in JavaScript: all of it (READ_ALL), or up to
   * the next word that starts with an ASCII unit after its first (UNTIL_ASCII_WORD), or that or a
   * line break (UNTIL_ASCII_WORD_OR_BREAK), where the loop in WebAssembly reads on. Returns where it
   * stopped.
   */
  private scanHere(text: string, from: number, end: number, out: TermIds, until: number): number {
    const m = this.multiplier;
    let i = from;
    while (i < end) {
      const first = text.charCodeAt(i);
      let units = first < 128 ? (UNIT_CLASS[first] === 1 ? 1 : 0) : wordUnits(text, i, end);
      if (units === 0) {
        if (first === 10 && until === UNTIL_ASCII_WORD_OR_BREAK) return i;
        i++;
        continue;
      }
      if (first < 128 && until !== READ_ALL && i > from) return i;
      const start = i;
      let hash = 0;
      // ASCII only: its terms are read in place (pushRangeTerm), not from a lower-cased copy.
      let ascii = true;
      do {
        const c = text.charCodeAt(i);
        hash = (Math.imul(hash, m) + c) | 0;
        if (units === 2) hash = (Math.imul(hash, m) + text.charCodeAt(i + 1)) | 0;
        if (c >= 128) ascii = false;
        i += units;
        if (i >= end) break;
        const next = text.charCodeAt(i);
        units = next < 128 ? (UNIT_CLASS[next] === 1 ? 1 : 0) : wordUnits(text, i, end);
      } while (units > 0);
      if (i - start <= 64) {
        const word = this.word(text, start, i - start, mixed(hash), ascii);
        const starts = this.wordStarts.ids;
        const terms = this.wordTerms.ids;
        const last = starts[word + 1] as number;
        for (let k = starts[word] as number; k < last; k++) out.push(terms[k] as number);
      }
    }
    return i;
  }

  /** The index of the word `text.slice(start, start + length)`, added (with its terms) when new. */
  private word(text: string, start: number, length: number, hash: number, ascii: boolean): number {
    const mask = this.slots.length - 1;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const found = (this.slots[slot] as number) - 1;
      if (found < 0) return this.addWord(text, start, length, hash, slot, ascii);
      if (this.wordHashes.ids[found] === hash && sameChars(this.words[found] as string, text, start, length)) return found;
    }
  }

  private addWord(text: string, start: number, length: number, hash: number, slot: number, ascii: boolean): number {
    const index = this.words.length;
    const word = text.slice(start, start + length);
    this.words.push(word);
    this.wordHashes.push(hash);
    // Read in place against this thread's tables; once they are in WebAssembly, through `id`.
    if (ascii && !this.wasm) this.pushAsciiTerms(word, 0, length);
    else for (const term of wordTerms(word)) this.wordTerms.push(this.id(term));
    this.wordStarts.push(this.wordTerms.length);
    this.slots[slot] = index + 1;
    if (this.words.length * 2 > this.slots.length) this.slots = rehashed(this.wordHashes, this.slots.length * 2);
    return index;
  }

  /**
   * `wordTerms` of an ASCII word, read in place: the whole word, then, when it is a compound
   * (`COMPOUND`), its parts as `COMPOUND_SPLIT` splits it: at each run of `_`, between a lower-case
   * letter or digit and a capital, and between two capitals when a lower-case letter follows.
   */
  private pushAsciiTerms(text: string, start: number, end: number): void {
    this.pushRangeTerm(text, start, end);
    let compound = false;
    for (let k = start; k < end && !compound; k++) compound = text.charCodeAt(k) === 95 || splitsBefore(text, k, start, end);
    if (!compound) return;
    let part = start;
    for (let k = start; k < end; k++) {
      if (text.charCodeAt(k) === 95) {
        this.pushRangeTerm(text, part, k);
        while (k + 1 < end && text.charCodeAt(k + 1) === 95) k++;
        part = k + 1;
      } else if (k > part && splitsBefore(text, k, start, end)) {
        this.pushRangeTerm(text, part, k);
        part = k;
      }
    }
    this.pushRangeTerm(text, part, end);
  }
}

/** Whether a compound word splits before its character `k` (no `_` on either side): a lower-case letter or digit then a capital, or two capitals then a lower-case letter. */
function splitsBefore(text: string, k: number, start: number, end: number): boolean {
  if (k === start) return false;
  const c = text.charCodeAt(k);
  if (c < 65 || c > 90) return false;
  const before = text.charCodeAt(k - 1);
  if ((before >= 97 && before <= 122) || (before >= 48 && before <= 57)) return true;
  if (before < 65 || before > 90 || k + 1 >= end) return false;
  const after = text.charCodeAt(k + 1);
  return after >= 97 && after <= 122;
}

/** An ASCII code lower-cased. */
function lower(c: number): number {
  return c >= 65 && c <= 90 ? c | 32 : c;
}

/** Whether `name` (lower case) is `text.slice(start, start + length)` lower-cased (ASCII). */
function sameLowerChars(name: string, text: string, start: number, length: number): boolean {
  if (name.length !== length) return false;
  for (let k = 0; k < length; k++) if (name.charCodeAt(k) !== lower(text.charCodeAt(start + k))) return false;
  return true;
}

/** A table of `size` slots (a power of two) holding entry k + 1 at its hash's slot or the next free one. */
function rehashed(hashes: { readonly ids: Int32Array; readonly length: number }, size: number): Int32Array {
  const slots = new Int32Array(size);
  const mask = size - 1;
  for (let k = 0; k < hashes.length; k++) {
    let slot = (hashes.ids[k] as number) & mask;
    while (slots[slot] !== 0) slot = (slot + 1) & mask;
    slots[slot] = k + 1;
  }
  return slots;
}

function sameChars(word: string, text: string, start: number, length: number): boolean {
  if (word.length !== length) return false;
  for (let k = 0; k < length; k++) if (word.charCodeAt(k) !== text.charCodeAt(start + k)) return false;
  return true;
}

/** One word's terms, as `terms` finds them. */
function wordTerms(word: string): string[] {
  const out: string[] = [];
  addTerm(out, word.toLowerCase());
  if (COMPOUND.test(word)) {
    const parts = word.split(COMPOUND_SPLIT);
    if (parts.length > 1) for (const part of parts) addTerm(out, part.toLowerCase());
  }
  return out;
}

/*
 * Priming. V8 compiles a function it finds hot into optimized code that covers only the paths the
 * function took so far: a path first taken afterwards (the first new non-ASCII letter, the first
 * camelCase word split after a digit, a table that fills and doubles, a text too long to read
 * whole) throws that code away, and the function, with all it inlined, is compiled again. A large
 * read (a prune's BM25 fit of the bench's 1M-token transcript) did that three to five times, on the
 * core its count worker counts on. So before a large read, every path is taken on a throwaway index.
 */

/** Text that takes every path of TermIndex's reading, in round `r` with words, terms and letters no earlier round had. */
function primerText(r: number): string {
  const tag = String.fromCharCode(97 + r);
  const words: string[] = [];
  for (let k = 0; k < 24; k++) words.push(`w${tag}${String.fromCharCode(97 + k)}x`);
  // Letters each round meets first (Greek, Cyrillic): a new letter is classified once, by a regex.
  const greek = String.fromCharCode(0x3b1 + r * 3, 0x3b2 + r * 3, 0x3b3 + r * 3);
  const cyrillic = String.fromCharCode(0x430 + r * 4, 0x431 + r * 4, 0x432 + r * 4, 0x433 + r * 4);
  return [
    // New words, then known ones, stop words, plurals (cut, and `ss` kept), short and long numbers, one-letter words.
    words.join(' '),
    `${words[0]} ${words[1]} ${words[0]} the and of files tests passes address 12 7 123 a I`,
    // Every split: lower then capital, digit then capital, capitals then a capitalized word, runs of `_`.
    `parse${tag}ConfigFile utf8${tag}Decode HTTP${tag}Server snake_${tag}_name __dunder${tag}__ SCREAMING_${tag.toUpperCase()}_CASE x9Y${tag} get${tag}HTTPResponse2Body`,
    // Non-ASCII words, a non-ASCII compound.
    `caf\u00e9${tag} na\u00efve${tag} ${greek}${tag} ${cyrillic} ${greek}Case${tag} \u00c4\u00d6\u00dc${tag}`,
    // Letters beyond the BMP (surrogate pairs), an emoji, a lone surrogate, a word too long to index.
    `\u{1D400}\u{1D401}${tag} \u{1F600} \uD800 x ${'w'.repeat(70)}`,
  ].join('\n');
}

/** Rounds of the primer: V8 records a function's type feedback only from about its ninth call on, so each path is taken in several. */
const PRIMER_ROUNDS = 4;
let primed = false;

/**
 * Takes every path of TermIndex's reading (read, readLines, a long text's head and tail, the
 * tables doubling) on a throwaway index, once per process, so that a large read that follows is
 * compiled once. About 3 ms; the index a caller reads into is untouched, and reads the same ids.
 */
export function primeTermIndex(): void {
  if (primed) return;
  primed = true;
  // Tables and lists of two slots: they double again and again as the primer's words come in.
  const index = new TermIndex(PROCESS_MULTIPLIER, 2);
  const out = new TermIds(2);
  const lineEnds = new TermIds(2);
  for (let r = 0; r < PRIMER_ROUNDS; r++) {
    const text = primerText(r);
    index.read(text, out);
    index.readLines(text, out, lineEnds);
  }
  // A text too long to be read whole (its head and tail are read): mostly spaces, read fast.
  index.read(`${primerText(PRIMER_ROUNDS)}${' '.repeat(HEAD_CHARS + TAIL_CHARS)}${primerText(PRIMER_ROUNDS + 1)}`, out);
}
