import type { SessionOutcome, SessionRun } from './session.js';
import type { EncodingName } from '../../core/tokens/encodings.js';

/** What a worker is started with (workerData). */
export interface WorkerInit {
  readonly run: SessionRun;
  readonly encoding: EncodingName;
  /** Whether to ask the main thread for cached counts (false with --no-cache). */
  readonly cache: boolean;
}

export type ToWorker =
  | { readonly type: 'job'; readonly id: number; readonly path: string }
  | { readonly type: 'counts'; readonly id: number; readonly counts: readonly number[] };

export type FromWorker =
  | { readonly type: 'lookup'; readonly id: number; readonly keys: string[] }
  | { readonly type: 'done'; readonly id: number; readonly outcome: SessionOutcome; readonly newCounts: [string, number][] }
  | { readonly type: 'crash'; readonly id: number; readonly message: string; readonly stack?: string };
