import { copyFileSync, cpSync, mkdirSync, readdirSync, symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { repoRoot } from './realdata.js';

/**
 * A copy of the package at `dir` as it is installed: the bin, the build and the manifest, the
 * dependencies linked. A test changes the copy's build (a damaged cache, planted workers), never the
 * repo's. `ownDependencies`: packages (`@scope/name` or `name`) copied rather than linked, for a test
 * to change (a newer model catalog). Returns the copy's bin.
 */
export function packageCopy(dir: string, ownDependencies: readonly string[] = []): string {
  mkdirSync(dir, { recursive: true });
  for (const part of ['bin', 'dist']) cpSync(join(repoRoot, part), join(dir, part), { recursive: true });
  copyFileSync(join(repoRoot, 'package.json'), join(dir, 'package.json'));
  const modules = join(repoRoot, 'node_modules');
  if (ownDependencies.length === 0) {
    symlinkSync(modules, join(dir, 'node_modules'), 'dir');
  } else {
    // Every dependency linked one by one, but those to own: a scope's folder is made for them.
    const scopes = new Set(ownDependencies.flatMap((name) => (name.startsWith('@') ? [dirname(name)] : [])));
    const link = (name: string): void => {
      if (ownDependencies.includes(name)) cpSync(join(modules, name), join(dir, 'node_modules', name), { recursive: true });
      else symlinkSync(join(modules, name), join(dir, 'node_modules', name), 'dir');
    };
    mkdirSync(join(dir, 'node_modules'));
    for (const name of readdirSync(modules)) {
      if (!scopes.has(name)) {
        link(name);
        continue;
      }
      mkdirSync(join(dir, 'node_modules', name));
      for (const inner of readdirSync(join(modules, name))) link(`${name}/${inner}`);
    }
  }
  return join(dir, 'bin', 'devs-ctx.js');
}
