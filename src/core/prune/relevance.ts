import { inferGoal } from '../goal.js';
import type { Pacer } from '../pace.js';
import type { Embedder, Embedding } from '../provider-contracts.js';
import type { ConversationTurn } from '../turn.js';

/** [seed 003] Cosine similarity; a zero vector (or a length mismatch) scores 0, never NaN. */
export function cosineSimilarity(a: Embedding, b: Embedding): number {
  if (a.length !== b.length || a.length === 0) return 0;
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] ?? 0;
    const y = b[i] ?? 0;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  if (na === 0 || nb === 0) return 0;
  return dot / Math.sqrt(na * nb);
}

const DEFAULT_EMBED_CONCURRENCY = 4;
const DEFAULT_EMBED_BATCH = 64;

/**
 * Scores each text by cosine similarity to the goal. Texts are embedded in batches, a few in
 * flight at once; vectors are dropped once scored, so memory stays bounded by the batches in
 * flight. The first failure aborts the batches still running and is thrown.
 */
export async function scoreRelevance(
  goal: string,
  texts: readonly string[],
  embedder: Embedder,
  options: { batchSize?: number; signal?: AbortSignal; concurrency?: number; pacer?: Pacer } = {},
): Promise<number[]> {
  if (embedder.similarities) return similaritiesPaced(goal, texts, embedder.similarities.bind(embedder), options.pacer);
  const batchSize = Math.max(1, options.batchSize ?? DEFAULT_EMBED_BATCH);
  // One failed batch stops the others: their requests are aborted, not left running to the end.
  const stop = new AbortController();
  const signal = options.signal ? AbortSignal.any([options.signal, stop.signal]) : stop.signal;
  const [goalVector] = await embedder.embed([goal], { signal });
  if (!goalVector) return texts.map(() => 0);
  const scores = new Array<number>(texts.length).fill(0);
  const starts: number[] = [];
  for (let start = 0; start < texts.length; start += batchSize) starts.push(start);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < starts.length) {
      const start = starts[next++] ?? 0;
      const batch = texts.slice(start, start + batchSize);
      const vectors = await embedder.embed(batch, { signal });
      await options.pacer?.tick(); // a local embedder never leaves the event loop a turn by itself
      batch.forEach((_, i) => {
        const vector = vectors[i];
        scores[start + i] = vector ? cosineSimilarity(goalVector, vector) : 0;
      });
    }
  };
  // A few batches in flight at once: no N serial round trips, and no burst of N requests that a
  // provider's rate limit answers with 429s.
  const lanes = Math.max(1, Math.min(options.concurrency ?? DEFAULT_EMBED_CONCURRENCY, starts.length));
  try {
    await Promise.all(Array.from({ length: lanes }, worker));
  } catch (error) {
    stop.abort(error);
    throw error;
  }
  return scores;
}

/** `Embedder.similarities` a batch at a time, giving the event loop its turns (a signal is seen). */
async function similaritiesPaced(
  goal: string,
  texts: readonly string[],
  similarities: (goal: string, texts: readonly string[]) => number[],
  pacer: Pacer | undefined,
): Promise<number[]> {
  const scores: number[] = [];
  for (let start = 0; start < texts.length; start += DEFAULT_EMBED_BATCH) {
    for (const score of similarities(goal, texts.slice(start, start + DEFAULT_EMBED_BATCH))) scores.push(score);
    await pacer?.tick();
  }
  return scores;
}

/**
 * The goal a prune ranks by when `--goal` is not given: the latest substantive user request, or the
 * latest spec/requirements/plan turn, whichever comes later (core/goal.ts `inferGoal`).
 */
export function findActiveTask(turns: readonly ConversationTurn[]): string | undefined {
  return inferGoal(turns)?.text;
}
