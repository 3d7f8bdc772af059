import { createHash } from 'node:crypto';
import { closeSync, constants, existsSync, fstatSync, mkdirSync, openSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeFileAtomic } from './atomic.js';
import { readFully, readRegularFile } from './fd.js';
import { PathFiles } from './path-files.js';
import { sealed, unsealed } from './sealed.js';

/**
 * The finished rows of a batch `analyze`, per file, so that a re-run over files that have not changed
 * costs an open and two small reads each, not a parse. A file is known by its identity: device, inode,
 * size, modification and change times (nanoseconds) and a hash of its first and last 4 KiB. Any
 * difference (it grew, was rewritten, replaced, touched) and the file is analysed again. The change
 * time is what tells a same-size rewrite of the middle whose modification time was put back (`cp -p`,
 * `rsync -t`, `touch -r`): every write sets it, and nothing can set it back. On a file system whose
 * clock ticks coarsely, two same-size rewrites within one tick that keep both ends still look alike;
 * so does a file changed through a shared memory map whose pages were already dirty, until the
 * kernel writes them back (neither time moves before then).
 *
 * The whole cache is keyed on a schema key: the build's own id (a hash of the built code, written by
 * `npm run build`), the row format version and every setting that changes a row. A new version of the
 * tool, a change to what a row holds, or other settings, and no old row is ever returned. Without a
 * build id (running from the TypeScript sources) the cache is off, so a changed source never meets a
 * stale row. Like the token-count cache it is an optimisation: unreadable or unwritable, it is ignored.
 * Its file is sealed (src/io/sealed.ts): one changed since devs-ctx wrote it is ignored too.
 */

/** Bump when the stored layout changes (the build id already covers changes to the code). */
const ROW_CACHE_VERSION = 2;
/** Least recently used files are dropped past this, so the file stays small to load. */
const MAX_FILES = 50_000;
/**
 * Reports kept (one file each: a report lists every turn's tokens, about 80 bytes a turn, a few per
 * cent of its transcript); the least recently written go first. As many as rows:
 * a batch `--json` keeps one per transcript, and fewer would have it write and drop them on every run.
 */
const MAX_REPORTS = MAX_FILES;
/** Bytes hashed at each end of a file. */
const EDGE_BYTES = 4096;
/** `{`: how every kept report's JSON begins. */
const OPENING_BRACE = 0x7b;

/** What tells one version of a file from another. All strings: inodes and nanoseconds exceed 2^53. */
export interface FileIdentity {
  readonly dev: string;
  readonly ino: string;
  readonly size: string;
  readonly mtimeNs: string;
  readonly ctimeNs: string;
  /** sha1 of the first and last EDGE_BYTES bytes. */
  readonly edges: string;
  /** Modification time in ms (for undated transcripts and --since); not part of the comparison. */
  readonly mtimeMs: number;
}

/**
 * The identity of the file at `path` now, or undefined when it is not a regular file or cannot be
 * read (then nothing is cached). A FIFO is never opened here: opening it would wait for a writer,
 * and closing it again would cut that writer off before the real read.
 */
export function fileIdentity(path: string): FileIdentity | undefined {
  let fd: number | undefined;
  try {
    if (!statSync(path).isFile()) return undefined;
    // Non-blocking, in case the path became a FIFO since the stat; a regular file ignores the flag.
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
    const stat = fstatSync(fd, { bigint: true });
    if (!stat.isFile()) return undefined;
    const size = Number(stat.size);
    const hash = createHash('sha1');
    const head = Buffer.allocUnsafe(Math.min(size, EDGE_BYTES));
    hash.update(head.subarray(0, readFully(fd, head, 0)));
    if (size > EDGE_BYTES) {
      const tail = Buffer.allocUnsafe(Math.min(size - EDGE_BYTES, EDGE_BYTES));
      hash.update(tail.subarray(0, readFully(fd, tail, size - tail.length)));
    }
    return {
      dev: String(stat.dev),
      ino: String(stat.ino),
      size: String(stat.size),
      mtimeNs: String(stat.mtimeNs),
      ctimeNs: String(stat.ctimeNs),
      edges: hash.digest('base64url'),
      // As a plain stat gives it (seconds and nanoseconds in ms, with a fraction).
      mtimeMs: Number(stat.mtimeNs / 1_000_000n) + Number(stat.mtimeNs % 1_000_000n) / 1e6,
    };
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function sameIdentity(a: FileIdentity, b: StoredIdentity): boolean {
  return a.dev === b[0] && a.ino === b[1] && a.size === b[2] && a.mtimeNs === b[3] && a.ctimeNs === b[4] && a.edges === b[5];
}

type StoredIdentity = readonly [dev: string, ino: string, size: string, mtimeNs: string, ctimeNs: string, edges: string];

function stored(identity: FileIdentity): StoredIdentity {
  return [identity.dev, identity.ino, identity.size, identity.mtimeNs, identity.ctimeNs, identity.edges];
}

/** Whether a kept identity has the stored shape (a cache of an older layout has not). */
function isStoredIdentity(value: unknown): value is StoredIdentity {
  return Array.isArray(value) && value.length === 6 && value.every((part) => typeof part === 'string');
}
interface Stored {
  readonly id: StoredIdentity;
  readonly row: unknown;
}

let buildIdMemo: string | null | undefined;
/**
 * What made a row or a report, besides its settings: the id `npm run build` writes beside the built
 * code (dist/build-id.json: a hash of every built file), found from this module in the tsc output
 * (dist/io/) or in the bundle (dist/cli-bundle/), and the model catalog's identity (`catalogId`).
 * Undefined under tsx, from the sources.
 */
export function buildId(): string | undefined {
  if (buildIdMemo !== undefined) return buildIdMemo ?? undefined;
  buildIdMemo = null;
  const file = fileURLToPath(new URL('../build-id.json', import.meta.url));
  try {
    if (existsSync(file)) {
      const data = JSON.parse(readFileSync(file, 'utf8')) as { id?: unknown };
      if (typeof data.id === 'string' && data.id !== '') buildIdMemo = `${data.id} ${catalogId()}`;
    }
  } catch {
    // a damaged build id: no row cache
  }
  return buildIdMemo ?? undefined;
}

/** The package the model windows come from (src/core/models.ts). */
const CATALOG = '@pydantic/genai-prices';

/**
 * The model catalog's identity: its version, and its data file's inode, size and modification time.
 * The catalog is not bundled: it is loaded from node_modules at run time, so a reinstall of the same
 * devs-ctx build can bring a newer one (the dependency's range allows it), and a window it changes
 * must not be answered from a report kept under the old one. Found without loading the catalog.
 */
function catalogId(): string {
  try {
    const main = createRequire(import.meta.url).resolve(CATALOG);
    const { ino, size, mtimeMs } = statSync(main);
    return `${catalogVersion(main)}:${ino}:${size}:${mtimeMs}`;
  } catch {
    return 'no catalog';
  }
}

/** The version in the catalog's package.json, the nearest one above its main file that names it. */
function catalogVersion(main: string): string {
  for (let dir = dirname(main); dir !== dirname(dir); dir = dirname(dir)) {
    try {
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: unknown; version?: unknown };
      if (manifest.name === CATALOG) return String(manifest.version);
    } catch {
      // no manifest here: look further up
    }
  }
  return 'unknown';
}

/**
 * The key of the reports (`analyze FILE`, and `analyze DIR --json`, which print the same report of a
 * transcript): everything that shapes one, hashed.
 */
export function reportSchemaKey(
  build: string,
  options: { readonly settings: unknown; readonly format: string | undefined; readonly strict: boolean; readonly basis: string },
): string {
  return rowSchemaKey(build, { report: true, settings: options.settings, format: options.format ?? null, strict: options.strict, basis: options.basis });
}

/**
 * A key for everything that shapes a row: hashed, so any change to any part gives another key. The
 * local time zone is part of it: a time written without a zone (OpenHands writes
 * `2025-04-30T16:32:54.707474`) is read as local time, so rows and reports made from one hold in
 * that zone only.
 */
export function rowSchemaKey(build: string, settings: unknown): string {
  return createHash('sha1')
    .update(JSON.stringify({ v: ROW_CACHE_VERSION, build, settings, zone: localTimeZone() }))
    .digest('base64url');
}

/**
 * The zone this process reads local times in: `TZ` as given, and its offsets at the start and the
 * middle of each year from 2000 to 2040 (the zone's name from Intl would cost some 10 ms of a run).
 */
function localTimeZone(): string {
  const offsets: number[] = [];
  for (let year = 2000; year <= 2040; year++) offsets.push(new Date(year, 0, 1).getTimezoneOffset(), new Date(year, 6, 1).getTimezoneOffset());
  return `${process.env['TZ'] ?? ''} ${offsets.join(',')}`;
}

export class RowCache<Row> {
  private readonly files = new Map<string, Stored>();
  private changed = false;

  private constructor(
    private readonly file: string | undefined,
    private readonly schema: string,
  ) {}

  /** The cache in `dir` for rows made under `schema` (rows of another schema are dropped on save). */
  static open<Row>(dir: string | undefined, schema: string | undefined): RowCache<Row> {
    if (!dir || schema === undefined) return new RowCache<Row>(undefined, '');
    const cache = new RowCache<Row>(join(dir, 'analyze-rows.json'), schema);
    try {
      const data = unsealed(readRegularFile(cache.file as string)) as { version?: unknown; schema?: unknown; files?: unknown } | null;
      if (data && data.version === ROW_CACHE_VERSION && data.schema === schema && data.files && typeof data.files === 'object') {
        for (const [path, value] of Object.entries(data.files as Record<string, unknown>)) {
          const stored = value as Partial<Stored> | null;
          if (stored && isStoredIdentity(stored.id) && stored.row && typeof stored.row === 'object') {
            cache.files.set(path, { id: stored.id, row: stored.row });
          }
        }
      }
    } catch {
      // No cache yet, another schema, or a damaged or changed file: start empty.
    }
    return cache;
  }

  get enabled(): boolean {
    return this.file !== undefined;
  }

  /** The row kept for this file when its identity is unchanged (a hit keeps it from eviction). */
  get(path: string, identity: FileIdentity): Row | undefined {
    const stored = this.files.get(path);
    if (stored === undefined || !sameIdentity(identity, stored.id)) return undefined;
    this.files.delete(path);
    this.files.set(path, stored);
    return stored.row as Row;
  }

  /** Whether this file had a row before and is at least as long now (an agent's session grows). */
  grew(path: string, identity: FileIdentity): boolean {
    const before = this.files.get(path)?.id[2];
    return typeof before === 'string' && /^\d+$/.test(before) && BigInt(identity.size) >= BigInt(before);
  }

  set(path: string, identity: FileIdentity, row: Row): void {
    if (!this.enabled) return;
    this.files.delete(path);
    this.files.set(path, { id: stored(identity), row });
    this.changed = true;
  }

  /** Writes the cache atomically when a row was added. */
  save(): void {
    if (!this.file || !this.changed) return;
    try {
      let entries = [...this.files];
      if (entries.length > MAX_FILES) entries = entries.slice(entries.length - MAX_FILES);
      mkdirSync(join(this.file, '..'), { recursive: true, mode: 0o700 });
      writeFileAtomic(this.file, sealed({ version: ROW_CACHE_VERSION, schema: this.schema, files: Object.fromEntries(entries) }), {
        durable: false,
        cache: true,
      });
      this.changed = false;
    } catch {
      // Read-only home, full disk…: the next run analyses again.
    }
  }
}

/** Whether a kept file's fields were written for the file with this identity. */
function keptFor(fields: Record<string, unknown>, identity: FileIdentity): boolean {
  const id = fields['id'];
  return isStoredIdentity(id) && sameIdentity(identity, id);
}

/**
 * The finished report of `analyze` (a single file's, and each of a batch `--json`'s), per file, under
 * the same identity and schema rules as the rows: one file per transcript (`reports/<hash of its
 * path>.json`), so a re-run over an unchanged transcript reads one small file instead of parsing and
 * counting the transcript.
 */
export class ReportCache<Report> {
  private constructor(private readonly files: PathFiles) {}

  /** `deferTrim`: reports past the most kept are dropped by `trim`, not after each one written (a batch). */
  static open<Report>(dir: string | undefined, schema: string | undefined, options: { maxReports?: number; deferTrim?: boolean } = {}): ReportCache<Report> {
    const layout = { version: ROW_CACHE_VERSION, max: options.maxReports ?? MAX_REPORTS, deferTrim: options.deferTrim === true };
    return new ReportCache<Report>(PathFiles.open(dir && join(dir, 'reports'), schema, layout));
  }

  get enabled(): boolean {
    return this.files.enabled;
  }

  /** Whether a report may be kept for `path`: its file was there as the folder was first listed (a batch asks this of every transcript). */
  mayHave(path: string): boolean {
    return this.files.listed(path);
  }

  get(path: string, identity: FileIdentity): Report | undefined {
    const data = this.files.read(path);
    const report = data?.['report'];
    return data && keptFor(data, identity) && report && typeof report === 'object' ? (report as Report) : undefined;
  }

  /** Kept with the file's identity; the most recently written reports are kept (a written report is a new or changed file). */
  set(path: string, identity: FileIdentity, report: Report): void {
    this.files.write(path, { id: stored(identity), report });
  }

  /**
   * `get`, as the JSON kept, in UTF-8 bytes (neither decoded nor parsed), as it was written: compact
   * from `set`, as a batch prints it from `setJson` (src/cli/batch/report-json.ts). Undefined when
   * `get` would be.
   */
  getJson(path: string, identity: FileIdentity): Buffer | undefined {
    const kept = this.files.readWithJson(path, 'report');
    // `get` gives only an object: so does this (a valid report is an object; in JSON, one begins with {).
    return kept && keptFor(kept.fields, identity) && kept.json[0] === OPENING_BRACE ? kept.json : undefined;
  }

  /** `set`, of a report already in JSON (`json`: the report, with any indentation). */
  setJson(path: string, identity: FileIdentity, json: string): void {
    this.files.write(path, { id: stored(identity) }, { key: 'report', text: json });
  }

  /** Drops the least recently written reports past the most kept (opened with `deferTrim`: once, when a batch is done). */
  trim(): void {
    this.files.trim();
  }
}
