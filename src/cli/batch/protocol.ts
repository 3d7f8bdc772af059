import type { PackedCounts } from './counts.js';
import type { SessionOutcome, SessionRun } from './session.js';
import type { EncodingName } from '../../core/tokens/encodings.js';
import type { GroupFlags } from '../v8-flags.js';

/** What a worker is started with (workerData). */
export interface WorkerInit {
  readonly run: SessionRun;
  readonly encoding: EncodingName;
  /** Whether to return new counts to the main thread for the cache (false with --no-cache). */
  readonly cache: boolean;
  /** Whether to ask the main thread for cached counts first (false too when the cache is empty). */
  readonly lookup: boolean;
  /** The starting thread's rank table of `encoding`, for the worker to count with (the pool adds it). */
  readonly rankTable?: SharedArrayBuffer | undefined;
  /** V8 flags the last of the pool's workers to load sets (see v8-flags.ts). */
  readonly v8Flags?: GroupFlags;
}

export type ToWorker =
  | { readonly type: 'job'; readonly id: number; readonly path: string; readonly grown: boolean }
  | { readonly type: 'counts'; readonly id: number; readonly counts: Int32Array };

export type FromWorker =
  /** `keys`: the content hashes, comma-separated (one string copies between threads far faster than an array). */
  | { readonly type: 'lookup'; readonly id: number; readonly keys: string }
  | { readonly type: 'done'; readonly id: number; readonly outcome: SessionOutcome; readonly newCounts: PackedCounts }
  | { readonly type: 'crash'; readonly id: number; readonly message: string; readonly stack?: string };
