import { setFlagsFromString } from 'node:v8';

/**
 * The V8 flags the CLI sets once Node runs (`v8.setFlagsFromString`), each for one measured reason
 * (see docs/decisions.md). Node documents changing flags after start as unsupported in general: each
 * is measured on Node 20 (the bench shows it), not promised. Library users are never touched: only
 * the CLI's commands call these.
 */

let workerFlagsSet = false;

/**
 * Called before this process starts a worker thread (a count worker, a batch's analyze workers).
 * Worker isolates made from here on optimize hot code on their own thread, not on V8's background
 * threads: on two cores, a counting worker's background compiles took CPU from the other counting
 * thread (two threads counting in one process each ran about 1.5× as long as one alone; about
 * 1.15× with this). The main isolate was made before the flag changed and keeps compiling in the
 * background: its code is the larger part, and compiling it on this thread made a prune slower.
 */
export function beforeWorkerThreads(): void {
  if (workerFlagsSet) return;
  workerFlagsSet = true;
  setFlagsFromString('--no-concurrent-recompilation');
}

/**
 * The V8 flags set by the worker threads of a large prune (its count workers) and of a batch
 * (`analyze DIR`'s workers) once each has loaded (`CountWorkerData.v8Flags`, `WorkerInit.v8Flags`):
 * V8's optimizing compiler inlines at most 100 bytes of bytecode into a function (its default: 920).
 * Both run a great deal of code a few times over (a prune: the ranking's fit, the goal excerpts, the
 * summary, the archive, on its main thread while the worker counts; a batch worker: the reader, the
 * counter and the report, anew in each worker), and on two cores every compile takes time from a
 * thread that counts (a prune's are on background threads, a worker's on its own thread). With less
 * inlined, each compile is smaller. V8's flags are the process's: set by a worker, they hold for the
 * main thread too. Code that runs long over one input (a 10M-token `analyze FILE`) is better with
 * the default: `analyze FILE` leaves it. Set once a worker has loaded, not before it starts: V8
 * refuses code caches made under other flags, Node's own for its modules included, and a worker
 * started after the change took about 30 ms more to load.
 */
export const SMALLER_COMPILES_V8_FLAGS = '--max-inlined-bytecode-size-cumulative=100';
