import { BPE_MERGE_WASM } from './bpe-merge-binary.js';
import { compileWasm, instantiateWasm, WASM_PAGE_BYTES, wasmMemory } from '../wasm.js';
import type { RankTable } from './rank-table.js';

/** The longest piece, in UTF-8 bytes, the WebAssembly merge takes (bpe-merge.wat lays its memory out for it). */
export const WASM_MERGE_MAX_BYTES = 256;
/** Where the rank table starts in the module's memory: below it, the piece and the merge's arrays (bpe-merge.wat). */
const TABLE_BASE = 16384;
/** The scan's memo table at its largest: slots of 8 bytes, at most half of them used (65,536 pieces), then emptied. */
const MEMO_SLOTS = 1 << 17;
/** The memo's pieces (each its hash, length, count and bytes: 65,536 of 20 bytes, a typical piece, fit); when full, the memo is emptied. */
const ARENA_BYTES = 2 << 20;
/** The most characters of a text scanned at once: a longer text is scanned in parts of this size. */
export const SCAN_PART_CHARS = 1 << 18;
/** Room for a part's UTF-8 (at most three bytes a UTF-16 unit) and the mark after it. */
const TEXT_BYTES = SCAN_PART_CHARS * 3 + 1;

const encoder = new TextEncoder();

/** What bpe-merge.wat exports. */
interface MergeExports {
  init(offsets: number, slots: number, mask: number, bytes: number): void;
  init_scan(memo: number, arena: number, arenaEnd: number): void;
  count(n: number): number;
  scan(at: number, end: number): number;
  stop(): number;
  merged(): number;
}

/**
 * The byte-pair merge of bpe-merge.wat over one rank table: the same count as BpeCounter's
 * JavaScript merge, at its optimized speed from the first piece (see the .wat). Made once per
 * counter, when its first piece needs merging: the table is copied into the module's memory
 * (about 4 MB for o200k, a millisecond or two).
 */
export class WasmMerge {
  readonly #input: Uint8Array;
  readonly #exports: MergeExports;
  /** Where the text to scan is put, and the room there. */
  readonly #text: Uint8Array;
  readonly #textAt: number;

  private constructor(exports: MergeExports, memory: ArrayBuffer, textAt: number) {
    this.#exports = exports;
    this.#input = new Uint8Array(memory, 0, WASM_MERGE_MAX_BYTES);
    this.#text = new Uint8Array(memory, textAt, TEXT_BYTES);
    this.#textAt = textAt;
  }

  /**
   * A merge over `table`, or undefined when this Node runs no WebAssembly or cannot give it memory
   * (see `wasmMemory`).
   */
  static over(table: RankTable): WasmMerge | undefined {
    const module = compileWasm(BPE_MERGE_WASM);
    if (module === undefined) return undefined;
    const { offsets, slots, bytes } = table.parts();
    const offsetsAt = TABLE_BASE;
    const slotsAt = offsetsAt + offsets.byteLength;
    const bytesAt = slotsAt + slots.byteLength;
    const memoAt = (bytesAt + bytes.byteLength + 15) & ~15;
    const arenaAt = memoAt + MEMO_SLOTS * 8;
    const textAt = arenaAt + ARENA_BYTES;
    const memory = wasmMemory(Math.ceil((textAt + TEXT_BYTES) / WASM_PAGE_BYTES));
    if (memory === undefined) return undefined;
    new Uint32Array(memory.buffer, offsetsAt, offsets.length).set(offsets);
    new Int32Array(memory.buffer, slotsAt, slots.length).set(slots);
    new Uint8Array(memory.buffer, bytesAt, bytes.length).set(bytes);
    const exports = instantiateWasm(module, memory) as MergeExports;
    exports.init(offsetsAt, slotsAt, slots.length - 1, bytesAt);
    exports.init_scan(memoAt, arenaAt, arenaAt + ARENA_BYTES);
    return new WasmMerge(exports, memory.buffer, textAt);
  }

  /**
   * Puts text[from, to) (at most SCAN_PART_CHARS characters) where `scan` reads it, followed by the
   * mark of a part's end (0xFF, see bpe-merge.wat) when it does not end the text; returns where
   * `scan` reads to: its length in UTF-8 bytes, and the mark.
   */
  load(text: string, from: number, to: number): number {
    const last = to === text.length;
    const bytes = encoder.encodeInto(from === 0 && last ? text : text.slice(from, to), this.#text).written;
    if (last) return bytes;
    this.#text[bytes] = 0xff;
    return bytes + 1;
  }

  /**
   * The tokens of the loaded text's ASCII pieces from its byte `at`, up to where the scan stops
   * (`stopped`): `end`, as `load` gave it, or a piece it leaves to JavaScript (see bpe-merge.wat).
   */
  scan(at: number, end: number): number {
    return this.#exports.scan(this.#textAt + at, this.#textAt + end);
  }

  /** The byte where the last scan stopped. */
  get stopped(): number {
    return this.#exports.stop() - this.#textAt;
  }

  /** Pieces the scans merged (each once: then they are in its memo). */
  get mergedInScan(): number {
    return this.#exports.merged();
  }

  /**
   * Tokens in `piece` (its UTF-8: a lone surrogate is U+FFFD's three bytes, as in js-tiktoken), or -1
   * when that is more than WASM_MERGE_MAX_BYTES bytes.
   */
  count(piece: string): number {
    const { read, written } = encoder.encodeInto(piece, this.#input);
    return read < piece.length ? -1 : this.#exports.count(written);
  }
}
