import { createHash } from 'node:crypto';
import type { TextTokenCounter } from '../core/accounting.js';
import { SUMMARY_PREFIX } from '../core/prune/edit.js';
import type { Summarizer } from '../core/provider-contracts.js';
import { formatRefresh } from '../core/refresh/context-refresher.js';
import type { SummaryProvider } from '../core/refresh/context-refresher.js';
import type { ConversationTurn } from '../core/turn.js';
import { pinnedDocuments, summariesOf } from '../core/refresh/project-documents.js';
import type { ProjectDocuments } from '../core/refresh/project-documents.js';
import { clip } from '../core/text-cut.js';

export type { ProjectDocuments } from '../core/refresh/project-documents.js';

/**
 * [3_MCP-TAS-089] Where a refresh's TAS and PRD text comes from (seed 004's `SummaryProvider`):
 * given texts, the transcript's own pinned `tas`/`prd` turns, or files; and a provider that
 * condenses any of them to a token budget, caching by content hash so an unchanged TAS is not
 * condensed again.
 */

/** Fixed texts (an orchestrator that holds its TAS and PRD in memory, or tests). */
export class StaticSummaryProvider implements SummaryProvider {
  constructor(
    private readonly documents: ProjectDocuments,
    private readonly where = 'the given documents',
  ) {}

  getSummary(): Promise<{ tasSummary: string; prdSummary: string }> {
    try {
      return Promise.resolve(summariesOf(this.documents, this.where));
    } catch (error) {
      return Promise.reject(error);
    }
  }
}

/** The transcript's own pinned `tas` and `prd` turns. */
export class PinnedTurnsSummaryProvider extends StaticSummaryProvider {
  constructor(turns: readonly ConversationTurn[], where = 'the transcript') {
    super(pinnedDocuments(turns), where);
  }
}

/** Makes one document (a TAS or a PRD) fit a token budget, for CondensingSummaryProvider; any `Summarizer` can serve through summarizerCondenser. */
export interface Condenser {
  /** Part of the cache key: a different condenser's output is never reused. */
  readonly name: string;
  condense(text: string, budgetTokens: number, what: 'TAS' | 'PRD'): Promise<string>;
}

/** Condensed texts by key; an optimisation only, so a cache may forget anything. */
export interface SummaryCache {
  get(key: string): string | undefined;
  set(key: string, text: string): void;
}

export class MemorySummaryCache implements SummaryCache {
  private readonly texts = new Map<string, string>();
  get(key: string): string | undefined {
    return this.texts.get(key);
  }
  set(key: string, text: string): void {
    this.texts.set(key, text);
  }
}

/** The cache key of one condensation: condenser, budget and the text's content hash. */
function condensationKey(condenser: string, budgetTokens: number, text: string): string {
  return createHash('sha256').update(`${condenser}\0${budgetTokens}\0${text}`).digest('base64url');
}

export interface CondensingOptions {
  /** The whole refresh (both sections and their headings) stays within this many tokens. */
  readonly budgetTokens: number;
  readonly counter: TextTokenCounter;
  /** Defaults to the offline `OutlineCondenser`. */
  readonly condenser?: Condenser;
  /** Defaults to an in-memory cache (one per provider). */
  readonly cache?: SummaryCache;
}

/**
 * Wraps another provider: documents that fit the budget pass through verbatim; otherwise each is
 * condensed to its share (half each, or what the shorter one leaves), through the cache.
 */
export class CondensingSummaryProvider implements SummaryProvider {
  private readonly condenser: Condenser;
  private readonly cache: SummaryCache;
  /** How many times the condenser actually ran (cache misses), for reports and tests. */
  condensations = 0;

  constructor(
    private readonly source: SummaryProvider,
    private readonly options: CondensingOptions,
  ) {
    this.condenser = options.condenser ?? new OutlineCondenser(options.counter);
    this.cache = options.cache ?? new MemorySummaryCache();
  }

  async getSummary(): Promise<{ tasSummary: string; prdSummary: string }> {
    const { tasSummary, prdSummary } = await this.source.getSummary();
    const { counter } = this.options;
    const budget = Math.max(0, this.options.budgetTokens - counter.count(formatRefresh('', '')));
    const tas = counter.count(tasSummary);
    const prd = counter.count(prdSummary);
    if (tas + prd <= budget) return { tasSummary, prdSummary };
    const half = Math.floor(budget / 2);
    const tasBudget = tas <= half ? tas : prd <= half ? budget - prd : half;
    const prdBudget = budget - Math.min(tas, tasBudget);
    return {
      tasSummary: tas <= tasBudget ? tasSummary : await this.condensed(tasSummary, tasBudget, 'TAS'),
      prdSummary: prd <= prdBudget ? prdSummary : await this.condensed(prdSummary, prdBudget, 'PRD'),
    };
  }

  private async condensed(text: string, budgetTokens: number, what: 'TAS' | 'PRD'): Promise<string> {
    const key = condensationKey(this.condenser.name, budgetTokens, text);
    const cached = this.cache.get(key);
    if (cached !== undefined) return cached;
    const condensed = await this.condenser.condense(text, budgetTokens, what);
    this.condensations++;
    this.cache.set(key, condensed);
    return condensed;
  }
}

const HEADING = /^\s{0,3}#{1,6}\s/;
/** `[TAS-024]`, `REQ-101`, `3_MCP-TAS-089`: a line naming a requirement is a rule to keep. */
const REQUIREMENT_ID = /\[[A-Za-z0-9_]+(?:-[A-Za-z0-9_]+)*-\d+\]|\b[A-Z][A-Z0-9_]*-\d+\b/;
const LIST_ITEM = /^\s*(?:[-*+]|\d+[.)])\s+/;
const FENCE = /^\s*(?:```|~~~)/;
const MAX_LINE_CHARS = 300;

/**
 * The offline condenser: keeps the document's outline verbatim, in its order — headings first, then
 * lines that name a requirement id, then list items, then prose — while the budget lasts, and says
 * how much was left out. Code blocks go first. It does not paraphrase, so no rule is reworded.
 * (The prune's `ExtractiveSummarizer` is shaped for removed conversation turns: its header and
 * lookup hints would be false in a refresh.)
 */
export class OutlineCondenser implements Condenser {
  readonly name = 'outline';

  constructor(private readonly counter: TextTokenCounter) {}

  condense(text: string, budgetTokens: number, what: 'TAS' | 'PRD'): Promise<string> {
    const lines = text.split('\n');
    let inFence = false;
    const candidates: { index: number; line: string; rank: number }[] = [];
    lines.forEach((raw, index) => {
      const fence = FENCE.test(raw);
      if (fence) inFence = !inFence;
      const line = raw.trimEnd();
      if (!line.trim() || fence || inFence) return;
      const rank = HEADING.test(line) ? 0 : REQUIREMENT_ID.test(line) ? 1 : LIST_ITEM.test(line) ? 2 : 3;
      candidates.push({ index, line: clip(line, MAX_LINE_CHARS), rank });
    });
    const total = this.counter.count(text);
    const note = `(${what} condensed by devs-ctx from ${total} tokens: outline and requirement lines kept verbatim)`;
    const chosen = new Set<number>();
    let used = this.counter.count(note) + 1;
    for (const c of [...candidates].sort((a, b) => a.rank - b.rank || a.index - b.index)) {
      const cost = this.counter.count(c.line) + 1;
      if (used + cost > budgetTokens) continue;
      chosen.add(c.index);
      used += cost;
    }
    const render = (): string => [...candidates.filter((c) => chosen.has(c.index)).map((c) => c.line), note].join('\n');
    // Lines counted apart can count a little differently together: drop the least important until it fits.
    const byImportance = [...candidates].filter((c) => chosen.has(c.index)).sort((a, b) => b.rank - a.rank || b.index - a.index);
    let out = render();
    while (this.counter.count(out) > budgetTokens && byImportance.length > 0) {
      const drop = byImportance.shift();
      if (drop) chosen.delete(drop.index);
      out = render();
    }
    return Promise.resolve(out);
  }
}

/** Any `Summarizer` (e.g. a Gemini one) as a condenser; its `[Context Summary]` marker is removed. */
export function summarizerCondenser(summarizer: Summarizer): Condenser {
  return {
    name: `summarizer:${summarizer.name}`,
    async condense(text, budgetTokens, what) {
      const summary = await summarizer.summarize({
        turns: [{ id: what.toLowerCase(), role: 'user', type: what === 'TAS' ? 'tas' : 'prd', content: text }],
        activeTask: `Condense this ${what} for an agent: keep every constraint, requirement id, file path and decision verbatim.`,
        budgetTokens,
      });
      const trimmed = summary.trim();
      return trimmed.startsWith(SUMMARY_PREFIX) ? trimmed.slice(SUMMARY_PREFIX.length).trim() : trimmed;
    },
  };
}
