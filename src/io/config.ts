import { closeSync, fstatSync, lstatSync, openSync, statSync, constants as fsConstants } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { CONFIG_FILE_NAME, parseConfigFile, parseUserConfig, USER_CONFIG_RELATIVE_PATH } from '../core/config.js';
import type { ConfigFile, UserConfig } from '../core/config.js';
import { InputError, UsageError } from '../core/errors.js';
import { thousands } from '../core/numbers.js';
import { readFully } from './fd.js';

/** A config file larger than this is refused unread (a config is a few hundred bytes). */
export const MAX_CONFIG_BYTES = 1024 * 1024;

/**
 * Walks up from `cwd` to the filesystem root looking for `devs-ctx.config.json`. Anything by that
 * name counts, a broken or looping symlink too, so that reading it says what is wrong rather than
 * the file being skipped in silence.
 */
export function findConfigFile(cwd: string): string | undefined {
  let dir = resolve(cwd);
  for (;;) {
    const candidate = join(dir, CONFIG_FILE_NAME);
    if (entryExists(candidate)) return candidate;
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

function entryExists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * Loads the named config, or the nearest one found by walking up; none is fine. `explicit` says the
 * user named it (--config); a file found by walking up may have come with a clone or a pull.
 */
export function loadConfig(options: { explicitPath?: string; cwd: string }): { path: string; config: ConfigFile; explicit: boolean } | undefined {
  const path = options.explicitPath ? resolve(options.cwd, options.explicitPath) : findConfigFile(options.cwd);
  if (!path) return undefined;
  const value = readConfigJson(
    path,
    options.explicitPath ? 'check the --config path' : `remove or fix ${path}`,
    `fix ${path} or pass --config to use another file`,
  );
  return { path, config: parseConfigFile(path, value), explicit: options.explicitPath !== undefined };
}

/** Where the user's own config is: `$XDG_CONFIG_HOME/devs-ctx/config.json`, else `~/.config/devs-ctx/config.json`. */
export function userConfigPath(env: Readonly<Record<string, string | undefined>>, home: string | undefined): string | undefined {
  const xdg = env['XDG_CONFIG_HOME'];
  // The XDG spec: a relative value is invalid and ignored.
  if (xdg !== undefined && xdg !== '' && isAbsolute(xdg)) return join(xdg, USER_CONFIG_RELATIVE_PATH);
  return home ? join(home, '.config', USER_CONFIG_RELATIVE_PATH) : undefined;
}

/**
 * Why a config file may not lend its `geminiApiKey`, or undefined when it may: a key is read only from
 * a file that is this user's and only theirs to read, as `init` writes one (mode 0600), and that git
 * does not track. A project's config arrives with a clone (git gives it the umask's mode, and tracks
 * it): its key would send this user's transcripts to Gemini under someone else's account.
 */
export function keyFileProblem(path: string): string | undefined {
  if (process.platform !== 'win32') {
    try {
      const { mode, uid } = statSync(path);
      if (process.getuid !== undefined && uid !== process.getuid()) return 'the file is not yours';
      if ((mode & 0o077) !== 0) return `other users can read or write the file (mode ${(mode & 0o777).toString(8)})`;
    } catch (error) {
      return `it cannot be checked (${(error as Error).message})`;
    }
  }
  // Under umask 077 a clone's files are 0600 too: one that git tracks came with the repository.
  if (trackedByGit(path)) return 'git tracks the file (it came with the repository, or is committed for others to see)';
  return undefined;
}

/** Whether git tracks the file at `path` (in the index of the work tree it is in; false outside one, or without git). */
export function trackedByGit(path: string): boolean {
  const tracked = spawnSync('git', ['--literal-pathspecs', 'ls-files', '--error-unmatch', '--', basename(path)], {
    cwd: dirname(path),
    stdio: 'ignore',
    timeout: 10_000,
  });
  return tracked.status === 0;
}

/**
 * The user's own config (see userConfigPath); none is fine. Only this file may let a project's
 * config redirect the Gemini key, reach files outside the repository, or send the archive elsewhere.
 */
export function loadUserConfig(env: Readonly<Record<string, string | undefined>>): { path: string; config: UserConfig } | undefined {
  const path = userConfigPath(env, env['HOME']);
  if (!path || !entryExists(path)) return undefined;
  const value = readConfigJson(path, `remove or fix ${path}`, `fix ${path}`);
  return { path, config: parseUserConfig(path, value) };
}

/**
 * Reads a config file as JSON: a regular file (a symlink to one is fine) of at most MAX_CONFIG_BYTES,
 * checked on the open descriptor before reading, so `/dev/zero` or a FIFO fails at once. A UTF-8
 * byte order mark is skipped, as editors on Windows write one.
 */
function readConfigJson(path: string, readHint: string, jsonHint: string): unknown {
  let text: string;
  let fd: number | undefined;
  try {
    // O_NONBLOCK: opening a FIFO for reading must not wait for a writer.
    fd = openSync(path, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK);
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new InputError(`cannot read config ${path}: not a regular file`, readHint);
    if (stat.size > MAX_CONFIG_BYTES) {
      throw new InputError(`cannot read config ${path}: ${thousands(stat.size)} bytes, more than a config may hold (${thousands(MAX_CONFIG_BYTES)})`, readHint);
    }
    const buffer = Buffer.alloc(stat.size);
    text = buffer.subarray(0, readFully(fd, buffer)).toString('utf8');
  } catch (error) {
    if (error instanceof InputError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    const reason = code === 'ELOOP' ? 'ELOOP (a symlink loop)' : (code ?? String(error));
    throw new InputError(`cannot read config ${path}: ${reason}`, readHint);
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${path}: not valid JSON (${error instanceof Error ? error.message : String(error)})`, jsonHint);
  }
}
