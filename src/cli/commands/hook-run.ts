import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, statSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import * as z from 'zod/mini';
import '../../core/zod-english.js';
import { countEntries } from '../../core/accounting.js';
import { ExitCode } from '../../core/errors.js';
import type { ExitCodeValue } from '../../core/errors.js';
import type { Settings } from '../../core/config.js';
import type { HookMeta } from '../../core/git-hook.js';
import { classifyPruneUrgency } from '../../core/policy.js';
import { writeFileAtomic } from '../../io/atomic.js';
import { defaultCacheDir } from '../../io/count-cache.js';
import { hookStateDir, readHookFile } from '../../io/git-hooks.js';
import { CONFIG_FILE_NAME } from '../../core/config.js';
import type { Main } from '../command.js';
import type { CliContext } from '../context.js';
import type { HookRunOptions } from '../flags/hook.js';
import { reportError } from '../errors.js';
import { CachedCounter, loadTranscriptInput, settingsFor } from '../shared.js';
import type { LoadedTranscript } from '../shared.js';
import { coveredBy } from './hook.js';
import { readRegularFile } from '../../io/fd.js';

/**
 * `devs-ctx hook run --hook-file "$0"`: everything the git hook does, in one process [issue 17 §4].
 * A commit with many sessions and nothing due costs one process start and a stat per transcript:
 * transcripts unchanged since the hook's last run are skipped (their size and mtime are kept beside
 * the hook), and the refresh check only runs where the transcript has a TAS or PRD to refresh with.
 * A pruned or refreshed transcript that git tracks is staged when it had no unstaged changes, so
 * the commit holds the pruned file; otherwise the hook says it is not staged.
 */

const StateSchema = z.object({
  version: z.literal(1),
  /** The hook's settings the state was taken with: other settings, other decisions. */
  settings: z.string(),
  files: z.record(z.string(), z.string()),
});
type State = z.infer<typeof StateSchema>;

function statKey(path: string): string | undefined {
  try {
    const stats = statSync(path);
    return `${stats.size}:${Math.floor(stats.mtimeMs)}`;
  } catch {
    return undefined;
  }
}

function readState(path: string | undefined, settings: string): State {
  try {
    if (path === undefined) throw new Error('no place for it');
    const parsed = StateSchema.safeParse(JSON.parse(readRegularFile(path).toString('utf8')));
    if (parsed.success && parsed.data.settings === settings) return parsed.data;
  } catch {
    // none yet, or unreadable: start afresh
  }
  return { version: 1, settings, files: {} };
}

/** A git command whose paths are paths, never pathspec magic: `sessions/[ab].jsonl` names that file, not `a.jsonl`. */
function git(args: readonly string[], cwd: string, env: CliContext['env']): number {
  const result = spawnSync('git', ['--literal-pathspecs', ...args], { cwd, env: env as NodeJS.ProcessEnv, stdio: 'ignore' });
  return result.status ?? 1;
}

/** Runs a devs-ctx command in this process; its exit code and the first line it said. */
async function devsCtx(args: readonly string[], ctx: CliContext, main: Main): Promise<{ code: number; first: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let said = '';
  // Both streams, in order, as the shell hook read them (2>&1): the report line is on either.
  stdout.on('data', (d: Buffer) => (said += d.toString()));
  stderr.on('data', (d: Buffer) => (said += d.toString()));
  const code = await main(args, { ...ctx, stdin: Readable.from([]), stdout, stderr });
  // A warning (a config's archive ignored, say) is passed on as it is, on its own line: the first other line is the report.
  const lines = said.split('\n');
  for (const line of lines) if (line.startsWith('devs-ctx: warning: ')) ctx.stderr.write(`${line}\n`);
  return { code, first: lines.find((line) => !line.startsWith('devs-ctx: warning: ')) ?? '' };
}

export async function runHookRun(options: HookRunOptions, ctx: CliContext, main: Main): Promise<ExitCodeValue> {
  const say = (line: string): void => void ctx.stderr.write(`devs-ctx: ${line}\n`);
  try {
    const hookPath = resolve(ctx.cwd, options.hookFile);
    const file = readHookFile(hookPath);
    if (file.state !== 'devs-ctx') {
      say(`${hookPath} is not a devs-ctx hook; nothing to do`);
      return ExitCode.ok;
    }
    const meta: HookMeta = file.meta;
    const top = ctx.cwd; // git runs hooks at the top of the work tree
    const covered = coveredBy(meta, top, ctx);
    if (covered.source === 'none') {
      say(`could not list the transcripts; ${meta.hook} hook skipped (devs-ctx hook status says why)`);
      return ExitCode.ok;
    }
    const files = [...new Set(covered.patterns.flatMap((m) => m.files))];
    if (files.length === 0) {
      say('no transcript found; nothing to do (devs-ctx hook status shows the patterns)');
      return ExitCode.ok;
    }
    const config = meta.config !== null ? resolve(top, meta.config) : undefined;
    // A hook from before `configNamed` was recorded named its config when that is not the file a walk finds.
    const named = config !== undefined && (meta.configNamed === true || basename(config) !== CONFIG_FILE_NAME);
    const configArgs = named ? ['--config', config] : [];
    // A config the install found (the project's, which any pull may change) is found again from its
    // own folder, so it counts as found, never as named by the user (see HookMeta.configNamed).
    const runCtx = config !== undefined && !named ? { ...ctx, cwd: dirname(config) } : ctx;
    const { settings, file: configFile } = settingsFor(named ? { config } : {}, runCtx);
    const stateDir = hookStateDir(top, ctx.env);
    const statePath = stateDir !== undefined ? join(stateDir, `${meta.hook}.json`) : undefined;
    const settingsKey = createHash('sha256')
      .update(
        JSON.stringify({
          ...meta,
          limits: [ctx.env['DEVS_SOFT_LIMIT'], ctx.env['DEVS_HARD_LIMIT'], ctx.env['DEVS_PRUNE_THRESHOLD']],
          config: configFile ? statKey(configFile.path) : null,
        }),
      )
      .digest('hex');
    const state = readState(statePath, settingsKey);
    let counter: CachedCounter | undefined;

    const did: string[] = [];
    const blocked: string[] = [];
    for (const path of files) {
      const name = relative(top, path) || path;
      const before = statKey(path);
      if (before !== undefined && state.files[path] === before) continue; // unchanged since the last run: nothing can be due
      const outcome = await tendTranscript(path, name, {
        meta,
        top,
        settings,
        configArgs,
        ctx: runCtx,
        main,
        counter: () => (counter ??= new CachedCounter(settings.encoding, defaultCacheDir(ctx.env))),
      });
      if (outcome.blocked !== undefined) blocked.push(outcome.blocked);
      if (outcome.analysed === false) {
        // Not remembered as seen: the next run tries it again.
        if (outcome.did !== undefined) did.push(outcome.did);
        continue;
      }
      const after = statKey(path);
      if (after !== undefined) state.files[path] = after;
      if (outcome.did !== undefined) did.push(outcome.did);
    }
    counter?.save();
    // Forget files no longer covered, so the state does not grow forever.
    for (const path of Object.keys(state.files)) if (!files.includes(path)) delete state.files[path];
    try {
      if (statePath !== undefined) {
        mkdirSync(dirname(statePath), { recursive: true, mode: 0o700 });
        writeFileAtomic(statePath, Buffer.from(JSON.stringify(state)), { cache: true });
      }
    } catch {
      // no state kept: the next run checks every transcript again
    }
    const summary =
      did.length > 0 ? did.join('; ') : files.length === 1 ? 'nothing due (1 transcript checked)' : `nothing due (${files.length} transcripts checked)`;
    if (blocked.length > 0) {
      say(`${summary}; ${meta.hook} blocked by --block-on ${meta.blockOn}: ${blocked.join(', ')} had reached it before this hook pruned it; try again`);
      // The urgency reached, as analyze says it: the hook script turns it into its exit 1.
      return blocked.some((b) => b.endsWith('(hard)')) ? ExitCode.hardLimit : ExitCode.softLimit;
    }
    say(summary);
    return ExitCode.ok;
  } catch (error) {
    // Only --block-on stops the hook: anything else (a config that is not valid, say) is told, and the hook goes on.
    if (reportError(ctx, error, false) === ExitCode.interrupted) return ExitCode.interrupted;
    say(`${basename(options.hookFile)} not blocked: it goes on`);
    return ExitCode.ok;
  }
}

/** Prunes (and refreshes) one changed transcript when due: what it did, and whether it had reached the --block-on limit. */
async function tendTranscript(
  path: string,
  name: string,
  run: { meta: HookMeta; top: string; settings: Settings; configArgs: readonly string[]; ctx: CliContext; main: Main; counter: () => CachedCounter },
): Promise<{ analysed?: false; did?: string; blocked?: string }> {
  const { meta, top, settings, configArgs, ctx, main } = run;
  let blocked: string | undefined;
  const acts: string[] = [];
  let loaded: LoadedTranscript;
  try {
    loaded = await loadTranscriptInput(path, { format: undefined, strict: false, ctx });
  } catch (error) {
    return { analysed: false, did: `${name}: not analysed (${error instanceof Error ? error.message.split('\n')[0] : String(error)})` };
  }
  const counter = run.counter();
  const { transcript } = loaded;
  const tokens = countEntries(transcript.entries, counter);
  const total = tokens.reduce((sum, t) => sum + t.total, 0);
  const urgency = classifyPruneUrgency({ turns: transcript.entries.map((e) => e.turn), totalTokenEstimate: total }, settings);
  const tracked = meta.hook === 'pre-commit' && git(['ls-files', '--error-unmatch', '--', path], top, ctx.env) === 0;
  // Staged as it is (no unstaged changes): staging the pruned file commits exactly what the hook wrote.
  const stageable = tracked && git(['diff', '--quiet', '--', path], top, ctx.env) === 0;
  let changed = false;
  if (urgency !== 'none') {
    if ((meta.blockOn === 'soft' && (urgency === 'soft' || urgency === 'hard')) || (meta.blockOn === 'hard' && urgency === 'hard'))
      blocked = `${name} (${urgency})`;
    const pruned = await devsCtx(['prune', path, '--in-place', '--fallback', 'extractive', ...configArgs], ctx, main);
    if (pruned.code === 0) {
      acts.push(pruned.first.replace(/^.*\): /, '').replace(/ \(target.*/, ''));
      changed = true;
    } else acts.push(`prune failed (exit ${pruned.code}: ${pruned.first.replace(/^devs-ctx: /, '')})`);
  }
  // Only a transcript with a TAS or PRD has anything to refresh with (refresh --check would say "unavailable").
  if (meta.refresh && transcript.entries.some((e) => e.turn.type === 'tas' || e.turn.type === 'prd')) {
    const check = await devsCtx(['refresh', path, '--check', ...configArgs], ctx, main);
    if (check.code === 12) {
      const refreshed = await devsCtx(['refresh', path, '--in-place', ...configArgs], ctx, main);
      if (refreshed.code === 0) {
        acts.push('refreshed');
        changed = true;
      } else acts.push(`refresh failed (exit ${refreshed.code}: ${refreshed.first.replace(/^devs-ctx: /, '')})`);
    }
  }
  if (changed && tracked) {
    if (stageable && git(['add', '--', path], top, ctx.env) === 0) acts.push('staged');
    else acts.push(`not staged (it has unstaged changes): the commit holds the file as staged; git add ${name} to commit the pruned one`);
  }
  return { ...(acts.length > 0 ? { did: `${name}: ${acts.join(', ')}` } : {}), ...(blocked !== undefined ? { blocked } : {}) };
}
