import { countEntries } from '../../core/accounting.js';
import type { EntryTokens, TextTokenCounter } from '../../core/accounting.js';
import { loadCounter } from '../../core/tokens/encodings.js';
import type { EncodingName } from '../../core/tokens/encodings.js';
import type { TranscriptEntry } from '../../core/transcript.js';
import { TokenCountCache } from '../../io/count-cache.js';

/**
 * The token-count cache of a batch. Only the main thread opens, reads and writes it (one copy in
 * memory, one writer, saved once at the end): a worker sends the content hashes of one file's texts,
 * gets back the counts the cache knows, tokenizes the rest, and returns those new counts to be added.
 */
export class BatchCounts {
  #cache: TokenCountCache | undefined;
  private counter: TextTokenCounter | undefined;

  constructor(
    private readonly encoding: EncodingName,
    private readonly cacheDir: string | undefined,
  ) {}

  /** Opened on first use: a re-run whose rows all come from the row cache never loads it. */
  private get cache(): TokenCountCache {
    if (this.#cache === undefined) this.#cache = TokenCountCache.open(this.cacheDir, this.encoding);
    return this.#cache;
  }

  /** The tokenizer, loaded on the first count the cache does not have. */
  private tokenizer(): TextTokenCounter {
    if (this.counter === undefined) this.counter = loadCounter(this.encoding);
    return this.counter;
  }

  get enabled(): boolean {
    return Boolean(this.cacheDir);
  }

  /** True when the cache has no count at all (a first run): then there is nothing to look up. */
  get empty(): boolean {
    return this.cache.size === 0;
  }

  /** Counts for these keys (comma-separated), -1 where unknown (a hit is a use: it keeps the entry from eviction). */
  lookup(keys: string): Int32Array {
    const list = keys === '' ? [] : keys.split(',');
    const counts = new Int32Array(list.length);
    for (let i = 0; i < list.length; i++) counts[i] = this.cache.get(list[i] as string) ?? -1;
    return counts;
  }

  add(packed: PackedCounts): void {
    const keys = packed.keys === '' ? [] : packed.keys.split(',');
    for (let i = 0; i < keys.length; i++) this.cache.set(keys[i] as string, packed.counts[i] as number);
  }

  /** Counting on the main thread (standard input, `--jobs 1`), through the same cache. */
  countHere(entries: readonly TranscriptEntry[]): EntryTokens[] {
    return countEntries(entries, {
      count: (text) => {
        if (text.length === 0) return 0;
        if (!this.cache.enabled) return this.tokenizer().count(text);
        const key = TokenCountCache.key(text);
        const cached = this.cache.get(key);
        if (cached !== undefined) return cached;
        const count = this.tokenizer().count(text);
        this.cache.set(key, count);
        return count;
      },
    });
  }

  save(): void {
    this.#cache?.save();
  }
}

/**
 * Content hashes and their counts as threads pass them: the hashes in one comma-separated string
 * (base64url has no comma), the counts in one array. Copying two values between threads costs far
 * less than copying an array of thousands of [hash, count] pairs.
 */
export interface PackedCounts {
  readonly keys: string;
  readonly counts: Int32Array;
}

export function packCounts(pairs: readonly (readonly [string, number])[]): PackedCounts {
  return { keys: pairs.map(([key]) => key).join(','), counts: Int32Array.from(pairs, ([, count]) => count) };
}

/**
 * A worker's side: counts one transcript's entries, asking `lookup` (the main thread) for the counts
 * the cache has, in one round trip per file. Returns the tokens and the counts it had to make (with
 * `remember`: for the cache; without a lookup, every count is new).
 */
export async function countWithLookup(
  entries: readonly TranscriptEntry[],
  encoding: EncodingName,
  lookup: ((keys: string) => Promise<ArrayLike<number>>) | undefined,
  remember = lookup !== undefined,
): Promise<{ tokens: EntryTokens[]; newCounts: [string, number][] }> {
  const newCounts: [string, number][] = [];
  if (lookup === undefined) {
    const counter = loadCounter(encoding);
    const seen = new Set<string>();
    const count = (text: string): number => {
      if (text.length === 0) return 0;
      const n = counter.count(text);
      if (remember && !seen.has(text)) {
        seen.add(text);
        newCounts.push([TokenCountCache.key(text), n]);
      }
      return n;
    };
    return { tokens: countEntries(entries, { count }), newCounts };
  }
  // First pass: which texts the file has (countEntries asks for exactly these).
  const keys = new Map<string, string>();
  countEntries(entries, {
    count: (text) => {
      if (text.length > 0 && !keys.has(text)) keys.set(text, TokenCountCache.key(text));
      return 0;
    },
  });
  const known = await lookup([...keys.values()].join(','));
  const counts = new Map<string, number>();
  let i = 0;
  for (const text of keys.keys()) {
    const count = known[i++];
    if (count !== undefined && count >= 0) counts.set(text, count);
  }
  const tokens = countEntries(entries, {
    count: (text) => {
      if (text.length === 0) return 0;
      let count = counts.get(text);
      if (count === undefined) {
        count = loadCounter(encoding).count(text);
        counts.set(text, count);
        newCounts.push([keys.get(text) ?? TokenCountCache.key(text), count]);
      }
      return count;
    },
  });
  return { tokens, newCounts };
}
