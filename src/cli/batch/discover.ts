import { lstatSync, readdirSync, realpathSync, statSync } from 'node:fs';
import type { Dirent } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { InputError } from '../../core/errors.js';
import type { DevsCtxError } from '../../core/errors.js';
import { STDIN, inputError } from '../../io/input.js';
import { byCodeUnits } from '../../core/compare.js';

/**
 * One thing discovery found: a transcript to analyse, or a path that could not be walked. `found`:
 * a file a directory walk or a glob came upon, not one named (a batch leaves it out when it is JSON
 * but no transcript, where a file named is read as asked).
 */
export type Discovered =
  | { readonly path: string; readonly error?: undefined; readonly found?: boolean }
  | { readonly path: string; readonly error: DevsCtxError; readonly found?: undefined };

/** A file a walk or a glob came upon (see Discovered). */
const foundBy = (item: Discovered): Discovered => (item.error ? item : { path: item.path, found: true });

const TRANSCRIPT_EXTENSIONS = ['.jsonl', '.json'];
const isTranscriptName = (name: string): boolean => TRANSCRIPT_EXTENSIONS.some((ext) => name.endsWith(ext));

/**
 * Folders a directory walk or a quoted glob does not go into: devs-ctx's own cache. Its `.json`
 * files (the row cache, the grown sessions' states) are no transcripts, and they change from one
 * run to the next, so a re-run would print rows a cold run does not. A folder is left out by what
 * it is, however the walk reaches it (through a symlink, say): its real path is compared, for a
 * folder of the same name only. Named as an input itself (or as a glob's literal part), it is read.
 */
class LeftOut {
  readonly #names: Set<string>;
  readonly #real: Set<string>;

  constructor(dirs: readonly string[], cwd: string) {
    const absolute = dirs.map((dir) => resolve(cwd, dir));
    this.#real = new Set(absolute.map(realOrResolved));
    // A walk meets a folder by its own name (it does not follow symlinks to folders): that of its
    // real path, which a symlink given for it (DEVS_CTX_CACHE_DIR=~/cache-link) does not have.
    this.#names = new Set([...absolute, ...this.#real].map((dir) => basename(dir)));
  }

  has(absolute: string): boolean {
    return this.#names.has(basename(absolute)) && this.#real.has(realOrResolved(absolute));
  }
}

/** The real path of `absolute`; for one that does not exist (yet), its nearest existing folder's real path joined with the rest. */
function realOrResolved(absolute: string): string {
  try {
    return realpathSync(absolute);
  } catch {
    const parent = dirname(absolute);
    return parent === absolute ? absolute : join(realOrResolved(parent), basename(absolute));
  }
}

/**
 * A listed file that cannot be opened by the name listed, said so (not "no such file"): Node reads a
 * folder's names as UTF-8, and one that is not (a byte 0xff) comes back with U+FFFD in its place, a
 * name no file has. A name that really holds U+FFFD is opened as any other.
 */
function unopenable(name: string, absolute: string, shown: string): Discovered | undefined {
  if (!name.includes('\uFFFD')) return undefined;
  try {
    lstatSync(absolute);
    return undefined;
  } catch {
    return {
      path: shown,
      error: new InputError(`${shown}: its name is not valid UTF-8, and devs-ctx cannot open a file by such a name`, 'rename it to a UTF-8 name'),
    };
  }
}

/** A listed entry with a transcript's name, as discovery yields it: a file (or a symlink to one), a name that cannot be opened (see unopenable), or nothing. */
function listedFile(entry: Dirent, absolute: string, shown: string): Discovered | undefined {
  const unnamed = unopenable(entry.name, absolute, shown);
  if (unnamed) return unnamed;
  return entry.isFile() || (entry.isSymbolicLink() && isFile(absolute)) ? { path: shown } : undefined;
}

/** True when `path` has shell wildcards (`*`, `?`, `[…]`) that devs-ctx expands itself. */
function hasGlob(path: string): boolean {
  return /[*?[]/.test(path);
}

/**
 * Checks the paths a user typed before anything is analysed, as a single-file run always did: a
 * missing path is an input error (exit 3) up front, not a row. A quoted glob is checked when it is
 * expanded (no match is then a row, or the error itself when it is the only input).
 */
export function checkInputPaths(paths: readonly string[], cwd: string): void {
  for (const path of paths) {
    if (path === STDIN) continue;
    try {
      statSync(resolve(cwd, path));
    } catch (error) {
      if (hasGlob(path)) continue;
      throw inputError(path, error);
    }
  }
}

/**
 * Streams the transcripts below the given paths, lazily, in the order `expandInputs` lists them: each
 * path in turn; a directory's `.jsonl`/`.json` files depth-first with names sorted; a file as given;
 * `-` for standard input. A quoted glob (`'~/.claude/projects/*\/*.jsonl'`, `**` for any depth) is
 * expanded here, so thousands of files never hit the shell's argument limit. The same file reached
 * twice (its path again, a symlink to it, a hard link: its device and inode) is yielded once, under
 * the name first reached. A directory that cannot be read, or yields nothing, is yielded as an error
 * in its place and the walk goes on. Only the set of files seen is kept (for de-duplication).
 * `leaveOut`: folders that walks and globs do not go into (devs-ctx's cache: see LeftOut).
 */
export function* discoverTranscripts(paths: readonly string[], cwd: string, leaveOut: readonly string[] = []): Generator<Discovered> {
  const left = new LeftOut(leaveOut, cwd);
  const seen = new Set<string>();
  const fresh = (path: string): boolean => {
    const key = path === STDIN ? STDIN : fileKey(resolve(cwd, path));
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  };
  for (const path of paths) {
    if (path === STDIN) {
      if (fresh(STDIN)) yield { path };
      continue;
    }
    const absolute = resolve(cwd, path);
    let isDirectory: boolean;
    try {
      isDirectory = statSync(absolute).isDirectory();
    } catch (error) {
      if (!hasGlob(path)) {
        yield { path, error: inputError(path, error) };
        continue;
      }
      let found = 0;
      for (const item of expandGlob(path, cwd, left)) {
        if (item.error || fresh(item.path)) {
          found++;
          yield foundBy(item);
        }
      }
      if (found === 0)
        yield {
          path,
          error: new InputError(`${path}: no .jsonl or .json file matches this pattern`, 'quote the pattern so that devs-ctx expands it, and check it'),
        };
      continue;
    }
    if (!isDirectory) {
      if (fresh(path)) yield { path };
      continue;
    }
    let found = 0;
    for (const item of walk(absolute, path, left)) {
      found++;
      if (item.error || fresh(item.path)) yield foundBy(item);
    }
    if (found === 0) yield { path, error: new InputError(`${path}: no .jsonl or .json files in this directory`) };
  }
}

/**
 * What tells one file from another: its device and inode, so a file reached by another name (a
 * symlink to it, a hard link) is the same file; its path when it cannot be read (reading it says why).
 */
function fileKey(absolute: string): string {
  try {
    const { dev, ino } = statSync(absolute, { bigint: true });
    return `${dev}:${ino}`;
  } catch {
    return absolute;
  }
}

function readDir(absolute: string): Dirent[] {
  return readdirSync(absolute, { withFileTypes: true }).sort((a, b) => byCodeUnits(a.name, b.name));
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** Transcript files below `dir`; symlinks to files are followed, symlinks to directories are not (no loops). */
function* walk(dir: string, shown: string, left: LeftOut): Generator<Discovered> {
  const display = (path: string): string => join(shown, relative(dir, path));
  const stack: { readonly path: string; readonly entries: Dirent[]; next: number }[] = [];
  try {
    stack.push({ path: dir, entries: readDir(dir), next: 0 });
  } catch (error) {
    yield { path: shown, error: inputError(shown, error) };
    return;
  }
  while (stack.length > 0) {
    const top = stack[stack.length - 1];
    const entry = top?.entries[top.next++];
    if (top === undefined || entry === undefined) {
      stack.pop();
      continue;
    }
    const path = join(top.path, entry.name);
    if (entry.isDirectory()) {
      if (left.has(path)) continue;
      try {
        stack.push({ path, entries: readDir(path), next: 0 });
      } catch (error) {
        yield { path: display(path), error: inputError(display(path), error) };
      }
      continue;
    }
    if (!isTranscriptName(entry.name)) continue;
    const listed = listedFile(entry, path, display(path));
    if (listed) yield listed;
  }
}

/** A glob segment as a regular expression: `*` any run within a name, `?` one character, `[…]` a class. */
function segmentPattern(segment: string): RegExp {
  let source = '';
  for (let i = 0; i < segment.length; i++) {
    const ch = segment[i] ?? '';
    if (ch === '*') source += '[^/]*';
    else if (ch === '?') source += '[^/]';
    else if (ch === '[') {
      const end = segment.indexOf(']', i + 1);
      if (end < 0) source += '\\[';
      else {
        const body = segment
          .slice(i + 1, end)
          .replace(/^!/, '^')
          .replace(/\\/g, '\\\\');
        source += `[${body}]`;
        i = end;
      }
    } else source += ch.replace(/[.+^${}()|\\]/g, '\\$&');
  }
  // Like a shell, a wildcard does not match a leading dot unless the pattern starts with one.
  return new RegExp(segment.startsWith('.') ? `^${source}$` : `^(?!\\.)${source}$`);
}

/** Expands a glob relative to `cwd` into transcript files (sorted, depth-first, like a directory walk). */
function* expandGlob(pattern: string, cwd: string, left: LeftOut): Generator<Discovered> {
  const absolutePattern = pattern.startsWith('/');
  const segments = pattern.split('/').filter((s, i) => s !== '' || (i === 0 && absolutePattern));
  // The literal leading part is where the walk starts.
  let base = absolutePattern ? '/' : '';
  let first = absolutePattern ? 1 : 0;
  while (first < segments.length - 1 && !hasGlob(segments[first] ?? '')) {
    base = base === '' ? (segments[first] ?? '') : join(base, segments[first] ?? '');
    first++;
  }
  const rest = segments.slice(first);
  yield* matchSegments(base, rest, cwd, left);
}

function* matchSegments(shown: string, segments: readonly string[], cwd: string, left: LeftOut): Generator<Discovered> {
  const [segment, ...rest] = segments;
  if (segment === undefined) return;
  const absolute = resolve(cwd, shown === '' ? '.' : shown);
  const display = (name: string): string => (shown === '' ? name : join(shown, name));
  if (segment === '**') {
    // Zero directories, then each directory below (not through directory symlinks).
    yield* matchSegments(shown, rest, cwd, left);
    let entries: Dirent[];
    try {
      entries = readDir(absolute);
    } catch {
      return;
    }
    for (const entry of entries) {
      if (entry.isDirectory() && !entry.name.startsWith('.') && !left.has(join(absolute, entry.name)))
        yield* matchSegments(display(entry.name), segments, cwd, left);
    }
    return;
  }
  if (!hasGlob(segment)) {
    const next = display(segment);
    if (rest.length === 0) {
      if (isTranscriptName(segment) && isFile(resolve(cwd, next))) yield { path: next };
    } else {
      yield* matchSegments(next, rest, cwd, left);
    }
    return;
  }
  let entries: Dirent[];
  try {
    entries = readDir(absolute);
  } catch (error) {
    const where = shown === '' ? '.' : shown;
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT' && (error as NodeJS.ErrnoException).code !== 'ENOTDIR')
      yield { path: where, error: inputError(where, error) };
    return;
  }
  const pattern = segmentPattern(segment);
  for (const entry of entries) {
    if (!pattern.test(entry.name)) continue;
    const path = display(entry.name);
    if (rest.length > 0) {
      if (entry.isDirectory() && !left.has(join(absolute, entry.name))) yield* matchSegments(path, rest, cwd, left);
    } else if (isTranscriptName(entry.name)) {
      const listed = listedFile(entry, join(absolute, entry.name), path);
      if (listed) yield listed;
    }
  }
}

/**
 * The absolute directory a batch's inputs have in common: each input's directory (a directory
 * itself, a file's parent, a glob's literal leading part), then their longest shared ancestor.
 * The batch table shows names relative to it. Undefined for standard input alone.
 */
export function inputRoot(paths: readonly string[], cwd: string): string | undefined {
  const dirs: string[] = [];
  for (const path of paths) {
    if (path === STDIN) continue;
    let dir: string;
    if (hasGlob(path)) {
      const literal = path.split('/').findIndex((s) => hasGlob(s));
      dir = resolve(cwd, path.split('/').slice(0, literal).join('/') || (path.startsWith('/') ? '/' : '.'));
    } else {
      const absolute = resolve(cwd, path);
      let directory = false;
      try {
        directory = statSync(absolute).isDirectory();
      } catch {
        // A path that vanished: its parent.
      }
      dir = directory ? absolute : dirname(absolute);
    }
    dirs.push(dir);
  }
  const [first, ...rest] = dirs;
  if (first === undefined) return undefined;
  let common = first.split(sep);
  for (const dir of rest) {
    const parts = dir.split(sep);
    let same = 0;
    while (same < common.length && same < parts.length && common[same] === parts[same]) same++;
    common = common.slice(0, same);
  }
  return common.join(sep) || sep;
}
