import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { writeFileAtomic } from './atomic.js';
import { readRegularFile } from './fd.js';
import { sealedJson, unsealed, unsealedBytes } from './sealed.js';
import { sha1 } from './sha1.js';

/** `}`: how a JSON object ends. */
const CLOSING_BRACE = 0x7d;

/**
 * A folder of caches kept one JSON file per transcript (named by a hash of its path): the finished
 * reports of `analyze` (a single file's, and a batch `--json`'s) and the states of grown transcripts
 * a batch reads on from. A file holds its layout's version, the schema it was made under (the build
 * and the settings) and the path; one of another version, schema or path is not returned, nor one
 * changed since devs-ctx wrote it (each file is sealed: src/io/sealed.ts). Only the most recently
 * written files are kept. Like every cache it is an optimisation: unreadable or unwritable, it is ignored.
 */
export class PathFiles {
  /** The names written since the last trim (it lists the folder only then, and removes them last). */
  readonly #written = new Set<string>();
  /** Whether the folder is one to use: checked once (see #folder). */
  #usable: boolean | undefined;
  /** The folder was made (or found) by a write of this run. */
  #made = false;
  /** A file was added since the last trim (a file written again adds none: the folder is no fuller). */
  #added = false;
  /** The folder's names when first asked (see `listed`). */
  #names: Set<string> | undefined;

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

  /**
   * The folder, when it is one to read and write: a folder (or none yet, made on the first write),
   * never a symlink or anything else in its place, which is not followed: nothing is read, written
   * or removed wherever it points.
   */
  #folder(): string | undefined {
    if (!this.dir) return undefined;
    if (this.#usable === undefined) {
      try {
        const stat = lstatSync(this.dir);
        this.#usable = stat.isDirectory();
        // An older devs-ctx made it readable by all (0755): private, as the files in it are.
        if (this.#usable && (stat.mode & 0o077) !== 0 && stat.uid === process.getuid?.()) chmodSync(this.dir, stat.mode & 0o700);
      } catch {
        this.#usable ??= true; // none yet (or it could not be made private: its files still are)
      }
    }
    return this.#usable ? this.dir : undefined;
  }

  /**
   * Whether a file for `path` was in the folder when it was first listed (one listing for a whole
   * batch; `read` says whether it is of this version and schema). Only a hint, never an answer.
   */
  listed(path: string): boolean {
    const dir = this.#folder();
    if (!dir) return false;
    if (this.#names === undefined) {
      try {
        this.#names = new Set(readdirSync(dir));
      } catch {
        this.#names = new Set();
      }
    }
    return this.#names.has(basename(this.#file(path)));
  }

  /** What was written for `path` under this version and schema, or undefined. */
  read(path: string): Record<string, unknown> | undefined {
    if (!this.#folder()) return undefined;
    try {
      return this.#ours(unsealed(readRegularFile(this.#file(path))), path);
    } catch {
      return undefined;
    }
  }

  /**
   * `read`, with its last field `key` as the JSON written, in UTF-8 bytes (neither decoded nor parsed:
   * a batch prints a kept report as it is): the other fields come first, and a `,"key":` with its
   * quotes bare is no part of a string in JSON, whose quotes are escaped (and no byte of a character
   * beyond ASCII is an ASCII one).
   */
  readWithJson(path: string, key: string): { readonly fields: Record<string, unknown>; readonly json: Buffer } | undefined {
    if (!this.#folder()) return undefined;
    try {
      const body = unsealedBytes(readRegularFile(this.#file(path)));
      const at = body.indexOf(`,${JSON.stringify(key)}:`);
      if (at < 0 || body[body.length - 1] !== CLOSING_BRACE) return undefined;
      const fields = this.#ours(JSON.parse(`${body.toString('utf8', 0, at)}}`), path);
      return fields ? { fields, json: body.subarray(at + key.length + 4, body.length - 1) } : undefined;
    } catch {
      return undefined;
    }
  }

  /** `data`, when it is a file of this version and schema, for `path`. */
  #ours(data: unknown, path: string): Record<string, unknown> | undefined {
    if (!data || typeof data !== 'object') return undefined;
    const fields = data as Record<string, unknown>;
    return fields['version'] === this.version && fields['schema'] === this.schema && fields['path'] === path ? fields : undefined;
  }

  /**
   * Writes `fields` for `path` (atomically), then drops the least recently written files past the
   * most kept (with `deferTrim`, only when `trim` is called). `json`: one more field, given as JSON
   * text (a report a worker already wrote out: not parsed and written out again here).
   */
  write(path: string, fields: Record<string, unknown>, json?: { readonly key: string; readonly text: string }): void {
    const dir = this.#folder();
    if (!dir) return;
    try {
      if (!this.#made) mkdirSync(dir, { recursive: true, mode: 0o700 });
      this.#made = true;
      const head = JSON.stringify({ version: this.version, schema: this.schema, path, ...fields });
      const body = json ? `${head.slice(0, -1)},${JSON.stringify(json.key)}:${json.text}}` : head;
      const file = this.#file(path);
      if (!existsSync(file)) this.#added = true;
      writeFileAtomic(file, sealedJson(body), { durable: false, cache: true });
      this.#written.add(basename(file));
      if (!this.layout.deferTrim) this.trim();
    } catch {
      // Read-only home, full disk…: the next run does the work again.
    }
  }

  /**
   * Drops the least recently written files past the most kept, when one was added since the last
   * time (only that makes the folder fuller); those written since go last (other files dated in the
   * future would otherwise outlast them).
   */
  trim(): void {
    const dir = this.#folder();
    if (!dir || !this.#added) return;
    try {
      this.#trim(dir, this.#written);
    } catch {
      // Gone or unreadable: nothing to trim.
    }
    this.#written.clear();
    this.#added = false;
  }

  #trim(dir: string, written: ReadonlySet<string>): void {
    // Only what this class writes: regular files named by a path's hash (not a folder or a link, nor a file of anyone else's).
    const names = readdirSync(dir, { withFileTypes: true })
      .filter((entry) => entry.isFile() && OWN_NAME.test(entry.name))
      .map((entry) => entry.name);
    if (names.length <= this.layout.max) return;
    // Down to 90 % of the most kept: the next new files do not each list and date the whole folder
    // again (50,000 reports: about 0.3 s a file once it was full).
    const keep = this.layout.max - Math.floor(this.layout.max / 10);
    const at = (name: string): number => {
      try {
        return statSync(join(dir, name)).mtimeMs;
      } catch {
        return 0; // gone since the listing (another run trimmed it)
      }
    };
    // Written by this run: newer than any other, whatever their dates say (a clock set wrong, a backup put back).
    const now = Date.now();
    const byAge = names.map((name) => ({ name, at: written.has(name) ? LATER + at(name) : Math.min(at(name), now) })).sort((a, b) => a.at - b.at);
    for (const { name } of byAge.slice(0, names.length - keep)) {
      try {
        rmSync(join(dir, name), { force: true });
      } catch {
        // Replaced by something else since the listing: left, and the others still go.
      }
    }
  }
}

/** Past any date a file may have: what the trim adds to the dates of the files written since the last one. */
const LATER = 2 ** 50;

/** A file's name as `#file` makes it: a path's SHA-1 in base64url. */
const OWN_NAME = /^[\w-]{27}\.json$/;

interface PathFilesLayout {
  readonly version: number;
  /** Files kept at most: past it, the least recently written are dropped down to 90 % of it. */
  readonly max: number;
  /**
   * Trim only when `trim` is called, not after each write: a batch writes one file per transcript,
   * and listing a folder of thousands after each would cost more than the writes.
   */
  readonly deferTrim?: boolean;
}
