import { once } from 'node:events';
import { ExitCode, InterruptedError } from '../../core/errors.js';
import type { ExitCodeValue } from '../../core/errors.js';
import type { PruneUrgency } from '../../core/policy.js';
import { worstUrgency } from '../../core/reports/analyze.js';
import type { EncodingName } from '../../core/tokens/encodings.js';
import { STDIN } from '../../io/input.js';
import { testPause } from '../context.js';
import type { CliContext } from '../context.js';
import { BatchCounts } from '../batch/counts.js';
import type { Discovered } from '../batch/discover.js';
import { AnalyzePool, FILES_PER_WORKER } from '../batch/pool.js';
import { BatchRows } from '../batch/rows.js';
import { BatchScheduler } from '../batch/scheduler.js';
import type { BatchItem } from '../batch/scheduler.js';
import type { TimeRange } from '../batch/range.js';
import { analyzeSession, sessionError, subagentParent } from '../batch/session.js';
import type { SessionError, SessionOutcome, SessionRun } from '../batch/session.js';
import { elementJson } from '../batch/report-json.js';
import type { BatchReportText } from '../batch/report-json.js';
import { Spill } from '../batch/spill.js';
import type { SpillRef } from '../batch/spill.js';
import { startBatchProgress } from '../render/analyze-batch-progress.js';
import { BatchTable, batchRowDiagnostic, ndjsonRow } from '../render/analyze-batch.js';
import type { BatchNames, BatchRow, BatchTotals, ProjectTotals } from '../render/analyze-batch.js';
import { byCodeUnits } from '../../core/compare.js';
import { flagsForGroup, SMALLER_COMPILES_V8_FLAGS } from '../v8-flags.js';

/** `--json` and `--ndjson` of a batch keep the schema of the multi-file `--json`: additions only. */
const ANALYZE_BATCH_SCHEMA_VERSION = 1;

type BatchOutput = 'text' | 'json' | 'ndjson';
type BatchSort = 'tokens' | 'urgency';

export interface BatchOptions {
  readonly output: BatchOutput;
  readonly sort: BatchSort | undefined;
  readonly range: TimeRange | undefined;
  /** Worker threads; 1 analyses on the main thread. */
  readonly jobs: number;
  readonly run: SessionRun;
  readonly encoding: EncodingName;
  readonly cacheDir: string | undefined;
  /** The table's file names: relative to the inputs' common root. */
  readonly names?: BatchNames;
  /** Ctrl-C / SIGTERM: the batch stops at its next step, its output closed with the error (exit 130). */
  readonly signal?: AbortSignal;
}

const URGENCY_RANK: Record<PruneUrgency, number> = { none: 0, soft: 1, hard: 2 };
/** Up to this many transcripts, no workers. */
const SMALL_BATCH = 16;

/** A finished row kept for `--sort` (its full report, for `--json`, waits in the spill file). */
interface HeldRow {
  readonly index: number;
  readonly row: BatchRow;
  readonly spilled?: SpillRef;
}

function compareRows(sort: BatchSort): (a: HeldRow, b: HeldRow) => number {
  // The size the model sees (the table's `context`, which urgency follows), not the plain estimate.
  const tokens = (r: BatchRow): number => (r.kind === 'session' ? r.summary.contextTokens : -1);
  const rank = (r: BatchRow): number => (r.kind === 'session' ? URGENCY_RANK[r.summary.urgency] : -1);
  // Unreadable transcripts last; ties in discovery order, so the order is stable.
  return (a, b) => (sort === 'urgency' ? rank(b.row) - rank(a.row) : 0) || tokens(b.row) - tokens(a.row) || a.index - b.index;
}

function compareProjects(sort: BatchSort | undefined): (a: ProjectTotals, b: ProjectTotals) => number {
  if (sort === undefined) return (a, b) => byCodeUnits(a.project, b.project);
  return (a, b) =>
    (sort === 'urgency' ? URGENCY_RANK[b.urgency] - URGENCY_RANK[a.urgency] : 0) || b.totalTokens - a.totalTokens || byCodeUnits(a.project, b.project);
}

function rangeJson(range: TimeRange | undefined): { since: string | null; until: string | null } | null {
  if (range === undefined) return null;
  const iso = (at: number | undefined): string | null => (at === undefined ? null : new Date(at).toISOString());
  return { since: iso(range.since), until: iso(range.until) };
}

type Progress = ReturnType<typeof startBatchProgress>;

/** Where a batch's rows go, between progress redraws: the table, NDJSON lines or one JSON document. */
class BatchOutputStream {
  /** stdout's buffer is full: wait for it to drain before producing more. */
  blocked = false;
  private jsonRows = 0;
  /** The JSON document's head is written with its first row (or its end), so a batch that fails before any (a `--sort` that cannot set its reports aside) prints its error alone. */
  private jsonHead = false;
  private readonly table: BatchTable | undefined;

  constructor(
    private readonly output: BatchOutput,
    private readonly ctx: CliContext,
    private readonly progress: Progress,
    names: BatchNames | undefined,
  ) {
    this.table = output === 'text' ? new BatchTable(ctx, (text) => this.write(text), names) : undefined;
  }

  private head(): string {
    if (this.jsonHead) return '';
    this.jsonHead = true;
    return `{\n  "schemaVersion": ${ANALYZE_BATCH_SCHEMA_VERSION},\n  "transcripts": [`;
  }

  write(text: BatchReportText): void {
    if (text.length === 0) return;
    this.progress.clear();
    if (!this.ctx.stdout.write(text)) this.blocked = true;
  }

  /** A row's diagnostic (a person reading the table sees why a transcript is missing) on stderr. */
  diagnostic(row: BatchRow): void {
    if (this.output !== 'text') return;
    const text = batchRowDiagnostic(row);
    if (text === '') return;
    this.progress.clear();
    this.ctx.stderr.write(text);
  }

  row(row: BatchRow): void {
    switch (this.output) {
      case 'text':
        this.table?.add(row);
        return;
      case 'ndjson':
        this.write(`{"schemaVersion":${ANALYZE_BATCH_SCHEMA_VERSION},${ndjsonRow(row).slice(1)}`);
        return;
      case 'json': {
        // A kept report is written as the bytes read (see src/cli/batch/report-json.ts).
        this.write(`${this.head()}${this.jsonRows++ === 0 ? '\n' : ',\n'}    `);
        this.write(row.kind === 'session' ? (row.reportJson ?? '') : elementJson({ file: row.file, error: row.error, project: row.project }));
        return;
      }
      default:
        this.output satisfies never;
    }
  }

  /**
   * The end of a batch stopped by a signal: the rows so far, then the error where the totals would
   * be, so `--json` is still one valid document and `--ndjson` ends with a line that says why.
   */
  interrupted(error: SessionError): void {
    switch (this.output) {
      case 'text':
        this.table?.flush();
        this.progress.clear();
        this.ctx.stderr.write(`devs-ctx: ${error.message}\n`);
        break;
      case 'ndjson':
        this.write(`${JSON.stringify({ schemaVersion: ANALYZE_BATCH_SCHEMA_VERSION, type: 'error', error })}\n`);
        break;
      case 'json':
        this.write(`${this.head()}${this.jsonRows > 0 ? '\n  ]' : ']'},\n  "error": ${JSON.stringify(error, null, 2).replace(/\n/g, '\n  ')}\n}\n`);
        break;
      default:
        this.output satisfies never;
    }
  }

  end(totals: BatchTotals, projects: readonly ProjectTotals[], range: TimeRange | undefined): void {
    switch (this.output) {
      case 'text':
        this.table?.finish(totals, [...projects], range);
        break;
      case 'ndjson':
        this.write(`${JSON.stringify({ schemaVersion: ANALYZE_BATCH_SCHEMA_VERSION, type: 'total', total: totals, projects, range: rangeJson(range) })}\n`);
        break;
      case 'json': {
        const indent = (value: unknown): string => JSON.stringify(value, null, 2).replace(/\n/g, '\n  ');
        this.write(
          `${this.head()}${this.jsonRows > 0 ? '\n  ]' : ']'},\n  "total": ${indent(totals)},\n  "projects": ${indent(projects)},\n  "range": ${indent(rangeJson(range))}\n}\n`,
        );
        break;
      }
      default:
        this.output satisfies never;
    }
  }
}

/** Totals per project and overall, from each finished transcript in discovery order. */
class BatchTally {
  transcripts = 0;
  failed = 0;
  turns = 0;
  totalTokens = 0;
  outOfRange = 0;
  /** Files a walk or a glob found that are JSON but no transcript: left out. */
  notTranscripts = 0;
  subagents = 0;
  urgency: PruneUrgency = 'none';
  /** A transcript that cannot be read matters more than a limit being reached; the first one decides. */
  firstError: SessionError | undefined;
  private readonly projects = new Map<
    string,
    { transcripts: number; failed: number; turns: number; totalTokens: number; urgency: PruneUrgency; subagents: number }
  >();

  /** The row of one finished transcript; undefined when it is outside --since/--until. */
  add(outcome: SessionOutcome): BatchRow | undefined {
    if (outcome.kind === 'outOfRange') {
      this.outOfRange++;
      return undefined;
    }
    if (outcome.kind === 'notTranscript') {
      this.notTranscripts++;
      return undefined;
    }
    const name = outcome.kind === 'session' ? outcome.summary.project : outcome.project;
    const project = this.projects.get(name) ?? { transcripts: 0, failed: 0, turns: 0, totalTokens: 0, urgency: 'none', subagents: 0 };
    this.projects.set(name, project);
    this.transcripts++;
    project.transcripts++;
    // A subagent's transcript counts under its session and project (its turns and tokens are its own, not the parent's).
    if (subagentParent(outcome.kind === 'session' ? outcome.summary.file : outcome.file) !== undefined) {
      this.subagents++;
      project.subagents++;
    }
    if (outcome.kind === 'error') {
      this.failed++;
      project.failed++;
      this.firstError ??= outcome.error;
      return { kind: 'error', file: outcome.file, project: outcome.project, error: outcome.error };
    }
    const s = outcome.summary;
    this.turns += s.turns;
    this.totalTokens += s.totalTokens;
    this.urgency = worstUrgency([this.urgency, s.urgency]);
    project.turns += s.turns;
    project.totalTokens += s.totalTokens;
    project.urgency = worstUrgency([project.urgency, s.urgency]);
    return outcome.reportJson === undefined ? { kind: 'session', summary: s } : { kind: 'session', summary: s, reportJson: outcome.reportJson };
  }

  totals(): BatchTotals {
    return {
      transcripts: this.transcripts,
      failed: this.failed,
      turns: this.turns,
      totalTokens: this.totalTokens,
      urgency: this.urgency,
      outOfRange: this.outOfRange,
      subagents: this.subagents,
      notTranscripts: this.notTranscripts,
    };
  }

  projectList(sort: BatchSort | undefined): ProjectTotals[] {
    return [...this.projects].map(([project, p]) => ({ project, ...p })).sort(compareProjects(sort));
  }
}

/**
 * The transcripts, each first looked up in the row cache (an unchanged one is not read again), and
 * how many of the first ones must be read: starting a worker (and its tokenizer) costs more than a
 * few small files, so a batch that discovery shows to have few transcripts to read stays on the main thread.
 */
function lookUpRows(discovered: Iterable<Discovered>, rows: BatchRows): { items: Iterator<BatchItem>; toRead: number } {
  const source = (function* (): Generator<BatchItem> {
    for (const item of discovered) yield { ...item, cached: item.error ? { kind: 'none' } : rows.lookup(item.path, item.found === true) } as BatchItem;
  })();
  const head: BatchItem[] = [];
  let toRead = 0;
  for (let next = source.next(); !next.done; next = source.next()) {
    head.push(next.value);
    // A kept report is read when its turn comes: counted as kept (it is, unless it was removed since).
    const { kind } = next.value.cached;
    if (kind !== 'hit' && kind !== 'report' && ++toRead > SMALL_BATCH) break;
  }
  const items = (function* () {
    yield* head;
    for (let next = source.next(); !next.done; next = source.next()) yield next.value;
  })();
  return { items, toRead };
}

/**
 * `analyze` over many transcripts: discovery streams paths in, a pool of workers (one file each at a
 * time) analyses them, rows come out in discovery order as soon as every earlier one is done (or, with
 * `--sort`, all at the end), with totals per project and overall. Only rows are kept, never reports:
 * `--json` streams each report out as its turn comes (with `--sort`, through a spill file), a kept
 * one read from the cache only then, and at most a window of finished-but-not-yet-printed sessions
 * waits in memory.
 */
export async function runAnalyzeBatch(discovered: Iterable<Discovered>, options: BatchOptions, ctx: CliContext): Promise<ExitCodeValue> {
  const counts = new BatchCounts(options.encoding, options.cacheDir);
  const rows = new BatchRows(options.run, options.encoding, options.cacheDir);
  const run: SessionRun = rows.resume ? { ...options.run, resume: rows.resume } : options.run;
  const { items, toRead } = lookUpRows(discovered, rows);
  const jobs = toRead > SMALL_BATCH ? options.jobs : 1;
  const onMainThread = (path: string, grown: boolean): Promise<SessionOutcome> =>
    analyzeSession(path, run, { ctx, countTokens: (entries) => counts.countHere(entries, options.jobs) }, grown);
  const pool =
    jobs > 1
      ? new AnalyzePool({
          size: jobs,
          init: {
            run,
            encoding: options.encoding,
            cache: counts.enabled,
            lookup: counts.enabled && !counts.empty,
            v8Flags: flagsForGroup(SMALLER_COMPILES_V8_FLAGS, jobs),
          },
          counts,
          onMainThread,
        })
      : undefined;
  const progress = startBatchProgress(ctx);
  const spill = options.sort !== undefined && options.output === 'json' ? new Spill() : undefined;
  const out = new BatchOutputStream(options.output, ctx, progress, options.names);
  const tally = new BatchTally();
  const held: HeldRow[] = [];
  const inFlightLimit = pool === undefined ? 1 : jobs * FILES_PER_WORKER;
  const scheduler = new BatchScheduler(items, {
    inFlightLimit,
    window: options.sort === undefined ? Math.max(64, inFlightLimit * 16) : Infinity,
    // Standard input can only be read here; so can everything with --jobs 1.
    analyze: (path, grown) => (pool === undefined || path === STDIN ? onMainThread(path, grown) : pool.run(path, grown)),
    spill,
    progress,
    out,
    tokens: () => tally.totalTokens,
    take: (index, outcome, spilled) => {
      const row = tally.add(outcome);
      if (row === undefined) return;
      out.diagnostic(row);
      if (options.sort === undefined) out.row(row);
      else held.push(spilled ? { index, row, spilled } : { index, row });
    },
    drained: () => once(ctx.stdout, 'drain'),
    ...(options.signal ? { signal: options.signal, firstRows: () => testPause(ctx, options.signal, 'batch') } : {}),
  });
  let interrupted: SessionError | undefined;
  try {
    await scheduler.all();
  } catch (error) {
    if (!(error instanceof InterruptedError)) throw error;
    interrupted = sessionError(error);
  } finally {
    progress.stop();
    // The workers stop (tens of milliseconds: each frees its heap) while the caches are written.
    const closing = pool?.close();
    counts.save();
    rows.save();
    await closing;
    if (scheduler.failed) spill?.close();
  }
  try {
    // Sorted, the rows done so far (all of them, or those before a Ctrl-C).
    if (options.sort !== undefined) {
      held.sort(compareRows(options.sort));
      for (const h of held) out.row(h.spilled && spill && h.row.kind === 'session' ? { ...h.row, reportJson: spill.read(h.spilled) } : h.row);
    }
  } finally {
    spill?.close();
  }
  if (interrupted !== undefined) {
    out.interrupted(interrupted);
    return ExitCode.interrupted;
  }
  out.end(tally.totals(), tally.projectList(options.sort), options.range);
  if (tally.firstError !== undefined) return tally.firstError.exitCode;
  return tally.urgency === 'hard' ? ExitCode.hardLimit : tally.urgency === 'soft' ? ExitCode.softLimit : ExitCode.ok;
}
