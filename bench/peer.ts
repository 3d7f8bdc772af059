/**
 * The peer the bench measures devs-ctx against: ccusage, the tool people already run for "where do
 * my tokens go" (issue 18). It is installed into a temporary folder by the bench (never the
 * project's dependencies) and run on exactly the Claude Code projects folder devs-ctx reads. When it
 * cannot be installed, run, or be trusted to have read that folder, its figures are skipped with the
 * reason, and devs-ctx's own are still measured.
 */
import { spawnSync } from 'node:child_process';
import type { SpawnSyncReturns } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CommandFailed, Interrupted, interruptedBy, runNode } from './measure.js';
import type { Sample } from './measure.js';

/** Pinned: it installs here with its native package (newer versions may lack one for this platform). */
export const CCUSAGE_VERSION = '20.0.24';
/** What the bench runs: the Claude Code sessions only (`session` alone reads every agent's history in HOME). */
export const CCUSAGE_ARGS = ['claude', 'session', '--json', '--offline'] as const;
const INSTALL_TIMEOUT_MS = 180_000;
/** A run of ccusage that takes longer is not measured (about 0.2 s on the bench's folder). */
const CCUSAGE_RUN_TIMEOUT_MS = 60_000;

/** An installed ccusage: its entry point, and an empty folder it is given as its home. */
export interface Ccusage {
  readonly bin: string;
  readonly home: string;
}

/**
 * Installs ccusage into `dir` (an empty folder). `env`: npm's environment beyond the bench's (its
 * registry and cache, say); npm keeps its cache and its log where it always does (as `npx` would),
 * but does not check for its own updates. Ctrl-C during it ends the bench (Interrupted).
 */
export function installCcusage(dir: string, env: Readonly<Record<string, string>> = {}, timeoutMs = INSTALL_TIMEOUT_MS): Ccusage | { skip: string } {
  writeFileSync(join(dir, 'package.json'), '{"private":true}\n');
  // npm is a .cmd script on Windows, which Node spawns only through a shell.
  const windows = process.platform === 'win32';
  const install = spawnSync(windows ? 'npm.cmd' : 'npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', `ccusage@${CCUSAGE_VERSION}`], {
    cwd: dir,
    env: { ...process.env, npm_config_update_notifier: 'false', ...env },
    encoding: 'utf8',
    timeout: timeoutMs,
    shell: windows,
  });
  if (interruptedBy(install)) throw new Interrupted();
  if (install.error || install.status !== 0) return { skip: `ccusage@${CCUSAGE_VERSION} did not install (${npmFailure(install, timeoutMs)})` };
  const bin = join(dir, 'node_modules', 'ccusage', 'src', 'cli.js');
  const probe = spawnSync(process.execPath, [bin, '--version'], { encoding: 'utf8', timeout: CCUSAGE_RUN_TIMEOUT_MS, killSignal: 'SIGKILL' });
  if (interruptedBy(probe)) throw new Interrupted();
  if (probe.error || probe.status !== 0) {
    const why = probe.error ? probe.error.message : firstLine(probe.stderr) || firstLine(probe.stdout) || `exit ${probe.status ?? probe.signal}`;
    return { skip: `ccusage@${CCUSAGE_VERSION} installed but does not run here (${why})` };
  }
  const home = join(dir, 'home');
  mkdirSync(home);
  return { bin, home };
}

/**
 * Why an npm command failed, in one line: npm's error code and its first message line (not the
 * notice of where its log is, nor a stack trace), or what kept it from running or finishing.
 */
export function npmFailure(result: Pick<SpawnSyncReturns<string>, 'error' | 'status' | 'signal' | 'stderr'>, timeoutMs: number): string {
  const error = result.error as NodeJS.ErrnoException | undefined;
  if (error?.code === 'ETIMEDOUT') return `npm did not finish within ${(timeoutMs / 1000).toFixed(0)} s`;
  if (error) return error.message;
  const lines = (result.stderr ?? '').split('\n').map((line) => line.replace(/^npm (?:error|ERR!) ?/, ''));
  const code = lines.map((line) => /^code (\S+)$/.exec(line)?.[1]).find((c) => c !== undefined);
  const message = lines.find(
    (line) =>
      line.trim() !== '' &&
      !/^\s/.test(line) &&
      !/^(?:code|syscall|errno|path|dest) /.test(line) &&
      !/^A complete log of this run/.test(line) &&
      !/^[{}]$/.test(line),
  );
  if (message !== undefined) return code !== undefined && !message.includes(code) ? `${code}: ${message}` : message;
  return code ?? `npm exited ${result.status ?? result.signal}`;
}

/**
 * Why ccusage's output cannot stand beside devs-ctx's, or undefined when it can: it must be the JSON
 * of `claude session --json`, listing exactly the `sessions` sessions of the folder. A peer that read
 * nothing (an empty or moved folder, another layout) would be unfairly fast.
 */
export function sessionsProblem(stdout: string, sessions: number): string | undefined {
  let report: unknown;
  try {
    report = JSON.parse(stdout);
  } catch {
    return `its output is not JSON (${firstLine(stdout) || 'nothing'})`;
  }
  const listed = report && typeof report === 'object' && 'sessions' in report ? report.sessions : undefined;
  if (!Array.isArray(listed)) return 'its output lists no sessions (no "sessions" array)';
  if (listed.length !== sessions) return `it reported ${listed.length} sessions, not the folder's ${sessions}`;
  return undefined;
}

/**
 * One timed run of ccusage over `claudeDir` (a Claude config folder: `projects/` in it), given only
 * that folder and an empty home; or why it cannot be measured (it failed, did not finish, or did not
 * read the folder's `sessions` sessions).
 */
export function ccusageRun(ccusage: Ccusage, claudeDir: string, sessions: number, timeoutMs = CCUSAGE_RUN_TIMEOUT_MS): Sample | { skip: string } {
  const { home } = ccusage;
  let run: Sample & { stdout: string };
  try {
    run = runNode([ccusage.bin, ...CCUSAGE_ARGS], {
      env: {
        CLAUDE_CONFIG_DIR: claudeDir,
        HOME: home,
        USERPROFILE: home,
        XDG_CONFIG_HOME: join(home, '.config'),
        XDG_DATA_HOME: join(home, '.local', 'share'),
        XDG_CACHE_HOME: join(home, '.cache'),
      },
      timeoutMs,
    });
  } catch (error) {
    if (!(error instanceof CommandFailed)) throw error;
    const what = firstLine(error.message).replace(/^node \S+ /, 'ccusage ');
    const own = firstLine(error.stderr);
    return { skip: `${what}${own ? ` (${own})` : ''}` };
  }
  const problem = sessionsProblem(run.stdout, sessions);
  if (problem !== undefined) return { skip: `ccusage ${CCUSAGE_ARGS.join(' ')}: ${problem}` };
  return { ms: run.ms, ...(run.cpuMs === undefined ? {} : { cpuMs: run.cpuMs }) };
}

function firstLine(text: string | undefined): string {
  return (text ?? '').trim().split('\n')[0]?.trim() ?? '';
}
