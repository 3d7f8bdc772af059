import { compileWasm, instantiateWasm, WASM_PAGE_BYTES, wasmMemory } from '../core/wasm.js';
import { LOCAL_SCORES_WASM } from './local-scores-binary.js';

/** What local-scores.wat exports. */
interface ScoresExports {
  score(
    n: number,
    tf: number,
    offsets: number,
    idf: number,
    hashes: number,
    goal: number,
    vector: number,
    touched: number,
    out: number,
    goalNorm: number,
    average: number,
    k1p1: number,
    k1: number,
    b: number,
    oneMinusB: number,
  ): void;
}

/** What the texts are scored with: the goal's vector, and BM25's weights as LocalEmbedder has them. */
export interface ScoreTables {
  /** The goal's vector (its buckets) and its squared norm. */
  readonly goal: Float32Array;
  readonly goalNorm: number;
  /** Each term id's IDF, and its hash (its bucket and sign). */
  readonly idf: Float64Array;
  readonly hashes: Uint32Array;
  readonly averageLength: number;
  readonly k1: number;
  readonly b: number;
}

/** The buckets of a vector local-scores.wat scores (its bucket mask and its 128 words of bits). */
const BUCKETS = 4096;

/** Whether this Node runs local-scores.wat (not under `--jitless` or `--no-expose-wasm`). */
export function scoresInWebAssembly(): boolean {
  return compileWasm(LOCAL_SCORES_WASM) !== undefined;
}

/**
 * Scores texts by their term counts (each an Int32Array of `[term id, count, …]`, as LocalEmbedder
 * keeps them) in local-scores.wat, `slice` texts at a time: a function giving the scores of one
 * slice, texts [from, from + slice) (fewer at the end), each what LocalEmbedder's `similarities`
 * gives, bit for bit. Undefined when this Node runs no WebAssembly or gives it no memory (see
 * `wasmMemory`), or for vectors of other than 4,096 buckets: the caller scores in JavaScript. The
 * memory holds the tables and the largest slice's counts, copied in for each call.
 */
export function wasmScorer(tables: ScoreTables, tfs: readonly Int32Array[], slice: number): ((from: number) => number[]) | undefined {
  const compiled = compileWasm(LOCAL_SCORES_WASM);
  if (compiled === undefined || tables.goal.length !== BUCKETS) return undefined;
  const terms = tables.idf.length;
  let largest = 0;
  for (let from = 0; from < tfs.length; from += slice) {
    let pairs = 0;
    for (let t = from; t < Math.min(from + slice, tfs.length); t++) pairs += (tfs[t] as Int32Array).length;
    largest = Math.max(largest, pairs);
  }
  // [goal][vector][touched][idf][hashes], then a slice's [out][offsets][tf]: each aligned to its element.
  const vectorAt = BUCKETS * 4;
  const touchedAt = vectorAt + BUCKETS * 4;
  const idfAt = align(touchedAt + BUCKETS / 8, 8);
  const hashesAt = idfAt + terms * 8;
  const outAt = align(hashesAt + terms * 4, 8);
  const offsetsAt = outAt + slice * 8;
  const tfAt = offsetsAt + (slice + 1) * 4;
  const memory = wasmMemory(Math.max(1, Math.ceil((tfAt + largest * 4) / WASM_PAGE_BYTES)));
  if (memory === undefined) return undefined;
  const { score } = instantiateWasm(compiled, memory) as ScoresExports;
  const { buffer } = memory;
  new Float32Array(buffer, 0, BUCKETS).set(tables.goal);
  new Float64Array(buffer, idfAt, terms).set(tables.idf);
  new Uint32Array(buffer, hashesAt, terms).set(tables.hashes.subarray(0, terms));
  const out = new Float64Array(buffer, outAt, slice);
  const offsets = new Int32Array(buffer, offsetsAt, slice + 1);
  const tf = new Int32Array(buffer, tfAt, largest);
  const { k1, b } = tables;
  return (from) => {
    const n = Math.min(slice, tfs.length - from);
    for (let k = 0; k < n; k++) {
      const counts = tfs[from + k] as Int32Array;
      tf.set(counts, offsets[k]);
      offsets[k + 1] = (offsets[k] as number) + counts.length;
    }
    score(n, tfAt, offsetsAt, idfAt, hashesAt, 0, vectorAt, touchedAt, outAt, tables.goalNorm, tables.averageLength, k1 + 1, k1, b, 1 - b);
    return Array.from(out.subarray(0, n));
  };
}

function align(at: number, to: number): number {
  return Math.ceil(at / to) * to;
}
