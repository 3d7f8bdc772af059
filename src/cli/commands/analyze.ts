import { z } from 'zod';
import { countEntries } from '../../core/accounting.js';
import type { TextTokenCounter } from '../../core/accounting.js';
import { resolveSettings } from '../../core/config.js';
import type { Settings } from '../../core/config.js';
import { DevsCtxError, ExitCode, InvalidTranscriptError, UsageError } from '../../core/errors.js';
import type { ExitCodeValue } from '../../core/errors.js';
import { buildAnalyzeReport, worstUrgency } from '../../core/report.js';
import type { AnalyzeReport } from '../../core/report.js';
import { loadCounter } from '../../core/tokens/encodings.js';
import type { EncodingName } from '../../core/tokens/encodings.js';
import { parseTokenAmount } from '../../core/units.js';
import { isFormatName, readTranscript } from '../../formats/index.js';
import type { FormatName } from '../../formats/index.js';
import { loadConfig } from '../../io/config.js';
import { TokenCountCache, defaultCacheDir } from '../../io/count-cache.js';
import { STDIN, expandInputs, readInput } from '../../io/input.js';
import type { CliContext } from '../context.js';
import { reportError } from '../errors.js';
import { renderAnalyzeReport, renderAnalyzeTable, renderAnalyzeTableDiagnostics } from '../render/analyze-text.js';
import type { FileRow } from '../render/analyze-text.js';

const tokenOption = (flag: string) =>
  z
    .string()
    .optional()
    .transform((raw, ctx) => {
      if (raw === undefined) return undefined;
      const value = parseTokenAmount(raw);
      if (value === undefined) {
        ctx.addIssue({ code: 'custom', message: `${flag} ${raw}: expected a positive number of tokens such as 200000, 200k or 1M` });
        return z.NEVER;
      }
      return value;
    });

const AnalyzeOptionsSchema = z.object({
  json: z.boolean().optional(),
  format: z.string().refine(isFormatName).optional(),
  encoding: z.enum(['o200k_base', 'cl100k_base']).optional(),
  window: tokenOption('--window'),
  softLimit: tokenOption('--soft-limit'),
  hardLimit: tokenOption('--hard-limit'),
  config: z.string().optional(),
  strict: z.boolean().optional(),
  cache: z.boolean().optional(),
});
type AnalyzeOptions = z.infer<typeof AnalyzeOptionsSchema>;

export const ANALYZE_MULTI_SCHEMA_VERSION = 1;

/** `devs-ctx analyze [paths…|-]`: parse options → analyse each transcript → render → exit code. */
export async function runAnalyze(paths: readonly string[], rawOptions: Record<string, unknown>, ctx: CliContext): Promise<ExitCodeValue> {
  const json = rawOptions['json'] === true;
  try {
    const parsed = AnalyzeOptionsSchema.safeParse(rawOptions);
    if (!parsed.success) throw new UsageError(parsed.error.issues[0]?.message ?? 'invalid option', 'see devs-ctx analyze --help');
    const options = parsed.data;
    const file = loadConfig({ cwd: ctx.cwd, ...(options.config ? { explicitPath: options.config } : {}) });
    const settings = resolveSettings({
      flags: {
        ...(options.window !== undefined ? { window: options.window } : {}),
        ...(options.softLimit !== undefined ? { softLimit: options.softLimit } : {}),
        ...(options.hardLimit !== undefined ? { hardLimit: options.hardLimit } : {}),
        ...(options.encoding !== undefined ? { encoding: options.encoding } : {}),
      },
      env: ctx.env,
      ...(file ? { file } : {}),
    });
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

/** Counts through the content-hash cache; the tokenizer is only loaded when a count is missing. */
class CachedCounter implements TextTokenCounter {
  private readonly cache: TokenCountCache;
  private counter: TextTokenCounter | undefined;

  constructor(private readonly encoding: EncodingName, cacheDir: string | undefined) {
    this.cache = TokenCountCache.open(cacheDir, encoding);
  }

  count(text: string): number {
    if (text.length === 0) return 0;
    if (!this.cache.enabled) return (this.counter ??= loadCounter(this.encoding)).count(text);
    const key = TokenCountCache.key(text);
    const cached = this.cache.get(key);
    if (cached !== undefined) return cached;
    const counter = (this.counter ??= loadCounter(this.encoding));
    const count = counter.count(text);
    this.cache.set(key, count);
    return count;
  }

  save(): void {
    this.cache.save();
  }
}

async function analyzeOne(
  path: string,
  run: { settings: Settings; options: AnalyzeOptions; counter: TextTokenCounter; format: FormatName | undefined; ctx: CliContext },
): Promise<AnalyzeReport> {
  const doc = await readInput(path, { stdin: run.ctx.stdin, cwd: run.ctx.cwd });
  const display = path === STDIN ? '(stdin)' : path;
  if (doc.records.every((r) => r.blank)) {
    throw new InvalidTranscriptError(`${display}: the transcript is empty`, 'nothing to analyse; check that the agent has written to it');
  }
  const transcript = readTranscript(doc, run.format);
  if (transcript.entries.length === 0 && doc.issues.length + transcript.issues.length > 0) {
    const first = [...doc.issues, ...transcript.issues][0];
    throw new InvalidTranscriptError(
      `${display}: no turn could be read (line ${first?.line}: ${first?.reason})`,
      run.format ? `is it really ${run.format}? try without --format` : 'pass --format if the format was guessed wrong',
    );
  }
  // --strict: any line the reader could not take as it is, or any the adapter rejected, is fatal.
  const badLines = run.options.strict ? [...doc.issues, ...transcript.issues.filter((i) => i.severity === 'error')] : [];
  const first = badLines[0];
  if (first) {
    throw new InvalidTranscriptError(
      `${display}: line ${first.line}: ${first.reason}${badLines.length > 1 ? ` (and ${badLines.length - 1} more bad line(s))` : ''}`,
      'without --strict, bad lines are reported and skipped',
    );
  }
  const tokens = countEntries(transcript.entries, run.counter);
  return buildAnalyzeReport({ file: display, transcript, tokens, settings: run.settings, readIssues: doc.issues });
}
