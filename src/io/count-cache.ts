import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

const CACHE_VERSION = 1;
/** Least recently used entries are dropped past this, so the cache file stays small to load. */
const MAX_ENTRIES = 200_000;

/** Where counts are cached: `DEVS_CTX_CACHE_DIR`, else `$XDG_CACHE_HOME/devs-ctx`, else `~/.cache/devs-ctx`. */
export function defaultCacheDir(env: Readonly<Record<string, string | undefined>>): string {
  if (env['DEVS_CTX_CACHE_DIR']) return env['DEVS_CTX_CACHE_DIR'];
  const base = env['XDG_CACHE_HOME'] || join(homedir(), '.cache');
  return join(base, 'devs-ctx');
}

/**
 * Token counts by content hash, per encoding. Transcripts only grow, so a re-run finds every old
 * turn here and tokenizes only the new ones (and need not load the tokenizer at all).
 * The cache is an optimisation: an unreadable or unwritable cache is silently ignored.
 */
export class TokenCountCache {
  private readonly counts = new Map<string, number>();
  private added = 0;

  private constructor(
    private readonly file: string | undefined,
    private readonly maxEntries: number,
  ) {}

  static open(dir: string | undefined, encoding: string, options: { maxEntries?: number } = {}): TokenCountCache {
    const maxEntries = options.maxEntries ?? MAX_ENTRIES;
    if (!dir) return new TokenCountCache(undefined, maxEntries);
    const file = join(dir, `token-counts-${encoding}.json`);
    const cache = new TokenCountCache(file, maxEntries);
    try {
      const data = JSON.parse(readFileSync(file, 'utf8')) as { version?: unknown; counts?: unknown };
      if (data.version === CACHE_VERSION && data.counts && typeof data.counts === 'object') {
        for (const [key, value] of Object.entries(data.counts as Record<string, unknown>)) {
          if (typeof value === 'number') cache.counts.set(key, value);
        }
      }
    } catch {
      // No cache yet, or a damaged one: start empty.
    }
    return cache;
  }

  static key(text: string): string {
    return createHash('sha1').update(text).digest('base64url');
  }

  /** Counts held. */
  get size(): number {
    return this.counts.size;
  }

  /** False with no cache directory (`--no-cache`): then callers need not hash at all. */
  get enabled(): boolean {
    return this.file !== undefined;
  }

  /** A hit moves the entry to the newest end, so eviction drops what no recent run has used. */
  get(key: string): number | undefined {
    const count = this.counts.get(key);
    if (count !== undefined) {
      this.counts.delete(key);
      this.counts.set(key, count);
    }
    return count;
  }

  set(key: string, count: number): void {
    if (this.counts.has(key)) return;
    this.counts.set(key, count);
    this.added++;
  }

  /** Writes the cache atomically when something was added. */
  save(): void {
    if (!this.file || this.added === 0) return;
    try {
      let entries = [...this.counts];
      if (entries.length > this.maxEntries) entries = entries.slice(entries.length - this.maxEntries);
      const dir = join(this.file, '..');
      mkdirSync(dir, { recursive: true });
      const tmp = `${this.file}.${process.pid}.tmp`;
      writeFileSync(tmp, JSON.stringify({ version: CACHE_VERSION, counts: Object.fromEntries(entries) }));
      renameSync(tmp, this.file);
      this.added = 0;
    } catch {
      // Read-only home, full disk…: counting still worked; the next run just counts again.
    }
  }
}
