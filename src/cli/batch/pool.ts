import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { BatchCounts } from './counts.js';
import type { FromWorker, ToWorker, WorkerInit } from './protocol.js';
import type { SessionOutcome } from './session.js';

/**
 * Where the worker entry is, relative to this module wherever it runs from: beside it in the tsc
 * output (dist/cli/batch/), beside the bundle's chunks when the bundle has the worker as an entry
 * (dist/cli-bundle/, `--entry-names=[name]`), the tsc output seen from the bundle (dist/cli-bundle →
 * dist/cli/batch/), or the TypeScript source under tsx (tests).
 */
const WORKER_CANDIDATES = ['./analyze-worker.js', '../cli/batch/analyze-worker.js', './analyze-worker.ts'];

let workerFile: URL | undefined;
export function analyzeWorkerUrl(): URL {
  if (workerFile) return workerFile;
  for (const candidate of WORKER_CANDIDATES) {
    const url = new URL(candidate, import.meta.url);
    if (existsSync(fileURLToPath(url))) return (workerFile = url);
  }
  throw new Error(`the analyze worker is missing (looked for ${WORKER_CANDIDATES.join(', ')} beside ${import.meta.url}); reinstall devs-ctx`);
}

interface Job {
  readonly path: string;
  readonly resolve: (outcome: SessionOutcome) => void;
  readonly reject: (error: Error) => void;
}

/**
 * At most `size` worker threads, started as work arrives (two files never start eight workers), each
 * given one file at a time. The main thread answers their cache look-ups and keeps their new counts.
 */
export class AnalyzePool {
  private readonly idle: Worker[] = [];
  private readonly workers: Worker[] = [];
  private readonly running = new Map<Worker, { id: number; job: Job }>();
  private readonly queue: Job[] = [];
  private nextId = 0;
  private closed = false;

  constructor(private readonly options: { readonly size: number; readonly init: WorkerInit; readonly counts: BatchCounts }) {}

  run(path: string): Promise<SessionOutcome> {
    return new Promise((resolve, reject) => {
      this.queue.push({ path, resolve, reject });
      this.dispatch();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.workers.map((w) => w.terminate()));
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      const worker = this.idle.pop() ?? (this.workers.length < this.options.size ? this.spawn() : undefined);
      if (worker === undefined) return;
      const job = this.queue.shift();
      if (job === undefined) return;
      const id = this.nextId++;
      this.running.set(worker, { id, job });
      worker.postMessage({ type: 'job', id, path: job.path } satisfies ToWorker);
    }
  }

  private spawn(): Worker {
    const worker = new Worker(analyzeWorkerUrl(), { workerData: this.options.init });
    this.workers.push(worker);
    worker.on('message', (message: FromWorker) => {
      const current = this.running.get(worker);
      if (current === undefined || current.id !== message.id) return;
      switch (message.type) {
        case 'lookup':
          worker.postMessage({ type: 'counts', id: message.id, counts: this.options.counts.lookup(message.keys) } satisfies ToWorker);
          return;
        case 'done':
          this.options.counts.add(message.newCounts);
          this.finish(worker);
          current.job.resolve(message.outcome);
          return;
        case 'crash': {
          const error = new Error(message.message);
          if (message.stack) error.stack = message.stack;
          this.finish(worker);
          current.job.reject(error);
          return;
        }
        default:
          message satisfies never;
      }
    });
    const fail = (error: Error): void => {
      const current = this.running.get(worker);
      this.running.delete(worker);
      const index = this.workers.indexOf(worker);
      if (index >= 0) this.workers.splice(index, 1);
      current?.job.reject(error);
    };
    worker.on('error', fail);
    worker.on('exit', (code) => {
      if (!this.closed) fail(new Error(`an analyze worker stopped (exit ${code})`));
    });
    return worker;
  }

  private finish(worker: Worker): void {
    this.running.delete(worker);
    this.idle.push(worker);
    this.dispatch();
  }
}
