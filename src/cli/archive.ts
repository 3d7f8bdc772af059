import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, resolve } from 'node:path';
import type { ArchiveStore } from '../archive/store.js';
import { DevsCtxError, InputError } from '../core/errors.js';
import { loadConfig } from '../io/config.js';
import type { CliContext } from './context.js';

/**
 * Where the archive lives, the same for prune, restore and recall: `--archive PATH`, else
 * `$DEVS_CTX_ARCHIVE`, else `archive` in the config file (relative to the file), else the XDG data
 * dir. `--no-archive` (false) means none.
 */
export async function resolveArchivePath(
  flag: string | boolean | undefined,
  ctx: CliContext,
  configFile?: ReturnType<typeof loadConfig>,
): Promise<string | undefined> {
  if (flag === false) return undefined;
  if (typeof flag === 'string') return resolve(ctx.cwd, flag);
  if (!ctx.env['DEVS_CTX_ARCHIVE']?.trim()) {
    const file = configFile ?? loadConfig({ cwd: ctx.cwd });
    if (file?.config.archive) return resolve(dirname(file.path), file.config.archive);
  }
  const { defaultArchivePath } = await import('../archive/paths.js');
  return resolve(ctx.cwd, defaultArchivePath(ctx.env, ctx.env['HOME'] ?? homedir()));
}

/**
 * Opens the archive (loading better-sqlite3 only now). Any failure to open it (a folder in the
 * way, a file that is not SQLite, no permission) is exit 3 naming the path, not a crash.
 */
export async function openArchive(path: string, options: { mustExist: boolean; named: boolean }): Promise<ArchiveStore> {
  if (options.mustExist && !existsSync(path)) {
    throw new InputError(
      `no archive at ${path}`,
      options.named ? 'check the --archive path' : 'prune something first, or pass --archive PATH (or set DEVS_CTX_ARCHIVE)',
    );
  }
  const { ArchiveStore: Store } = await import('../archive/store.js');
  try {
    return Store.open(path);
  } catch (error) {
    if (error instanceof DevsCtxError) throw error;
    const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
    throw new InputError(`cannot open the archive at ${path}: ${reason}`, 'check the path (it must be a SQLite file or not exist yet), or pass --no-archive to prune without it');
  }
}
