import { copyFileSync, cpSync, mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './realdata.js';

/**
 * A copy of the package at `dir` as it is installed: the bin, the build and the manifest, the
 * dependencies linked. A test changes the copy's build (a damaged cache, planted workers), never the
 * repo's. Returns the copy's bin.
 */
export function packageCopy(dir: string): string {
  mkdirSync(dir, { recursive: true });
  for (const part of ['bin', 'dist']) cpSync(join(repoRoot, part), join(dir, part), { recursive: true });
  copyFileSync(join(repoRoot, 'package.json'), join(dir, 'package.json'));
  symlinkSync(join(repoRoot, 'node_modules'), join(dir, 'node_modules'), 'dir');
  return join(dir, 'bin', 'devs-ctx.js');
}
