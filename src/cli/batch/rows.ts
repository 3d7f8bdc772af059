import { join, resolve } from 'node:path';
import { buildId, fileIdentity, ReportCache, reportSchemaKey, RowCache, rowSchemaKey } from '../../io/row-cache.js';
import type { FileIdentity } from '../../io/row-cache.js';
import { STDIN } from '../../io/input.js';
import { spanInRange } from './range.js';
import { projectOf } from './session.js';
import type { SessionOutcome, SessionRun, SessionSummary } from './session.js';
import { elementToKeep, keptAsElement } from './report-json.js';
import type { BatchReportText } from './report-json.js';

/**
 * What is kept of a row: everything but how the path was typed (the file and project are re-made
 * from it); or that the file is no transcript (JSON in no known format), found by a walk or a glob.
 */
type CachedRow = Omit<SessionSummary, 'file' | 'project'> | { readonly notTranscript: true };

/**
 * A transcript's report as `--json` prints it in a batch, without what the batch adds to the single
 * file's report (its project and time span, which the row holds): the report `analyze FILE` keeps.
 */
type CachedReport = Record<string, unknown>;

/**
 * Keeps the report of `element` (as analyzeSession writes it: an element of the batch's array, its
 * fields then the batch's) without the batch's fields, cut off as text, not parsed and written out
 * again. Written otherwise, it is not kept.
 */
function keepReport(reports: ReportCache<CachedReport>, absolute: string, identity: FileIdentity, summary: SessionSummary, element: BatchReportText): void {
  const kept = typeof element === 'string' ? elementToKeep(element, summary) : undefined;
  if (kept !== undefined) reports.setJson(absolute, identity, kept);
}

/** How to remember a transcript once analysed. */
interface RowMiss {
  readonly remember: (outcome: SessionOutcome) => void;
  /** It had a row and is at least as long now: read it on from where it ended (src/cli/batch/resume.ts). */
  readonly grown: boolean;
}

/** A transcript looked up in the row cache: its finished outcome, or how to remember it once analysed. */
export type RowLookup =
  | { readonly kind: 'hit'; readonly outcome: SessionOutcome }
  /**
   * `--json`: its row is kept, and its report is read when its turn comes (so that a batch never holds
   * more reports than the rows waiting to be printed); none kept, or changed, and it is analysed after all.
   */
  | { readonly kind: 'report'; readonly read: () => SessionOutcome | undefined; readonly miss: RowMiss }
  | ({ readonly kind: 'miss' } & RowMiss)
  | { readonly kind: 'none' };

/**
 * The finished rows of earlier batch runs (src/io/row-cache.ts): a transcript whose identity is
 * unchanged is not read again. With `--json`, its full report too (the report `analyze FILE` keeps:
 * either command reads what the other kept). Standard input and errors are analysed every time. A
 * hit gives what analysing the file would give, the `--since`/`--until` check included (on the row's
 * timestamps, or the file's modification time).
 */
export class BatchRows {
  readonly #cache: RowCache<CachedRow>;
  /** With `--json`: the reports it prints. */
  readonly #reports: ReportCache<CachedReport> | undefined;
  readonly #run: SessionRun;
  readonly #resume: SessionRun['resume'];

  constructor(run: SessionRun, encoding: string, cacheDir: string | undefined) {
    this.#run = run;
    const build = buildId();
    const on = cacheDir !== undefined && build !== undefined;
    const basis = run.basis ?? 'auto';
    const schema = on ? rowSchemaKey(build, { settings: run.settings, format: run.format ?? null, strict: run.strict, encoding, basis }) : undefined;
    this.#cache = RowCache.open<CachedRow>(on ? cacheDir : undefined, schema);
    if (on && run.full) {
      const reports = reportSchemaKey(build, { settings: run.settings, format: run.format, strict: run.strict, basis });
      this.#reports = ReportCache.open<CachedReport>(cacheDir, reports, { deferTrim: true });
    }
    if (on && cacheDir !== undefined && schema !== undefined) this.#resume = { dir: join(cacheDir, 'resume'), schema };
  }

  /** `found`: a walk or a glob found the file (one named is read as asked, even when no transcript). */
  lookup(path: string, found = false): RowLookup {
    if (!this.#cache.enabled || path === STDIN) return { kind: 'none' };
    const absolute = resolve(this.#run.cwd, path);
    const identity = fileIdentity(absolute);
    if (identity === undefined) return { kind: 'none' };
    const row = this.#cache.get(absolute, identity);
    const remember = (outcome: SessionOutcome): void => {
      if (outcome.kind === 'notTranscript') this.#cache.set(absolute, identity, { notTranscript: true });
      if (outcome.kind !== 'session') return;
      const { file: _file, project: _project, ...kept } = outcome.summary;
      this.#cache.set(absolute, identity, kept);
      if (this.#reports && outcome.reportJson !== undefined) keepReport(this.#reports, absolute, identity, outcome.summary, outcome.reportJson);
    };
    if (row !== undefined && 'notTranscript' in row) {
      return found ? { kind: 'hit', outcome: { kind: 'notTranscript', file: path, project: projectOf(path) } } : { kind: 'miss', remember, grown: false };
    }
    if (row === undefined) return { kind: 'miss', remember, grown: this.#cache.grew(absolute, identity) };
    const outcome = this.#outcome(path, row, identity);
    const reports = this.#reports;
    if (reports === undefined || outcome.kind !== 'session') return { kind: 'hit', outcome };
    // No report kept (rows only, from runs without --json): to be read, as a first run's (on the workers).
    // Its row is unchanged: nothing to read on from (nor does --json read on).
    if (!reports.mayHave(absolute)) return { kind: 'miss', remember, grown: false };
    const read = (): SessionOutcome | undefined => {
      const report = reports.getJson(absolute, identity);
      return report === undefined ? undefined : { ...outcome, reportJson: keptAsElement(report, outcome.summary) };
    };
    return { kind: 'report', read, miss: { remember, grown: false } };
  }

  #outcome(path: string, row: Omit<SessionSummary, 'file' | 'project'>, identity: FileIdentity): SessionOutcome {
    const project = projectOf(path);
    const range = this.#run.range;
    if (range) {
      const at =
        row.firstTimestamp !== null && row.lastTimestamp !== null
          ? { first: Date.parse(row.firstTimestamp), last: Date.parse(row.lastTimestamp) }
          : { first: identity.mtimeMs, last: identity.mtimeMs };
      if (!spanInRange(at, range)) return { kind: 'outOfRange', file: path, project };
    }
    return { kind: 'session', summary: { file: path, project, ...row } };
  }

  /** Where grown transcripts are read on from (the rows' schema: the same build and settings), when rows are cached. */
  get resume(): SessionRun['resume'] {
    return this.#resume;
  }

  save(): void {
    this.#cache.save();
    this.#reports?.trim();
  }
}
