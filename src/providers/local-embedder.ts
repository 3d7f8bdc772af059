import type { Pacer } from '../core/pace.js';
import type { Embedder, Embedding } from '../core/provider-contracts.js';

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

const STOP_WORDS = new Set(
  ('a an and are as at be but by for from has have i if in into is it its of on or our so that the their then there these ' +
    'this to was we were what when which while will with you your not no do does did can could should would just also ' +
    'all any some me my he she they them us been being than too very here out up down over under again once only own ' +
    'same such both each few more most other about above after before below between through during off further how why where who whom').split(' '),
);

/**
 * How much of one turn's text is read: its start and its end. A 1 MB tool output says no more
 * about relevance than its first and last pages, and this keeps ranking linear in turns.
 */
const HEAD_CHARS = 24_000;
const TAIL_CHARS = 8_000;

function sample(text: string): string {
  return text.length <= HEAD_CHARS + TAIL_CHARS ? text : `${text.slice(0, HEAD_CHARS)}\n${text.slice(-TAIL_CHARS)}`;
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
    addTerm(out, word.toLowerCase());
    if (COMPOUND.test(word)) {
      const parts = word.split(COMPOUND_SPLIT);
      if (parts.length > 1) for (const part of parts) addTerm(out, part.toLowerCase());
    }
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
  if (word.length < 2 || STOP_WORDS.has(word) || isShortNumber(word)) return;
  out.push(word.length > 3 && word.endsWith('s') && !word.endsWith('ss') ? word.slice(0, -1) : word);
}

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
      vector[bucket] = (vector[bucket] ?? 0) + ((h >>> 31) === 1 ? -weight : weight);
    }
    return vector;
  }

  embed(texts: readonly string[]): Promise<Embedding[]> {
    return Promise.resolve(texts.map((text) => this.embedOne(text)));
  }
}
