import { spawnSync } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmdirSync,
  rmSync,
  statSync,
  symlinkSync,
  unlinkSync,
} from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { InputError, UsageError } from '../core/errors.js';
import { parseHookScript, previousHookName } from '../core/git-hook.js';
import type { HookMeta, ParsedHook } from '../core/git-hook.js';
import type { GitHookName } from '../core/names.js';
import { hasGlob, segmentRegExp, splitGlob } from '../core/path-glob.js';
import type { TranscriptMatch } from '../core/reports/hook.js';
import { tempPathFor, writeFileAtomic } from './atomic.js';
import { expandInputs } from './input.js';
import { isInside, realPathOf } from './paths.js';

/** The repository a hook goes into, as git itself sees it from `cwd`. */
export interface GitRepository {
  /** The work tree's top (where git runs hooks), or null in a bare repository. */
  readonly topLevel: string | null;
  /** The folder git runs hooks from: `core.hooksPath`, else the common git dir's `hooks` (shared by all worktrees). */
  readonly hooksDir: string;
  /** `core.hooksPath` as configured, or null. */
  readonly hooksPath: string | null;
}

type Env = Readonly<Record<string, string | undefined>>;

function git(args: readonly string[], cwd: string, env: Env): { status: number; stdout: string; stderr: string } {
  const result = spawnSync('git', args, { cwd, env: env as NodeJS.ProcessEnv, encoding: 'utf8' });
  if (result.error) {
    const code = (result.error as NodeJS.ErrnoException).code;
    throw new InputError(`cannot run git: ${code ?? result.error.message}`, code === 'ENOENT' ? 'install git, or put it on PATH' : undefined);
  }
  return { status: result.status ?? 1, stdout: result.stdout.replace(/\n$/, ''), stderr: result.stderr.trim() };
}

/**
 * Finds the hooks folder the way git does: `git rev-parse --git-path hooks` applies `core.hooksPath`
 * (relative to the work tree's top) and, in a linked worktree, names the common `hooks` folder.
 */
export function locateRepository(cwd: string, env: Env): GitRepository {
  const inside = git(['rev-parse', '--git-dir'], cwd, env);
  if (inside.status !== 0) {
    const said = inside.stderr.replace(/^fatal: /, '');
    throw new InputError(
      `${cwd} is not in a git repository${said === '' || said.startsWith('not a git repository') ? '' : ` (${said})`}`,
      'run devs-ctx hook in the repository whose commits should prune the transcripts (or git init one)',
    );
  }
  const top = git(['rev-parse', '--show-toplevel'], cwd, env);
  const hooks = git(['rev-parse', '--git-path', 'hooks'], cwd, env);
  const hooksPath = git(['config', '--type=path', '--get', 'core.hooksPath'], cwd, env);
  return {
    topLevel: top.status === 0 && top.stdout !== '' ? top.stdout : null,
    hooksDir: resolve(cwd, hooks.stdout),
    hooksPath: hooksPath.status === 0 && hooksPath.stdout !== '' ? hooksPath.stdout : null,
  };
}

/**
 * Where `hook run` keeps what it saw of the transcripts: in the git folder (a linked worktree's own),
 * never beside the hook, whose folder may be tracked (`core.hooksPath=.githooks`, a
 * husky folder) and would then collect this machine's paths for the next `git add -A`. Undefined
 * when git cannot say (no state kept: every transcript is checked).
 */
export function hookStateDir(cwd: string, env: Env): string | undefined {
  try {
    const found = git(['rev-parse', '--git-path', 'devs-ctx-hook-state'], cwd, env);
    return found.status === 0 && found.stdout !== '' ? resolve(cwd, found.stdout) : undefined;
  } catch {
    return undefined;
  }
}

export type HookFile =
  | { readonly state: 'absent'; readonly path: string }
  | { readonly state: 'foreign'; readonly path: string }
  | { readonly state: 'devs-ctx'; readonly path: string; readonly meta: HookMeta; readonly modified: boolean };

/** What is at a hook's path: nothing, someone else's hook, or one devs-ctx wrote. */
export function readHookFile(path: string): HookFile {
  let text: string;
  try {
    if (lstatSync(path).isDirectory()) return { state: 'foreign', path };
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') {
      // A dangling symlink is still someone's hook.
      return isLink(path) ? { state: 'foreign', path } : { state: 'absent', path };
    }
    throw new InputError(`cannot read ${path}: ${code ?? String(error)}`);
  }
  const parsed: ParsedHook = parseHookScript(text);
  return parsed.kind === 'devs-ctx' ? { state: 'devs-ctx', path, meta: parsed.meta, modified: parsed.modified } : { state: 'foreign', path };
}

function isLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

/** lstat-exists: a symlink counts even when it points nowhere. */
function present(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

export interface InstallResult {
  readonly path: string;
  /** `installed` fresh, `updated` over an earlier devs-ctx hook. */
  readonly action: 'installed' | 'updated';
  /** The hook moved aside and chained, when there is one (absolute path). */
  readonly previous: string | null;
}

/**
 * Puts the hook in place. Someone else's hook is moved aside (renamed, so its bytes, mode and
 * symlink-ness are kept) and called first by ours; an earlier devs-ctx hook is replaced, keeping the
 * hook it chains. A devs-ctx hook edited by hand is not replaced without `force`.
 */
export function installHookFile(options: {
  readonly hooksDir: string;
  readonly hook: GitHookName;
  readonly render: (previous: string | null) => string;
  readonly force: boolean;
}): InstallResult {
  const { hooksDir, hook } = options;
  const path = join(hooksDir, hook);
  const previousPath = join(hooksDir, previousHookName(hook));
  try {
    mkdirSync(hooksDir, { recursive: true });
  } catch (error) {
    throw new InputError(`cannot create the hooks folder ${hooksDir}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
  const current = readHookFile(path);
  const write = (previous: string | null): void => writeFileAtomic(path, Buffer.from(options.render(previous)), { mode: 0o755 });

  if (current.state === 'devs-ctx') {
    if (current.modified && !options.force) throw editedError(path, 'replace');
    // The chained hook's name is always derived from the hook's, never taken from the file as written.
    const previous = current.meta.previous === null ? null : previousHookName(hook);
    write(previous);
    return { path, action: 'updated', previous: previous !== null && present(join(hooksDir, previous)) ? join(hooksDir, previous) : null };
  }
  if (present(previousPath)) {
    throw new UsageError(
      `${previousPath} is left from an earlier devs-ctx install, and ${path} is ${current.state === 'absent' ? 'missing' : 'not the devs-ctx hook'}`,
      `look at both, put back the one you want as ${hook} (or delete ${previousPath}), then install again`,
    );
  }
  if (current.state === 'absent') {
    write(null);
    return { path, action: 'installed', previous: null };
  }
  if (lstatSync(path).isDirectory()) throw new UsageError(`${path} is a directory, not a hook`, 'move it away, then install again');
  // A hook that finds files beside itself (`. "$(dirname "$0")/common.sh"`, husky's `h`) would not
  // find them from the folder it is moved to: refuse rather than break every commit.
  if (!options.force && findsFilesBesideItself(path)) {
    throw new UsageError(
      `${path} loads files from its own folder ("dirname $0"), so it cannot be moved aside and chained`,
      'call devs-ctx from it instead (devs-ctx hook install --stdout prints a script to call), or pass --force',
    );
  }
  movePreviousHook(path, previousPath);
  try {
    write(previousHookName(hook));
  } catch (error) {
    movePreviousHook(previousPath, path);
    rmdirQuiet(dirname(previousPath));
    throw error;
  }
  return { path, action: 'installed', previous: previousPath };
}

/**
 * Moves a hook between the hooks folder and the folder one level down where the previous hook is
 * kept, as a rename (bytes, mode and symlink-ness kept). A relative symlink is re-pointed by one
 * level (`dispatch` becomes `../dispatch` going down, and back going up) so it still resolves.
 */
function movePreviousHook(from: string, to: string): void {
  mkdirSync(dirname(to), { recursive: true });
  const stat = lstatSync(from);
  if (!stat.isSymbolicLink()) {
    renameSync(from, to);
    return;
  }
  const target = readlinkSync(from);
  if (isAbsolute(target)) {
    renameSync(from, to);
    return;
  }
  const down = dirname(to) !== dirname(from) && dirname(dirname(to)) === dirname(from);
  const moved = down ? join('..', target) : target.startsWith(`..${sep}`) || target.startsWith('../') ? target.slice(3) : target;
  const temporary = tempPathFor(to);
  symlinkSync(moved, temporary);
  renameSync(temporary, to); // the new link in one step
  rmSync(from, { force: true });
}

export interface UninstallResult {
  readonly path: string;
  /** `removed` (there was no hook before), `restored` (the previous hook is back), `absent` (no devs-ctx hook here). */
  readonly action: 'removed' | 'restored' | 'absent';
  readonly previous: string | null;
  /** Set when the chained hook was expected but is gone (it was deleted by hand). */
  readonly missingPrevious?: string;
}

/** Removes only what install added: our script, and the previous hook renamed back (byte for byte). */
export function uninstallHookFile(options: { readonly hooksDir: string; readonly hook: GitHookName; readonly force: boolean }): UninstallResult {
  const path = join(options.hooksDir, options.hook);
  const current = readHookFile(path);
  if (current.state !== 'devs-ctx') return { path, action: 'absent', previous: null };
  if (current.modified && !options.force) throw editedError(path, 'remove');
  const previous = current.meta.previous === null ? null : join(options.hooksDir, previousHookName(options.hook));
  if (previous !== null && present(previous)) {
    movePreviousHook(previous, path); // replaces ours in one step: there is never a moment with no hook
    rmdirQuiet(dirname(previous));
    return { path, action: 'restored', previous };
  }
  unlinkSync(path);
  return { path, action: 'removed', previous: null, ...(previous !== null ? { missingPrevious: previous } : {}) };
}

function editedError(path: string, verb: string): UsageError {
  return new UsageError(
    `${path} was edited since devs-ctx wrote it; ${verb === 'remove' ? 'removing' : 'replacing'} it would lose those edits`,
    `keep your edits elsewhere and pass --force to ${verb} it anyway`,
  );
}

/** Where a project's `transcripts` may reach (see expandTranscripts). */
export interface TranscriptConfinement {
  /** The repository's top: patterns and the real paths of their files must be inside it. */
  readonly root: string;
}

/**
 * Expands paths and globs (relative to `base`; `~/` is the home folder) into transcript files:
 * a file is itself, a folder gives its `.jsonl`/`.json` files, a glob its matching files. A path
 * that names nothing gives no file (the sessions may not exist yet).
 */
export function expandTranscripts(patterns: readonly string[], base: string, home: string | undefined, confine?: TranscriptConfinement): TranscriptMatch[] {
  const root = confine ? realPathOf(confine.root) : undefined;
  return patterns.map((pattern) => {
    // Only the pattern is a glob: the folder it is relative to (the repository, home) is taken as it
    // is named, whatever characters its name holds (`br{a,b}`, `[x]`).
    const fromHome = home !== undefined && (pattern === '~' || pattern.startsWith('~/'));
    const own = fromHome ? pattern.slice(2) : pattern;
    const glob = hasGlob(own);
    const { base: fixedPart, segments } = glob ? splitGlob(own) : { base: own, segments: [] };
    const fixed = fromHome ? join(home, fixedPart) : isAbsolute(own) ? fixedPart : join(base, fixedPart);
    if (confine && root !== undefined) {
      // Lexically first, so a pattern such as /**/*.jsonl is not even walked.
      if (!isInside(realPathOf(fixed || '/'), root) && !isInside(resolve(fixed || '/'), resolve(confine.root))) {
        return { pattern, files: [], refused: `outside the repository ${confine.root}` };
      }
    }
    const files = glob ? walkGlob(fixed, segments) : namedPath(fixed);
    if (!confine || root === undefined) return { pattern, files };
    // Symlinks resolved: a link inside the repository to a file outside it does not count.
    const inside = files.filter((file) => isInside(realPathOf(file), root));
    const left = files.length - inside.length;
    return left === 0
      ? { pattern, files }
      : { pattern, files: inside, refused: `${left} file(s) it matches are outside the repository ${confine.root} (through a symlink)` };
  });
}

function namedPath(path: string): string[] {
  try {
    const stat = statSync(path);
    if (stat.isFile()) return [path];
    if (stat.isDirectory()) return expandInputs([path], '/');
  } catch {
    // missing or unreadable: no files
  }
  return [];
}

/** The files below `base` whose path from it matches the glob's `segments` (see splitGlob). */
function walkGlob(base: string, segments: readonly string[]): string[] {
  const out: string[] = [];
  const entries = (dir: string): { name: string; dir: boolean; file: boolean; link: boolean }[] => {
    try {
      return readdirSync(dir, { withFileTypes: true })
        .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
        .map((e) => {
          const link = e.isSymbolicLink();
          let target: { dir: boolean; file: boolean } = { dir: e.isDirectory(), file: e.isFile() };
          if (link) {
            try {
              const s = statSync(join(dir, e.name));
              target = { dir: s.isDirectory(), file: s.isFile() };
            } catch {
              target = { dir: false, file: false };
            }
          }
          return { name: e.name, link, ...target };
        });
    } catch {
      return [];
    }
  };
  const visit = (dir: string, i: number): void => {
    const segment = segments[i];
    if (segment === undefined) return;
    const last = i === segments.length - 1;
    if (segment === '**') {
      if (last) {
        for (const file of namedPath(dir)) out.push(file);
        return;
      }
      visit(dir, i + 1);
      // `**` never follows a symlinked folder (no loops) nor enters hidden ones.
      for (const e of entries(dir)) if (e.dir && !e.link && !e.name.startsWith('.')) visit(join(dir, e.name), i);
      return;
    }
    const re = segmentRegExp(segment);
    for (const e of entries(dir)) {
      if (!re.test(e.name)) continue;
      const path = join(dir, e.name);
      if (!last) {
        if (e.dir) visit(path, i + 1);
      } else if (e.file) {
        out.push(path);
      } else if (e.dir) {
        out.push(...namedPath(path));
      }
    }
  };
  if (existsSync(base || '.')) visit(base || '.', 0);
  return [...new Set(out)];
}

/** A path for people: relative to `from` when it is inside it, else absolute. */
export function displayPath(path: string, from: string): string {
  const rel = relative(from, path);
  return rel === '' ? '.' : rel.startsWith('..') || isAbsolute(rel) ? path : rel;
}

/** Removes the previous hooks' folder when it is empty (another hook's may still be there). */
function rmdirQuiet(dir: string): void {
  try {
    rmdirSync(dir);
  } catch {
    // not empty, or gone
  }
}

/** True when a hook script (followed through symlinks) refers to its own folder via `$0`. */
function findsFilesBesideItself(path: string): boolean {
  try {
    const text = readFileSync(path, 'utf8');
    return /dirname[^\n]{0,20}\$\{?0\}?|\$\{0%\/\*\}/.test(text);
  } catch {
    return false;
  }
}
