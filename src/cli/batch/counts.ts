import { countEntries } from '../../core/accounting.js';
import type { EntryTokens } from '../../core/accounting.js';
import { loadCounter } from '../../core/tokens/encodings.js';
import type { EncodingName } from '../../core/tokens/encodings.js';
import type { TranscriptEntry } from '../../core/transcript.js';
import { TokenCountCache } from '../../io/count-cache.js';
import { countAcrossThreads } from '../parallel-count.js';

/**
 * The token-count cache of a batch. Only the main thread opens, reads and writes it (one copy in
 * memory, one writer, saved once at the end): a worker sends the content hashes of one file's texts,
 * gets back the counts the cache knows, tokenizes the rest, and returns those new counts to be added.
 */
export class BatchCounts {
  #cache: TokenCountCache | undefined;

  constructor(
    private readonly encoding: EncodingName,
    private readonly cacheDir: string | undefined,
  ) {}

  /** Opened on first use: a re-run whose rows all come from the row cache never loads it. */
  private get cache(): TokenCountCache {
    if (this.#cache === undefined) this.#cache = TokenCountCache.open(this.cacheDir, this.encoding);
    return this.#cache;
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

  /**
   * Counting from the main thread (standard input, `--jobs 1`, a batch too small for workers),
   * through the same cache; a very large transcript's new texts across `jobs` threads.
   */
  async countHere(entries: readonly TranscriptEntry[], jobs: number): Promise<EntryTokens[]> {
    const enabled = this.cache.enabled;
    const lookup = enabled ? (keys: string) => Promise.resolve(this.lookup(keys)) : undefined;
    const { tokens, newCounts } = await countWithLookup(entries, this.encoding, lookup, enabled, jobs);
    if (newCounts.length > 0) this.add(packCounts(newCounts));
    return tokens;
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
 * `remember`: for the cache; without a lookup, every count is new). What is left to count, when it
 * is a lot (one very large transcript in the batch), is split across `jobs` threads by count workers,
 * as `analyze FILE` does; otherwise it is counted here.
 */
export async function countWithLookup(
  entries: readonly TranscriptEntry[],
  encoding: EncodingName,
  lookup: ((keys: string) => Promise<ArrayLike<number>>) | undefined,
  remember = lookup !== undefined,
  jobs = 1,
  /** Many transcripts will be counted in this thread (see loadCounter). */
  bulk = false,
): Promise<{ tokens: EntryTokens[]; newCounts: [string, number][] }> {
  // Which texts the file has (countEntries asks for exactly these), each once.
  const texts = new Set<string>();
  countEntries(entries, {
    count: (text) => {
      if (text.length > 0) texts.add(text);
      return 0;
    },
  });
  const keys = lookup !== undefined || remember ? new Map([...texts].map((text) => [text, TokenCountCache.key(text)])) : undefined;
  const counts = new Map<string, number>();
  if (lookup !== undefined && keys !== undefined) {
    const known = await lookup([...keys.values()].join(','));
    let i = 0;
    for (const text of keys.keys()) {
      const count = known[i++];
      if (count !== undefined && count >= 0) counts.set(text, count);
    }
  }
  const missing = counts.size === 0 ? [...texts] : [...texts].filter((text) => !counts.has(text));
  // The tokenizer is loaded only when something is left to count (a re-run of a grown file may find every count cached).
  const made = missing.length === 0 ? [] : await countAcrossThreads(missing, loadCounter(encoding, { bulk }), encoding, jobs);
  const newCounts: [string, number][] = [];
  for (const [i, text] of missing.entries()) {
    const count = made[i] as number;
    counts.set(text, count);
    if (remember) newCounts.push([keys?.get(text) ?? TokenCountCache.key(text), count]);
  }
  const tokens = countEntries(entries, { count: (text) => (text.length === 0 ? 0 : (counts.get(text) as number)) });
  return { tokens, newCounts };
}
