import * as crypto from 'node:crypto';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { JsonFileLru } from './json-lru.js';

const CACHE_VERSION = 1;
/** Least recently used entries are dropped past this, so the cache file stays small to load. */
const MAX_ENTRIES = 200_000;

/** Where counts are cached: `DEVS_CTX_CACHE_DIR`, else `$XDG_CACHE_HOME/devs-ctx`, else `~/.cache/devs-ctx`. */
export function defaultCacheDir(env: Readonly<Record<string, string | undefined>>): string {
  if (env['DEVS_CTX_CACHE_DIR']) return env['DEVS_CTX_CACHE_DIR'];
  const base = env['XDG_CACHE_HOME'] || join(homedir(), '.cache');
  return join(base, 'devs-ctx');
}

/** Node 20.12 and later hash a string in one call (`crypto.hash`), without a Hash object per text. */
const oneShot = (crypto as { hash?: (algorithm: string, data: string, encoding: 'base64url') => string }).hash;
const sha1 = oneShot
  ? (text: string): string => oneShot('sha1', text, 'base64url')
  : (text: string): string => crypto.createHash('sha1').update(text).digest('base64url');

/**
 * Token counts by content hash, per encoding. Transcripts only grow, so a re-run finds every old
 * turn here and tokenizes only the new ones (and need not load the tokenizer at all).
 * The cache is an optimisation: an unreadable or unwritable cache is silently ignored.
 */
export class TokenCountCache {
  private constructor(private readonly counts: JsonFileLru<number>) {}

  static open(dir: string | undefined, encoding: string, options: { maxEntries?: number } = {}): TokenCountCache {
    const file = dir ? join(dir, `token-counts-${encoding}.json`) : undefined;
    const isValue = (value: unknown): value is number => typeof value === 'number';
    return new TokenCountCache(JsonFileLru.open(file, { version: CACHE_VERSION, field: 'counts', maxEntries: options.maxEntries ?? MAX_ENTRIES, isValue }));
  }

  static key(text: string): string {
    return sha1(text);
  }

  /** Counts held. */
  get size(): number {
    return this.counts.size;
  }

  /** False with no cache directory (`--no-cache`): then callers need not hash at all. */
  get enabled(): boolean {
    return this.counts.file !== undefined;
  }

  /** A hit moves the entry to the newest end, so eviction drops what no recent run has used. */
  get(key: string): number | undefined {
    return this.counts.get(key);
  }

  set(key: string, count: number): void {
    if (!this.counts.has(key)) this.counts.set(key, count);
  }

  /** Writes the cache atomically when something was added; a failed write is ignored (the next run counts again). */
  save(): void {
    this.counts.save();
  }
}
