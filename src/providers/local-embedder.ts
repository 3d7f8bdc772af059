import type { Pacer } from '../core/pace.js';
import type { Embedder, Embedding } from '../core/provider-contracts.js';
import { terms } from '../core/terms.js';

/** What fitting BM25 weights to a corpus collects: document frequencies and each text's term counts. */
interface CorpusStats {
  readonly df: Map<string, number>;
  readonly known: Map<string, Map<string, number>>;
  totalLength: number;
}

function emptyStats(): CorpusStats {
  return { df: new Map(), known: new Map(), totalLength: 0 };
}

function addToStats(stats: CorpusStats, text: string): void {
  const tf = termCounts(text);
  let length = 0;
  for (const [word, count] of tf) {
    length += count;
    stats.df.set(word, (stats.df.get(word) ?? 0) + 1);
  }
  stats.totalLength += length;
  stats.known.set(text, tf);
}

function fitCorpusSync(corpus: readonly string[]): CorpusStats {
  const stats = emptyStats();
  for (const text of corpus) addToStats(stats, text);
  return stats;
}

/**
 * The offline default embedder: BM25-weighted bag of words, hashed into a fixed-size vector. It
 * needs no download and gives the same vector for the same text and corpus on every machine.
 * Words are lower-cased identifiers split at camelCase and snake_case as well as kept whole, so
 * `parseConfigFile` matches "config file".
 */
const LOCAL_EMBEDDING_DIMENSIONS = 4096;
const K1 = 1.2;
const B = 0.75;

function termCounts(text: string): Map<string, number> {
  const tf = new Map<string, number>();
  for (const word of terms(text)) tf.set(word, (tf.get(word) ?? 0) + 1);
  return tf;
}

/** FNV-1a: a stable hash of a term, for the bucket and the sign. */
function hash(term: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < term.length; i++) {
    h ^= term.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  // murmur3's finalizer: FNV's low bits alone collide too often for short words.
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

export class LocalEmbedder implements Embedder {
  readonly name = 'local-bm25';
  private readonly documentFrequency: ReadonlyMap<string, number>;
  private readonly documents: number;
  private readonly averageLength: number;
  /** Term counts of the corpus texts, so embedding them does not split them again. */
  private readonly known: Map<string, Map<string, number>>;

  /** `corpus`: the texts the vectors are weighted against (IDF); without one every term weighs the same. */
  constructor(corpus: readonly string[] = [], stats?: CorpusStats) {
    const fitted = stats ?? fitCorpusSync(corpus);
    this.documentFrequency = fitted.df;
    this.known = fitted.known;
    this.documents = corpus.length;
    this.averageLength = corpus.length > 0 ? Math.max(1, fitted.totalLength / corpus.length) : 1;
  }

  /** The same embedder, fitted to a large corpus a slice at a time (`pacer` gives the event loop its turns, so a signal is seen). */
  static async fit(corpus: readonly string[], pacer: Pacer): Promise<LocalEmbedder> {
    const stats = emptyStats();
    for (let i = 0; i < corpus.length; i++) {
      addToStats(stats, corpus[i] ?? '');
      if ((i & 63) === 63) await pacer.tick();
    }
    return new LocalEmbedder(corpus, stats);
  }

  embedOne(text: string): Float32Array {
    const vector = new Float32Array(LOCAL_EMBEDDING_DIMENSIONS);
    const tf = this.known.get(text) ?? termCounts(text);
    let length = 0;
    for (const count of tf.values()) length += count;
    const lengthNorm = 1 - B + (B * length) / this.averageLength;
    for (const [word, count] of tf) {
      const df = this.documentFrequency.get(word) ?? 0;
      const idf = this.documents > 0 ? Math.log(1 + (this.documents - df + 0.5) / (df + 0.5)) : 1;
      const weight = ((count * (K1 + 1)) / (count + K1 * lengthNorm)) * idf;
      const h = hash(word);
      const bucket = h % LOCAL_EMBEDDING_DIMENSIONS;
      vector[bucket] = (vector[bucket] ?? 0) + (h >>> 31 === 1 ? -weight : weight);
    }
    return vector;
  }

  embed(texts: readonly string[]): Promise<Embedding[]> {
    return Promise.resolve(texts.map((text) => this.embedOne(text)));
  }
}
