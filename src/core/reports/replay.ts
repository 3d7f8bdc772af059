import type { PruneStrategy } from '../prune/plan.js';
import type { FormatName } from '../transcript.js';

export const REPLAY_SCHEMA_VERSION = 1;

/** One thing the policy did at a step. */
export interface ReplayEvent {
  readonly kind: 'prune' | 'refresh' | 'prune-impossible' | 'prune-failed';
  /** 1-based step (an agent turn: a message, or a tool call with its results). */
  readonly step: number;
  /** The transcript turn that ended the step. */
  readonly turnId: string;
  /** The window when the event fired, and after it. */
  readonly windowBefore: number;
  readonly windowAfter: number;
  readonly tokensSaved?: number;
  readonly removedTurnCount?: number;
  /** A refresh's own size. */
  readonly tokens?: number;
  readonly node?: string | null;
  readonly message?: string;
}

/** `devs-ctx replay --json` (schemaVersion 1). */
export interface ReplayReport {
  readonly schemaVersion: typeof REPLAY_SCHEMA_VERSION;
  readonly file: string;
  readonly format: FormatName;
  readonly limits: { readonly soft: number; readonly hard: number; readonly target: number; readonly source: string };
  readonly strategy: PruneStrategy;
  /** Turns in a node before a refresh; null when refreshes were not simulated. */
  readonly refreshThreshold: number | null;
  readonly notes: readonly string[];
  readonly turns: number;
  readonly steps: number;
  readonly events: readonly ReplayEvent[];
  readonly prunes: number;
  readonly refreshes: number;
  readonly tokensSaved: number;
  /** The largest window the agent had before a prune acted. */
  readonly largestWindow: { readonly tokens: number; readonly step: number; readonly turnId: string };
  /** Whether a window the agent would have been sent (after the prune) was at or above the hard limit. */
  readonly hardLimitExceeded: boolean;
  /** Steps at which it was. */
  readonly stepsOverHardLimit: readonly number[];
  readonly finalWindow: { readonly turns: number; readonly tokens: number };
  /** The window after each step (after its prune): the timeline. */
  readonly windowTokens: readonly number[];
  /** The window at each step before its prune (the peaks). */
  readonly peakTokens: readonly number[];
  /**
   * The session's whole life, as the agent recorded it. A Claude Code or Codex session that compacted is walked
   * whole; another (Gemini CLI) is replayed from its last compaction on, and `overHardLimit` says that a
   * size it recorded before a compaction (or its recorded peak) reached the hard limit.
   */
  readonly lifetime: {
    readonly peak: number;
    readonly compactions: number;
    readonly compactionSizes: readonly number[];
    readonly overHardLimit: boolean;
    /** The replay walked the whole file through the agent's compactions (Claude Code, Codex), not only the turns after the last. */
    readonly wholeFile: boolean;
  };
}
