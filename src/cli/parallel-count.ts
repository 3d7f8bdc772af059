import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { TextTokenCounter } from '../core/accounting.js';

/**
 * Below this many characters to count, one thread: a worker costs more to start than it saves.
 * @public test/parallel-count.test.ts reads it from the built module.
 */
export const PARALLEL_MIN_CHARS = 2_000_000;

/**
 * Where the count worker is, relative to this module wherever it runs from: beside it in the tsc
 * output (dist/cli/) or the bundle (dist/cli-bundle/, an entry of its own), or the tsc output seen
 * from the bundle; run from the sources (src/cli/, in-process tests), the built one (a worker thread
 * does not get tsx's loader: `npm test` builds first). A prune of a large transcript counts with it.
 */
const WORKER_CANDIDATES = ['./count-worker.js', '../cli/count-worker.js', '../../dist/cli/count-worker.js'];
function countWorkerUrl(): URL {
  for (const candidate of WORKER_CANDIDATES) {
    const url = new URL(candidate, import.meta.url);
    if (existsSync(fileURLToPath(url))) return url;
  }
  throw new Error(`the count worker is missing (looked for ${WORKER_CANDIDATES.join(', ')} beside ${import.meta.url}); reinstall devs-ctx`);
}

/** Each thread counting takes the next of about this many pieces per thread, so threads that start late (or are busy with other work first) still share the counting evenly. */
const PIECES_PER_THREAD = 32;

/** A count worker and its end: its reply (that it is done), or its failure, awaited from the moment it exists. */
interface CountWorker {
  readonly worker: Worker;
  readonly done: Promise<void>;
}

function startCountWorker(encoding: string): CountWorker {
  const worker = new Worker(countWorkerUrl(), { workerData: { encoding } });
  const done = Promise.race([
    once(worker, 'message').then(() => undefined),
    once(worker, 'error').then(([error]) => Promise.reject(error instanceof Error ? error : new Error(String(error)))),
    once(worker, 'exit').then(([code]) => Promise.reject(new Error(`a count worker stopped (exit ${String(code)})`))),
  ]);
  // A rejection is handled where the reply is awaited, or by whoever ends the worker.
  done.catch(() => undefined);
  return { worker, done };
}

/**
 * Count workers started ahead of the count (a worker takes a few tens of milliseconds to load its
 * tokenizer: a prune starts them before it reads a large transcript), for `countAcrossThreads` to
 * take. Until taken they do not keep the process alive; `end` ends those not taken.
 */
export class CountWorkers {
  readonly #waiting: CountWorker[];

  constructor(encoding: string, count: number) {
    this.#waiting = Array.from({ length: count }, () => {
      const started = startCountWorker(encoding);
      started.worker.unref();
      return started;
    });
  }

  /** How many are started and not taken. */
  get waiting(): number {
    return this.#waiting.length;
  }

  /** Up to `count` of them, for a count (which ends them). */
  take(count: number): CountWorker[] {
    const taken = this.#waiting.splice(0, count);
    for (const { worker } of taken) worker.ref();
    return taken;
  }

  async end(): Promise<void> {
    const left = this.#waiting.splice(0);
    await Promise.all(left.map(({ worker }) => worker.terminate()));
  }
}

/**
 * Counts `texts` across `jobs` threads: small count workers and this thread take consecutive pieces
 * of about equal size from one shared queue (an atomic counter) and write each count into shared
 * memory. Exact: each text is counted whole by the same counter as on one thread. Small work stays on
 * this thread.
 *
 * `alongside`: other work for this thread, started at once while the workers count (a prune fits its
 * relevance ranking meanwhile); this thread takes pieces of the counting once it is done, and the
 * counts are given once both are. It runs however little there is to count. `ahead`: workers
 * started earlier, used before any new one is started.
 */
export async function countAcrossThreads(
  texts: readonly string[],
  counter: TextTokenCounter,
  encoding: string,
  jobs: number,
  alongside?: () => Promise<void>,
  ahead?: CountWorkers,
): Promise<number[]> {
  let chars = 0;
  for (const text of texts) chars += text.length;
  const parts = Math.max(1, Math.min(jobs, Math.floor(chars / (PARALLEL_MIN_CHARS / 2))));
  if (parts === 1) {
    await alongside?.();
    return texts.map((text) => counter.count(text));
  }
  const starts = pieceStarts(texts, chars, parts * PIECES_PER_THREAD);
  // [the next piece to take, then one count per text]
  const shared = new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT * (1 + texts.length));
  const counts = new Int32Array(shared, Int32Array.BYTES_PER_ELEMENT);
  const workers = ahead?.take(parts - 1) ?? [];
  while (workers.length < parts - 1) workers.push(startCountWorker(encoding));
  for (const { worker } of workers) worker.postMessage({ texts, starts, shared } satisfies CountJob);
  try {
    await alongside?.();
    countPieces({ texts, starts, shared }, counter);
    for (const { done } of workers) await done;
    return Array.from(counts, (_, i) => Atomics.load(counts, i));
  } finally {
    await Promise.all(workers.map(({ worker }) => worker.terminate()));
  }
}

/** The first text of each of about `pieces` consecutive pieces of about equal characters, and the end (`texts.length`). */
function pieceStarts(texts: readonly string[], chars: number, pieces: number): Int32Array {
  const starts: number[] = [0];
  let acc = 0;
  for (let i = 0; i < texts.length - 1 && starts.length < pieces; i++) {
    acc += (texts[i] as string).length;
    if (acc >= (chars * starts.length) / pieces) starts.push(i + 1);
  }
  starts.push(texts.length);
  return Int32Array.from(starts);
}

/** What a count worker is sent: every text, the pieces, and the shared queue and counts. */
export interface CountJob {
  readonly texts: readonly string[];
  readonly starts: Int32Array;
  readonly shared: SharedArrayBuffer;
}

/** Takes pieces from the shared queue until none is left, writing each text's count into the shared counts. */
export function countPieces(job: CountJob, counter: TextTokenCounter): void {
  const next = new Int32Array(job.shared, 0, 1);
  const counts = new Int32Array(job.shared, Int32Array.BYTES_PER_ELEMENT);
  for (let piece = Atomics.add(next, 0, 1); piece < job.starts.length - 1; piece = Atomics.add(next, 0, 1)) {
    const end = job.starts[piece + 1] as number;
    for (let i = job.starts[piece] as number; i < end; i++) Atomics.store(counts, i, counter.count(job.texts[i] as string));
  }
}
