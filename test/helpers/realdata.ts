import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (this file is test/helpers/realdata.ts). */
export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

/** `../shared/realdata/` beside the checkout; real transcripts are read where they are, never copied. */
export const realdataDir = join(repoRoot, '..', 'shared', 'realdata');

/** Set as `{ skip }` on tests that need the real data, so a missing `../shared` is a clear skip. */
export const realdataSkip: string | false = existsSync(realdataDir)
  ? false
  : `../shared/realdata not found beside the checkout (${realdataDir}); real-data tests skipped`;

/** Every file under `realdata/<sub>` (recursively), as absolute paths, sorted. */
export function realdataFiles(sub = ''): string[] {
  const root = join(realdataDir, sub);
  if (!existsSync(root)) return [];
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name !== 'SOURCES.md') out.push(path);
    }
  };
  walk(root);
  return out;
}

/** A short name for test titles: the path below realdata/. */
export function realdataName(path: string): string {
  return relative(realdataDir, path);
}
