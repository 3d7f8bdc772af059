import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Worker } from 'node:worker_threads';
import type { TextTokenCounter } from '../core/accounting.js';
import type { EncodingName } from '../core/tokens/encodings.js';
import { sharedRankTable } from '../io/rank-tables.js';
import { outOfMemory, startWorker } from './live-workers.js';
import { flagsForGroup } from './v8-flags.js';
import type { GroupFlags } from './v8-flags.js';

/**
 * Below this many characters to count, one thread: a worker costs more to start than it saves.
 * @public test/parallel-count.test.ts reads it from the built module.
 */
export const PARALLEL_MIN_CHARS = 2_000_000;

/** With a worker started and idle, it is sent its share from this many characters on: sending texts and counting them there costs far less than counting them here. */
const RUNNING_MIN_CHARS = 50_000;

/**
 * Where the count worker is, relative to this module wherever it runs from: in the bundle
 * (dist/cli-bundle/count-worker.cjs, which loads the worker's own bundle), beside it in the tsc
 * output (dist/cli/), or the tsc output seen from the bundle; run from the sources (src/cli/,
 * in-process tests), the built one (a worker thread does not get tsx's loader: `npm test` builds
 * first). A prune of a large transcript counts with it.
 */
const WORKER_CANDIDATES = ['./count-worker.cjs', './count-worker.js', '../cli/count-worker.js', '../../dist/cli/count-worker.js'];
function countWorkerUrl(): URL {
  for (const candidate of WORKER_CANDIDATES) {
    const url = new URL(candidate, import.meta.url);
    if (existsSync(fileURLToPath(url))) return url;
  }
  throw new Error(`the count worker is missing (looked for ${WORKER_CANDIDATES.join(', ')} beside ${import.meta.url}); reinstall devs-ctx`);
}

/** Each thread counting takes the next of about this many pieces per thread, so threads that start late (or are busy with other work first) still share the counting evenly. */
const PIECES_PER_THREAD = 32;

/**
 * A count worker, and its failure: rejected from the moment it exists if it fails or exits, so a
 * job's reply is raced against it (a worker may count several jobs: see CountWorkers).
 */
interface CountWorker {
  readonly worker: Worker;
  readonly failed: Promise<never>;
}

/**
 * What a count worker is started with: its encoding, this thread's table of it (none from the
 * TypeScript sources), and V8 flags its group sets once all have loaded (a prune's: see v8-flags.ts).
 */
export interface CountWorkerData {
  readonly encoding: EncodingName;
  readonly rankTable: SharedArrayBuffer | undefined;
  readonly v8Flags?: GroupFlags;
}

/** A count worker, or none when no thread can be started (Node throws ERR_WORKER_INIT_FAILED when it cannot make one). */
function tryStartCountWorker(encoding: EncodingName, v8Flags?: GroupFlags): CountWorker | undefined {
  try {
    return startCountWorker(encoding, v8Flags);
  } catch {
    return undefined;
  }
}

function startCountWorker(encoding: EncodingName, v8Flags?: GroupFlags): CountWorker {
  const workerData: CountWorkerData = { encoding, rankTable: sharedRankTable(encoding), ...(v8Flags !== undefined ? { v8Flags } : {}) };
  const worker = startWorker(countWorkerUrl(), { workerData });
  const failed = Promise.race([
    once(worker, 'error').then(([error]): never => {
      throw error instanceof Error ? error : new Error(String(error));
    }),
    once(worker, 'exit').then(([code]): never => {
      throw new Error(`a count worker stopped (exit ${String(code)})`);
    }),
  ]);
  // Handled where a job's reply is awaited; an ended worker's exit is no failure anyone waits for.
  failed.catch(() => undefined);
  return { worker, failed };
}

/** Sends `job` to the worker; resolves when it replies that it is done, rejects if it fails first. */
function runJob({ worker, failed }: CountWorker, job: CountJob): Promise<void> {
  const done = Promise.race([once(worker, 'message').then(() => undefined), failed]);
  worker.postMessage(job);
  return done;
}

/**
 * Count workers started ahead of the count (a worker takes a few tens of milliseconds to load its
 * tokenizer: a prune starts them before it reads a large transcript), for `countAcrossThreads` to
 * take; a count gives them back when it is done, so a later one (a prune's excerpts) counts on
 * them too, at no start-up cost. While waiting they do not keep the process alive; `end` ends them.
 */
export class CountWorkers {
  readonly #waiting: CountWorker[];
  /** Set by `end`: a count that gives workers back later ends them instead. */
  #ended = false;
  /** The workers being ended, so that every call of `end` waits for them (the CLI ends sooner when none is left running). */
  readonly #ending: Promise<number>[] = [];

  /** `v8Flags`: set by the last of these workers to load (see CountWorkerData). */
  constructor(encoding: EncodingName, count: number, v8Flags?: string) {
    this.#waiting = [];
    const group = v8Flags === undefined ? undefined : flagsForGroup(v8Flags, count);
    for (let k = 0; k < count; k++) {
      const started = tryStartCountWorker(encoding, group);
      if (started === undefined) break;
      started.worker.unref();
      this.#waiting.push(started);
    }
  }

  /** How many are started and not taken. */
  get waiting(): number {
    return this.#waiting.length;
  }

  /** Up to `count` of them, for a count (which gives them back, or ends them if the count fails). */
  take(count: number): CountWorker[] {
    const taken = this.#waiting.splice(0, count);
    for (const { worker } of taken) worker.ref();
    return taken;
  }

  /** Workers a count is done with, waiting again for the next one (ended, if `end` was called meanwhile). */
  giveBack(workers: readonly CountWorker[]): void {
    for (const taken of workers) {
      taken.worker.unref();
      if (this.#ended) this.#ending.push(taken.worker.terminate());
      else this.#waiting.push(taken);
    }
  }

  async end(): Promise<void> {
    this.#ended = true;
    for (const { worker } of this.#waiting.splice(0)) this.#ending.push(worker.terminate());
    await Promise.all(this.#ending);
  }
}

/**
 * Counts `texts` across `jobs` threads. The texts are cut into consecutive pieces of about equal
 * size, in one region of pieces per thread; each count worker is sent only its region's texts (a
 * worker never holds a copy of the whole transcript: memory does not grow with the cores) and takes
 * its pieces from the front. This thread takes its own region's pieces, then the rest of the others'
 * from their back ends, so a worker started late still leaves no one waiting. Each region's two ends
 * are one shared word, claimed atomically; the counts go into shared memory. Exact: each text is
 * counted whole by the same counter as on one thread. Small work stays on this thread (but see
 * `alongside`). A worker that cannot start, fails or stops does not fail the count: what it did not
 * count is counted here; one that ran out of memory does (its error).
 *
 * `alongside`: other work for this thread, started at once while the workers count (a prune fits its
 * relevance ranking meanwhile); the counts are given once both are done. It runs however little there
 * is to count. This thread then has no region and leaves the count to the workers: it counts only
 * what a worker that did not start or failed left. Its counter has not run yet, and counting a few
 * pieces cold costs more than waiting for a worker whose counter has (on a prune of the bench's
 * 1M-token transcript it also had V8 compile the whole counter a second time, for this thread, on
 * cores the workers use). So with work alongside, a worker already started takes even a little text,
 * even one. `ahead`: workers started earlier, used before any new one is started.
 *
 * `lookUp`: counts known elsewhere (a cache), looked up on this thread once the workers have their
 * texts, before the work alongside: a text found (`found(i, count)`) is not counted by a worker that
 * has not reached it yet, nor here. One a worker reached first is counted all the same, and its
 * count may be the one returned: a caller that wants the found counts keeps them. A prune's workers
 * are thus sent the transcript at once, rather than after this thread hashed every text to look it up.
 */
export async function countAcrossThreads(
  texts: readonly string[],
  counter: TextTokenCounter,
  encoding: EncodingName,
  jobs: number,
  alongside?: () => Promise<void>,
  ahead?: CountWorkers,
  lookUp?: (found: (i: number, count: number) => void) => void,
): Promise<number[]> {
  let chars = 0;
  for (const text of texts) chars += text.length;
  // This thread may count all of them: its counter is told how much (see TextTokenCounter.expect).
  counter.expect?.(chars);
  const waiting = ahead?.waiting ?? 0;
  const parts =
    alongside !== undefined && waiting > 0 && jobs > 1 && texts.length > 0 ? Math.max(2, threadsFor(chars, jobs, waiting)) : threadsFor(chars, jobs, waiting);
  if (parts === 1) {
    const known = new Map<number, number>();
    lookUp?.((i, count) => known.set(i, count));
    await alongside?.();
    return texts.map((text, i) => known.get(i) ?? counter.count(text));
  }
  // A region's two ends share one 32-bit word: at most 65,535 pieces.
  const starts = pieceStarts(texts, chars, Math.min(parts * PIECES_PER_THREAD, 0xffff));
  const pieces = starts.length - 1;
  // A few very long texts make fewer pieces than threads: no worker without a piece (this thread
  // needs none with work alongside).
  const own = alongside === undefined ? 1 : 0;
  if (pieces < parts - 1 + own) return countAcrossThreads(texts, counter, encoding, pieces + 1 - own, alongside, ahead, lookUp);
  // [one word per region: (back << 16) | front, then one count per text]
  const shared = new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT * (parts + texts.length));
  const ends = new Int32Array(shared, 0, parts);
  const regions = regionStarts(pieces, parts, alongside !== undefined);
  const regionStart = (r: number): number => regions[r] as number;
  for (let r = 0; r < parts; r++) ends[r] = (regionStart(r + 1) << 16) | regionStart(r);
  const counts = new Int32Array(shared, Int32Array.BYTES_PER_ELEMENT * parts);
  const kept = ahead?.take(parts - 1) ?? [];
  const workers = [...kept];
  /** Per worker, whether it counted its share (once all have replied). */
  let counted: boolean[] | undefined;
  /** A worker out of memory: its share is not counted here (this thread would run out in turn), the count fails. */
  let lostTo: { readonly error: unknown } | undefined;
  try {
    // A worker that cannot be started leaves its region to this thread, which takes it from the back.
    while (workers.length < parts - 1) {
      const started = tryStartCountWorker(encoding);
      if (started === undefined) break;
      workers.push(started);
    }
    // Each reply says whether its worker counted its share: one that fails or stops (out of memory,
    // killed) leaves the pieces it took uncounted, and this thread counts them.
    const replies = workers.map((started, k) => {
      const region = k + 1;
      const first = starts[regionStart(region)] as number;
      const job = { texts: texts.slice(first, starts[regionStart(region + 1)]), first, starts, shared, regions: parts, region };
      return runJob(started, job).then(
        () => true,
        (error: unknown) => {
          lostTo ??= outOfMemory(error) ? { error } : undefined;
          return false;
        },
      );
    });
    // A count found is one no thread counts from now on (see `lookUp`).
    lookUp?.((i, count) => Atomics.store(counts, i, count));
    await alongside?.();
    const all: CountJob = { texts, first: 0, starts, shared, regions: parts, region: 0 };
    countPieces(all, counter);
    // After work alongside, only the regions no worker took.
    for (let region = alongside === undefined ? 1 : workers.length + 1; region < parts; region++) countPieces({ ...all, region }, counter, 'back');
    counted = await Promise.all(replies);
    if (lostTo !== undefined) throw lostTo.error;
    // A text is never counted 0 (none is empty): a 0 left is one a failed worker took and did not count.
    if (counted.includes(false)) for (let i = 0; i < texts.length; i++) if (Atomics.load(counts, i) === 0) counts[i] = counter.count(texts[i] as string);
    return Array.from(counts, (_, i) => Atomics.load(counts, i));
  } finally {
    // Workers started ahead go back, idle, for the next count; any started here end, as do all after
    // a failure here and any that failed.
    const back = counted === undefined ? [] : kept.filter((_, k) => counted?.[k] === true);
    ahead?.giveBack(back);
    await Promise.all(workers.filter((w) => !back.includes(w)).map(({ worker }) => worker.terminate()));
  }
}

/**
 * How many threads count `chars` characters: one per PARALLEL_MIN_CHARS / 2 when workers must be
 * started, up to `jobs`; with `running` workers already started (and idle), each of them as soon
 * as it has RUNNING_MIN_CHARS to count.
 * @public test/parallel-count.test.ts checks the choice.
 */
export function threadsFor(chars: number, jobs: number, running: number): number {
  const starting = Math.floor(chars / (PARALLEL_MIN_CHARS / 2));
  const started = Math.min(running + 1, Math.floor(chars / RUNNING_MIN_CHARS));
  return Math.max(1, Math.min(jobs, Math.max(starting, started)));
}

/**
 * The first piece of each thread's region, and the end (`pieces`): region 0 is this thread's, each
 * other a worker's. This thread has no region of its own when it has other work first: the workers
 * count theirs from the front while it works, and it takes none of what is left (see
 * countAcrossThreads; a region of its own would wait for that work, however long).
 * @public test/parallel-count.test.ts checks the layout.
 */
export function regionStarts(pieces: number, parts: number, workAlongside: boolean): number[] {
  const mine = workAlongside ? 0 : Math.round(pieces / parts);
  return Array.from({ length: parts + 1 }, (_, r) => (r === 0 ? 0 : mine + Math.floor(((r - 1) * (pieces - mine)) / (parts - 1))));
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

/**
 * What a counting thread works on: the texts it holds (`texts[0]` is text number `first`), every
 * piece's first text, the shared ends of each region and the counts, and the region it takes from.
 */
export interface CountJob {
  readonly texts: readonly string[];
  readonly first: number;
  readonly starts: Int32Array;
  readonly shared: SharedArrayBuffer;
  readonly regions: number;
  readonly region: number;
}

/** The next piece of `region` from its front or its back end, or -1 when none is left (claimed atomically). */
function claim(ends: Int32Array, region: number, end: 'front' | 'back'): number {
  for (;;) {
    const both = Atomics.load(ends, region);
    const front = both & 0xffff;
    const back = both >>> 16;
    if (front >= back) return -1;
    const next = end === 'front' ? (back << 16) | (front + 1) : ((back - 1) << 16) | front;
    if (Atomics.compareExchange(ends, region, both, next | 0) === both) return end === 'front' ? front : back - 1;
  }
}

/**
 * Takes pieces of the job's region until none is left, writing each text's count into the shared
 * counts; a text that has one already (found in a cache meanwhile: see countAcrossThreads) is skipped.
 */
export function countPieces(job: CountJob, counter: TextTokenCounter, end: 'front' | 'back' = 'front'): void {
  const ends = new Int32Array(job.shared, 0, job.regions);
  const counts = new Int32Array(job.shared, Int32Array.BYTES_PER_ELEMENT * job.regions);
  for (let piece = claim(ends, job.region, end); piece >= 0; piece = claim(ends, job.region, end)) {
    const last = job.starts[piece + 1] as number;
    for (let i = job.starts[piece] as number; i < last; i++) {
      if (Atomics.load(counts, i) === 0) Atomics.store(counts, i, counter.count(job.texts[i - job.first] as string));
    }
  }
}
