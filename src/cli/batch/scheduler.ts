import { InterruptedError } from '../../core/errors.js';
import type { BatchProgress } from '../render/analyze-batch-progress.js';
import type { Discovered } from './discover.js';
import type { RowLookup } from './rows.js';
import { projectOf, sessionError } from './session.js';
import type { SessionOutcome } from './session.js';
import type { Spill, SpillRef } from './spill.js';

/** A transcript found, with what the row cache knows of it. */
export type BatchItem = Discovered & { readonly cached: RowLookup };

/**
 * Runs the sessions: at most `inFlightLimit` in flight, and (unsorted) at most `window` finished ones
 * waiting for an earlier, slower one, so memory stays bounded. Hands each to `take` in discovery order.
 */
export class BatchScheduler {
  private discovering = true;
  private found = 0;
  private nextToTake = 0;
  private inFlight = 0;
  private done = 0;
  private failure: unknown;
  private wake: (() => void) | undefined;
  private readonly finished = new Map<number, { outcome: SessionOutcome; spilled?: SpillRef }>();
  private pausedAfterFirstRows = false;

  constructor(
    private readonly items: Iterator<BatchItem>,
    private readonly run: {
      readonly inFlightLimit: number;
      readonly window: number;
      readonly analyze: (path: string, grown: boolean) => Promise<SessionOutcome>;
      readonly spill: Pick<Spill, 'write'> | undefined;
      readonly progress: Pick<BatchProgress, 'update'>;
      /** Where rows are written: `blocked` once standard output's buffer is full (`drained` then waits). */
      readonly out: { blocked: boolean };
      readonly tokens: () => number;
      readonly take: (index: number, outcome: SessionOutcome, spilled: SpillRef | undefined) => void;
      readonly drained: () => Promise<unknown>;
      /** Ctrl-C: no more sessions are started, and all() throws InterruptedError once it wakes. */
      readonly signal?: AbortSignal;
      /** After the first rows are taken (a test's pause: see testPause). */
      readonly firstRows?: () => Promise<void>;
    },
  ) {
    run.signal?.addEventListener('abort', () => this.wake?.(), { once: true });
  }

  async all(): Promise<void> {
    for (;;) {
      // A failure is said rather than the interrupt that came with it (a full TMPDIR is exit 3).
      if (this.run.signal?.aborted && this.failure === undefined) throw new InterruptedError('interrupted');
      // What is ready goes out before more is started.
      this.takeReady();
      while (
        this.discovering &&
        this.inFlight < this.run.inFlightLimit &&
        this.found < this.nextToTake + this.run.window &&
        this.failure === undefined &&
        !this.run.out.blocked
      ) {
        const next = this.items.next();
        if (next.done) {
          this.discovering = false;
          break;
        }
        this.start(this.found++, next.value);
        // A row that is ready at once (a kept row or report) goes out before the next is started: a
        // re-run's reports are not all read before the first is printed, each held meanwhile (and
        // copied by every young-generation collection of those reads).
        this.takeReady();
        if (this.run.out.blocked || this.pauseDue()) break;
      }
      if (this.pauseDue() && this.run.firstRows) {
        this.pausedAfterFirstRows = true;
        await this.run.firstRows();
        continue;
      }
      this.showProgress();
      if (this.failure !== undefined) {
        if (this.inFlight === 0) throw this.failure;
      } else if (!this.discovering && this.inFlight === 0 && this.finished.size === 0) {
        return;
      }
      if (this.run.out.blocked) {
        this.run.out.blocked = false;
        await this.run.drained();
        continue;
      }
      if (this.inFlight > 0) await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = undefined;
    }
  }

  get failed(): boolean {
    return this.failure !== undefined;
  }

  /** Hands `take` the finished rows that are next in discovery order. */
  private takeReady(): void {
    for (let entry = this.finished.get(this.nextToTake); entry !== undefined; entry = this.finished.get(this.nextToTake)) {
      this.finished.delete(this.nextToTake);
      this.run.take(this.nextToTake, entry.outcome, entry.spilled);
      this.nextToTake++;
    }
  }

  /** The test's pause after the first rows (see testPause) is due. */
  private pauseDue(): boolean {
    return this.nextToTake > 0 && this.run.firstRows !== undefined && !this.pausedAfterFirstRows;
  }

  private start(index: number, item: BatchItem): void {
    this.inFlight++;
    if (item.error) {
      this.finish(index, { kind: 'error', file: item.path, project: projectOf(item.path), error: sessionError(item.error) });
      return;
    }
    const cached = item.cached;
    if (cached.kind === 'hit') {
      this.finish(index, cached.outcome);
      return;
    }
    const kept = cached.kind === 'report' ? cached.read() : undefined;
    if (kept !== undefined) {
      this.finish(index, kept);
      return;
    }
    const miss = cached.kind === 'report' ? cached.miss : cached.kind === 'miss' ? cached : undefined;
    this.run.analyze(item.path, miss?.grown === true).then(
      (analysed) => {
        // JSON in no transcript format, found by a walk or a glob: another tool's file (Gemini CLI's
        // logs.json, a saved report), left out; named, it is the error it is.
        const outcome: SessionOutcome =
          item.found === true && analysed.kind === 'error' && analysed.unknownFormat
            ? { kind: 'notTranscript', file: analysed.file, project: analysed.project }
            : analysed;
        miss?.remember(outcome);
        try {
          this.finish(index, outcome);
        } catch (error) {
          // Its report could not be set aside for --sort (a full temporary folder): the batch fails, as on a worker's failure.
          this.failure ??= error;
          this.wake?.();
        }
      },
      (error: unknown) => {
        this.inFlight--;
        this.failure ??= error;
        this.wake?.();
      },
    );
  }

  private finish(index: number, outcome: SessionOutcome): void {
    this.inFlight--;
    this.done++;
    let spilled: SpillRef | undefined;
    if (this.run.spill && outcome.kind === 'session' && outcome.reportJson !== undefined) {
      spilled = this.run.spill.write(outcome.reportJson);
      const { reportJson: _json, ...rest } = outcome;
      outcome = rest;
    }
    this.finished.set(index, spilled ? { outcome, spilled } : { outcome });
    this.showProgress();
    this.wake?.();
  }

  private showProgress(): void {
    this.run.progress.update({ done: this.done, found: this.found, discovering: this.discovering, tokens: this.run.tokens() });
  }
}
