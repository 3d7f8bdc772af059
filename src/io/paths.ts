import { realpathSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';

/**
 * `path` with every symlink resolved, also when it does not exist yet: the deepest folder on its
 * way that exists is resolved and the rest joined on, so a link in a parent folder is never missed.
 */
export function realPathOf(path: string): string {
  const absolute = resolve(path);
  try {
    return realpathSync(absolute);
  } catch {
    const parent = dirname(absolute);
    return parent === absolute ? absolute : join(realPathOf(parent), basename(absolute));
  }
}

/** Whether `path` is `root` or lies under it (both already absolute and resolved). */
export function isInside(path: string, root: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}
