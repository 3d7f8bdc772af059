import { Buffer } from 'node:buffer';
import { BPE_MERGE_WASM } from './bpe-merge-binary.js';
import type { RankTable } from './rank-table.js';

/**
 * The part of WebAssembly's JavaScript interface used here (TypeScript declares it only with the DOM's
 * types, which this package does not load); the global is Node's own.
 */
interface WasmModule {
  readonly __brand: 'WebAssembly.Module';
}
declare const WebAssembly: {
  Module: new (bytes: Uint8Array) => WasmModule;
  Memory: new (descriptor: { initial: number }) => { readonly buffer: ArrayBuffer };
  Instance: new (module: WasmModule, imports: Record<string, Record<string, unknown>>) => { readonly exports: unknown };
};

/** The longest piece, in UTF-8 bytes, the WebAssembly merge takes (bpe-merge.wat lays its memory out for it). */
export const WASM_MERGE_MAX_BYTES = 256;
/** Where the rank table starts in the module's memory: below it, the piece and the merge's arrays (bpe-merge.wat). */
const TABLE_BASE = 16384;
const PAGE_BYTES = 65536;

/** The module, compiled once per thread; null: this Node runs no WebAssembly (`node --jitless`). */
let compiled: WasmModule | null | undefined;

function mergeModule(): WasmModule | undefined {
  if (compiled === undefined) {
    try {
      compiled = new WebAssembly.Module(Buffer.from(BPE_MERGE_WASM, 'base64'));
    } catch {
      compiled = null;
    }
  }
  return compiled ?? undefined;
}

const encoder = new TextEncoder();

/**
 * The byte-pair merge of bpe-merge.wat over one rank table: the same count as BpeCounter's
 * JavaScript merge, at its optimized speed from the first piece (see the .wat). Made once per
 * counter, when its first piece needs merging: the table is copied into the module's memory
 * (about 4 MB for o200k, a millisecond or two).
 */
export class WasmMerge {
  readonly #count: (n: number) => number;
  readonly #input: Uint8Array;

  private constructor(count: (n: number) => number, input: Uint8Array) {
    this.#count = count;
    this.#input = input;
  }

  /**
   * A merge over `table`, or undefined when this Node runs no WebAssembly or cannot give it memory: a
   * module's memory reserves gigabytes of address space on 64-bit systems, which a limit on it
   * (a `ulimit -v` under about 12 GB, as on some shared machines) refuses while Node itself runs.
   */
  static over(table: RankTable): WasmMerge | undefined {
    const module = mergeModule();
    if (module === undefined) return undefined;
    const { offsets, slots, bytes } = table.parts();
    const offsetsAt = TABLE_BASE;
    const slotsAt = offsetsAt + offsets.byteLength;
    const bytesAt = slotsAt + slots.byteLength;
    let memory: { readonly buffer: ArrayBuffer };
    try {
      memory = new WebAssembly.Memory({ initial: Math.ceil((bytesAt + bytes.byteLength) / PAGE_BYTES) });
    } catch {
      return undefined;
    }
    new Uint32Array(memory.buffer, offsetsAt, offsets.length).set(offsets);
    new Int32Array(memory.buffer, slotsAt, slots.length).set(slots);
    new Uint8Array(memory.buffer, bytesAt, bytes.length).set(bytes);
    const exports = new WebAssembly.Instance(module, { env: { memory } }).exports as {
      init(offsets: number, slots: number, mask: number, bytes: number): void;
      count(n: number): number;
    };
    exports.init(offsetsAt, slotsAt, slots.length - 1, bytesAt);
    return new WasmMerge(exports.count, new Uint8Array(memory.buffer, 0, WASM_MERGE_MAX_BYTES));
  }

  /**
   * Tokens in `piece` (its UTF-8: a lone surrogate is U+FFFD's three bytes, as in js-tiktoken), or -1
   * when that is more than WASM_MERGE_MAX_BYTES bytes.
   */
  count(piece: string): number {
    const { read, written } = encoder.encodeInto(piece, this.#input);
    return read < piece.length ? -1 : this.#count(written);
  }
}
