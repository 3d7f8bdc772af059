import { existsSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { CountStore } from './count-store.js';
import { JsonFileLru } from './json-lru.js';
import { sha1 } from './sha1.js';

/** The JSON cache of versions before the binary one: read once, while there is no binary cache to use, then removed. */
const JSON_CACHE_VERSION = 1;
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
    /** The JSON file of an earlier version, whose counts were taken over: removed once they are saved. */
    private readonly legacy: string | undefined,
  ) {}

  static open(dir: string | undefined, encoding: string, options: { maxEntries?: number } = {}): TokenCountCache {
    const maxEntries = options.maxEntries ?? MAX_ENTRIES;
    const file = dir ? join(dir, `token-counts-${encoding}.bin`) : undefined;
    const counts = CountStore.open(file, maxEntries);
    const json = dir ? join(dir, `token-counts-${encoding}.json`) : undefined;
    // Taken over while there is no binary cache to use (none yet, or an unreadable one).
    if (file === undefined || json === undefined || counts.size > 0 || !existsSync(json)) return new TokenCountCache(counts, undefined);
    // An earlier version's cache (the same keys and counts): its entries, oldest first, become this run's.
    const isValue = (value: unknown): value is number => typeof value === 'number';
    const old = JsonFileLru.open(json, { version: JSON_CACHE_VERSION, field: 'counts', maxEntries, isValue });
    for (const [key, count] of old.entriesOldestFirst()) counts.set(key, count);
    return new TokenCountCache(counts, json);
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
      // Not ours to remove (another user's, in a shared folder): it is read again next time, harmlessly.
    }
  }
}
