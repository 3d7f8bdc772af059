import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Worker } from 'node:worker_threads';
import { sharedRankTable } from '../../io/rank-tables.js';
import { outOfMemory, startWorker } from '../live-workers.js';
import type { BatchCounts } from './counts.js';
import type { FromWorker, ToWorker, WorkerInit } from './protocol.js';
import type { SessionOutcome } from './session.js';

/**
 * Where the worker entry is, relative to this module wherever it runs from: in the bundle
 * (dist/cli-bundle/analyze-worker.cjs, which loads the worker's own bundle), beside it in the tsc
 * output (dist/cli/batch/), the tsc output seen from the bundle (dist/cli-bundle → dist/cli/batch/),
 * or the TypeScript source under tsx (tests).
 */
const WORKER_CANDIDATES = ['./analyze-worker.cjs', './analyze-worker.js', '../cli/batch/analyze-worker.js', './analyze-worker.ts'];

let workerFile: URL | undefined;
function analyzeWorkerUrl(): URL {
  if (workerFile) return workerFile;
  for (const candidate of WORKER_CANDIDATES) {
    const url = new URL(candidate, import.meta.url);
    if (existsSync(fileURLToPath(url))) {
      workerFile = url;
      return url;
    }
  }
  throw new Error(`the analyze worker is missing (looked for ${WORKER_CANDIDATES.join(', ')} beside ${import.meta.url}); reinstall devs-ctx`);
}

interface Job {
  readonly path: string;
  readonly grown: boolean;
  readonly resolve: (outcome: SessionOutcome) => void;
  readonly reject: (error: Error) => void;
}

/**
 * Files each worker is given at once. A worker waits for the main thread twice per file (the cache
 * look-up, then the next file); with a few files queued it reads and counts one while another
 * waits, so a busy machine's scheduling delays do not leave it idle.
 */
export const FILES_PER_WORKER = 4;

/**
 * At most `size` worker threads, started as work arrives (two files never start eight workers), each
 * given up to FILES_PER_WORKER files at a time. The main thread answers their cache look-ups and keeps
 * their new counts. A worker that cannot start, fails or stops (killed, say) fails no file: its files
 * are analysed on the main thread (`onMainThread`, one at a time), no worker is started in its place,
 * and once none is left the rest go there too. A worker out of memory fails its files (the main
 * thread, which holds more, would run out in turn and abort).
 */
export class AnalyzePool {
  private readonly workers: Worker[] = [];
  /** Files given to each worker and not yet done. */
  private readonly load = new Map<Worker, number>();
  private readonly running = new Map<number, { worker: Worker; job: Job }>();
  private readonly queue: Job[] = [];
  private nextId = 0;
  private closed = false;
  /** Set when a worker failed or stopped: none is started any more. */
  private lost = false;
  /** The files analysed on the main thread, one after another. */
  private mainThread: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly options: {
      readonly size: number;
      readonly init: WorkerInit;
      readonly counts: BatchCounts;
      readonly onMainThread: (path: string, grown: boolean) => Promise<SessionOutcome>;
    },
  ) {}

  /** `grown`: the file grew since its row was made (analyzeSession reads it on from where it ended). */
  run(path: string, grown = false): Promise<SessionOutcome> {
    return new Promise((resolve, reject) => {
      this.queue.push({ path, grown, resolve, reject });
      this.dispatch();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.workers.map((w) => w.terminate()));
  }

  /** The least loaded worker with room, a new one while there are fewer than `size`, or none. */
  private pick(): Worker | undefined {
    let best: Worker | undefined;
    for (const worker of this.workers) {
      const load = this.load.get(worker) ?? 0;
      if (load === 0) return worker;
      if (load < FILES_PER_WORKER && (best === undefined || load < (this.load.get(best) ?? 0))) best = worker;
    }
    // Every worker busy: start another before queueing a second file on one.
    if (this.workers.length < this.options.size && !this.lost) {
      try {
        return this.spawn();
      } catch {
        // No thread could be made (ERR_WORKER_INIT_FAILED): the main thread takes over.
        this.lost = true;
      }
    }
    return best;
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      const worker = this.pick();
      if (worker === undefined) {
        if (this.lost && this.workers.length === 0) for (const job of this.queue.splice(0)) this.runOnMainThread(job);
        return;
      }
      const job = this.queue.shift();
      if (job === undefined) return;
      const id = this.nextId++;
      this.running.set(id, { worker, job });
      this.load.set(worker, (this.load.get(worker) ?? 0) + 1);
      worker.postMessage({ type: 'job', id, path: job.path, grown: job.grown } satisfies ToWorker);
    }
  }

  private spawn(): Worker {
    const init: WorkerInit = { ...this.options.init, rankTable: sharedRankTable(this.options.init.encoding) };
    const worker = startWorker(analyzeWorkerUrl(), { workerData: init });
    this.workers.push(worker);
    this.load.set(worker, 0);
    worker.on('message', (message: FromWorker) => {
      const current = this.running.get(message.id);
      if (current === undefined || current.worker !== worker) return;
      switch (message.type) {
        case 'lookup':
          worker.postMessage({ type: 'counts', id: message.id, counts: this.options.counts.lookup(message.keys) } satisfies ToWorker);
          return;
        case 'done':
          this.options.counts.add(message.newCounts);
          this.finish(worker, message.id);
          current.job.resolve(message.outcome);
          return;
        case 'crash': {
          const error = new Error(message.message);
          if (message.stack) error.stack = message.stack;
          this.finish(worker, message.id);
          current.job.reject(error);
          return;
        }
        default:
          message satisfies never;
      }
    });
    const lose = (error: Error): void => {
      const index = this.workers.indexOf(worker);
      if (index >= 0) this.workers.splice(index, 1);
      this.load.delete(worker);
      this.lost = true;
      // Out of memory: its files fail (see outOfMemory).
      const retry = !outOfMemory(error);
      for (const [id, current] of this.running) {
        if (current.worker !== worker) continue;
        this.running.delete(id);
        if (retry) this.runOnMainThread(current.job);
        else current.job.reject(error);
      }
      this.dispatch();
    };
    worker.on('error', lose);
    worker.on('exit', (code) => {
      if (!this.closed) lose(new Error(`an analyze worker stopped (exit ${code})`));
    });
    return worker;
  }

  private runOnMainThread(job: Job): void {
    const run = this.mainThread.then(() => this.options.onMainThread(job.path, job.grown));
    this.mainThread = run.catch(() => undefined);
    run.then(job.resolve, job.reject);
  }

  private finish(worker: Worker, id: number): void {
    this.running.delete(id);
    if (this.load.has(worker)) this.load.set(worker, (this.load.get(worker) ?? 1) - 1);
    this.dispatch();
  }
}
