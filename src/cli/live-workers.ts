import { Worker } from 'node:worker_threads';
import type { WorkerOptions } from 'node:worker_threads';
import { beforeWorkerThreads } from './v8-flags.js';

/**
 * Where this process starts its worker threads (a large transcript's count workers, a batch's
 * analyze workers), and how many of them have not exited. Node does not list a running worker
 * among the open resources (`process.getActiveResourcesInfo()`), so whoever ends the process early
 * (src/cli/process-end.ts) asks here.
 */
let live = 0;

/** A new worker thread, started with what the process sets before its first one (v8-flags.ts), counted until it exits. */
export function startWorker(filename: string | URL, options: WorkerOptions): Worker {
  beforeWorkerThreads();
  const worker = new Worker(filename, options);
  live += 1;
  worker.once('exit', () => {
    live -= 1;
  });
  return worker;
}

/**
 * Whether a worker ended because it ran out of memory: then its work is not done again on this
 * thread, which holds more and would run out in turn (and abort, where the worker only ended).
 */
export function outOfMemory(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === 'ERR_WORKER_OUT_OF_MEMORY';
}

/** How many started workers are still running. */
export function liveWorkers(): number {
  return live;
}
