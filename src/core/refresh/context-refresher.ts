/**
 * [3_MCP-TAS-089] [3_MCP-TAS-088] [TAS-035] Seed 004: after every `threshold` turns in one
 * orchestrator node, the TAS and PRD summaries are re-injected so the agent does not drift from
 * the project's constraints. Pure protocol logic: no transport, no I/O; the summaries come from an
 * injected `SummaryProvider`.
 */

/** The first line of every refresh, so agents (and `devs-ctx refresh`) recognise one. */
export const REFRESH_PREFIX = '[CONTEXT REFRESH]';

/** [SPEC §6] The default rhythm: a refresh after every 5 turns in a node. */
export const DEFAULT_REFRESH_THRESHOLD = 5;

/**
 * [seed 004] Where a refresh's TAS and PRD summaries come from. An interface, not a class, so
 * file-based, transcript-based, condensed and in-memory (test) providers all fit. (Prune's
 * `Summarizer` is another thing: removed turns → one `[Context Summary]` turn.)
 */
export interface SummaryProvider {
  getSummary(): Promise<{ tasSummary: string; prdSummary: string }>;
}

export interface RefreshResult {
  readonly refreshed: boolean;
  /** The text to inject; present exactly when `refreshed`. */
  readonly injectedSummary?: string;
}

export interface ContextRefresherOptions {
  /** Turns in a node before a refresh fires (default 5; 1 refreshes on every turn). */
  readonly threshold?: number;
  readonly summaryProvider: SummaryProvider;
}

/** The injected text: both sections always labelled, so an agent can parse them deterministically. */
export function formatRefresh(tasSummary: string, prdSummary: string): string {
  return `${REFRESH_PREFIX}\n## TAS Summary\n${tasSummary}\n\n## PRD Summary\n${prdSummary}`;
}

export class ContextRefresher {
  private count = 0;
  readonly threshold: number;

  constructor(private readonly options: ContextRefresherOptions) {
    const threshold = options.threshold ?? DEFAULT_REFRESH_THRESHOLD;
    if (!Number.isInteger(threshold) || threshold < 1) throw new RangeError(`threshold must be a whole number of turns, at least 1 (got ${threshold})`);
    this.threshold = threshold;
  }

  /** Turns counted in the current node since the last refresh (or since the node began). */
  get turnsInCurrentNode(): number {
    return this.count;
  }

  /**
   * Counts one turn; on the `threshold`-th turn since the last refresh in this node, fetches the
   * summaries and returns the refresh text. The counter resets as soon as a refresh fires, before
   * the next turn. An error from the provider propagates (and the count is left as it was, so the
   * next turn tries again).
   */
  async onTurn(_turnIndex: number): Promise<RefreshResult> {
    this.count++;
    if (this.count < this.threshold) return { refreshed: false };
    const { tasSummary, prdSummary } = await this.options.summaryProvider.getSummary();
    this.count = 0;
    return { refreshed: true, injectedSummary: formatRefresh(tasSummary, prdSummary) };
  }

  /** A new orchestrator node starts: the count starts again, and nothing is injected. */
  resetNode(): void {
    this.count = 0;
  }
}
