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
 * (`analyze DIR`'s workers) once all of them have loaded (`GroupFlags`, below):
 * V8's optimizing compiler inlines at most 100 bytes of bytecode into a function (its default: 920).
 * Both run a great deal of code a few times over (a prune: the ranking's fit, the goal excerpts, the
 * summary, the archive, on its main thread while the worker counts; a batch worker: the reader, the
 * counter and the report, anew in each worker), and on two cores every compile takes time from a
 * thread that counts (a prune's are on background threads, a worker's on its own thread). With less
 * inlined, each compile is smaller. V8's flags are the process's: set by a worker, they hold for the
 * main thread too. Code that runs long over one input (a 10M-token `analyze FILE`) is better with
 * the default: `analyze FILE` leaves it. Set once the workers have loaded, not before they start:
 * V8 refuses code caches made under other flags, Node's own for its modules included, and a worker
 * started after the change took about 30 ms more to load. It holds for the rest of the process.
 */
export const SMALLER_COMPILES_V8_FLAGS = '--max-inlined-bytecode-size-cumulative=100';

/**
 * What each worker of a group that sets V8 flags is given: the flags, and a shared count of the
 * workers loaded so far. The last of the group to load sets them (`loadedInGroup`): a worker that
 * set them while a sibling still loaded had that sibling's code caches refused (V8 checks a cache
 * against the flags of the moment), Node's own for its modules included.
 */
export interface GroupFlags {
  readonly flags: string;
  /** One Int32: how many of the group have loaded. */
  readonly loaded: SharedArrayBuffer;
  /** How many workers the group has. */
  readonly of: number;
}

export function flagsForGroup(flags: string, workers: number): GroupFlags {
  return { flags, loaded: new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT), of: workers };
}

/** Called by a worker of `group` once it has loaded: the last of the group sets the flags. A group that never all loads (a worker that failed to start) never sets them. */
export function loadedInGroup(group: GroupFlags | undefined, set: (flags: string) => void = setFlagsFromString): void {
  if (group === undefined) return;
  if (Atomics.add(new Int32Array(group.loaded), 0, 1) + 1 === group.of) set(group.flags);
}
