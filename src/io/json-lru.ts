import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { writeFileAtomic } from './atomic.js';
import { readRegularFile } from './fd.js';

/** How one cache file is laid out: `{ "version": N, "<field>": { key: value, … } }`, oldest entry first. */
export interface JsonLruOptions<V> {
  /** A file of another version is ignored (read as empty) and replaced at the next save. */
  readonly version: number;
  /** The object holding the entries (`counts`, `entries`…), so existing cache files stay readable. */
  readonly field: string;
  /** Least recently used entries are dropped past this. */
  readonly maxEntries: number;
  /** Values of another type in the file are skipped. */
  readonly isValue: (value: unknown) => value is V;
}

/**
 * A least-recently-used map kept in one JSON file. It is an optimisation only: a missing, damaged or
 * unreadable file is read as empty, and a save that fails (read-only home, full disk) is ignored.
 * A save goes through writeFileAtomic, so a reader never sees half a file.
 */
export class JsonFileLru<V> {
  private readonly entries = new Map<string, V>();
  private changed = false;

  private constructor(
    /** No file: a cache in memory only, never saved. */
    readonly file: string | undefined,
    private readonly options: JsonLruOptions<V>,
  ) {}

  static open<V>(file: string | undefined, options: JsonLruOptions<V>): JsonFileLru<V> {
    const lru = new JsonFileLru(file, options);
    if (file !== undefined) lru.load(file);
    return lru;
  }

  private load(file: string): void {
    let data: unknown;
    try {
      data = JSON.parse(readRegularFile(file).toString('utf8'));
    } catch {
      return; // no cache yet, or a damaged one: start empty
    }
    if (typeof data !== 'object' || data === null) return;
    const record = data as Record<string, unknown>;
    const held = record[this.options.field];
    if (record['version'] !== this.options.version || typeof held !== 'object' || held === null) return;
    for (const [key, value] of Object.entries(held)) {
      if (this.options.isValue(value)) this.entries.set(key, value);
    }
    this.evict();
  }

  get size(): number {
    return this.entries.size;
  }

  /** Every entry, oldest first (without making any of them newer). */
  entriesOldestFirst(): IterableIterator<[string, V]> {
    return this.entries.entries();
  }

  has(key: string): boolean {
    return this.entries.has(key);
  }

  /** A hit moves the entry to the newest end, so eviction drops what no recent use needed. */
  get(key: string): V | undefined {
    const value = this.entries.get(key);
    if (value !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, value);
    }
    return value;
  }

  /** Stores a value as the newest entry, dropping the least recently used past `maxEntries`. */
  set(key: string, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    this.changed = true;
    this.evict();
  }

  private evict(): void {
    for (const key of this.entries.keys()) {
      if (this.entries.size <= this.options.maxEntries) return;
      this.entries.delete(key);
    }
  }

  /**
   * The file's JSON, entries oldest first: written entry by entry, which is what
   * `JSON.stringify({ version, [field]: Object.fromEntries(entries) })` gives (for keys that are not
   * array indexes, which that would move to the front) at a fraction of the cost: no object of every
   * entry is built for one call (20 entries added to a 1,000-entry cache cost about 5 ms that way).
   */
  private serialize(): string {
    const parts: string[] = [];
    for (const [key, value] of this.entries) parts.push(`${JSON.stringify(key)}:${JSON.stringify(value)}`);
    return `{"version":${JSON.stringify(this.options.version)},${JSON.stringify(this.options.field)}:{${parts.join(',')}}}`;
  }

  /** Writes the file (atomically) when something was set since the last save; false when it could not. */
  save(): boolean {
    if (this.file === undefined || !this.changed) return true;
    try {
      mkdirSync(dirname(this.file), { recursive: true, mode: 0o700 });
      writeFileAtomic(this.file, Buffer.from(this.serialize()), { durable: false, cache: true });
      this.changed = false;
      return true;
    } catch {
      return false;
    }
  }
}
