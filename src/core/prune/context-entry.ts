/**
 * Seed 002's entry: the token-budget form of pruning works on these (tiered memory, drift guard).
 * A string union, not an enum, so it serialises as itself. (A `TranscriptEntry` is a turn read from
 * a file with where it came from; a `PlanEntry` is the planner's view of one, with its tokens and relevance.)
 */
export interface ContextEntry {
  id: string;
  type: 'tas' | 'requirements' | 'reasoning' | 'tool_result' | 'spec' | 'summary' | (string & {});
  content: string;
  tokenCount: number;
  /** Unix ms. */
  timestamp: number;
  metadata?: Record<string, unknown>;
}

/** [3_MCP-RISK-303] Entry types the drift guard never prunes, whatever the pressure. */
export const DRIFT_GUARD_PINNED_TYPES: ReadonlySet<string> = new Set(['tas', 'requirements', 'spec']);

/** Anything that cuts entries down to a token budget without touching pinned ones (seed 002's `ContextPruner.prune`). */
export interface BudgetPruner {
  prune(entries: readonly ContextEntry[], tokenBudget: number): ContextEntry[];
}
