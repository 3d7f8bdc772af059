import { Buffer } from 'node:buffer';
import { stableHashOfUnits } from './term-hash.js';
import { TERMS_WASM } from './terms-binary.js';
import { compileWasm, instantiateWasm, WASM_PAGE_BYTES, type WasmMemory, wasmMemory } from './wasm.js';

/** The most UTF-16 units `load` takes (terms.wat's TEXT_UNITS). */
const WASM_TEXT_UNITS = 32_768;
/** The longest term put where `id` reads it (a longer one is put in room taken from the heap). */
const SCRATCH_UNITS = 1024;
/** Where terms.wat keeps a term from JavaScript, the ids it writes out (at most 8,192 a scan), the text it reads, its line breaks, and its heap. */
const SCRATCH_AT = 1024;
const OUT_AT = 3072;
const TEXT_AT = 35_840;
const BREAKS_AT = 101_376;
const HEAP_AT = 232_448;
/** Why `scan` stopped: the end; a unit that is not ASCII; no room to grow (1: its output was full, read on). */
export const SCAN_END = 0;
export const SCAN_NOT_ASCII = 2;
const SCAN_NO_ROOM = 3;

/** What terms.wat exports. */
interface TermsExports {
  init(multiplier: number, slots: number): number;
  space(length: number): number;
  stop(at: number, length: number): number;
  id(at: number, length: number): number;
  term(id: number): number;
  scan(at: number, end: number, lines: number): number;
}

interface Views {
  readonly int32: Int32Array;
  readonly units: Uint16Array;
  readonly bytes: Buffer;
}

/**
 * Views of all of a module's memory. At fixed places in it (terms.wat): as 32-bit integers, where
 * the last scan stopped, the ids it wrote out, the terms known and its line breaks (0 to 3), the ids
 * (from OUT_AT) and the line breaks' ends (from BREAKS_AT); as bytes, the text loaded (from TEXT_AT).
 */
function views(buffer: ArrayBuffer): Views {
  return { int32: new Int32Array(buffer), units: new Uint16Array(buffer), bytes: Buffer.from(buffer) };
}

/**
 * An address the module gave, as a byte offset: its i32 read unsigned (past 2 GB of memory, it is
 * negative in JavaScript). The memory grows to 4 GB at most.
 */
function address(i32: number): number {
  return i32 >>> 0;
}

/** The error when the module's memory cannot grow (4 GB of words and terms, or none left). */
function noRoom(): RangeError {
  return new RangeError("the word reader's WebAssembly memory is full");
}

/**
 * terms.wat for one TermIndex: its terms (the same ids) and ASCII words, and its reading of loaded
 * text. TermIndex loads a text (`load`), reads it (`scan`), takes the ids written out (`takeIds`),
 * reads each word with a unit that is not ASCII itself, asking for its terms' ids (`id`), and names
 * the terms as they come (`name`).
 */
export class WasmTerms {
  readonly #memory: WasmMemory;
  readonly #exports: TermsExports;
  /** The memory, as 32-bit integers, UTF-16 units and bytes: made again when it has grown (its old buffer is then detached). */
  #view: Views;

  private constructor(memory: WasmMemory, exports: TermsExports) {
    this.#memory = memory;
    this.#exports = exports;
    this.#view = views(memory.buffer);
  }

  /**
   * Tables hashing as a TermIndex of `multiplier` does, of `slots` slots at first (a power of two),
   * with `stopWords` (lower case) left out of the terms; undefined when this Node runs no WebAssembly
   * or gives it no memory (see `wasmMemory`).
   */
  static for(multiplier: number, slots: number, stopWords: readonly string[]): WasmTerms | undefined {
    const compiled = compileWasm(TERMS_WASM);
    if (compiled === undefined) return undefined;
    // The tables of words and terms, the terms' addresses, the stop words' table, their entries.
    const memory = wasmMemory(Math.ceil((HEAP_AT + slots * 20 + 4096 + stopWords.length * 40) / WASM_PAGE_BYTES));
    if (memory === undefined) return undefined;
    const exports = instantiateWasm(compiled, memory) as TermsExports;
    if (exports.init(multiplier, slots) === 0) return undefined;
    const terms = new WasmTerms(memory, exports);
    for (const word of stopWords) if (exports.stop(terms.#put(word), word.length) === 0) return undefined;
    return terms;
  }

  #views(): void {
    if (this.#view.int32.length === 0) this.#view = views(this.#memory.buffer);
  }

  /** Puts `term`'s units where `id` and `stop` read them; where. */
  #put(term: string): number {
    let at = SCRATCH_AT;
    if (term.length > SCRATCH_UNITS) {
      at = address(this.#exports.space(term.length));
      this.#views();
      if (at === 0) throw noRoom();
    }
    const { units } = this.#view;
    for (let k = 0, from = at >>> 1; k < term.length; k++) units[from + k] = term.charCodeAt(k);
    return at;
  }

  /**
   * Takes `units` UTF-16 units of room from the heap (the memory grown as it needs), as a term too
   * long for the scratch room takes it; where it starts (0: no room). What is kept after it lies
   * beyond it: a test puts the terms that follow above 2 GB this way.
   * @public test/terms.test.ts
   */
  reserve(units: number): number {
    const at = address(this.#exports.space(units));
    this.#views();
    return at;
  }

  /** How many terms there are (ids 0 to this, less one). */
  get terms(): number {
    return this.#view.int32[2] as number;
  }

  /** Term `id`'s characters. */
  name(id: number): string {
    const entry = address(this.#exports.term(id));
    const { bytes, int32 } = this.#view;
    return bytes.toString('utf16le', entry + 8, entry + 8 + 2 * (int32[(entry + 4) >>> 2] as number));
  }

  /** `stableHash` of term `id`'s characters, read where the module keeps them (no string made). */
  stableHash(id: number): number {
    const entry = address(this.#exports.term(id));
    const { int32, units } = this.#view;
    return stableHashOfUnits(units, (entry + 8) >>> 1, int32[(entry + 4) >>> 2] as number);
  }

  /** The id of `term` (a new one gets the next id). */
  id(term: string): number {
    const id = this.#exports.id(this.#put(term), term.length);
    this.#views();
    if (id < 0) throw noRoom();
    return id;
  }

  /** Puts text[from, to) (at most WASM_TEXT_UNITS units) where `scan` reads it: unit k of the range at k. */
  load(text: string, from: number, to: number): void {
    this.#view.bytes.write(from === 0 && to === text.length ? text : text.slice(from, to), TEXT_AT, WASM_TEXT_UNITS * 2, 'utf16le');
  }

  /**
   * Reads the loaded units [at, end): the ids of its ASCII words' terms are written out (`takeIds`),
   * up to where it stops (`stopped`); says why: SCAN_END, SCAN_NOT_ASCII (the word there, or the
   * one it ends, starts at `stopped`), or 1 (its output was full). With `lines`, it notes how many
   * ids it had written out at each line break (`takeLineEnds`).
   */
  scan(at: number, end: number, lines: boolean): number {
    const stop = this.#exports.scan(at, end, lines ? 1 : 0);
    this.#views();
    if (stop === SCAN_NO_ROOM) throw noRoom();
    return stop;
  }

  get stopped(): number {
    return this.#view.int32[0] as number;
  }

  /** Pushes onto `lineEnds` (a TermIds) where each line the last scan ended ends in the ids, its first id being `first`. */
  takeLineEnds(first: number, lineEnds: { push(end: number): void }): void {
    const { int32 } = this.#view;
    for (let k = BREAKS_AT >> 2, end = k + (int32[3] as number); k < end; k++) lineEnds.push(first + (int32[k] as number));
  }

  /** Appends the ids the last scan wrote out to `out` (a TermIds); how many. */
  takeIds(out: { ids: Int32Array; length: number }): number {
    const { int32 } = this.#view;
    const n = int32[1] as number;
    if (n === 0) return 0;
    let ids = out.ids;
    if (out.length + n > ids.length) {
      let size = ids.length * 2;
      while (out.length + n > size) size *= 2;
      const grown = new Int32Array(size);
      grown.set(ids.subarray(0, out.length));
      out.ids = ids = grown;
    }
    ids.set(int32.subarray(OUT_AT >> 2, (OUT_AT >> 2) + n), out.length);
    out.length += n;
    return n;
  }
}
