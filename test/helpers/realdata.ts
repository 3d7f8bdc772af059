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

/** Every file under `dir` (recursively), as absolute paths, sorted; none when it does not exist. */
export function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  const walk = (current: string): void => {
    for (const name of readdirSync(current).sort()) {
      const path = join(current, name);
      if (statSync(path).isDirectory()) walk(path);
      else out.push(path);
    }
  };
  walk(dir);
  return out;
}

/** Every transcript under `realdata/<sub>` (recursively), as absolute paths, sorted. */
export function realdataFiles(sub = ''): string[] {
  return filesUnder(join(realdataDir, sub)).filter((path) => !path.endsWith('SOURCES.md'));
}

/** A short name for test titles: the path below realdata/. */
export function realdataName(path: string): string {
  return relative(realdataDir, path);
}
