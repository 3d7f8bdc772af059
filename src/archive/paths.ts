import { isAbsolute, join } from 'node:path';

/**
 * Where the archive lives when no path is given: `$DEVS_CTX_ARCHIVE`, else
 * `$XDG_DATA_HOME/devs-ctx/archive.sqlite`, else `~/.local/share/devs-ctx/archive.sqlite`.
 * Pure: the environment and home directory are parameters.
 */
export function defaultArchivePath(env: Readonly<Record<string, string | undefined>>, homedir: string): string {
  const explicit = env['DEVS_CTX_ARCHIVE'];
  // Blank is unset, as everywhere else the variable is read (not a file named " ").
  if (explicit?.trim()) return explicit;
  // The XDG spec says a relative XDG_DATA_HOME is invalid and must be ignored.
  const dataHome = env['XDG_DATA_HOME'];
  const base = dataHome && isAbsolute(dataHome) ? dataHome : join(homedir, '.local', 'share');
  return join(base, 'devs-ctx', 'archive.sqlite');
}
