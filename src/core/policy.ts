import type { ContextWindow, ConversationTurn, TurnType } from './turn.js';

/** [TAS-024] [8_RISKS-REQ-010] How urgently a window needs pruning. */
export type PruneUrgency = 'none' | 'soft' | 'hard';

/** [8_RISKS-REQ-010] Soft limit: prune recommended. */
export const DEFAULT_SOFT_LIMIT_TOKENS = 500_000;
/** [TAS-024] Hard limit: prune required. */
export const DEFAULT_HARD_LIMIT_TOKENS = 800_000;
/** System prompt and PRD injection. */
export const DEFAULT_PINNED_PREFIX_TURNS = 2;
/** The most recent turns, kept for continuity. */
export const DEFAULT_PROTECTED_TAIL_TURNS = 5;
/** Fewer candidates than this means there is nothing worth summarizing. */
export const MIN_SUMMARIZATION_CANDIDATES = 3;
/** [SPEC §6] Turn types that are project knowledge: never pruned or altered. */
export const PINNED_TURN_TYPES: readonly TurnType[] = ['system', 'prd', 'tas', 'requirements', 'spec', 'plan'];

export interface PrunerConfig {
  readonly softLimitTokens: number;
  readonly hardLimitTokens: number;
  readonly pinnedPrefixTurns: number;
  /** Defaults to `PINNED_TURN_TYPES`. */
  readonly pinnedTypes?: readonly TurnType[];
  /** Defaults to `DEFAULT_PROTECTED_TAIL_TURNS`. */
  readonly protectedTailTurns?: number;
}

export const DEFAULT_PRUNER_CONFIG: PrunerConfig = {
  softLimitTokens: DEFAULT_SOFT_LIMIT_TOKENS,
  hardLimitTokens: DEFAULT_HARD_LIMIT_TOKENS,
  pinnedPrefixTurns: DEFAULT_PINNED_PREFIX_TURNS,
  pinnedTypes: PINNED_TURN_TYPES,
  protectedTailTurns: DEFAULT_PROTECTED_TAIL_TURNS,
};

export function shouldTriggerSoftPrune(window: ContextWindow, config: PrunerConfig): boolean {
  return window.totalTokenEstimate >= config.softLimitTokens;
}

export function shouldTriggerHardPrune(window: ContextWindow, config: PrunerConfig): boolean {
  return window.totalTokenEstimate >= config.hardLimitTokens;
}

export function classifyPruneUrgency(window: ContextWindow, config: PrunerConfig): PruneUrgency {
  if (window.totalTokenEstimate >= config.hardLimitTokens) return 'hard';
  if (window.totalTokenEstimate >= config.softLimitTokens) return 'soft';
  return 'none';
}

/** Where each turn of a window stands: pinned, protected tail, or summarization candidate. */
export interface TurnPartition {
  /** Indexes of turns never pruned: the prefix, `pinned: true`, and pinned types. */
  readonly pinned: readonly number[];
  /** Indexes of the last turns, kept for continuity (pinned ones excluded). */
  readonly protectedTail: readonly number[];
  /** Indexes of the turns between; empty when fewer than the minimum. */
  readonly candidates: readonly number[];
}

export function isPinnedTurn(turn: ConversationTurn, index: number, config: PrunerConfig): boolean {
  if (index < config.pinnedPrefixTurns) return true;
  if (turn.pinned === true) return true;
  return (config.pinnedTypes ?? PINNED_TURN_TYPES).includes(turn.type);
}

/** Pure: splits a window's turns by the rules of seed 001, unified with SPEC §6's pinned types. */
export function partitionTurns(turns: readonly ConversationTurn[], config: PrunerConfig): TurnPartition {
  const tailSize = config.protectedTailTurns ?? DEFAULT_PROTECTED_TAIL_TURNS;
  const tailStart = Math.max(0, turns.length - tailSize);
  const pinned: number[] = [];
  const protectedTail: number[] = [];
  const middle: number[] = [];
  turns.forEach((turn, index) => {
    if (isPinnedTurn(turn, index, config)) pinned.push(index);
    else if (index >= tailStart) protectedTail.push(index);
    else middle.push(index);
  });
  const candidates = middle.length < MIN_SUMMARIZATION_CANDIDATES ? [] : middle;
  return { pinned, protectedTail, candidates };
}

/**
 * [TAS-024] The turns to send to the summarizer: everything between the pinned prefix and the
 * last five turns, minus pinned turns; an empty array when fewer than three remain. Never mutates.
 */
export function selectTurnsForSummarization(window: ContextWindow, config: PrunerConfig): ConversationTurn[] {
  const { candidates } = partitionTurns(window.turns, config);
  return candidates.map((index) => window.turns[index]).filter((t): t is ConversationTurn => t !== undefined);
}
