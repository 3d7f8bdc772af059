import { setFlagsFromString } from 'node:v8';

let set = false;

/**
 * Called before this process starts a worker thread (a count worker, a batch's analyze workers).
 * Worker isolates made from here on optimize hot code on their own thread, not on V8's background
 * threads: on two cores, a counting worker's background compiles took CPU from the other counting
 * thread (two threads counting in one process each ran about 1.5× as long as one alone; about
 * 1.15× with this). The main isolate was made before the flag changed and keeps compiling in the
 * background: its code is the larger part, and compiling it on this thread made a prune slower.
 * Measured on Node 20 (see CHANGELOG and docs/decisions.md).
 */
export function beforeWorkerThreads(): void {
  if (set) return;
  set = true;
  setFlagsFromString('--no-concurrent-recompilation');
}
