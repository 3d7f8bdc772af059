import { lstatSync, readlinkSync, realpathSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';

/**
 * `path` with every symlink resolved, also when it does not exist yet: the deepest folder on its
 * way that exists is resolved and the rest joined on, so a link in a parent folder is never missed.
 */
export function realPathOf(path: string, links = 0): string {
  const absolute = resolve(path);
  try {
    return realpathSync(absolute);
  } catch {
    // A symlink to nothing (yet) leads where its target would be made: followed, not taken as a
    // file of its own name (an archive through one would be created wherever it points).
    const target = links < MAX_LINKS ? linkTarget(absolute) : undefined;
    // Its target is relative to the folder it really is in (a symlinked folder on the way counts).
    if (target !== undefined) return realPathOf(resolve(realPathOf(dirname(absolute), links + 1), target), links + 1);
    const parent = dirname(absolute);
    return parent === absolute ? absolute : join(realPathOf(parent, links), basename(absolute));
  }
}

/** How many symlinks realPathOf follows by hand (as Linux does: ELOOP past 40). */
const MAX_LINKS = 40;

function linkTarget(path: string): string | undefined {
  try {
    return lstatSync(path).isSymbolicLink() ? readlinkSync(path) : undefined;
  } catch {
    return undefined;
  }
}

/** Whether `path` is `root` or lies under it (both already absolute and resolved). */
export function isInside(path: string, root: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}
