/**
 * The bench's temporary folders: made with its process id in their names, removed at its end (or
 * at Ctrl-C: removeTempDirs); those a bench killed another way left behind are removed by a later
 * run (sweepLeftovers).
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const made: string[] = [];

/** A temporary folder of this run in `parent` (the system's temporary folder by default), named `<prefix><pid>-<random>`. */
export function benchTempDir(prefix: string, parent = tmpdir()): string {
  const dir = mkdtempSync(join(parent, `${prefix}${process.pid}-`));
  made.push(dir);
  return dir;
}

/**
 * Ctrl-C heard by the bench itself (a command it runs ends first, and the bench goes on to its next
 * wait): its temporary folders are removed, and it ends with 130.
 */
export function endOnCtrlC(): void {
  process.on('SIGINT', () => {
    removeTempDirs();
    process.stderr.write('bench interrupted\n');
    process.exit(130);
  });
}

/** Removes every folder benchTempDir made. */
export function removeTempDirs(): void {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** The bench's temporary folders in bench/.data, by the prefixes run.ts gives them. */
export const DATA_TEMP = /^(?:cache|hook-repo|claude-grown|claude-active|claude-session)-(\d+)-[A-Za-z0-9]{6}$/;
/** Its temporary folders in the system's temporary folder (run.ts, archive.ts, summary.ts). */
export const SYSTEM_TEMP = /^devs-ctx-bench-(?:ccusage|archive|summary)-(\d+)-[A-Za-z0-9]{6}$/;
/**
 * A leftover must be this old too: a bench in another pid namespace (a container sharing the
 * checkout or /tmp) is not seen by `kill(pid, 0)`, and no run lasts an hour.
 */
const LEFTOVER_MIN_AGE_MS = 60 * 60 * 1000;

/**
 * Removes, from each `[parent, pattern]`, the folders whose name matches and carries the id of a
 * process that is gone, last changed an hour ago or more. One that cannot be removed (another user's,
 * say) stays: the bench goes on. `now`: the time to measure ages from.
 */
export function sweepLeftovers(places: readonly (readonly [string, RegExp])[], now = Date.now()): string[] {
  const removed: string[] = [];
  for (const [parent, pattern] of places) {
    let names: string[];
    try {
      names = readdirSync(parent);
    } catch {
      continue;
    }
    for (const name of names) {
      const pid = pattern.exec(name)?.[1];
      const path = join(parent, name);
      if (pid === undefined || running(Number(pid))) continue;
      try {
        if (now - statSync(path).mtimeMs < LEFTOVER_MIN_AGE_MS) continue;
        rmSync(path, { recursive: true, force: true });
        removed.push(path);
      } catch {
        // not ours to remove, or not removable: left as it is
      }
    }
  }
  return removed;
}

/** Whether a process with this id runs (one of another user's too). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}
