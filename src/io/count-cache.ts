import { existsSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { CountStore } from './count-store.js';
import { COUNTER_VERSION } from '../core/tokens/bpe.js';
import { sha1 } from './sha1.js';

/** Least recently used entries are dropped past this. */
const MAX_ENTRIES = 200_000;

/** Where counts are cached: `DEVS_CTX_CACHE_DIR`, else `$XDG_CACHE_HOME/devs-ctx`, else `~/.cache/devs-ctx`. */
export function defaultCacheDir(env: Readonly<Record<string, string | undefined>>): string {
  if (env['DEVS_CTX_CACHE_DIR']) return env['DEVS_CTX_CACHE_DIR'];
  const base = env['XDG_CACHE_HOME'] || join(homedir(), '.cache');
  return join(base, 'devs-ctx');
}

/**
 * Token counts by content hash, per encoding, in `token-counts-<encoding>.bin` (src/io/count-store.ts:
 * used as it is read, so a full cache opens in milliseconds). Transcripts only grow, so a re-run finds
 * every old turn here and tokenizes only the new ones (and need not load the tokenizer at all).
 * The cache is an optimisation: an unreadable or unwritable cache is silently ignored.
 */
export class TokenCountCache {
  private constructor(
    private readonly counts: CountStore,
    /** The JSON file of an early version (its counts not read): removed at the next save. */
    private readonly legacy: string | undefined,
  ) {}

  static open(dir: string | undefined, encoding: string, options: { maxEntries?: number } = {}): TokenCountCache {
    const maxEntries = options.maxEntries ?? MAX_ENTRIES;
    const file = dir ? join(dir, `token-counts-${encoding}.bin`) : undefined;
    // Counts of this counter's version only: one an earlier counter made may differ (see COUNTER_VERSION).
    const counts = CountStore.open(file, maxEntries, COUNTER_VERSION);
    // The JSON cache of an early version: its counts are an older counter's, never read; removed at the next save.
    const json = dir ? join(dir, `token-counts-${encoding}.json`) : undefined;
    return new TokenCountCache(counts, json !== undefined && existsSync(json) ? json : undefined);
  }

  static key(text: string): string {
    return sha1(text);
  }

  /** Counts held (one the recent file copied from the main table is counted twice until they merge; see count-store.ts). */
  get size(): number {
    return this.counts.size;
  }

  /** False with no cache directory (`--no-cache`): then callers need not hash at all. */
  get enabled(): boolean {
    return this.counts.file !== undefined;
  }

  /** A hit marks the count as used by this run, so eviction drops what no recent run has used. */
  get(key: string): number | undefined {
    return this.counts.get(key);
  }

  set(key: string, count: number): void {
    this.counts.set(key, count);
  }

  /** Writes the cache atomically when something was added; a failed write is ignored (the next run counts again). */
  save(): void {
    if (!this.counts.save() || this.legacy === undefined) return;
    try {
      rmSync(this.legacy, { force: true });
    } catch {
      // Not ours to remove (another user's, in a shared folder): left; it is never read.
    }
  }
}
