import type { Worker } from 'node:worker_threads';

/**
 * The worker threads this process has started and that have not exited. Node does not list a
 * running worker among the open resources (`process.getActiveResourcesInfo()`), so whoever ends the
 * process early (src/cli/process-end.ts) asks here.
 */
let live = 0;

/** Notes a worker just started, until it exits. */
export function startedWorker(worker: Worker): Worker {
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
