import { statSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import type { EntryTokens } from '../../core/accounting.js';
import type { Settings } from '../../core/config.js';
import { DevsCtxError, UnknownFormatError } from '../../core/errors.js';
import type { ExitCodeValue } from '../../core/errors.js';
import type { PruneUrgency } from '../../core/policy.js';
import { buildAnalyzeReport, summarizeAnalysis } from '../../core/reports/analyze.js';
import type { TranscriptEntry } from '../../core/transcript.js';
import type { FormatName } from '../../formats/index.js';
import { STDIN } from '../../io/input.js';
import type { CliContext } from '../context.js';
import { loadTranscriptInput } from '../shared.js';
import { newDigest, ResumeStore } from '../../io/resume-store.js';
import { keepWholeRead, resumeRead } from './resume.js';
import { elementJson } from './report-json.js';
import type { BatchReportText } from './report-json.js';
import { spanInRange, timestampSpan } from './range.js';
import type { TimeRange } from './range.js';

/** An error as it crosses from a worker: what the row, `--json` and the exit code need. */
export interface SessionError {
  readonly code: string;
  readonly exitCode: ExitCodeValue;
  readonly message: string;
  readonly hint?: string;
}

/** What a batch keeps of one analysed session: a row, never the whole report. */
export interface SessionSummary {
  readonly file: string;
  readonly project: string;
  readonly format: FormatName;
  readonly turns: number;
  /** The estimate: our tokenizer over the turns in the file. */
  readonly totalTokens: number;
  /** The size the model sees (`context.tokens` of the report; urgency follows it), and its basis. */
  readonly contextTokens: number;
  readonly contextBasis: string;
  readonly model: string | null;
  readonly window: number | null;
  /** The session's whole life: its peak size and the agent's compactions. */
  readonly peakTokens: number;
  readonly compactions: number;
  readonly urgency: PruneUrgency;
  /** The context size the file itself records (Claude Code, Codex, Gemini, OpenHands), if any. */
  readonly recordedTokens: number | null;
  readonly firstTimestamp: string | null;
  readonly lastTimestamp: string | null;
  /** Skipped or odd lines. */
  readonly issues: number;
  /** The line numbers of the first of them (up to 11), for the note on stderr. */
  readonly issueLines: readonly number[];
}

export type SessionOutcome =
  | {
      readonly kind: 'session';
      readonly summary: SessionSummary;
      /** The full report as `--json` prints it, when asked for. */
      readonly reportJson?: BatchReportText;
    }
  | { readonly kind: 'outOfRange'; readonly file: string; readonly project: string }
  /** `unknownFormat`: JSON, but no transcript format devs-ctx knows (a batch leaves out such a file a walk found). */
  | { readonly kind: 'error'; readonly file: string; readonly project: string; readonly error: SessionError; readonly unknownFormat?: true }
  /** A file a walk or a glob found that is JSON but no transcript: left out of the rows, counted. */
  | { readonly kind: 'notTranscript'; readonly file: string; readonly project: string };

/** What every session of a batch is analysed with (plain data: it is sent to the workers). */
export interface SessionRun {
  readonly settings: Settings;
  readonly format: FormatName | undefined;
  readonly strict: boolean;
  readonly range: TimeRange | undefined;
  /** Build the full `--json` report too (only `--json` needs it). */
  readonly full: boolean;
  readonly cwd: string;
  /** Epoch ms: the time of an undated standard input. */
  readonly now: number;
  /** `estimate`: size and urgency from the plain estimate (`analyze --basis estimate`). */
  readonly basis?: 'auto' | 'estimate';
  /** Where transcripts that grow are read on from where they ended (the row cache's dir and schema). */
  readonly resume?: { readonly dir: string; readonly schema: string };
}

/**
 * A session's project: the directory that holds the transcript, as the path was shown; Claude Code's
 * subagent transcripts (`<project>/<sessionId>/subagents/agent-*.jsonl`) count for their project.
 */
export function projectOf(file: string): string {
  if (file === STDIN || file === '(stdin)') return '(stdin)';
  const dir = dirname(file);
  return basename(dir) === 'subagents' ? dirname(dirname(dir)) : dir;
}

/**
 * The session a Claude Code subagent transcript belongs to (`<project>/<sessionId>/subagents/agent-*.jsonl`
 * → `<project>/<sessionId>.jsonl`), or undefined for any other file.
 */
export function subagentParent(file: string): string | undefined {
  const dir = dirname(file);
  if (basename(dir) !== 'subagents' || !/^agent-.*\.jsonl$/.test(basename(file))) return undefined;
  return `${dirname(dir)}.jsonl`;
}

export function sessionError(error: DevsCtxError): SessionError {
  return { code: error.code, exitCode: error.exitCode, message: error.message, ...(error.hint ? { hint: error.hint } : {}) };
}

/**
 * Reads, dates, filters and counts one transcript. The same code runs in a worker and on the main
 * thread (standard input, `--jobs 1`), so both give what the single-file `analyze` gives. Errors the
 * user can act on become an `error` outcome; anything else (a bug) is thrown.
 */
export async function analyzeSession(
  path: string,
  run: SessionRun,
  io: { readonly ctx: CliContext; readonly countTokens: (entries: readonly TranscriptEntry[]) => Promise<EntryTokens[]> | EntryTokens[] },
  /** The file grew since its row was made: read it on from where it ended, and keep where this read ends. */
  grown = false,
): Promise<SessionOutcome> {
  const project = projectOf(path);
  try {
    const absolute = resolve(run.cwd, path);
    // Rows only: --json prints whole reports (their text is not kept), --strict fails on any bad line.
    const store = grown && run.resume && path !== STDIN && !run.full && !run.strict ? ResumeStore.open(run.resume.dir, run.resume.schema) : undefined;
    const resumed = store && resumeRead(path, absolute, store, run.format);
    const digest = store && !resumed ? newDigest() : undefined;
    const { doc, transcript, display } =
      resumed ?? (await loadTranscriptInput(path, { format: run.format, strict: run.strict, ctx: io.ctx, ...(digest ? { digest } : {}) }));
    // The session's whole time span: lines before the agent's compactions count too.
    const life = transcript.lifetime?.span;
    const span = timestampSpan([...transcript.entries.map((e) => e.turn.timestamp), life?.first, life?.last]);
    if (run.range) {
      // Undated transcripts are judged by the file's modification time (standard input: now).
      const at = span ?? (path === STDIN ? { first: run.now, last: run.now } : modified(absolute));
      if (at === undefined || !spanInRange(at, run.range)) return { kind: 'outOfRange', file: display, project };
    }
    const tokens = resumed ? await resumed.count(io.countTokens) : await io.countTokens(transcript.entries);
    if (resumed) resumed.keep(tokens);
    else if (store && digest) keepWholeRead(store, { doc, transcript, tokens, absolute, digest: digest.digest('base64url'), forced: run.format });
    const input = { file: display, transcript, tokens, settings: run.settings, readIssues: doc.issues, basis: run.basis ?? 'auto' } as const;
    // A row needs none of the report's per-turn parts (goal, heaviest turns, partition): only --json prints them.
    const full = run.full ? buildAnalyzeReport(input) : undefined;
    const report = full ?? summarizeAnalysis(input);
    const firstTimestamp = span ? new Date(span.first).toISOString() : null;
    const lastTimestamp = span ? new Date(span.last).toISOString() : null;
    const summary: SessionSummary = {
      file: display,
      project,
      format: report.format,
      turns: report.turns,
      totalTokens: report.totalTokens,
      contextTokens: report.context.tokens,
      contextBasis: report.context.basis,
      model: report.context.model,
      window: report.context.window,
      peakTokens: report.lifetime.peak,
      compactions: report.lifetime.compactions,
      urgency: report.urgency,
      recordedTokens: report.recorded?.contextTokens ?? null,
      firstTimestamp,
      lastTimestamp,
      issues: report.issues.length,
      issueLines: report.issues
        .filter((i) => i.line > 0)
        .slice(0, 11)
        .map((i) => i.line),
    };
    if (!full) return { kind: 'session', summary };
    // The single-file report, with the batch's fields added after it (additive to the single report's schema).
    return { kind: 'session', summary, reportJson: elementJson({ ...full, project, firstTimestamp, lastTimestamp }) };
  } catch (error) {
    if (!(error instanceof DevsCtxError)) throw error;
    // Standard input is `(stdin)` in an error row too, as in a row.
    const file = path === STDIN ? '(stdin)' : path;
    return { kind: 'error', file, project, error: sessionError(error), ...(error instanceof UnknownFormatError ? { unknownFormat: true } : {}) };
  }
}

function modified(path: string): { first: number; last: number } | undefined {
  try {
    const at = statSync(path).mtimeMs;
    return { first: at, last: at };
  } catch {
    return undefined;
  }
}
