import type { Embedder, Embedding } from '../providers.js';
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

export const DEFAULT_EMBED_BATCH = 64;

/**
 * Scores each text by cosine similarity to the goal. Texts are embedded in batches, all batches
 * requested at once (no N serial round trips); vectors are dropped once scored, so memory stays
 * bounded by the batches in flight.
 */
export async function scoreRelevance(
  goal: string,
  texts: readonly string[],
  embedder: Embedder,
  options: { batchSize?: number; signal?: AbortSignal } = {},
): Promise<number[]> {
  const batchSize = Math.max(1, options.batchSize ?? DEFAULT_EMBED_BATCH);
  const signalOption = options.signal ? { signal: options.signal } : {};
  const [goalVector] = await embedder.embed([goal], signalOption);
  if (!goalVector) return texts.map(() => 0);
  const batches: Promise<number[]>[] = [];
  for (let start = 0; start < texts.length; start += batchSize) {
    const batch = texts.slice(start, start + batchSize);
    batches.push(
      embedder.embed(batch, signalOption).then((vectors) => batch.map((_, i) => {
        const vector = vectors[i];
        return vector ? cosineSimilarity(goalVector, vector) : 0;
      })),
    );
  }
  return (await Promise.all(batches)).flat();
}

const TASK_TYPES = new Set(['spec', 'requirements', 'plan']);

/**
 * The goal a prune ranks by when `--goal` is not given: the latest user request (a user message
 * that is not injected context, a summary or a refresh), or the latest spec/requirements/plan turn,
 * whichever comes later.
 */
export function findActiveTask(turns: readonly ConversationTurn[]): string | undefined {
  for (let i = turns.length - 1; i >= 0; i--) {
    const turn = turns[i];
    if (!turn || turn.content.trim().length === 0) continue;
    if (TASK_TYPES.has(turn.type)) return turn.content;
    if (turn.role === 'user' && turn.type === 'message') return turn.content;
  }
  return undefined;
}
