import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';

/** One test file's temporary folder (removed after its tests), and `fresh(name)`: a new, empty folder in it. */
export function tempFolders(prefix: string): { readonly root: string; fresh(name: string): string } {
  const root = mkdtempSync(join(tmpdir(), prefix));
  after(() => rmSync(root, { recursive: true, force: true }));
  let made = 0;
  return {
    root,
    fresh(name: string): string {
      const dir = join(root, `${name}-${made++}`);
      mkdirSync(dir, { recursive: true });
      return dir;
    },
  };
}
