import { Buffer } from 'node:buffer';
import { asciiPieceEnd, O200K_PATTERN } from './ascii-pieces.js';
import { SCAN_PART_CHARS, WASM_MERGE_MAX_BYTES, WasmMerge } from './bpe-merge.js';
import { RankTable, type RankSource } from './rank-table.js';
import { o200kPieceEnd } from './unicode-pieces.js';
import type { PieceClasses } from './unicode-pieces.js';

/**
 * An exact byte-pair-encoding token counter, equal to js-tiktoken's
 * `new Tiktoken(ranks).encode(text, [], []).length` on every input (SPEC §5), but fast on any input.
 *
 * js-tiktoken rescans every adjacent pair after each merge, which is quadratic in the length of a
 * regex piece (a 16 KB run of one punctuation character takes tens of seconds). Here, once the
 * counter is warm (see #warmAfter), a piece of up to 256 bytes merges in WebAssembly (bpe-merge.wat,
 * a heap as mergeHeap's), fast from its first piece where JavaScript runs in V8's interpreter until
 * it is optimized; under o200k, a text's ASCII pieces are split and looked up there too
 * (#countScanned), which takes about half the time of doing it in JavaScript. Before that, without
 * WebAssembly (`node --jitless`), and beyond 256 bytes, short pieces use the same simple loop (it
 * is the fastest below about ten bytes) and long pieces a linked list of parts and a queue of pairs
 * by (rank, start), a heap or buckets per rank, with lazy invalidation (see mergeLong): the same
 * merge order (lowest rank first, leftmost on ties), therefore the same parts, in O(n log n).
 *
 * Byte strings are latin1 JS strings (one char per byte), so a span's bytes are `s.slice(a, b)`.
 */

export type { RankSource } from './rank-table.js';

/**
 * The version of what this counter counts: one more whenever the count of any text may change (a
 * fix of the merge, of the long-piece parts, of a table). Cached counts are kept with it
 * (src/io/count-cache.ts), so a cache an earlier counter filled is not read: version 2 is the
 * long-piece parts' fix (a piece over 64 KiB cut between characters, not bytes).
 */
export const COUNTER_VERSION = 2;

/** Pieces at most this many bytes use the simple loop; longer ones a queue (measured: as fast from
 * about 10 bytes, with its pair cache, and far faster beyond). */
const SHORT_PIECE_BYTES = 10;
/**
 * A piece longer than this many bytes (a run of letters, symbols or spaces with no break: a minified
 * file, a blob pasted as text) is counted in parts of this size, cut between characters, and the
 * counts added: the merge's working memory is about 70 bytes per byte of the piece, and a 50 MB piece
 * took 3.8 GB. Each cut can change the tokens on either side of it: at most 6 tokens a cut of the
 * exact count where measured (0.48 % of a piece at most, over some 8,300 long runs of a review and
 * the runs test/tokens.test.ts holds to it; SPEC §5 allows 1 % there), none on most real text.
 */
export const LONG_PIECE_CHUNK_BYTES = 64 * 1024;
/** Only pieces up to this many UTF-16 units are memoized, so the memo cannot hold megabytes. */
const MEMO_MAX_PIECE = 256;
/** See BpeCounter.#warmAfter (measured: 20 turns of 4 KB cost 6 ms of CPU cold on the plain path, 11–20 ms on the fast one). */
const WARM_AFTER_CHARS = 256 * 1024;
/**
 * A counter with a class table splits by hand the texts of its first this many characters (each
 * text whole, while it fits; `expect` says when more are coming at once): past that, the regex,
 * compiled once, splits faster than the hand split runs before the JIT has compiled it (measured:
 * the 20 turns appended to the bench's 1M-token transcript, 70K characters, split by hand cost about
 * 25 ms more than the regex's compiles).
 */
const HAND_SPLIT_CHARS = 16 * 1024;
/** The memo is emptied when it holds this many pieces. */
const MEMO_MAX_ENTRIES = 1 << 16;

export class BpeCounter {
  readonly #ranks: RankTable;
  /** The split pattern, global: made on first use (rarely needed; compiling a pattern costs ms). */
  #global: RegExp | undefined;
  /** The split pattern, sticky: made on first use (never, by a counter whose texts were all split by hand). */
  #sticky: RegExp | undefined;
  /**
   * Under o200k, the class table the split of the first texts is decided by hand with
   * (unicode-pieces.ts), or where to get it when a first text is to be split by hand; else
   * undefined: the regex splits.
   */
  #classes: PieceClasses | (() => PieceClasses | undefined) | undefined;
  /** How many more characters may be split by hand (see HAND_SPLIT_CHARS); 0 once the regex is needed. */
  #handLeft: number;
  /** The text being counted is split by hand. */
  #byHand = false;
  readonly #plainMemo = new Map<string, number>();
  readonly #memo = new PieceMemo();
  /** The split pattern is o200k's: ASCII text is split by hand (once warm). */
  readonly #asciiFast: boolean;
  /**
   * Characters counted before the fast path takes over. Its code is faster once the JIT has compiled
   * it, and slower until then: a count of a few new turns (a hook, a re-run) stays on the plain path.
   * So does the WebAssembly merge: making it (the module compiled, the table copied into its memory)
   * costs 2 to 3 ms, more than a few hundred pieces merged in JavaScript.
   */
  readonly #warmAfter: number;
  #counted = 0;
  #warm = false;
  /** Where the piece #nextPiece last found starts. */
  #pieceStart = 0;
  // Scratch buffers of the short-piece loop, reused between pieces.
  readonly #starts = new Int32Array(SHORT_PIECE_BYTES + 2);
  readonly #pairRanks = new Float64Array(SHORT_PIECE_BYTES + 2);
  // State of the long-piece merge, kept between pieces.
  readonly #long: LongMergeState;
  readonly #chunkBytes: number;
  /** The WebAssembly merge, made when a first piece needs one once warm; null: none (not wanted, or no WebAssembly here). */
  #merge: WasmMerge | null | undefined;
  #mergedInWasm = 0;
  /** The most characters the WebAssembly scan takes at once (SCAN_PART_CHARS; a test gives a few). */
  readonly #scanPart: number;
  #scanned = 0;

  /**
   * From js-tiktoken's rank source (parsed here), or a prebuilt binary table (nothing to parse).
   * `longPieceChunkBytes`: the size of the parts a longer piece is counted in (LONG_PIECE_CHUNK_BYTES;
   * a test gives Infinity to count one whole, exactly, as the reference). `wasmMerge: false`: merge
   * and split in JavaScript only (tests of that path, which is what runs without WebAssembly).
   * `scanPartChars`: the parts a text is scanned in, in WebAssembly (at most SCAN_PART_CHARS; a test
   * gives a few characters, so that parts end inside every kind of piece). `pieceClasses`: under
   * o200k, the class table (unicode-pieces.ts) that splits the first texts by hand, up to
   * `handSplitChars` of them (HAND_SPLIT_CHARS; tests give more), or where to get it when a first
   * text is (a counter that never splits by hand never reads it).
   */
  constructor(
    source: RankSource | RankTable,
    options: {
      readonly warmAfterChars?: number;
      readonly longPieceChunkBytes?: number;
      readonly wasmMerge?: boolean;
      readonly scanPartChars?: number;
      readonly pieceClasses?: PieceClasses | (() => PieceClasses | undefined) | undefined;
      readonly handSplitChars?: number;
    } = {},
  ) {
    this.#warmAfter = options.warmAfterChars ?? WARM_AFTER_CHARS;
    this.#scanPart = Math.max(1, Math.min(options.scanPartChars ?? SCAN_PART_CHARS, SCAN_PART_CHARS));
    if (options.wasmMerge === false) this.#merge = null;
    this.#chunkBytes = options.longPieceChunkBytes ?? LONG_PIECE_CHUNK_BYTES;
    this.#ranks = source instanceof RankTable ? source : RankTable.fromSource(source);
    this.#long = new LongMergeState(this.#ranks);
    this.#asciiFast = this.#ranks.pattern === O200K_PATTERN;
    this.#classes = this.#asciiFast ? options.pieceClasses : undefined;
    this.#handLeft = this.#classes === undefined ? 0 : (options.handSplitChars ?? HAND_SPLIT_CHARS);
  }

  /**
   * About `chars` characters are to be counted next: more than the hand split has left (see
   * HAND_SPLIT_CHARS), and the regex splits them all from the first, rather than after the hand split
   * of a few (which would only add to its compiles).
   */
  expect(chars: number): void {
    if (chars > this.#handLeft) this.#handLeft = 0;
  }

  /** Number of tokens in `text`, with special-token text counted as ordinary text. */
  count(text: string): number {
    if (!this.#warm) {
      this.#counted += text.length;
      if (this.#counted <= this.#warmAfter) {
        // By hand while the texts fit in what is left for it; from the first that does not, the regex.
        this.#byHand = text.length <= this.#handLeft && this.#table() !== undefined;
        this.#handLeft = this.#byHand ? this.#handLeft - text.length : 0;
        return this.#countPlain(text);
      }
      this.#warmUp();
    }
    this.#byHand = false;
    return this.#countFast(text);
  }

  /** The regex, and a memo of pieces cut out of the text: the least code to run before the JIT has compiled it. */
  #countPlain(text: string): number {
    const memo = this.#plainMemo;
    let total = 0;
    for (let at = this.#nextPiece(text, 0); at >= 0; at = this.#nextPiece(text, at)) {
      const start = this.#pieceStart;
      // One ASCII character is one byte, and every byte is a token.
      if (at - start === 1 && text.charCodeAt(start) < 0x80) {
        total++;
        continue;
      }
      const piece = text.slice(start, at);
      const cached = memo.get(piece);
      if (cached !== undefined) {
        total += cached;
        continue;
      }
      const n = this.countPiece(piece);
      if (piece.length <= MEMO_MAX_PIECE) {
        if (memo.size >= MEMO_MAX_ENTRIES) memo.clear();
        memo.set(piece, n);
      }
      total += n;
    }
    return total;
  }

  /**
   * Once warm: under o200k, the scan in WebAssembly with JavaScript for the pieces it leaves; else
   * (or without WebAssembly) the hand split of ASCII text and the in-place memo.
   */
  #countFast(text: string): number {
    const scanner = this.#asciiFast ? this.#wasmMerge() : undefined;
    if (scanner !== undefined) return this.#countScanned(text, scanner);
    let total = 0;
    for (let at = this.#nextPiece(text, 0); at >= 0; at = this.#nextPiece(text, at)) total += this.#countMemo(text, this.#pieceStart, at);
    return total;
  }

  /** The piece text[start, at): one ASCII character, or from the in-place memo, or counted and kept there. */
  #countMemo(text: string, start: number, at: number): number {
    if (at - start === 1 && text.charCodeAt(start) < 0x80) return 1;
    if (at - start > MEMO_MAX_PIECE) return this.countPiece(text.slice(start, at));
    const cached = this.#memo.get(text, start, at);
    if (cached >= 0) return cached;
    const piece = text.slice(start, at);
    const n = this.countPiece(piece);
    this.#memo.setMissed(piece, n);
    return n;
  }

  /**
   * The text's UTF-8 scanned in WebAssembly (bpe-merge.wat), in parts of at most SCAN_PART_CHARS
   * characters: its ASCII pieces are split, looked up and merged there, and where it stops (a piece
   * with a character that is not ASCII, a long one, one a part's end may cut), JavaScript counts that
   * piece as #countMemo does, and the ones after it while the scan would stop at them too, and the
   * scan goes on after them. What the scan went over is ASCII, one byte a character, so a byte offset
   * and a character index move together there; what JavaScript counted is measured in UTF-8 bytes.
   */
  #countScanned(text: string, scanner: WasmMerge): number {
    const length = text.length;
    let total = 0;
    let char = 0;
    while (char < length) {
      // A part that ends between a surrogate pair's halves ends in U+FFFD's bytes, which are not ASCII:
      // the scan stops before them, and JavaScript counts that piece from the text itself.
      const partEnd = Math.min(length, char + this.#scanPart);
      const end = scanner.load(text, char, partEnd);
      let byte = 0;
      for (;;) {
        total += scanner.scan(byte, end);
        const stopped = scanner.stopped;
        this.#scanned += stopped - byte;
        char += stopped - byte;
        byte = stopped;
        // The part done: the text, when it is the last one; else the next part from here.
        if (char >= partEnd) break;
        // JavaScript counts pieces from here while the next one starts with a character that is not
        // ASCII, or one after its first (where the scan would stop again at once).
        const from = char;
        do {
          const at = this.#nextPiece(text, char);
          if (at < 0) return total;
          total += this.#countMemo(text, this.#pieceStart, at);
          char = at;
        } while (char < partEnd && (text.charCodeAt(char) >= 0x80 || (char + 1 < length && text.charCodeAt(char + 1) >= 0x80)));
        if (char >= partEnd) break;
        byte += utf8Length(text, from, char);
      }
    }
    return total;
  }

  /** From now on, the fast path; what the plain memo knows moves over. */
  #warmUp(): void {
    this.#warm = true;
    for (const [piece, n] of this.#plainMemo) if (this.#memo.get(piece, 0, piece.length) < 0) this.#memo.setMissed(piece, n);
    this.#plainMemo.clear();
  }

  /** The regex pieces of `text`, as `count` splits it (exposed for tests). */
  pieces(text: string): string[] {
    // Split as count() would split it next (nothing is used up).
    this.#byHand = !this.#warm && text.length <= this.#handLeft && this.#table() !== undefined;
    const out: string[] = [];
    for (let at = this.#nextPiece(text, 0); at >= 0; at = this.#nextPiece(text, at)) out.push(text.slice(this.#pieceStart, at));
    return out;
  }

  /**
   * The end of the next piece at or after `at` (its start in #pieceStart), or -1 when there is none.
   * Under o200k with a class table, the counter's first texts (HAND_SPLIT_CHARS) are split by hand
   * (unicode-pieces.ts): a count of a few turns never compiles the regex (about 20 ms). After them,
   * ASCII text is split by hand once warm (ascii-pieces.ts, and the WebAssembly scan) and the rest by
   * the regex, whose compiled code splits more text faster than the hand split does (see
   * HAND_SPLIT_CHARS). Either way exactly as the regex splits. count() is synchronous and never
   * re-entered, so the compiled patterns are reused: the sticky copy matches at the current
   * position only, and test() builds no match array (a piece is the span it advanced over). Where no
   * piece starts at the position, the global pattern finds the next one, skipping the characters
   * between, exactly as js-tiktoken's matchAll does.
   */
  #nextPiece(text: string, at: number): number {
    if (at >= text.length) return -1;
    this.#pieceStart = at;
    if (this.#byHand) return o200kPieceEnd(text, at, this.#classes as PieceClasses);
    if (this.#warm && this.#asciiFast) {
      const end = asciiPieceEnd(text, at);
      if (end > at) return end;
    }
    // Same flags as js-tiktoken's encode() ('ug'), so pieces (and lone surrogates) split identically.
    this.#sticky ??= new RegExp(this.#ranks.pattern, 'uy');
    const sticky = this.#sticky;
    sticky.lastIndex = at;
    if (sticky.test(text)) {
      // A zero-length match (no pattern of ours has one) would not advance: step over a character.
      return sticky.lastIndex > at ? sticky.lastIndex : this.#nextPiece(text, at + 1);
    }
    this.#global ??= new RegExp(this.#ranks.pattern, 'ug');
    const pattern = this.#global;
    pattern.lastIndex = at;
    const m = pattern.exec(text);
    if (m === null) return -1;
    if (pattern.lastIndex === m.index) return this.#nextPiece(text, m.index + 1);
    this.#pieceStart = m.index;
    return pattern.lastIndex;
  }

  /** The class table, got now if it was given as where to get it (none: the regex splits from now on). */
  #table(): PieceClasses | undefined {
    if (typeof this.#classes === 'function') this.#classes = this.#classes();
    if (this.#classes === undefined) this.#handLeft = 0;
    return this.#classes;
  }

  /** Whether the split regex has been compiled (tests: a counter with a class table does not, while it splits by hand). */
  get compiledPattern(): boolean {
    return this.#sticky !== undefined || this.#global !== undefined;
  }

  /** Pieces counted by the WebAssembly merge so far (tests: that it is the one that runs). */
  get mergedInWebAssembly(): number {
    return this.#mergedInWasm + (this.#merge ? this.#merge.mergedInScan : 0);
  }

  /** Characters the WebAssembly scan went over so far (tests: that it is the one that runs). */
  get scannedInWebAssembly(): number {
    return this.#scanned;
  }

  #wasmMerge(): WasmMerge | undefined {
    if (this.#merge === undefined) this.#merge = WasmMerge.over(this.#ranks) ?? null;
    return this.#merge ?? undefined;
  }

  /** Tokens in one regex piece (exposed for tests and benchmarks). */
  countPiece(piece: string): number {
    if (this.#warm && piece.length <= WASM_MERGE_MAX_BYTES) {
      const n = this.#wasmMerge()?.count(piece) ?? -1;
      if (n >= 0) {
        this.#mergedInWasm++;
        return n;
      }
    }
    const bytes = toByteString(piece);
    if (this.#ranks.rank(bytes, 0, bytes.length) >= 0) return 1;
    if (bytes.length <= SHORT_PIECE_BYTES) return this.#mergeShort(bytes);
    if (bytes.length <= this.#chunkBytes) return mergeLong(bytes, this.#long);
    let total = 0;
    // A huge piece is often one thing repeated: the parts' counts are remembered for this piece.
    const seen = new Map<string, number>();
    for (let at = 0; at < bytes.length; ) {
      // Parts end between characters, never inside one's UTF-8 bytes (a byte 10xxxxxx goes on one).
      let end = Math.min(bytes.length, at + this.#chunkBytes);
      while (end < bytes.length && end > at + 1 && (bytes.charCodeAt(end) & 0xc0) === 0x80) end--;
      const part = bytes.slice(at, end);
      at = end;
      let n = seen.get(part);
      if (n === undefined) {
        n = this.#ranks.rank(part, 0, part.length) >= 0 ? 1 : part.length <= SHORT_PIECE_BYTES ? this.#mergeShort(part) : mergeLong(part, this.#long);
        if (seen.size < 64) seen.set(part, n);
      }
      total += n;
    }
    return total;
  }

  /** The same loop as tiktoken's: rescan pair ranks for the minimum, merge, update the two neighbours. */
  #mergeShort(s: string): number {
    const ranks = this.#ranks;
    const starts = this.#starts;
    const pr = this.#pairRanks;
    const n = s.length;
    // starts[0..parts] are part boundaries; pr[i] is the rank of parts i and i+1 joined.
    for (let i = 0; i <= n; i++) starts[i] = i;
    for (let i = 0; i < n - 1; i++) pr[i] = orInfinity(ranks.rank(s, i, i + 2));
    let parts = n;
    while (parts > 1) {
      let min = Infinity;
      let at = -1;
      for (let i = 0; i < parts - 1; i++) {
        const r = pr[i] as number;
        if (r < min) {
          min = r;
          at = i;
        }
      }
      if (at < 0) break;
      // Remove boundary at+1 and pair rank at+1.
      starts.copyWithin(at + 1, at + 2, parts + 1);
      pr.copyWithin(at + 1, at + 2, parts - 1);
      parts--;
      const a = starts[at] as number;
      pr[at] = at < parts - 1 ? orInfinity(ranks.rank(s, a, starts[at + 2] as number)) : Infinity;
      if (at > 0) pr[at - 1] = orInfinity(ranks.rank(s, starts[at - 1] as number, starts[at + 1] as number));
    }
    return parts;
  }
}

/**
 * Piece counts by the piece's characters, looked up where the piece lies in the text: no string is
 * cut out of it and hashed for a hit (that was about a third of counting typical text). FNV-1a over
 * the UTF-16 units, linear probing, a hit confirmed with startsWith. The table starts small and
 * doubles at half full (a short count must not pay for, nor the garbage collector scan, a large
 * table), and is emptied past MEMO_MAX_ENTRIES pieces.
 */
class PieceMemo {
  #pieces: (string | undefined)[] = [];
  #counts = new Int32Array(0);
  #hashes = new Int32Array(0);
  #mask = 0;
  #size = 0;
  /** The hash and the empty slot of the last miss, for setMissed. */
  #hash = 0;
  #slot = 0;

  constructor() {
    this.#reset(1 << 10);
  }

  /** The count of text[from, to), or -1 when it is not known. */
  get(text: string, from: number, to: number): number {
    let h = 0x811c9dc5;
    for (let i = from; i < to; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
    const length = to - from;
    const pieces = this.#pieces;
    for (let slot = h & this.#mask; ; slot = (slot + 1) & this.#mask) {
      const piece = pieces[slot];
      if (piece === undefined) {
        this.#hash = h;
        this.#slot = slot;
        return -1;
      }
      if (piece.length === length && text.startsWith(piece, from)) return this.#counts[slot] as number;
    }
  }

  /** Remembers the count of the piece the last get() missed (nothing may be looked up in between). */
  setMissed(piece: string, count: number): void {
    if ((this.#size + 1) * 2 > this.#pieces.length) {
      if (this.#size >= MEMO_MAX_ENTRIES) this.#reset(this.#pieces.length);
      else this.#grow();
      this.#slot = this.#emptySlot(this.#hash);
    }
    this.#pieces[this.#slot] = piece;
    this.#counts[this.#slot] = count;
    this.#hashes[this.#slot] = this.#hash;
    this.#size++;
  }

  #emptySlot(hash: number): number {
    let slot = hash & this.#mask;
    while (this.#pieces[slot] !== undefined) slot = (slot + 1) & this.#mask;
    return slot;
  }

  #reset(capacity: number): void {
    this.#pieces = new Array<string | undefined>(capacity).fill(undefined);
    this.#counts = new Int32Array(capacity);
    this.#hashes = new Int32Array(capacity);
    this.#mask = capacity - 1;
    this.#size = 0;
  }

  #grow(): void {
    const [pieces, counts, hashes] = [this.#pieces, this.#counts, this.#hashes];
    this.#reset(pieces.length * 2);
    for (let i = 0; i < pieces.length; i++) {
      const piece = pieces[i];
      if (piece === undefined) continue;
      const slot = this.#emptySlot(hashes[i] as number);
      this.#pieces[slot] = piece;
      this.#counts[slot] = counts[i] as number;
      this.#hashes[slot] = hashes[i] as number;
      this.#size++;
    }
  }
}

/** The UTF-8 length of text[from, to) as TextEncoder writes it (a lone surrogate: U+FFFD, three bytes). */
function utf8Length(text: string, from: number, to: number): number {
  let bytes = 0;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if ((c & 0xfc00) === 0xd800 && i + 1 < to && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}

function orInfinity(rank: number): number {
  return rank < 0 ? Infinity : rank;
}

/**
 * Merge a piece in rank order: the heap up to HEAP_MAX_BYTES, the buckets beyond. Both make the
 * quadratic loop's merges in its order. Measured on unseen runs of CJK letters: up to 256 bytes the
 * heap takes 70 to 90 % of the buckets' time (it allocates nothing per piece); from about 300 bytes
 * the buckets take less (a sweep of a bucket merges many pairs for one heap operation).
 */
function mergeLong(s: string, state: LongMergeState): number {
  return s.length <= HEAP_MAX_BYTES ? mergeHeap(s, state) : mergeBuckets(s, state);
}

/** Pieces up to this many bytes merge through the heap (mergeLong). */
const HEAP_MAX_BYTES = 256;

/**
 * Merge a piece of at most HEAP_MAX_BYTES in rank order. The quadratic loop picks, at every step, the
 * adjacent pair with the lowest rank, leftmost on ties. Here every pair waits in a binary min-heap keyed
 * by (rank, start), so the heap's least key is that pair, and parts are a linked list. A merge changes
 * the pairs on its two sides: their new keys are pushed, and the old ones stay in the heap (lazy
 * invalidation) and are skipped when popped, because the pair that starts there no longer has that rank
 * (or the part was absorbed). The same merges in the same order, in O(n log n), in arrays made once.
 */
function mergeHeap(s: string, state: LongMergeState): number {
  const parts = state.scratch;
  const { heap, pairRank } = parts;
  heap.clear();
  startParts(s, parts, state);
  for (let i = 0; i + 1 < s.length; i++) if ((pairRank[i] as number) >= 0) heap.add(pairRank[i] as number, i);
  let count = s.length;
  while (heap.size > 0) {
    const rank = heap.popRank();
    const i = heap.poppedStart;
    if (pairRank[i] !== rank) continue; // stale: absorbed, or the pair there changed
    const right = absorbNext(i, rank, s, parts, state);
    if (right >= 0) heap.add(right, i);
    if (state.leftRank >= 0) heap.add(state.leftRank, state.leftStart);
    count--;
  }
  return count;
}

/**
 * Merge a piece longer than HEAP_MAX_BYTES in rank order. The quadratic loop picks, at every step,
 * the adjacent pair with the lowest rank, leftmost on ties. Here the pairs wait in one bucket per
 * rank, and a small heap of ranks yields the lowest rank r; its bucket, sorted by position, is swept
 * left to right, merging each pair that is still current (lazy invalidation: a part absorbed, or a
 * side grown since, is skipped).
 * That is the same order as the loop, because a merge only creates pairs longer than the token of rank
 * r, so never another pair of rank r; should a created pair rank lower than r (BPE tables normally
 * rule it out), the sweep stops there and the rest of the bucket goes back, so the lower rank is
 * merged first, as the loop would. Each merge is O(1) plus a bucket append: O(n log n) at worst
 * (the sorts), near linear in practice.
 */
function mergeBuckets(s: string, state: LongMergeState): number {
  const n = s.length;
  const { queue } = state;
  const parts: PartArrays = { next: new Int32Array(n), prev: new Int32Array(n), partRank: new Int32Array(n), pairRank: new Int32Array(n) };
  const { pairRank } = parts;
  startParts(s, parts, state);
  for (let i = 0; i + 1 < n; i++) if ((pairRank[i] as number) >= 0) queue.add(pairRank[i] as number, i);
  let count = n;
  for (;;) {
    const rank = queue.popRank();
    if (rank < 0) break;
    const starts = queue.takeSorted(rank);
    for (let k = 0; k < starts.length; k++) {
      const i = starts[k] as number;
      if (pairRank[i] !== rank) continue; // stale
      const right = absorbNext(i, rank, s, parts, state);
      const left = state.leftRank;
      if (right >= 0) queue.add(right, i);
      if (left >= 0) queue.add(left, state.leftStart);
      count--;
      if ((right >= 0 && right < rank) || (left >= 0 && left < rank)) {
        for (let rest = k + 1; rest < starts.length; rest++) queue.add(rank, starts[rest] as number);
        break;
      }
    }
  }
  return count;
}

/** The parts of a piece being merged, as a linked list over the piece's first `n` slots. */
interface PartArrays {
  /** next[i]: start of the part after the part starting at i (n for the last part); prev likewise. */
  readonly next: Int32Array;
  readonly prev: Int32Array;
  /** partRank[i]: the token of the part starting at i. */
  readonly partRank: Int32Array;
  /** pairRank[i]: rank of that part joined with its successor, -1 if that is no token or the part was absorbed. */
  readonly pairRank: Int32Array;
}

/** Every byte of `s` a part, and the rank of every adjacent pair (-1: no token). */
function startParts(s: string, parts: PartArrays, state: LongMergeState): void {
  const n = s.length;
  const { next, prev, partRank, pairRank } = parts;
  const byteRanks = state.byteRanks;
  for (let i = 0; i < n; i++) {
    next[i] = i + 1;
    prev[i] = i - 1;
    partRank[i] = byteRanks[s.charCodeAt(i)] as number;
  }
  pairRank[n - 1] = -1;
  for (let i = 0; i + 1 < n; i++) {
    const r = state.pairRank(partRank[i] as number, partRank[i + 1] as number, s, i, i + 2);
    pairRank[i] = r;
  }
}

/**
 * Absorbs the part after part `i` into it (their pair is token `rank`) and ranks the pairs this
 * makes with the parts on either side: returns the right one's rank (-1: no token; it starts at i),
 * and leaves the left one's in state.leftRank and state.leftStart.
 */
function absorbNext(i: number, rank: number, s: string, parts: PartArrays, state: LongMergeState): number {
  const { next, prev, partRank, pairRank } = parts;
  const j = next[i] as number;
  const end = next[j] as number;
  pairRank[j] = -1;
  partRank[i] = rank;
  next[i] = end;
  let right = -1;
  if (end < s.length) {
    prev[end] = i;
    right = state.pairRank(rank, partRank[end] as number, s, i, next[end] as number);
  }
  pairRank[i] = right;
  state.leftRank = -1;
  if (i > 0) {
    const p = prev[i] as number;
    const left = state.pairRank(partRank[p] as number, rank, s, p, end);
    pairRank[p] = left;
    state.leftRank = left;
    state.leftStart = p;
  }
  return right;
}

/** The heap merge's arrays, made once. */
interface MergeScratch extends PartArrays {
  readonly heap: PairHeap;
}

/**
 * What the long-piece merge keeps between pieces: the rank of each single byte, a cache of
 * "token a followed by token b makes token r" (so a repetitive piece does not slice and hash the same
 * byte strings a million times), and the working arrays of the two merges.
 */
class LongMergeState {
  readonly byteRanks = new Int32Array(256);
  readonly #ranks: RankTable;
  #left = new Int32Array(0);
  #right = new Int32Array(0);
  #joined = new Int32Array(0);
  #size = 0;
  #scratch: MergeScratch | undefined;
  #queue: RankQueue | undefined;
  /** The pair left of the last absorbNext's merge: its rank (-1: no token) and where it starts. */
  leftRank = -1;
  leftStart = 0;

  constructor(ranks: RankTable) {
    this.#ranks = ranks;
    for (let b = 0; b < 256; b++) {
      const r = ranks.rank(String.fromCharCode(b), 0, 1);
      // Byte-level BPE tables (all of tiktoken's) rank every single byte.
      if (r < 0) throw new Error(`rank table has no token for byte ${b}`);
      this.byteRanks[b] = r;
    }
    this.#reset(1 << 14);
  }

  /** The heap merge's arrays, for pieces up to HEAP_MAX_BYTES (made for the first). */
  get scratch(): MergeScratch {
    this.#scratch ??= {
      next: new Int32Array(HEAP_MAX_BYTES + 1),
      prev: new Int32Array(HEAP_MAX_BYTES + 1),
      partRank: new Int32Array(HEAP_MAX_BYTES + 1),
      pairRank: new Int32Array(HEAP_MAX_BYTES + 1),
      heap: new PairHeap(3 * HEAP_MAX_BYTES),
    };
    return this.#scratch;
  }

  /** The bucket merge's queue, made for the first piece past HEAP_MAX_BYTES (a bucket slot per rank: 200,000 for o200k). */
  get queue(): RankQueue {
    this.#queue ??= new RankQueue(this.#ranks.maxRank);
    return this.#queue;
  }

  /** Rank of token a followed by token b, whose bytes are s[from, to); -1 when that is no token. */
  pairRank(a: number, b: number, s: string, from: number, to: number): number {
    let h = Math.imul(a ^ Math.imul(b, 0x85ebca6b), 0x9e3779b1);
    h ^= h >>> 15;
    const mask = this.#left.length - 1;
    for (let slot = h & mask; ; slot = (slot + 1) & mask) {
      const l = this.#left[slot] as number;
      if (l === a && this.#right[slot] === b) return this.#joined[slot] as number;
      if (l === -1) {
        const r = this.#ranks.rank(s, from, to);
        this.#left[slot] = a;
        this.#right[slot] = b;
        this.#joined[slot] = r;
        if (++this.#size * 2 > this.#left.length) this.#reset(this.#size > 1 << 20 ? 1 << 14 : this.#left.length * 2);
        return r;
      }
    }
  }

  /** Start an empty cache of `capacity` slots (simpler than rehashing; entries are cheap to redo). */
  #reset(capacity: number): void {
    this.#left = new Int32Array(capacity).fill(-1);
    this.#right = new Int32Array(capacity);
    this.#joined = new Int32Array(capacity);
    this.#size = 0;
  }
}

/** A pair's key: rank * START_SPAN + start, exact in a double (ranks below 2^32, starts below HEAP_MAX_BYTES). */
const START_SPAN = 1024;

/**
 * A binary min-heap of pairs by (rank, start), packed in one number each. The heap merge's holds at
 * most the n - 1 first pairs and two per merge: under 3n.
 */
class PairHeap {
  readonly #keys: Float64Array;
  size = 0;
  /** The start of the pair the last popRank() took. */
  poppedStart = 0;

  constructor(capacity: number) {
    this.#keys = new Float64Array(capacity);
  }

  clear(): void {
    this.size = 0;
  }

  add(rank: number, start: number): void {
    const keys = this.#keys;
    const key = rank * START_SPAN + start;
    let i = this.size++;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const above = keys[parent] as number;
      if (above <= key) break;
      keys[i] = above;
      i = parent;
    }
    keys[i] = key;
  }

  /** Removes the least pair: returns its rank, its start in poppedStart. The heap must not be empty. */
  popRank(): number {
    const keys = this.#keys;
    const top = keys[0] as number;
    const size = --this.size;
    if (size > 0) {
      const last = keys[size] as number;
      let i = 0;
      for (;;) {
        let child = 2 * i + 1;
        if (child >= size) break;
        if (child + 1 < size && (keys[child + 1] as number) < (keys[child] as number)) child++;
        const below = keys[child] as number;
        if (below >= last) break;
        keys[i] = below;
        i = child;
      }
      keys[i] = last;
    }
    const rank = Math.floor(top / START_SPAN);
    this.poppedStart = top - rank * START_SPAN;
    return rank;
  }
}

/** Pending pair starts, one bucket per rank, and a min-heap of the ranks with a bucket (each once: a PairHeap of (rank, 0)). */
class RankQueue {
  readonly #buckets: (number[] | undefined)[];
  readonly #heap: PairHeap;

  constructor(maxRank: number) {
    this.#buckets = new Array<number[] | undefined>(maxRank + 1).fill(undefined);
    this.#heap = new PairHeap(maxRank + 1);
  }

  add(rank: number, start: number): void {
    const bucket = this.#buckets[rank];
    if (bucket !== undefined) {
      bucket.push(start);
      return;
    }
    this.#buckets[rank] = [start];
    this.#heap.add(rank, 0);
  }

  /** The lowest rank with a bucket, or -1 when none is left. */
  popRank(): number {
    return this.#heap.size === 0 ? -1 : this.#heap.popRank();
  }

  /** Remove the bucket of `rank` and return its starts in ascending order. */
  takeSorted(rank: number): ArrayLike<number> {
    const bucket = this.#buckets[rank] ?? [];
    this.#buckets[rank] = undefined;
    for (let k = 1; k < bucket.length; k++) {
      // Appends arrive in ascending runs, one per sweep; sort only when there are several.
      if ((bucket[k] as number) < (bucket[k - 1] as number)) return Int32Array.from(bucket).sort();
    }
    return bucket;
  }
}

/** UTF-8 bytes of `piece` as a latin1 string (lone surrogates become U+FFFD, as TextEncoder does). */
function toByteString(piece: string): string {
  for (let i = 0; i < piece.length; i++) {
    if (piece.charCodeAt(i) > 0x7f) return Buffer.from(piece, 'utf8').toString('latin1');
  }
  return piece;
}
