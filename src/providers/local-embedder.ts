import type { Pacer } from '../core/pace.js';
import type { Embedder, Embedding } from '../core/provider-contracts.js';
import { primeTermIndex, TermIds, TermIndex } from '../core/terms.js';
import type { CorpusReader } from '../core/terms.js';
import { scoresInWebAssembly, wasmScorer } from './local-scores.js';

/**
 * What fitting BM25 weights to a corpus collects: the corpus's terms (numbered), each term's
 * document frequency, and each text's term counts as `[term id, count, …]` in the order the terms
 * first appear (the order its vector is summed in).
 */
interface CorpusStats {
  readonly index: TermIndex;
  df: Int32Array;
  readonly known: Map<string, Int32Array>;
  totalLength: number;
}

function emptyStats(index = new TermIndex()): CorpusStats {
  return { index, df: new Int32Array(1024), known: new Map(), totalLength: 0 };
}

/** Reused while counting one text's terms: a count per term id, and the terms in first-seen order. */
class TermCounter {
  private counts: Int32Array = new Int32Array(1024);
  private readonly read = new TermIds();
  private readonly order = new TermIds();

  /**
   * `text`'s terms and how often each appears, as `[term id, count, …]` in first-seen order; and how
   * many terms it has. `read`: how its ids are read (`index.read` unless given).
   */
  count(index: TermIndex, text: string, read?: (out: TermIds) => void): { readonly tf: Int32Array; readonly length: number } {
    this.read.length = 0;
    this.order.length = 0;
    if (read) read(this.read);
    else index.read(text, this.read);
    if (this.counts.length < index.size) this.counts = grown(this.counts, index.size);
    const { ids } = this.read;
    const counts = this.counts;
    for (let k = 0; k < this.read.length; k++) {
      const id = ids[k] as number;
      if (counts[id] === 0) this.order.push(id);
      counts[id] = (counts[id] as number) + 1;
    }
    const tf = new Int32Array(this.order.length * 2);
    for (let k = 0; k < this.order.length; k++) {
      const id = this.order.ids[k] as number;
      tf[2 * k] = id;
      tf[2 * k + 1] = counts[id] as number;
      counts[id] = 0;
    }
    return { tf, length: this.read.length };
  }
}

/** A copy of `array` with room for at least `size` (zeros after its values). */
function grown(array: Int32Array, size: number): Int32Array {
  let length = array.length;
  while (length < size) length *= 2;
  const out = new Int32Array(length);
  out.set(array);
  return out;
}

function addToStats(stats: CorpusStats, counter: TermCounter, text: string, read?: (out: TermIds) => void): void {
  const { tf, length } = counter.count(stats.index, text, read);
  if (stats.df.length < stats.index.size) stats.df = grown(stats.df, stats.index.size);
  for (let k = 0; k < tf.length; k += 2) stats.df[tf[k] as number] = (stats.df[tf[k] as number] as number) + 1;
  stats.totalLength += length;
  stats.known.set(text, tf);
}

function fitCorpusSync(corpus: readonly string[]): CorpusStats {
  const stats = emptyStats();
  const counter = new TermCounter();
  for (const text of corpus) addToStats(stats, counter, text);
  return stats;
}

/**
 * The offline default embedder: BM25-weighted bag of words, hashed into a fixed-size vector. It
 * needs no download and gives the same vector for the same text and corpus on every machine.
 * Words are lower-cased identifiers split at camelCase and snake_case as well as kept whole, so
 * `parseConfigFile` matches "config file".
 */
const LOCAL_EMBEDDING_DIMENSIONS = 4096;
/** A fit of this many characters or more primes the term reader first (about 3 ms; the fit of the bench's 4 MB transcript takes about 100). */
const PRIME_MIN_CHARS = 1_000_000;
const K1 = 1.2;
const B = 0.75;
/** Texts `scoreAhead` scores between two of its pacer's ticks. */
const SCORES_PER_TICK = 64;

export class LocalEmbedder implements Embedder {
  readonly name = 'local-bm25';
  private readonly stats: CorpusStats;
  private readonly documents: number;
  private readonly averageLength: number;
  private readonly counter = new TermCounter();
  /** Each term's hash by id, found on first use (0: not yet, or a term whose hash is 0, found again each time). */
  private hashes = new Uint32Array(1024);

  /** `corpus`: the texts the vectors are weighted against (IDF); without one every term weighs the same. */
  constructor(corpus: readonly string[] = [], stats?: CorpusStats) {
    const fitted = stats ?? fitCorpusSync(corpus);
    this.stats = fitted;
    this.documents = corpus.length;
    this.averageLength = corpus.length > 0 ? Math.max(1, fitted.totalLength / corpus.length) : 1;
  }

  /**
   * The same embedder, fitted to a large corpus a slice at a time (`pacer` gives the event loop its
   * turns, so a signal is seen). `reader`: where the corpus's terms are numbered (an index), or how
   * its texts are read into one, to share with other readers of the same texts (a prune's goal
   * excerpts: see LineKeepingReader).
   */
  static async fit(corpus: readonly string[], pacer: Pacer, reader?: TermIndex | CorpusReader): Promise<LocalEmbedder> {
    let chars = 0;
    for (const text of corpus) chars += text.length;
    // A large read is compiled as it goes: once, after every path was taken (see primeTermIndex).
    if (chars >= PRIME_MIN_CHARS) primeTermIndex();
    const through = reader instanceof TermIndex ? undefined : reader;
    const stats = emptyStats(reader instanceof TermIndex ? reader : reader?.index);
    const counter = new TermCounter();
    for (let i = 0; i < corpus.length; i++) {
      const text = corpus[i] ?? '';
      addToStats(stats, counter, text, through ? (out) => through.read(i, text, out) : undefined);
      if ((i & 63) === 63) await pacer.tick();
    }
    return new LocalEmbedder(corpus, stats);
  }

  embedOne(text: string): Float32Array {
    const vector = new Float32Array(LOCAL_EMBEDDING_DIMENSIONS);
    this.addTo(vector, text);
    return vector;
  }

  /** `text`'s term counts (`[term id, count, …]`): the fit's for a text of the corpus, else read now. */
  private countsOf(text: string): Int32Array {
    return this.stats.known.get(text) ?? this.counter.count(this.stats.index, text).tf;
  }

  /** How many of the corpus's texts hold term `id` (a term first read outside it: none). */
  private frequencyOf(id: number): number {
    const { df } = this.stats;
    return id < df.length ? (df[id] as number) : 0;
  }

  /** A term's IDF, by how many of the corpus's texts hold it. */
  private idfOf(df: number): number {
    return this.documents > 0 ? Math.log(1 + (this.documents - df + 0.5) / (df + 0.5)) : 1;
  }

  /** Room in `hashes` for the ids below `terms`. */
  private roomForHashes(terms: number): void {
    if (this.hashes.length >= terms) return;
    const hashes = new Uint32Array(Math.max(terms, this.hashes.length * 2));
    hashes.set(this.hashes);
    this.hashes = hashes;
  }

  /** Term `id`'s hash, found on first use (`hashes` has room for it). */
  private termHash(id: number): number {
    let h = this.hashes[id] as number;
    if (h === 0) {
      h = this.stats.index.stableHash(id);
      this.hashes[id] = h;
    }
    return h;
  }

  /** Each term's hash by id, for the ids below `terms`. */
  private termHashes(terms: number): Uint32Array {
    this.roomForHashes(terms);
    for (let id = 0; id < terms; id++) this.termHash(id);
    return this.hashes;
  }

  /** Adds `text`'s weights into `vector` (all zeros), setting each bucket's bit in `touched` (a bit per bucket, 32 to a word). */
  private addTo(vector: Float32Array, text: string, touched?: Uint32Array): void {
    const tf = this.countsOf(text);
    this.roomForHashes(this.stats.index.size);
    let length = 0;
    for (let k = 1; k < tf.length; k += 2) length += tf[k] as number;
    const lengthNorm = 1 - B + (B * length) / this.averageLength;
    for (let k = 0; k < tf.length; k += 2) {
      const id = tf[k] as number;
      const count = tf[k + 1] as number;
      const weight = ((count * (K1 + 1)) / (count + K1 * lengthNorm)) * this.idfOf(this.frequencyOf(id));
      const h = this.termHash(id);
      const bucket = h % LOCAL_EMBEDDING_DIMENSIONS;
      if (touched) touched[bucket >>> 5] = (touched[bucket >>> 5] as number) | (1 << (bucket & 31));
      vector[bucket] = (vector[bucket] ?? 0) + (h >>> 31 === 1 ? -weight : weight);
    }
  }

  /**
   * Finds `similarities(goal, texts)` ahead, a slice at a time (`pacer`): a later `similarities` for
   * this goal gives these scores for these texts without computing them again (a prune scores its
   * turns while another thread still counts them; its plan ranks them afterwards).
   */
  async scoreAhead(goal: string, texts: readonly string[], pacer: Pacer): Promise<void> {
    const scores = new Map<string, number>();
    // The goal's vector once, not once a slice.
    const to = this.goalVector(goal);
    const inWebAssembly = this.webAssemblyScorer(to, texts, SCORES_PER_TICK);
    for (let start = 0; start < texts.length; start += SCORES_PER_TICK) {
      const slice = texts.slice(start, start + SCORES_PER_TICK);
      const found = inWebAssembly ? inWebAssembly(start) : this.similaritiesTo(to, slice);
      if (inWebAssembly) this.scoredInWebAssembly += slice.length;
      for (const [k, text] of slice.entries()) scores.set(text, found[k] as number);
      await pacer.tick();
    }
    this.ahead = { goal, scores };
  }

  /** Texts `scoreAhead` scored in WebAssembly (a test's proof that it ran). */
  scoredInWebAssembly = 0;

  /**
   * `similaritiesTo(goal, texts)` for a slice of `slice` texts from `from`, in WebAssembly
   * (local-scores.wat), from each text's term counts and each term's IDF and hash; undefined where
   * this Node runs none.
   */
  private webAssemblyScorer(goal: { readonly vector: Float32Array; readonly norm: number }, texts: readonly string[], slice: number) {
    if (!scoresInWebAssembly()) return undefined;
    // The counts first: a text outside the corpus is read now, and its new terms numbered.
    const tfs = texts.map((text) => this.countsOf(text));
    const terms = this.stats.index.size;
    const idf = new Float64Array(terms);
    // A term's IDF depends on its document frequency only (at most the corpus's size): one
    // logarithm per frequency met (NaN: not yet).
    const byFrequency = new Float64Array(this.documents + 1).fill(Number.NaN);
    for (let id = 0; id < terms; id++) {
      const df = this.frequencyOf(id);
      let weight = byFrequency[df] as number;
      if (Number.isNaN(weight)) {
        weight = this.idfOf(df);
        byFrequency[df] = weight;
      }
      idf[id] = weight;
    }
    return wasmScorer(
      { goal: goal.vector, goalNorm: goal.norm, idf, hashes: this.termHashes(terms), averageLength: this.averageLength, k1: K1, b: B },
      tfs,
      slice,
    );
  }

  /** Scores found by `scoreAhead`, for its goal. */
  private ahead: { readonly goal: string; readonly scores: ReadonlyMap<string, number> } | undefined;

  /**
   * `cosineSimilarity(embedOne(goal), embedOne(text))` for each text, bit for bit: a text's vector
   * has a value only in the buckets of its terms, so only those are summed (in bucket order, as the
   * full loop sums them; the other buckets add exact zeros).
   */
  similarities(goal: string, texts: readonly string[]): number[] {
    const ahead = this.ahead?.goal === goal ? this.ahead.scores : undefined;
    if (ahead && texts.every((text) => ahead.has(text))) return texts.map((text) => ahead.get(text) as number);
    return this.similaritiesTo(this.goalVector(goal), texts);
  }

  /** The goal's vector and its squared norm. */
  private goalVector(goal: string): { readonly vector: Float32Array; readonly norm: number } {
    const vector = this.embedOne(goal);
    let norm = 0;
    for (let i = 0; i < vector.length; i++) norm += (vector[i] as number) * (vector[i] as number);
    return { vector, norm };
  }

  /** `similarities` to a goal's vector (`goalVector`). */
  private similaritiesTo(goal: { readonly vector: Float32Array; readonly norm: number }, texts: readonly string[]): number[] {
    const { vector: goalVector, norm: goalNorm } = goal;
    const vector = new Float32Array(LOCAL_EMBEDDING_DIMENSIONS);
    const touched = new Uint32Array(LOCAL_EMBEDDING_DIMENSIONS / 32);
    return texts.map((text) => {
      this.addTo(vector, text, touched);
      let dot = 0;
      let norm = 0;
      // The written buckets in increasing order: word by word, each word's set bits from the lowest.
      for (let w = 0; w < touched.length; w++) {
        let bits = touched[w] as number;
        if (bits === 0) continue;
        touched[w] = 0;
        while (bits !== 0) {
          const lowest = bits & -bits;
          bits ^= lowest;
          const bucket = w * 32 + 31 - Math.clz32(lowest);
          const x = goalVector[bucket] as number;
          const y = vector[bucket] as number;
          dot += x * y;
          norm += y * y;
          vector[bucket] = 0;
        }
      }
      if (goalNorm === 0 || norm === 0) return 0;
      return dot / Math.sqrt(goalNorm * norm);
    });
  }

  embed(texts: readonly string[]): Promise<Embedding[]> {
    return Promise.resolve(texts.map((text) => this.embedOne(text)));
  }
}
