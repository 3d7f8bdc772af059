import { once } from 'node:events';
import { ExitCode } from '../../core/errors.js';
import type { ExitCodeValue } from '../../core/errors.js';
import type { PruneUrgency } from '../../core/policy.js';
import { worstUrgency } from '../../core/reports/analyze.js';
import type { EncodingName } from '../../core/tokens/encodings.js';
import { STDIO_PATH } from '../../io/input.js';
import type { CliContext } from '../context.js';
import { BatchCounts } from '../batch/counts.js';
import type { Discovered } from '../batch/discover.js';
import { AnalyzePool, FILES_PER_WORKER } from '../batch/pool.js';
import { BatchRows } from '../batch/rows.js';
import type { RowLookup } from '../batch/rows.js';
import type { TimeRange } from '../batch/range.js';
import { analyzeSession, projectOf, sessionError, subagentParent } from '../batch/session.js';
import type { SessionError, SessionOutcome, SessionRun } from '../batch/session.js';
import { Spill } from '../batch/spill.js';
import type { SpillRef } from '../batch/spill.js';
import { startBatchProgress } from '../render/analyze-batch-progress.js';
import { BatchTable, batchRowDiagnostic, ndjsonRow } from '../render/analyze-batch.js';
import type { BatchNames, BatchRow, BatchTotals, ProjectTotals } from '../render/analyze-batch.js';

/** `--json` and `--ndjson` of a batch keep the schema of the multi-file `--json`: additions only. */
const ANALYZE_BATCH_SCHEMA_VERSION = 1;

export type BatchOutput = 'text' | 'json' | 'ndjson';
export type BatchSort = 'tokens' | 'urgency';

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
  const tokens = (r: BatchRow): number => (r.kind === 'session' ? r.summary.totalTokens : -1);
  const rank = (r: BatchRow): number => (r.kind === 'session' ? URGENCY_RANK[r.summary.urgency] : -1);
  // Unreadable transcripts last; ties in discovery order, so the order is stable.
  return (a, b) =>
    (sort === 'urgency' ? rank(b.row) - rank(a.row) : 0) || tokens(b.row) - tokens(a.row) || a.index - b.index;
}

function compareProjects(sort: BatchSort | undefined): (a: ProjectTotals, b: ProjectTotals) => number {
  if (sort === undefined) return (a, b) => a.project.localeCompare(b.project);
  return (a, b) =>
    (sort === 'urgency' ? URGENCY_RANK[b.urgency] - URGENCY_RANK[a.urgency] : 0) || b.totalTokens - a.totalTokens || a.project.localeCompare(b.project);
}

function rangeJson(range: TimeRange | undefined): { since: string | null; until: string | null } | null {
  if (range === undefined) return null;
  const iso = (at: number | undefined): string | null => (at === undefined ? null : new Date(at).toISOString());
  return { since: iso(range.since), until: iso(range.until) };
}

/**
 * `analyze` over many transcripts: discovery streams paths in, a pool of workers (one file each at a
 * time) analyses them, rows come out in discovery order as soon as every earlier one is done (or, with
 * `--sort`, all at the end), with totals per project and overall. Only rows are kept, never reports:
 * `--json` streams each report out as its turn comes (with `--sort`, through a spill file), and at most
 * a window of finished-but-not-yet-printed sessions waits in memory.
 */
export async function runAnalyzeBatch(discovered: Iterable<Discovered>, options: BatchOptions, ctx: CliContext): Promise<ExitCodeValue> {
  const counts = new BatchCounts(options.encoding, options.cacheDir);
  const rows = new BatchRows(options.run, options.encoding, options.cacheDir);
  // Each transcript is first looked up in the row cache: an unchanged one is not read again.
  const source = (function* (): Generator<Discovered & { readonly cached: RowLookup }> {
    for (const item of discovered) yield { ...item, cached: item.error ? { kind: 'none' } : rows.lookup(item.path) } as Discovered & { readonly cached: RowLookup };
  })();
  // Starting a worker (and its tokenizer) costs more than a few small files: a batch that discovery
  // shows to have few transcripts to read is analysed on the main thread.
  const head: (Discovered & { readonly cached: RowLookup })[] = [];
  let toRead = 0;
  for (let next = source.next(); !next.done; next = source.next()) {
    head.push(next.value);
    if (next.value.cached.kind !== 'hit' && ++toRead > SMALL_BATCH) break;
  }
  const jobs = toRead > SMALL_BATCH ? options.jobs : 1;
  const pool = jobs > 1 ? new AnalyzePool({ size: jobs, init: { run: options.run, encoding: options.encoding, cache: counts.enabled, lookup: counts.enabled && !counts.empty }, counts }) : undefined;
  const progress = startBatchProgress(ctx);
  const spill = options.sort !== undefined && options.output === 'json' ? new Spill() : undefined;
  let stdoutBlocked = false;
  const write = (text: string): void => {
    if (text === '') return;
    progress.clear();
    if (!ctx.stdout.write(text)) stdoutBlocked = true;
  };
  const writeErr = (text: string): void => {
    if (text === '') return;
    progress.clear();
    ctx.stderr.write(text);
  };

  // Output for the chosen format.
  const table = options.output === 'text' ? new BatchTable(ctx, write, options.names) : undefined;
  let jsonRows = 0;
  if (options.output === 'json') write(`{\n  "schemaVersion": ${ANALYZE_BATCH_SCHEMA_VERSION},\n  "transcripts": [`);
  const emitRow = (row: BatchRow): void => {
    switch (options.output) {
      case 'text':
        table?.add(row);
        return;
      case 'ndjson':
        write(`{"schemaVersion":${ANALYZE_BATCH_SCHEMA_VERSION},${ndjsonRow(row).slice(1)}`);
        return;
      case 'json': {
        const json = row.kind === 'session' ? (row.reportJson ?? '') : JSON.stringify({ file: row.file, error: row.error, project: row.project }, null, 2);
        write(`${jsonRows++ === 0 ? '\n' : ',\n'}    ${json.replace(/\n/g, '\n    ')}`);
        return;
      }
      default:
        options.output satisfies never;
    }
  };

  // Totals, per project and overall.
  let transcripts = 0;
  let failed = 0;
  let turns = 0;
  let totalTokens = 0;
  let outOfRange = 0;
  let urgency = 'none' as PruneUrgency;
  let firstError: SessionError | undefined;
  let subagents = 0;
  const projects = new Map<string, { transcripts: number; failed: number; turns: number; totalTokens: number; urgency: PruneUrgency; subagents: number }>();
  const held: HeldRow[] = [];

  /** Takes one finished transcript, in discovery order. */
  const take = (index: number, outcome: SessionOutcome, spilled: SpillRef | undefined): void => {
    if (outcome.kind === 'outOfRange') {
      outOfRange++;
      return;
    }
    const project = projects.get(outcome.kind === 'session' ? outcome.summary.project : outcome.project) ?? { transcripts: 0, failed: 0, turns: 0, totalTokens: 0, urgency: 'none', subagents: 0 };
    projects.set(outcome.kind === 'session' ? outcome.summary.project : outcome.project, project);
    transcripts++;
    project.transcripts++;
    // A subagent's transcript counts under its session and project (its turns and tokens are its own, not the parent's).
    if (subagentParent(outcome.kind === 'session' ? outcome.summary.file : outcome.file) !== undefined) {
      subagents++;
      project.subagents++;
    }
    let row: BatchRow;
    if (outcome.kind === 'error') {
      failed++;
      project.failed++;
      // A transcript that cannot be read matters more than a limit being reached; the first one decides.
      firstError ??= outcome.error;
      row = { kind: 'error', file: outcome.file, project: outcome.project, error: outcome.error };
    } else {
      const s = outcome.summary;
      turns += s.turns;
      totalTokens += s.totalTokens;
      urgency = worstUrgency([urgency, s.urgency]);
      project.turns += s.turns;
      project.totalTokens += s.totalTokens;
      project.urgency = worstUrgency([project.urgency, s.urgency]);
      row = outcome.reportJson === undefined ? { kind: 'session', summary: s } : { kind: 'session', summary: s, reportJson: outcome.reportJson };
    }
    if (options.output === 'text') writeErr(batchRowDiagnostic(row));
    if (options.sort === undefined) emitRow(row);
    else held.push(spilled ? { index, row, spilled } : { index, row });
  };

  // Schedule: at most `jobs` sessions in flight, and (unsorted) at most WINDOW finished ones waiting
  // for an earlier, slower one, so memory stays bounded.
  const inFlightLimit = pool === undefined ? 1 : jobs * FILES_PER_WORKER;
  const window = options.sort === undefined ? Math.max(64, inFlightLimit * 16) : Infinity;
  const finished = new Map<number, { outcome: SessionOutcome; spilled?: SpillRef }>();
  const iterator = (function* () {
    yield* head;
    for (let next = source.next(); !next.done; next = source.next()) yield next.value;
  })();
  let discovering = true;
  let found = 0;
  let nextToTake = 0;
  let inFlight = 0;
  let doneCount = 0;
  let failure: unknown;
  let wake: (() => void) | undefined;

  const finish = (index: number, outcome: SessionOutcome): void => {
    inFlight--;
    doneCount++;
    let spilled: SpillRef | undefined;
    if (spill && outcome.kind === 'session' && outcome.reportJson !== undefined) {
      spilled = spill.write(outcome.reportJson);
      const { reportJson: _json, ...rest } = outcome;
      outcome = rest;
    }
    finished.set(index, spilled ? { outcome, spilled } : { outcome });
    progress.update({ done: doneCount, found, discovering, tokens: totalTokens });
    wake?.();
  };
  const analyzeHere = (path: string): Promise<SessionOutcome> =>
    analyzeSession(path, options.run, { ctx, countTokens: (entries) => counts.countHere(entries) });

  try {
    for (;;) {
      while (discovering && inFlight < inFlightLimit && found < nextToTake + window && failure === undefined) {
        const next = iterator.next();
        if (next.done) {
          discovering = false;
          break;
        }
        const index = found++;
        const item = next.value;
        if (item.error) {
          inFlight++;
          finish(index, { kind: 'error', file: item.path, project: projectOf(item.path), error: sessionError(item.error) });
          continue;
        }
        inFlight++;
        const cached = item.cached;
        if (cached.kind === 'hit') {
          finish(index, cached.outcome);
          continue;
        }
        // Standard input can only be read here; so can everything with --jobs 1.
        const work = pool === undefined || item.path === STDIO_PATH ? analyzeHere(item.path) : pool.run(item.path);
        work.then(
          (outcome) => {
            if (cached.kind === 'miss') cached.remember(outcome);
            finish(index, outcome);
          },
          (error: unknown) => {
            inFlight--;
            failure ??= error;
            wake?.();
          },
        );
      }
      for (let entry = finished.get(nextToTake); entry !== undefined; entry = finished.get(nextToTake)) {
        finished.delete(nextToTake);
        take(nextToTake, entry.outcome, entry.spilled);
        nextToTake++;
      }
      progress.update({ done: doneCount, found, discovering, tokens: totalTokens });
      if (failure !== undefined) {
        if (inFlight === 0) throw failure;
      } else if (!discovering && inFlight === 0 && finished.size === 0) {
        break;
      }
      if (stdoutBlocked) {
        stdoutBlocked = false;
        await once(ctx.stdout, 'drain');
        continue;
      }
      if (inFlight > 0) await new Promise<void>((resolve) => (wake = resolve));
      wake = undefined;
    }
  } finally {
    progress.stop();
    await pool?.close();
    counts.save();
    rows.save();
    if (failure !== undefined) spill?.close();
  }

  try {
    if (options.sort !== undefined) {
      held.sort(compareRows(options.sort));
      for (const h of held) {
        if (h.spilled && spill && h.row.kind === 'session') emitRow({ ...h.row, reportJson: spill.read(h.spilled) });
        else emitRow(h.row);
      }
    }
  } finally {
    spill?.close();
  }

  const totals: BatchTotals = { transcripts, failed, turns, totalTokens, urgency, outOfRange, subagents };
  const projectList: ProjectTotals[] = [...projects].map(([project, p]) => ({ project, ...p })).sort(compareProjects(options.sort));
  switch (options.output) {
    case 'text':
      table?.finish(totals, projectList, options.range);
      break;
    case 'ndjson':
      write(`${JSON.stringify({ schemaVersion: ANALYZE_BATCH_SCHEMA_VERSION, type: 'total', total: totals, projects: projectList, range: rangeJson(options.range) })}\n`);
      break;
    case 'json': {
      const indent = (value: unknown): string => JSON.stringify(value, null, 2).replace(/\n/g, '\n  ');
      write(`${jsonRows > 0 ? '\n  ]' : ']'},\n  "total": ${indent(totals)},\n  "projects": ${indent(projectList)},\n  "range": ${indent(rangeJson(options.range))}\n}\n`);
      break;
    }
    default:
      options.output satisfies never;
  }
  if (firstError !== undefined) return firstError.exitCode;
  return urgency === 'hard' ? ExitCode.hardLimit : urgency === 'soft' ? ExitCode.softLimit : ExitCode.ok;
}
