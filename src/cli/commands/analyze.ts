import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { countEntries } from '../../core/accounting.js';
import type { Settings } from '../../core/config.js';
import { ExitCode, UnknownFormatError, UsageError } from '../../core/errors.js';
import type { ExitCodeValue } from '../../core/errors.js';
import { buildAnalyzeReport } from '../../core/reports/analyze.js';
import type { AnalyzeReport } from '../../core/reports/analyze.js';
import type { FormatName } from '../../formats/index.js';
import { defaultCacheDir } from '../../io/count-cache.js';
import { buildId, fileIdentity, ReportCache, reportSchemaKey } from '../../io/row-cache.js';
import { STDIN } from '../../io/input.js';
import { testPause, untilAborted } from '../context.js';
import type { CliContext } from '../context.js';
import { reportError } from '../errors.js';
import type { AnalyzeOptions } from '../flags/analyze.js';
import { CachedCounter, loadTranscriptInput, settingsFor } from '../shared.js';
import { checkInputPaths, discoverTranscripts, inputRoot } from '../batch/discover.js';
import type { Discovered } from '../batch/discover.js';
import { parseTimeRange } from '../batch/range.js';
import { runAnalyzeBatch } from './analyze-batch.js';

/** `devs-ctx analyze [paths…|-]`: parse options → analyse each transcript → render → exit code. */
export async function runAnalyze(paths: readonly string[], options: AnalyzeOptions, ctx: CliContext): Promise<ExitCodeValue> {
  // Errors are JSON on stdout in both data modes (one line with --ndjson).
  const json = options.json === true || options.ndjson === true;
  // Ctrl-C and SIGTERM stop the run at its next step: exit 130, and the JSON printed so far closed.
  const trap = ctx.trapInterrupt?.();
  try {
    if (options.json === true && options.ndjson === true)
      throw new UsageError('--json and --ndjson cannot be used together', '--json prints one document, --ndjson one line per session');
    const { settings } = settingsFor(options, ctx);
    const range = parseTimeRange(options, Date.now());
    const { format } = options;
    const discovered = discoverInputs(paths, ctx);
    // Flags that only make sense for a batch give the batch's output even for one transcript.
    const batch = options.ndjson === true || options.sort !== undefined || range !== undefined;
    const peeked: Discovered[] = [];
    for (let next = discovered.next(); !next.done; next = discovered.next()) {
      peeked.push(next.value);
      if (peeked.length === 2) break;
    }
    const only = peeked.length === 1 ? peeked[0] : undefined;
    if (!batch && only !== undefined) {
      try {
        return await analyzeSingle(only, { settings, format, options, json, ctx, signal: trap?.signal });
      } catch (error) {
        // One file a walk or a glob found that is JSON but no transcript: the batch leaves it out, as it does any such file.
        if (!(only.found === true && error instanceof UnknownFormatError)) throw error;
      }
    }
    const output = options.json === true ? 'json' : options.ndjson === true ? 'ndjson' : 'text';
    return await runAnalyzeBatch(
      (function* () {
        yield* peeked;
        for (let next = discovered.next(); !next.done; next = discovered.next()) yield next.value;
      })(),
      {
        output,
        sort: options.sort,
        range,
        jobs: options.jobs ?? availableParallelism(),
        run: {
          settings,
          format,
          strict: options.strict === true,
          range,
          full: output === 'json',
          cwd: ctx.cwd,
          now: Date.now(),
          basis: options.basis ?? 'auto',
        },
        encoding: settings.encoding,
        cacheDir: options.cache === false ? undefined : defaultCacheDir(ctx.env),
        ...batchNames(paths, ctx),
        ...(trap ? { signal: trap.signal } : {}),
      },
      ctx,
    );
  } catch (error) {
    return reportError(ctx, error, json, options.ndjson === true && options.json !== true);
  } finally {
    trap?.release();
  }
}

/** One transcript, as `analyze FILE` reports it: from the report cache when unchanged; printed, and its urgency's exit code. */
async function analyzeSingle(
  only: Discovered,
  run: {
    settings: Settings;
    format: FormatName | undefined;
    options: AnalyzeOptions;
    json: boolean;
    ctx: CliContext;
    signal: AbortSignal | undefined;
  },
): Promise<ExitCodeValue> {
  if (only.error) throw only.error;
  const { settings, format, options, json, ctx } = run;
  const cacheDir = options.cache === false ? undefined : defaultCacheDir(ctx.env);
  // An unchanged transcript's finished report comes from the cache (src/io/row-cache.ts).
  const build = buildId();
  const reports = ReportCache.open<AnalyzeReport>(
    cacheDir,
    build === undefined ? undefined : reportSchemaKey(build, { settings, format, strict: options.strict === true, basis: options.basis ?? 'auto' }),
  );
  const absolute = only.path === STDIN ? undefined : resolve(ctx.cwd, only.path);
  const identity = reports.enabled && absolute !== undefined ? fileIdentity(absolute) : undefined;
  const cached = identity && absolute !== undefined ? reports.get(absolute, identity) : undefined;
  let report: AnalyzeReport;
  if (cached !== undefined) {
    report = { ...cached, file: only.path };
  } else {
    const counter = new CachedCounter(settings.encoding, cacheDir);
    report = await analyzeOne(only.path, { settings, options, counter, format, ctx, jobs: options.jobs ?? availableParallelism(), signal: run.signal });
    counter.save();
    if (identity && absolute !== undefined) reports.set(absolute, identity, report);
  }
  if (json) ctx.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  // The text renderer (and chalk, which sets itself up as it loads) only for text output.
  else ctx.stdout.write((await import('../render/analyze-text.js')).renderAnalyzeReport(report, ctx));
  return urgencyExit(report.urgency);
}

/** A quoted glob keeps its `~` (the shell did not expand it): devs-ctx does, from HOME. */
function expandHome(paths: readonly string[], ctx: CliContext): readonly string[] {
  const home = ctx.env['HOME'];
  return home ? paths.map((p) => (p === '~' ? home : p.startsWith('~/') ? `${home}${p.slice(1)}` : p)) : paths;
}

/** The batch table's names: relative to the common root of the paths given (with `~` expanded). */
function batchNames(paths: readonly string[], ctx: CliContext): { names?: { root: string; cwd: string } } {
  const root = inputRoot(expandHome(paths, ctx), ctx.cwd);
  return root === undefined ? {} : { names: { root, cwd: ctx.cwd } };
}

function urgencyExit(urgency: AnalyzeReport['urgency']): ExitCodeValue {
  return urgency === 'hard' ? ExitCode.hardLimit : urgency === 'soft' ? ExitCode.softLimit : ExitCode.ok;
}

/** The transcripts to analyse, found lazily (no paths and piped input: standard input). */
function discoverInputs(paths: readonly string[], ctx: CliContext): Generator<Discovered> {
  if (paths.length === 0) {
    if (ctx.stdin.isTTY) {
      throw new UsageError('no transcript given', 'pass a path, a directory, or - to read standard input (e.g. cat s.jsonl | devs-ctx analyze -)');
    }
    return discoverTranscripts([STDIN], ctx.cwd);
  }
  if (paths.filter((p) => p === STDIN).length > 1) throw new UsageError('standard input (-) can only be read once');
  const expanded = expandHome(paths, ctx);
  checkInputPaths(expanded, ctx.cwd);
  // devs-ctx's own cache is no transcript, and changes from run to run (also with --no-cache: it is there all the same).
  return discoverTranscripts(expanded, ctx.cwd, [defaultCacheDir(ctx.env)]);
}

async function analyzeOne(
  path: string,
  run: {
    settings: Settings;
    options: AnalyzeOptions;
    counter: CachedCounter;
    format: FormatName | undefined;
    ctx: CliContext;
    jobs: number;
    signal: AbortSignal | undefined;
  },
): Promise<AnalyzeReport> {
  // A read that waits (a FIFO with no writer, standard input left open) is given up at Ctrl-C.
  const { doc, transcript, display } = await untilAborted(
    loadTranscriptInput(path, { format: run.format, strict: run.options.strict === true, ctx: run.ctx }),
    run.signal,
  );
  await testPause(run.ctx, run.signal, 'read');
  // A large transcript counted cold is counted across the cores (exactly the same counts).
  await untilAborted(run.counter.prepare(transcript.entries, run.jobs), run.signal);
  const tokens = countEntries(transcript.entries, run.counter);
  return buildAnalyzeReport({ file: display, transcript, tokens, settings: run.settings, readIssues: doc.issues, basis: run.options.basis ?? 'auto' });
}
