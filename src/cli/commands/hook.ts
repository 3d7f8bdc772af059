import { existsSync, readFileSync, realpathSync, rmdirSync, rmSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ExitCode, UsageError } from '../../core/errors.js';
import type { ExitCodeValue } from '../../core/errors.js';
import { DEFAULT_GIT_HOOK, NPX_FALLBACK, previousHookName, renderHookScript } from '../../core/git-hook.js';
import type { HookMeta, HookSettings } from '../../core/git-hook.js';
import { STANDARD_GIT_HOOKS } from '../../core/names.js';
import type { GitHookName } from '../../core/names.js';
import { loadConfig, loadUserConfig } from '../../io/config.js';
import { expandTranscripts, hookStateDir, installHookFile, locateRepository, readHookFile, uninstallHookFile } from '../../io/git-hooks.js';
import type { GitRepository, HookFile } from '../../io/git-hooks.js';
import { HOOK_SCHEMA_VERSION } from '../../core/reports/hook.js';
import type { CoveredTranscripts, HookInstallReport, HookStatusEntry, HookStatusReport, HookUninstallReport } from '../../core/reports/hook.js';
import type { CliContext } from '../context.js';
import type { HookInstallOptions, HookStatusOptions, HookUninstallOptions } from '../flags/hook.js';
import { reportError } from '../errors.js';
import { renderHookInstall, renderHookStatus, renderHookUninstall } from '../render/hook-text.js';

/** `devs-ctx hook install`: write the hook, chaining the one that was there. */
export async function runHookInstall(options: HookInstallOptions, ctx: CliContext): Promise<ExitCodeValue> {
  const json = options.json === true;
  try {
    const hook = options.hook ?? DEFAULT_GIT_HOOK;
    if (options.stdout && json) throw new UsageError('--stdout prints the hook script, so it cannot also print --json');
    let repo: GitRepository | undefined;
    try {
      repo = locateRepository(ctx.cwd, ctx.env);
    } catch (error) {
      if (!options.stdout) throw error;
    }
    const top = repo?.topLevel ?? ctx.cwd;
    const file = loadConfig({ cwd: ctx.cwd, ...(options.config ? { explicitPath: options.config } : {}) });
    const flagged = options.transcript ?? [];
    if (flagged.length === 0 && !file?.config.transcripts?.length) {
      throw new UsageError(
        file ? `${file.path} names no "transcripts", and no --transcript was given` : 'no transcripts to watch: no devs-ctx.config.json and no --transcript',
        file
          ? `add "transcripts": ["path/or/*.jsonl"] to ${file.path} (devs-ctx init writes it), or pass --transcript PATH`
          : 'pass --transcript PATH (repeatable; globs work when quoted), or run devs-ctx init',
      );
    }
    const pkg = packageInfo();
    const settings: Omit<HookSettings, 'previous'> = {
      schemaVersion: 1,
      hook,
      devsCtxVersion: pkg.version,
      blockOn: options.blockOn ?? 'none',
      refresh: options.refresh !== false,
      config: file ? pathForHook(file.path, top) : null,
      ...(file && options.config ? { configNamed: true as const } : {}),
      transcripts: flagged.length > 0 ? flagged.map((p) => (p === '~' || p.startsWith('~/') ? p : pathForHook(resolve(ctx.cwd, p), top))) : null,
      // --stdout is for a hook manager's file that is committed: no paths of this machine in it.
      runner: options.stdout ? { node: null, bin: null } : { node: process.execPath, bin: pkg.bin },
    };
    const transcripts = coveredBy(settings, top, ctx);
    const warnings = coverageWarnings(transcripts);
    if (options.stdout) {
      for (const w of warnings) ctx.stderr.write(`devs-ctx: ${w}\n`);
      ctx.stdout.write(renderHookScript({ ...settings, previous: null }));
      return ExitCode.ok;
    }
    if (!repo) throw new Error('unreachable: no repository without --stdout');
    const managed = hookManager(repo, hook);
    // husky's own hooks find their scripts from their file name and folder: a hook chained from
    // elsewhere would stop running them, so a husky folder is refused unless --force.
    if (managed && repo.hooksDir.split(sep).includes('.husky') && options.force !== true) {
      throw new UsageError(managed, "or pass --force to install into husky's folder anyway");
    }
    if (managed) warnings.push(managed);
    const result = installHookFile({
      hooksDir: repo.hooksDir,
      hook,
      force: options.force === true,
      render: (previous) => renderHookScript({ ...settings, previous }),
    });
    const report: HookInstallReport = {
      schemaVersion: HOOK_SCHEMA_VERSION,
      action: result.action,
      hook,
      path: result.path,
      previous: result.previous,
      blockOn: settings.blockOn,
      refresh: settings.refresh,
      runner: runnerOf(settings.runner),
      transcripts,
      warnings,
    };
    if (json) ctx.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    else {
      for (const w of warnings) ctx.stderr.write(`devs-ctx: warning: ${w}\n`);
      ctx.stdout.write(renderHookInstall(report, ctx.cwd));
    }
    return ExitCode.ok;
  } catch (error) {
    return reportError(ctx, error, json);
  }
}

/** What an install says about the transcripts it covers: patterns refused, or matching nothing yet. */
function coverageWarnings(transcripts: CoveredTranscripts): string[] {
  const warnings: string[] = [];
  for (const match of transcripts.patterns) {
    if (match.refused !== undefined) warnings.push(`"${match.pattern}": ${match.refused}; the hook leaves it out (${OUTSIDE_HINT})`);
  }
  if (transcripts.patterns.every((p) => p.files.length === 0)) {
    warnings.push(`no transcript matches ${transcripts.patterns.map((p) => p.pattern).join(', ')} yet; the hook will say so until one does`);
  }
  return warnings;
}

/** `devs-ctx hook uninstall`: remove the devs-ctx hook(s), putting back what was there before. */
export async function runHookUninstall(options: HookUninstallOptions, ctx: CliContext): Promise<ExitCodeValue> {
  const json = options.json === true;
  try {
    const repo = locateRepository(ctx.cwd, ctx.env);
    // Without --hook: every hook devs-ctx wrote in this folder, and nothing else.
    const hooks = options.hook ? [options.hook] : installedHooks(repo).map((h) => h.hook);
    const removed: HookUninstallReport['removed'][number][] = [];
    for (const hook of hooks) {
      const result = uninstallHookFile({ hooksDir: repo.hooksDir, hook, force: options.force === true });
      if (result.action === 'absent') continue;
      forgetHookState(repo.hooksDir, hookStateDir(ctx.cwd, ctx.env), hook);
      removed.push({ hook, path: result.path, action: result.action, previous: result.previous, missingPrevious: result.missingPrevious ?? null });
    }
    const report: HookUninstallReport = { schemaVersion: HOOK_SCHEMA_VERSION, hooksDir: repo.hooksDir, removed };
    if (json) ctx.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    else ctx.stdout.write(renderHookUninstall(report, options.hook ?? null, ctx.cwd));
    return ExitCode.ok;
  } catch (error) {
    return reportError(ctx, error, json);
  }
}

/** `devs-ctx hook status`: where it is, for which hook, what it covers; `--print-transcripts` lists the files. */
export async function runHookStatus(options: HookStatusOptions, ctx: CliContext): Promise<ExitCodeValue> {
  const json = options.json === true;
  try {
    if (options.printTranscripts) return printTranscripts(options, ctx);
    if (options.hookFile !== undefined) throw new UsageError('--hook-file goes with --print-transcripts');
    if (options.null) throw new UsageError('--null goes with --print-transcripts');
    const repo = locateRepository(ctx.cwd, ctx.env);
    const top = repo.topLevel ?? ctx.cwd;
    const found = options.hook ? [readHookFile(join(repo.hooksDir, options.hook))] : installedHooks(repo).map((h) => h.file);
    const hooks: HookStatusEntry[] = [];
    for (const file of found) {
      if (file.state !== 'devs-ctx') continue;
      const { meta } = file;
      const previous = meta.previous === null ? null : join(repo.hooksDir, previousHookName(basename(file.path)));
      hooks.push({
        hook: meta.hook,
        path: file.path,
        devsCtxVersion: meta.devsCtxVersion,
        blockOn: meta.blockOn,
        refresh: meta.refresh,
        previous,
        previousPresent: previous !== null && existsSync(previous),
        modified: file.modified,
        runner: runnerOf(meta.runner),
        transcripts: coveredBy(meta, top, ctx, options.config),
      });
    }
    const requestedFile = options.hook ? found[0] : undefined;
    const report: HookStatusReport = {
      schemaVersion: HOOK_SCHEMA_VERSION,
      installed: hooks.length > 0,
      repository: repo.topLevel,
      hooksDir: repo.hooksDir,
      hooksPath: repo.hooksPath,
      hooks,
      requested: options.hook && requestedFile ? { hook: options.hook, path: requestedFile.path, state: requestedFile.state } : null,
      wouldCover: hooks.length > 0 ? null : coveredBy(null, top, ctx, options.config),
    };
    if (json) ctx.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    else ctx.stdout.write(renderHookStatus(report, ctx.cwd));
    return ExitCode.ok;
  } catch (error) {
    return reportError(ctx, error, json);
  }
}

/**
 * What the hook itself reads at run time: the files it covers, one absolute path a line. From the
 * hook script's own settings (`--hook-file`, which the hook passes as "$0", or the installed
 * `--hook`), else from the config file, so a husky or lefthook script can use it too.
 */
function printTranscripts(options: HookStatusOptions, ctx: CliContext): ExitCodeValue {
  if (options.json) throw new UsageError('--print-transcripts prints paths, one a line; leave out --json');
  let repo: GitRepository | undefined;
  try {
    repo = locateRepository(ctx.cwd, ctx.env);
  } catch (error) {
    if (options.hookFile === undefined) throw error;
  }
  const top = repo?.topLevel ?? ctx.cwd;
  const hookPath =
    options.hookFile !== undefined ? resolve(ctx.cwd, options.hookFile) : repo ? join(repo.hooksDir, options.hook ?? DEFAULT_GIT_HOOK) : undefined;
  const file = hookPath !== undefined ? readHookFile(hookPath) : undefined;
  const covered = coveredBy(file?.state === 'devs-ctx' ? file.meta : null, top, ctx, options.config);
  if (covered.source === 'none') {
    throw new UsageError(
      covered.config ? `${covered.config} names no "transcripts"` : 'no transcripts configured: no devs-ctx.config.json found',
      'add "transcripts" to devs-ctx.config.json (devs-ctx init writes it), or install the hook with --transcript PATH',
    );
  }
  for (const match of covered.patterns) {
    if (match.refused !== undefined)
      ctx.stderr.write(`devs-ctx: warning: "${match.pattern}" in ${covered.config ?? 'the config'}: ${match.refused}; left out (${OUTSIDE_HINT})\n`);
  }
  // A file two patterns name is covered (and pruned) once.
  const files = new Set(covered.patterns.flatMap((match) => match.files));
  for (const f of files) {
    if (options.null) {
      ctx.stdout.write(`${f}\0`);
    } else if (/[\n\r]/.test(f)) {
      // One path a line cannot carry this name: a newline in it would read as two paths.
      ctx.stderr.write(`devs-ctx: warning: left out ${JSON.stringify(f)}: its name holds a line break (use --null)\n`);
    } else {
      ctx.stdout.write(`${f}\n`);
    }
  }
  return ExitCode.ok;
}

const OUTSIDE_HINT =
  'a project\'s "transcripts" stay inside its repository; name others with hook install --transcript PATH, or set "allowTranscriptsOutsideRepository": true in your own config (~/.config/devs-ctx/config.json)';

/** The hook's --transcript list (relative to the work tree's top), else the config's (relative to the config file). */
export function coveredBy(meta: Pick<HookMeta, 'transcripts' | 'config'> | null, top: string, ctx: CliContext, explicitConfig?: string): CoveredTranscripts {
  const home = ctx.env['HOME'];
  const configPath = explicitConfig !== undefined ? resolve(ctx.cwd, explicitConfig) : meta?.config != null ? resolve(top, meta.config) : undefined;
  if (meta?.transcripts) {
    return { source: 'hook', config: configPath ?? null, patterns: expandTranscripts(meta.transcripts, top, home) };
  }
  // The hook runs at the work tree's top, so that is where the nearest config is looked for.
  const file = loadConfig({ cwd: top, ...(configPath !== undefined ? { explicitPath: configPath } : {}) });
  const patterns = file?.config.transcripts;
  if (!file || !patterns || patterns.length === 0) return { source: 'none', config: file?.path ?? null, patterns: [] };
  // The config may have come with a clone or a pull: its patterns stay inside the repository unless
  // the user's own config says otherwise (the hook's own --transcript list was typed by the user).
  const free = loadUserConfig(ctx.env)?.config.allowTranscriptsOutsideRepository === true;
  return { source: 'config', config: file.path, patterns: expandTranscripts(patterns, dirname(file.path), home, free ? undefined : { root: top }) };
}

function installedHooks(repo: GitRepository): { hook: GitHookName; file: HookFile }[] {
  return STANDARD_GIT_HOOKS.map((hook) => ({ hook, file: readHookFile(join(repo.hooksDir, hook)) })).filter((h) => h.file.state === 'devs-ctx');
}

/** Relative to the work tree's top when inside it (so one hook serves every worktree), else absolute. */
function pathForHook(path: string, top: string): string {
  const rel = relative(top, path);
  if (rel === '') return '.';
  if (rel.startsWith('..') || isAbsolute(rel)) return path;
  return rel.split(sep).join('/');
}

function runnerOf(runner: HookMeta['runner']): HookStatusEntry['runner'] {
  return { node: runner.node, bin: runner.bin, binPresent: runner.bin !== null && existsSync(runner.bin), fallback: NPX_FALLBACK };
}

/** husky and lefthook own their hooks folder or files and rewrite them; say so, and where the snippet is. */
function hookManager(repo: GitRepository, hook: string): string | undefined {
  if (repo.hooksDir.split(sep).includes('.husky')) {
    return `${repo.hooksDir} is husky's (core.hooksPath); husky rewrites it on install: use devs-ctx hook install --stdout and call that script from .husky/${hook} (README: husky)`;
  }
  try {
    const text = readFileSync(join(repo.hooksDir, hook), 'utf8');
    if (/lefthook/i.test(text)) return `${hook} is lefthook's; \`lefthook install\` may replace this hook: prefer a lefthook command (README: lefthook)`;
  } catch {
    // no hook there
  }
  return undefined;
}

/** This copy of devs-ctx: its version, and its bin (the absolute path the hook will run). */
export function packageInfo(): { version: string; bin: string | null } {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest)) {
      const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'devs-ctx') {
        const bin = join(dir, 'bin', 'devs-ctx.js');
        return { version: pkg.version ?? '0.0.0', bin: existsSync(bin) ? realpathSync(bin) : null };
      }
    }
    const parent = dirname(dir);
    if (parent === dir) return { version: '0.0.0', bin: null };
    dir = parent;
  }
}

/**
 * What `hook run` recorded of the transcripts it saw (see hook-run.ts): gone with the hook. From the
 * git folder, and from beside the hook, where earlier versions kept it.
 */
function forgetHookState(hooksDir: string, stateDir: string | undefined, hook: string): void {
  for (const dir of [join(hooksDir, '.devs-ctx-state'), ...(stateDir !== undefined ? [stateDir] : [])]) {
    rmSync(join(dir, `${hook}.json`), { force: true });
    try {
      rmdirSync(dir);
    } catch {
      // other hooks' records are still there, or there was none
    }
  }
}
