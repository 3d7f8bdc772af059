import { mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { writeFileAtomic } from './atomic.js';
import { readRegularFile } from './fd.js';
import { sealedJson, unsealed } from './sealed.js';
import { sha1 } from './sha1.js';

/**
 * A folder of caches kept one JSON file per transcript (named by a hash of its path): the finished
 * reports of `analyze` (a single file's, and a batch `--json`'s) and the states of grown transcripts
 * a batch reads on from. A file holds
 * its layout's version, the schema it was made under (the build and the settings) and the path; one
 * of another version, schema or path is not returned, nor one changed since devs-ctx wrote it (each
 * file is sealed: src/io/sealed.ts). Only the most recently written files are kept. Like every cache
 * it is an optimisation: unreadable or unwritable, it is ignored.
 */
export class PathFiles {
  /** Written since the last trim (with `deferTrim`, `trim` lists the folder only then). */
  #written = false;

  private constructor(
    private readonly dir: string | undefined,
    private readonly version: number,
    private readonly schema: string,
    private readonly layout: PathFilesLayout,
  ) {}

  /** The files in `dir` made under `schema` (none when either is missing: nothing read or written). */
  static open(dir: string | undefined, schema: string | undefined, layout: PathFilesLayout): PathFiles {
    return dir && schema !== undefined ? new PathFiles(dir, layout.version, schema, layout) : new PathFiles(undefined, layout.version, '', layout);
  }

  get enabled(): boolean {
    return this.dir !== undefined;
  }

  #file(path: string): string {
    return join(this.dir ?? '', `${sha1(path)}.json`);
  }

  /** The folder's names when first asked (see `listed`). */
  #names: Set<string> | undefined;

  /**
   * Whether a file for `path` was in the folder when it was first listed (one listing for a whole
   * batch; `read` says whether it is of this version and schema). Only a hint, never an answer.
   */
  listed(path: string): boolean {
    if (!this.dir) return false;
    if (this.#names === undefined) {
      try {
        this.#names = new Set(readdirSync(this.dir));
      } catch {
        this.#names = new Set();
      }
    }
    return this.#names.has(basename(this.#file(path)));
  }

  /** What was written for `path` under this version and schema, or undefined. */
  read(path: string): Record<string, unknown> | undefined {
    if (!this.dir) return undefined;
    try {
      const data = unsealed(readRegularFile(this.#file(path))) as Record<string, unknown> | null;
      if (!data || typeof data !== 'object' || data['version'] !== this.version || data['schema'] !== this.schema || data['path'] !== path) return undefined;
      return data;
    } catch {
      return undefined;
    }
  }

  /**
   * Writes `fields` for `path` (atomically), then drops the least recently written files past the
   * most kept (with `deferTrim`, only when `trim` is called). `json`: one more field, given as JSON
   * text (a report a worker already wrote out: not parsed and written out again here).
   */
  write(path: string, fields: Record<string, unknown>, json?: { readonly key: string; readonly text: string }): void {
    if (!this.dir) return;
    try {
      if (!this.#made) mkdirSync(this.dir, { recursive: true });
      this.#made = true;
      const head = JSON.stringify({ version: this.version, schema: this.schema, path, ...fields });
      const body = json ? `${head.slice(0, -1)},${JSON.stringify(json.key)}:${json.text}}` : head;
      writeFileAtomic(this.#file(path), sealedJson(body), { durable: false, cache: true });
      this.#written = true;
      if (!this.layout.deferTrim) this.trim();
    } catch {
      // Read-only home, full disk…: the next run does the work again.
    }
  }

  /** The folder was made (or found) by a write of this run. */
  #made = false;

  /** Drops the least recently written files past the most kept, when any was written since the last time. */
  trim(): void {
    if (!this.dir || !this.#written) return;
    this.#written = false;
    try {
      this.#trim(this.dir);
    } catch {
      // Gone or unreadable: nothing to trim.
    }
  }

  #trim(dir: string): void {
    // Only what this class writes: regular files named *.json (a folder or a link so named is none of its files).
    const names = readdirSync(dir, { withFileTypes: true })
      .filter((entry) => entry.isFile() && entry.name.endsWith('.json'))
      .map((entry) => entry.name);
    if (names.length <= this.layout.max) return;
    const at = (name: string): number => {
      try {
        return statSync(join(dir, name)).mtimeMs;
      } catch {
        return 0; // gone since the listing (another run trimmed it)
      }
    };
    const byAge = names.map((name) => ({ name, at: at(name) })).sort((a, b) => a.at - b.at);
    for (const { name } of byAge.slice(0, names.length - this.layout.max)) {
      try {
        rmSync(join(dir, name), { force: true });
      } catch {
        // Replaced by something else since the listing: left, and the others still go.
      }
    }
  }
}

interface PathFilesLayout {
  readonly version: number;
  /** Files kept at most. */
  readonly max: number;
  /**
   * Trim only when `trim` is called, not after each write: a batch writes one file per transcript,
   * and listing a folder of thousands after each would cost more than the writes.
   */
  readonly deferTrim?: boolean;
}
