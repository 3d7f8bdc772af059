import { existsSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, resolve } from 'node:path';
import type { Archive } from '../archive/archive.js';
import { isPostgresUrl, redactUrl } from '../archive/archive.js';
import type { ArchiveStore } from '../archive/store.js';
import type { EmbeddingCache } from '../providers/gemini/embedder.js';
import { DevsCtxError, InputError, UsageError } from '../core/errors.js';
import { shellWord } from '../core/git-hook.js';
import { loadConfig, loadUserConfig } from '../io/config.js';
import { sameFile } from '../io/atomic.js';
import { isInside, realPathOf } from '../io/paths.js';
import { fileKind } from '../io/input.js';
import type { CliContext } from './context.js';
import { STDOUT } from './transcript-output.js';

/** The files a SQLite archive is: the database and its journals (`-wal`, `-shm`, `-journal`). */
const ARCHIVE_FILES = ['', '-wal', '-shm', '-journal'];

/**
 * `-o` (prune, restore, refresh) must not name the SQLite archive or one of its journals, by any name (a
 * symlink, a hard link): the transcript written there would replace every prune the archive keeps.
 * A usage error (exit 2), checked before anything is read or written.
 */
export function checkOutputIsNotArchive(output: string | undefined, archivePath: string | undefined, cwd: string): void {
  if (output === undefined || output === STDOUT || archivePath === undefined || isPostgresUrl(archivePath)) return;
  const target = resolve(cwd, output);
  const real = realPathOf(target);
  for (const suffix of ARCHIVE_FILES) {
    const file = `${archivePath}${suffix}`;
    if (real === realPathOf(file) || sameFile(target, file)) {
      throw new UsageError(
        `-o names the archive ${archiveDisplay(archivePath)}${suffix ? ` (its ${suffix.slice(1)} file)` : ''}: the transcript would replace every prune it keeps`,
        'write the transcript to another file',
      );
    }
  }
}

/**
 * An archive named by the user: a postgres:// URL as given, else a SQLite file path relative to
 * `base`. A location that starts like a PostgreSQL URL but is not one (`postgres:/host/db`, one
 * slash) is a usage error: taken for a path, it made a folder named after the URL, password and all.
 */
export function archiveLocation(base: string, location: string): string {
  if (isPostgresUrl(location)) return location.trim();
  if (/^\s*postgres(?:ql)?:/iu.test(location)) {
    throw new UsageError(
      `"${redactUrl(location.trim())}" is not a PostgreSQL URL: one starts with postgres:// (or postgresql://)`,
      'write it as postgres://user@host:5432/database (the password in PGPASSWORD or ~/.pgpass)',
    );
  }
  return resolve(base, location);
}

/**
 * Where the archive lives, the same for prune, restore and recall: `--archive PATH|URL`, else
 * `$DEVS_CTX_ARCHIVE_URL`, else `$DEVS_CTX_ARCHIVE`, else `archive` in the config file (a path
 * relative to the file, or a URL), else the XDG data dir. A postgres:// URL is kept as given (it is
 * the PostgreSQL archive); anything else is a SQLite file path. `--no-archive` (false) means none.
 */
export async function resolveArchivePath(
  flag: string | boolean | undefined,
  ctx: CliContext,
  configFile?: ReturnType<typeof loadConfig>,
): Promise<string | undefined> {
  if (flag === false) return undefined;
  const at = archiveLocation;
  if (typeof flag === 'string') return at(ctx.cwd, flag);
  const url = ctx.env['DEVS_CTX_ARCHIVE_URL']?.trim();
  if (url) {
    if (!isPostgresUrl(url))
      throw new UsageError(
        `DEVS_CTX_ARCHIVE_URL must be a postgres:// or postgresql:// URL, not "${redactUrl(url)}"`,
        'for a SQLite file, set DEVS_CTX_ARCHIVE=PATH instead',
      );
    return url;
  }
  if (!ctx.env['DEVS_CTX_ARCHIVE']?.trim()) {
    const file = configFile ?? loadConfig({ cwd: ctx.cwd });
    if (file?.config.archive) {
      const location = at(dirname(file.path), file.config.archive);
      if (file.explicit || projectArchiveAllowed(location, dirname(file.path), ctx)) return location;
      ctx.stderr.write(
        `devs-ctx: warning: ${file.path} names the archive ${archiveDisplay(location)}, outside its project: ignored (a project's config could send every pruned turn, and PGPASSWORD, to a server of its choosing); set "allowProjectArchive": true in your own ~/.config/devs-ctx/config.json to use it, or pass --archive\n`,
      );
    }
  }
  const { defaultArchivePath } = await import('../archive/paths.js');
  return at(ctx.cwd, defaultArchivePath(ctx.env, ctx.env['HOME'] ?? homedir()));
}

/**
 * A config found by walking up may have come with a clone: its archive is used when it is a SQLite
 * file inside the config's own folder (symlinks resolved), or when the user's own config allows more.
 */
function projectArchiveAllowed(location: string, projectDir: string, ctx: CliContext): boolean {
  if (!isPostgresUrl(location) && isInside(realPathOf(location), realPathOf(projectDir))) return true;
  return loadUserConfig(ctx.env)?.config.allowProjectArchive === true;
}

/** The archive's location as printed: a path, or a URL without its password. */
export function archiveDisplay(location: string): string {
  return isPostgresUrl(location) ? redactUrl(location) : location;
}

/**
 * Loads, ahead, the SQLite module the archive at `path` will be opened with (a prune does it while
 * its count workers finish counting, rather than after its summary): nothing is opened or created,
 * and a failure to load is left to `openArchive`, which reports it when the archive is needed.
 */
export async function preloadArchiveModule(path: string | undefined): Promise<void> {
  if (path === undefined || isPostgresUrl(path)) return;
  try {
    const { loadSqlite } = await import('../archive/sqlite.js');
    loadSqlite();
  } catch {
    // reported by openArchive, if the prune gets that far
  }
}

/**
 * Opens the archive (loading better-sqlite3 or pg only now). Any failure to open it (a folder in
 * the way, a file that is not SQLite, no permission, a server that cannot be reached) is exit 3
 * naming where, never the password, not a crash.
 */
/** `flag`: the option that named the archive, for hints (`--archive` unless given: `archive copy`'s `--from`, `--to`). */
export async function openArchive(path: string, options: { mustExist: boolean; named: boolean; readOnly?: boolean; flag?: string }): Promise<Archive> {
  const flag = options.flag ?? '--archive';
  if (isPostgresUrl(path)) {
    const { openArchiveAt } = await import('../archive/open.js');
    return openArchiveAt(path, { mustExist: options.mustExist });
  }
  if (options.mustExist && !existsSync(path)) {
    throw new InputError(
      `no archive at ${path}`,
      options.named ? `check the ${flag} path` : 'prune something first, or pass --archive PATH (or set DEVS_CTX_ARCHIVE)',
    );
  }
  // A folder (or a FIFO, a device) is no SQLite file: said as such, not as SQLite's "disk I/O error".
  const kind = existsSync(path) ? statSync(path) : undefined;
  if (kind && !kind.isFile())
    throw new InputError(
      `${path} is ${fileKind(kind)}, not an archive`,
      `check the ${flag} path: it must be a SQLite file${options.readOnly ? '' : ' or not exist yet'}`,
    );
  const { SqliteArchive } = await import('../archive/sqlite-archive.js');
  try {
    // restore and recall only read: read-only, so an archive the user cannot write still works.
    return options.readOnly ? SqliteArchive.openForReading(path) : SqliteArchive.open(path);
  } catch (error) {
    if (error instanceof DevsCtxError) throw error;
    const damaged = damagedArchiveError(path, error);
    if (damaged) throw damaged;
    const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
    throw new InputError(
      `cannot open the archive at ${path}: ${reason}`,
      options.readOnly
        ? `check the ${flag} path: it must be a devs-ctx archive (a SQLite file)`
        : `check the ${flag} path (it must be a SQLite file or not exist yet), or pass --no-archive to prune without it`,
    );
  }
}

/**
 * SQLite found the archive's pages damaged (or not a database at all): exit 3 naming the file and
 * how to check it, rather than "this is a bug". Undefined for any other error.
 */
export function damagedArchiveError(path: string, error: unknown): InputError | undefined {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  if (typeof code !== 'string' || !(code.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_NOTADB')) return undefined;
  const reason = error instanceof Error ? error.message.split('\n')[0] : code;
  if (code === 'SQLITE_NOTADB') {
    return new InputError(
      `${path} is not a devs-ctx archive: not a SQLite database (a file of another kind, or a damaged archive)`,
      `check the path; if it is the archive, check it with \`sqlite3 ${shellWord(path)} "PRAGMA integrity_check"\``,
    );
  }
  return new InputError(
    `the archive at ${path} is damaged (${reason})`,
    `check it with \`sqlite3 ${shellWord(path)} "PRAGMA integrity_check"\`; restore from a backup of the archive if it reports errors`,
  );
}

/**
 * The archive as a cache of Gemini vectors, opened only when the embedder first asks, so a prune
 * with nothing to do creates no archive; `readOnly` (a dry run) never creates or writes it.
 */
export async function lazyEmbeddingCache(
  path: string,
  options: { readonly readOnly: boolean; readonly named: boolean },
): Promise<{ readonly cache: EmbeddingCache; opened(): ArchiveStore | undefined }> {
  // The PostgreSQL archive keeps its own vectors, connecting only for each lookup or store.
  if (isPostgresUrl(path)) return (await import('../archive/postgres.js')).postgresEmbeddingCache(path, { readOnly: options.readOnly });
  const { ArchiveStore: Store } = await import('../archive/store.js');
  let store: ArchiveStore | undefined;
  let tried = false;
  const open = (): ArchiveStore | undefined => {
    if (tried) return store;
    tried = true;
    if (options.readOnly && !existsSync(path)) return undefined;
    try {
      store = options.readOnly ? Store.openReadOnly(path) : Store.open(path);
    } catch (error) {
      if (error instanceof DevsCtxError) throw error;
      const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
      throw new InputError(
        `cannot open the archive at ${path}: ${reason}`,
        options.named ? 'check the --archive path' : 'check the path, or pass --no-archive',
      );
    }
    return store;
  };
  return {
    cache: {
      getEmbeddings: (model, hashes) => open()?.getEmbeddings(model, hashes) ?? new Map(),
      putEmbeddings: (model, entries) => {
        if (!options.readOnly) open()?.putEmbeddings(model, entries);
      },
    },
    opened: () => store,
  };
}
