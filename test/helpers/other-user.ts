import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { cliEnv } from './cli.js';
import { repoRoot } from './realdata.js';

/**
 * Whether the CLI can be run as another user here (root, with setpriv): what a read-only file is
 * to a user, root does not see (it ignores file modes). Skips the test when it cannot.
 */
export function canRunAsAnotherUser(t: { skip(message: string): void }): boolean {
  if (process.getuid?.() === 0 && spawnSync('setpriv', ['--version']).status === 0) return true;
  t.skip('needs root and setpriv to run as another user');
  return false;
}

/** The CLI run as user `uid` (group the same) in `home`, its HOME, with `env` added. */
export function runAs(uid: number, home: string, args: readonly string[], env: Record<string, string>) {
  return spawnSync('setpriv', [`--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', process.execPath, join(repoRoot, 'bin/devs-ctx.js'), ...args], {
    cwd: home,
    env: cliEnv({ HOME: home, DEVS_CTX_CACHE_DIR: join(home, 'cache'), ...env }),
    encoding: 'utf8',
  });
}
