import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { cacheDir, runCli } from './cli.js';
import type { CliResult } from './cli.js';
import { repoRoot } from './realdata.js';

/**
 * A real git repository in a temp folder for the hook's end-to-end tests. git runs with a HOME of
 * its own (no user or system config), and the archive and caches live in the temp folder, so
 * nothing touches the real home.
 */
export interface TempRepo {
  /** The work tree (realpath, as git reports it). */
  readonly dir: string;
  /** Where prunes from this repo's hooks archive (DEVS_CTX_ARCHIVE in every commit's environment). */
  readonly archive: string;
  readonly env: Record<string, string>;
  /** `timeout`: a guard for a test that a hook does not hang (past it the run is killed and this throws ETIMEDOUT). */
  git(args: readonly string[], options?: { cwd?: string; env?: Record<string, string>; timeout?: number }): CliResult & { readonly ms: number };
  devsCtx(args: readonly string[], options?: { cwd?: string; env?: Record<string, string> }): CliResult;
  /** Copies a fixture (path under fixtures/) into the repo. */
  copyFixture(from: string, to: string): string;
  write(path: string, text: string): string;
}

export function tempRepo(prefix: string, options: { init?: boolean } = {}): TempRepo {
  const root = realpathSync(mkdtempSync(join(tmpdir(), `devs-ctx-hook-${prefix}-`)));
  const dir = join(root, 'repo');
  const home = join(root, 'home');
  mkdirSync(dir);
  mkdirSync(home);
  const archive = join(root, 'archive', 'archive.sqlite');
  const env: Record<string, string> = {
    PATH: process.env['PATH'] ?? '',
    HOME: home,
    GIT_CONFIG_NOSYSTEM: '1',
    NO_COLOR: '1',
    TZ: 'UTC',
    COLUMNS: '100',
    DEVS_CTX_CACHE_DIR: cacheDir,
    DEVS_CTX_ARCHIVE: archive,
  };
  const git: TempRepo['git'] = (args, o = {}) => {
    const started = performance.now();
    const result = spawnSync('git', args, { cwd: o.cwd ?? dir, env: { ...env, ...o.env }, encoding: 'utf8', ...(o.timeout ? { timeout: o.timeout } : {}) });
    if (result.error) throw result.error;
    return { exitCode: result.status ?? -1, stdout: result.stdout, stderr: result.stderr, ms: performance.now() - started };
  };
  if (options.init !== false) {
    git(['init', '-q', '-b', 'main']);
    git(['config', 'user.email', 'dev@example.com']);
    git(['config', 'user.name', 'Dev']);
    git(['config', 'commit.gpgsign', 'false']);
  }
  const write = (path: string, text: string): string => {
    const full = join(dir, path);
    mkdirSync(dirname(full), { recursive: true });
    writeFileSync(full, text);
    return full;
  };
  return {
    dir,
    archive,
    env,
    git,
    devsCtx: (args, o = {}) => runCli(args, { cwd: o.cwd ?? dir, env: { ...env, ...o.env } }),
    copyFixture: (from, to) => {
      const full = join(dir, to);
      mkdirSync(dirname(full), { recursive: true });
      copyFileSync(join(repoRoot, 'fixtures', from), full);
      return full;
    },
    write,
  };
}
