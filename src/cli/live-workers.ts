import { Worker } from 'node:worker_threads';
import type { WorkerOptions } from 'node:worker_threads';
import { beforeWorkerThreads } from './worker-flags.js';

/**
 * Where this process starts its worker threads (a large transcript's count workers, a batch's
 * analyze workers), and how many of them have not exited. Node does not list a running worker
 * among the open resources (`process.getActiveResourcesInfo()`), so whoever ends the process early
 * (src/cli/process-end.ts) asks here.
 */
let live = 0;

/** A new worker thread, started with what the process sets before its first one (worker-flags.ts), counted until it exits. */
export function startWorker(filename: string | URL, options: WorkerOptions): Worker {
  beforeWorkerThreads();
  const worker = new Worker(filename, options);
  live += 1;
  worker.once('exit', () => {
    live -= 1;
  });
  return worker;
}

/** How many started workers are still running. */
export function liveWorkers(): number {
  return live;
}
