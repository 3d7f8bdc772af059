import { join } from 'node:path';
import { JsonFileLru } from '../io/json-lru.js';
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
  private readonly texts: JsonFileLru<string>;
  readonly file: string;

  constructor(dir: string) {
    this.file = join(dir, 'refresh-summaries.json');
    const isValue = (value: unknown): value is string => typeof value === 'string';
    this.texts = JsonFileLru.open(this.file, { version: CACHE_VERSION, field: 'entries', maxEntries: MAX_ENTRIES, isValue });
  }

  get(key: string): string | undefined {
    return this.texts.get(key);
  }

  set(key: string, text: string): void {
    this.texts.set(key, text);
  }

  /** Writes the file atomically when something was set; a failed write is ignored (the next run condenses again). */
  save(): void {
    this.texts.save();
  }
}
