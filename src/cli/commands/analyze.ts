import { z } from 'zod';
import { countEntries } from '../../core/accounting.js';
import type { TextTokenCounter } from '../../core/accounting.js';
import type { Settings } from '../../core/config.js';
import { DevsCtxError, ExitCode, UsageError } from '../../core/errors.js';
import type { ExitCodeValue } from '../../core/errors.js';
import { buildAnalyzeReport, worstUrgency } from '../../core/report.js';
import type { AnalyzeReport } from '../../core/report.js';
import type { FormatName } from '../../formats/index.js';
import { defaultCacheDir } from '../../io/count-cache.js';
import { STDIN, expandInputs } from '../../io/input.js';
import type { CliContext } from '../context.js';
import { reportError } from '../errors.js';
import { CachedCounter, loadTranscriptInput, readingOptionsShape, settingsFor } from '../shared.js';
import { renderAnalyzeReport, renderAnalyzeTable, renderAnalyzeTableDiagnostics } from '../render/analyze-text.js';
import type { FileRow } from '../render/analyze-text.js';

const AnalyzeOptionsSchema = z.object(readingOptionsShape);
type AnalyzeOptions = z.infer<typeof AnalyzeOptionsSchema>;

export const ANALYZE_MULTI_SCHEMA_VERSION = 1;

/** `devs-ctx analyze [paths…|-]`: parse options → analyse each transcript → render → exit code. */
export async function runAnalyze(paths: readonly string[], rawOptions: Record<string, unknown>, ctx: CliContext): Promise<ExitCodeValue> {
  const json = rawOptions['json'] === true;
  try {
    const parsed = AnalyzeOptionsSchema.safeParse(rawOptions);
    if (!parsed.success) throw new UsageError(parsed.error.issues[0]?.message ?? 'invalid option', 'see devs-ctx analyze --help');
    const options = parsed.data;
    const { settings } = settingsFor(options, ctx);
    const inputs = resolveInputs(paths, ctx);
    const counter = new CachedCounter(settings.encoding, options.cache === false ? undefined : defaultCacheDir(ctx.env));
    const format = options.format as FormatName | undefined;

    if (inputs.length === 1 && inputs[0] !== undefined) {
      const report = await analyzeOne(inputs[0], { settings, options, counter, format, ctx });
      counter.save();
      if (json) ctx.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
      else ctx.stdout.write(renderAnalyzeReport(report, ctx));
      return urgencyExit(report.urgency);
    }

    const rows: FileRow[] = [];
    for (const input of inputs) {
      try {
        rows.push({ file: input, report: await analyzeOne(input, { settings, options, counter, format, ctx }) });
      } catch (error) {
        if (!(error instanceof DevsCtxError)) throw error;
        rows.push({ file: input, error });
      }
    }
    counter.save();
    const reports = rows.flatMap((r) => (r.report ? [r.report] : []));
    const urgency = worstUrgency(reports.map((r) => r.urgency));
    const failed = rows.find((r) => r.error)?.error;
    if (json) {
      ctx.stdout.write(
        `${JSON.stringify(
          {
            schemaVersion: ANALYZE_MULTI_SCHEMA_VERSION,
            transcripts: rows.map((r) =>
              r.report ?? { file: r.file, error: { code: r.error?.code, exitCode: r.error?.exitCode, message: r.error?.message, hint: r.error?.hint } },
            ),
            total: {
              transcripts: rows.length,
              failed: rows.length - reports.length,
              turns: reports.reduce((s, r) => s + r.turns, 0),
              totalTokens: reports.reduce((s, r) => s + r.totalTokens, 0),
              urgency,
            },
          },
          null,
          2,
        )}\n`,
      );
    } else {
      ctx.stdout.write(renderAnalyzeTable(rows, ctx));
      ctx.stderr.write(renderAnalyzeTableDiagnostics(rows));
    }
    // A file that could not be read matters more than a limit being reached.
    return failed ? failed.exitCode : urgencyExit(urgency);
  } catch (error) {
    return reportError(ctx, error, json);
  }
}

function urgencyExit(urgency: AnalyzeReport['urgency']): ExitCodeValue {
  return urgency === 'hard' ? ExitCode.hardLimit : urgency === 'soft' ? ExitCode.softLimit : ExitCode.ok;
}

function resolveInputs(paths: readonly string[], ctx: CliContext): string[] {
  if (paths.length === 0) {
    if (ctx.stdin.isTTY) {
      throw new UsageError('no transcript given', 'pass a path, a directory, or - to read standard input (e.g. cat s.jsonl | devs-ctx analyze -)');
    }
    return [STDIN];
  }
  if (paths.filter((p) => p === STDIN).length > 1) throw new UsageError('standard input (-) can only be read once');
  return expandInputs(paths, ctx.cwd);
}

async function analyzeOne(
  path: string,
  run: { settings: Settings; options: AnalyzeOptions; counter: TextTokenCounter; format: FormatName | undefined; ctx: CliContext },
): Promise<AnalyzeReport> {
  const { doc, transcript, display } = await loadTranscriptInput(path, { format: run.format, strict: run.options.strict === true, ctx: run.ctx });
  const tokens = countEntries(transcript.entries, run.counter);
  return buildAnalyzeReport({ file: display, transcript, tokens, settings: run.settings, readIssues: doc.issues });
}
