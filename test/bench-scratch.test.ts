/**
 * The bench's temporary folders (bench/scratch.ts): what a later run removes of those an earlier
 * run left behind, and what it must leave alone.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DATA_TEMP, SYSTEM_TEMP, sweepLeftovers } from '../bench/scratch.js';
import { canRunAsAnotherUser } from './helpers/other-user.js';
import { repoRoot } from './helpers/realdata.js';
import { tempFolders } from './helpers/temp.js';

const temp = tempFolders('devs-ctx-scratch-');

/** A process id that is not running: a child's, once it has ended. */
function endedPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(child.stdout);
}

/** A folder `name` in `parent` with a file in it, last changed `hoursAgo`. */
function folder(parent: string, name: string, hoursAgo: number): string {
  const path = join(parent, name);
  mkdirSync(path);
  writeFileSync(join(path, 'counts.bin'), 'x');
  const when = new Date(Date.now() - hoursAgo * 3_600_000);
  utimesSync(path, when, when);
  return path;
}

test('a later run removes the folders of a bench that ended without removing them, and nothing else', () => {
  const data = temp.fresh('data');
  const system = temp.fresh('system');
  const gone = endedPid();
  const left = [
    folder(data, `cache-${gone}-Ab12Cd`, 2),
    folder(data, `claude-active-${gone}-Ab12Cd`, 2),
    folder(system, `devs-ctx-bench-ccusage-${gone}-Ab12Cd`, 2),
    folder(system, `devs-ctx-bench-archive-${gone}-Ab12Cd`, 2),
  ];
  const kept = [
    // a running bench's (this process stands for it), however old
    folder(data, `cache-${process.pid}-Ab12Cd`, 2),
    // an ended one's, changed within the hour: perhaps a bench in another pid namespace, running
    folder(data, `cache-${gone}-Xy34Zw`, 0),
    // names the bench does not give
    folder(data, 'cache-backup', 2),
    folder(data, 'hook-repo-keepme', 2),
    folder(data, `claude-session-2026_1`, 2),
    folder(system, `devs-ctx-bench-ccusage-Ab12Cd`, 2),
    folder(system, `devs-ctx-test-${gone}-Ab12Cd`, 2),
  ];
  const removed = sweepLeftovers([
    [data, DATA_TEMP],
    [system, SYSTEM_TEMP],
  ]);
  assert.deepEqual(removed.sort(), [...left].sort());
  for (const path of left) assert.ok(!existsSync(path), path);
  for (const path of kept) assert.ok(existsSync(path), path);
});

test("a leftover the run may not remove (another user's) is left, and the run goes on", (t) => {
  if (!canRunAsAnotherUser(t)) return;
  // A shared temporary folder, as /tmp is: open to all, with the sticky bit.
  chmodSync(temp.root, 0o755);
  const system = temp.fresh('shared');
  chmodSync(system, 0o1777);
  const theirs = folder(system, `devs-ctx-bench-ccusage-${endedPid()}-Ab12Cd`, 2);
  // The running user's own leftover, beside it: removed.
  const own = folder(system, `devs-ctx-bench-ccusage-${endedPid()}-Ef56Gh`, 2);
  for (const path of [own, join(own, 'counts.bin')]) chownSync(path, 12345, 12345);
  const script = `import { SYSTEM_TEMP, sweepLeftovers } from ${JSON.stringify(join(repoRoot, 'bench', 'scratch.ts'))};
    process.stdout.write(JSON.stringify(sweepLeftovers([[${JSON.stringify(system)}, SYSTEM_TEMP]])));`;
  const run = spawnSync(
    'setpriv',
    ['--reuid=12345', '--regid=12345', '--clear-groups', process.execPath, '--import', 'tsx', '--input-type=module', '-e', script],
    {
      cwd: repoRoot,
      encoding: 'utf8',
    },
  );
  assert.equal(run.status, 0, run.stderr);
  assert.deepEqual(JSON.parse(run.stdout), [own]);
  assert.ok(existsSync(theirs));
});
