import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { SummaryCache } from './summary-providers.js';

const CACHE_VERSION = 1;
/** A project has a few TAS/PRD versions at a time; older condensations are dropped past this. */
const MAX_ENTRIES = 64;

/**
 * Condensed TAS/PRD texts on disk (`refresh-summaries.json` in the devs-ctx cache folder, beside the
 * token counts), so a `refresh` run from a git hook does not condense an unchanged TAS again.
 * Like the count cache, it is an optimisation: an unreadable or unwritable file is ignored.
 */
export class FileSummaryCache implements SummaryCache {
  private readonly texts = new Map<string, string>();
  private dirty = false;
  readonly file: string;

  constructor(dir: string) {
    this.file = join(dir, 'refresh-summaries.json');
    try {
      const data = JSON.parse(readFileSync(this.file, 'utf8')) as { version?: unknown; entries?: unknown };
      if (data.version === CACHE_VERSION && data.entries && typeof data.entries === 'object') {
        for (const [key, value] of Object.entries(data.entries as Record<string, unknown>)) {
          if (typeof value === 'string') this.texts.set(key, value);
        }
      }
    } catch {
      // no cache yet, or a damaged one: start empty
    }
  }

  get(key: string): string | undefined {
    const text = this.texts.get(key);
    if (text !== undefined) {
      // Most recently used last, so eviction drops what no recent run needed.
      this.texts.delete(key);
      this.texts.set(key, text);
    }
    return text;
  }

  set(key: string, text: string): void {
    this.texts.set(key, text);
    this.dirty = true;
  }

  save(): void {
    if (!this.dirty) return;
    try {
      const entries = [...this.texts].slice(-MAX_ENTRIES);
      mkdirSync(dirname(this.file), { recursive: true });
      const tmp = `${this.file}.${process.pid}.tmp`;
      writeFileSync(tmp, JSON.stringify({ version: CACHE_VERSION, entries: Object.fromEntries(entries) }));
      renameSync(tmp, this.file);
      this.dirty = false;
    } catch {
      // read-only home, full disk…: the next run condenses again
    }
  }
}
