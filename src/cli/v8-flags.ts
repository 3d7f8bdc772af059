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
 * How much bytecode V8's optimizing compiler may inline into one function during a prune (V8's
 * default is 920). A prune runs a great deal of code a few times over large data (the ranking's
 * fit, the goal excerpts, the summary, the archive), and V8 optimizes each piece on background
 * threads while a count worker counts: on two cores, compiling large inlined functions took the
 * core the count runs on. With less inlined, each compile is smaller; code that runs for long (a
 * 10M-token analyze) is better with the default, so only the prune sets it.
 */
const PRUNE_INLINING_BUDGET = 100;

let pruneFlagsSet = false;

/** Called as a prune command starts, before its count workers and its read. */
export function beforePrune(): void {
  if (pruneFlagsSet) return;
  pruneFlagsSet = true;
  setFlagsFromString(`--max-inlined-bytecode-size-cumulative=${PRUNE_INLINING_BUDGET}`);
}

/**
 * For the build's code-cache warm-up (scripts/build-code-cache.mjs): the commands it runs leave V8's
 * flags as they are. V8 checks a code cache against a hash of the flags it was made under, and a
 * cache made after the warm-up's prune had set its flag was rejected by every start after it.
 */
export function keepV8Flags(): void {
  workerFlagsSet = true;
  pruneFlagsSet = true;
}
