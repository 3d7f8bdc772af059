import { InterruptedError } from './errors.js';

/** How much synchronous work runs between two turns of the event loop. */
const SLICE_MS = 50;

/**
 * Lets a long, mostly synchronous pipeline see Ctrl-C / SIGTERM. Signal handlers run only when the
 * event loop turns, which a chain of resolved promises never lets it do: `tick()` gives it a turn
 * (a macrotask) once `sliceMs` of work has passed since the last one, and throws InterruptedError
 * (exit 130, nothing written) once `signal` is aborted.
 */
export class Pacer {
  private last = Date.now();

  constructor(
    private readonly signal?: AbortSignal,
    private readonly sliceMs = SLICE_MS,
  ) {}

  /** A turn of the event loop if a slice of work has passed; throws if interrupted. */
  async tick(): Promise<void> {
    if (Date.now() - this.last >= this.sliceMs) await this.turn();
    this.check();
  }

  /** A turn of the event loop now (before a commit point, so a signal already sent is seen); throws if interrupted. */
  async settle(): Promise<void> {
    await this.turn();
    this.check();
  }

  /** Throws InterruptedError once the signal is aborted. */
  check(): void {
    if (this.signal?.aborted) throw new InterruptedError();
  }

  private async turn(): Promise<void> {
    // Two immediates, not setTimeout(0) (a millisecond or more). Node reads signals in the loop's poll
    // phase; code resumed from I/O runs in that phase, and one immediate queued there runs in the same
    // iteration's check phase, before the next poll. The second is queued from the check phase, so a
    // poll comes between: a signal already sent is seen.
    await new Promise<void>((resolve) => setImmediate(resolve));
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.last = Date.now();
  }
}

/** Calls `step` for each item, giving the event loop a turn every slice (see Pacer). */
export async function pacedMap<T, R>(items: readonly T[], step: (item: T, index: number) => R, pacer: Pacer | undefined): Promise<R[]> {
  const out: R[] = new Array<R>(items.length);
  for (let i = 0; i < items.length; i++) {
    out[i] = step(items[i] as T, i);
    if (pacer && (i & 63) === 63) await pacer.tick();
  }
  return out;
}
