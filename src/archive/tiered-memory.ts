import type { BudgetPruner, ContextEntry } from '../core/prune/context-entry.js';
import { UsageError } from '../core/errors.js';
import type { ArchiveStore } from './store.js';

/** [3_MCP-RISK-303] Short-term buffer size (tokens) above which the tiered memory prunes. */
export const DEFAULT_PRUNE_THRESHOLD = 800_000;
/**
 * Default budget a prune cuts the buffer down to, as a share of the threshold: well below it, so
 * the next few entries do not trigger another prune at once.
 */
const DEFAULT_BUDGET_RATIO = 0.75;

/**
 * Seed 002's medium-term memory: context entries flushed out of the short-term buffer, kept in the
 * SQLite archive under a scope (one per agent or session), searchable and loadable again.
 */
export class MemoryRefresher {
  private readonly scope: string;
  private readonly now: () => Date;

  constructor(
    private readonly store: ArchiveStore,
    options: { readonly scope?: string; readonly now?: () => Date } = {},
  ) {
    this.scope = options.scope ?? 'default';
    this.now = options.now ?? (() => new Date());
  }

  /** Writes entries to the medium-term store, in one transaction. */
  flush(entries: readonly ContextEntry[]): void {
    if (entries.length === 0) return;
    this.store.saveMemoryEntries(this.scope, entries, this.now().toISOString());
  }

  /** Entries back from the medium-term store: by full-text query (best first), or by ids (in that order). */
  recall(query: string | readonly string[], options: { readonly limit?: number } = {}): ContextEntry[] {
    return typeof query === 'string' ? this.store.searchMemory(this.scope, query, options) : this.store.loadMemory(this.scope, query);
  }
}

export interface TieredMemoryOptions {
  /** Cuts the buffer to a budget, never dropping pinned entries (seed 002's ContextPruner). */
  readonly pruner: BudgetPruner;
  /** Where pruned entries go. */
  readonly refresher: Pick<MemoryRefresher, 'flush'>;
  /** Tokens above which the buffer is pruned; default `DEVS_PRUNE_THRESHOLD`, else 800,000. */
  readonly pruneThreshold?: number;
  /** What a prune cuts the buffer down to; default 75% of the threshold. */
  readonly tokenBudget?: number;
  /** Read once, here, for `DEVS_PRUNE_THRESHOLD` (default process.env). */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/** `DEVS_PRUNE_THRESHOLD` as a positive integer, or undefined when unset. */
export function pruneThresholdFromEnv(env: Readonly<Record<string, string | undefined>>): number | undefined {
  const raw = env['DEVS_PRUNE_THRESHOLD']?.trim();
  if (raw === undefined || raw === '') return undefined;
  const value = Number(raw.replaceAll('_', ''));
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new UsageError(`DEVS_PRUNE_THRESHOLD must be a positive whole number of tokens, not "${raw}"`, 'e.g. DEVS_PRUNE_THRESHOLD=800000');
  }
  return value;
}

/**
 * Seed 002's tiered memory: a short-term buffer of context entries that, once over the prune
 * threshold, is cut to the token budget by the pruner (pinned entries stay [3_MCP-RISK-303]); the
 * entries cut are flushed to the medium-term store first, so nothing is lost.
 */
export class TieredMemoryManager {
  readonly pruneThreshold: number;
  readonly tokenBudget: number;
  private buffer: ContextEntry[] = [];
  private readonly pruner: BudgetPruner;
  private readonly refresher: Pick<MemoryRefresher, 'flush'>;

  constructor(options: TieredMemoryOptions) {
    this.pruner = options.pruner;
    this.refresher = options.refresher;
    this.pruneThreshold = options.pruneThreshold ?? pruneThresholdFromEnv(options.env ?? process.env) ?? DEFAULT_PRUNE_THRESHOLD;
    this.tokenBudget = options.tokenBudget ?? Math.floor(this.pruneThreshold * DEFAULT_BUDGET_RATIO);
    if (this.tokenBudget > this.pruneThreshold) {
      throw new UsageError(
        `the token budget (${this.tokenBudget}) is above the prune threshold (${this.pruneThreshold})`,
        'a prune must cut the buffer to at most the threshold',
      );
    }
  }

  /** Tokens in the short-term buffer. */
  totalTokens(): number {
    return this.buffer.reduce((sum, entry) => sum + entry.tokenCount, 0);
  }

  /** A copy of the short-term buffer, in the order entries were kept. */
  shortTerm(): ContextEntry[] {
    return [...this.buffer];
  }

  /**
   * Adds an entry; when the buffer then exceeds the threshold, prunes it to the budget and flushes
   * what was cut to the medium-term store. Returns the entries flushed (none when no prune ran).
   * If the flush throws, the buffer is left as it was, entry included.
   */
  addEntry(entry: ContextEntry): ContextEntry[] {
    this.buffer.push(entry);
    if (this.totalTokens() <= this.pruneThreshold) return [];
    const kept = this.pruner.prune(this.buffer, this.tokenBudget);
    // The pruner returns a subset of the entries it was given; match them by identity so two
    // entries sharing an id are still told apart.
    const inBuffer = new Set(this.buffer);
    const keptSet = new Set(kept);
    for (const k of kept) {
      if (!inBuffer.has(k)) throw new Error(`the pruner returned entry ${k.id}, which is not one of the entries it was given`);
    }
    const removed = this.buffer.filter((e) => !keptSet.has(e));
    this.refresher.flush(removed);
    this.buffer = [...kept];
    return removed;
  }
}
